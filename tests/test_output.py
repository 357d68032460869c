"""Results out (spec §12): exact JSON Lines, order, CSV/Parquet, and round trips."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acel.io.results import (
    from_json_lines,
    matches_from_table,
    read_results,
    read_table,
    results_to_string,
    rows_from_json_lines,
    sort_results,
    to_json_lines,
    write_results,
)
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import DataError
from acel.lang.events import ComplexEvent, Event

MSFT = Event.make(0, {"type": "SELL", "name": "MSFT", "price": 101})
INTL = Event.make(2, {"type": "SELL", "name": "INTL", "price": 80})
AMZN = Event.make(4, {"type": "SELL", "name": "AMZN", "price": 1900})


def example_match() -> Match:
    ce = ComplexEvent.make(0, 4, {"SELL": [AMZN, MSFT, INTL], "msft": [MSFT], "intel": [INTL], "amzn": [AMZN]})
    return Match((), ce)


def test_complex_event_line_is_exactly_spec_12() -> None:
    [line] = to_json_lines([example_match()])
    ev = '{"attrs":{"name":"%s","price":%d,"type":"SELL"},"time":%d}'
    m, i, a = ev % ("MSFT", 101, 0), ev % ("INTL", 80, 2), ev % ("AMZN", 1900, 4)
    assert line == (
        '{"end":4,"start":0,"vars":{'
        f'"SELL":[{m},{i},{a}],"amzn":[{a}],"intel":[{i}],"msft":[{m}]'
        "}}"
    )


def test_key_only_when_partitioned_and_time_attribute_never_collides() -> None:
    event = Event.make(3, {"type": "A", "time": 99, "k": 1})
    line = to_json_lines([Match((("k", 1),), ComplexEvent.make(3, 3, {"A": [event]}))])[0]
    assert json.loads(line) == {
        "start": 3, "end": 3, "key": {"k": 1},
        "vars": {"A": [{"time": 3, "attrs": {"type": "A", "time": 99, "k": 1}}]},
    }
    assert '"key"' not in to_json_lines([Match((), ComplexEvent.make(3, 3, {"A": [event]}))])[0]


def test_bags_list_repeated_events_and_lines_sort_by_end_start_rest() -> None:
    a0 = Event.make(0, {"type": "A", "x": 1})
    a1 = Event.make(1, {"type": "A", "x": 0})
    results = [
        Match((), ComplexEvent.make(1, 1, {"A": [a1]})),
        Match((), ComplexEvent.make(0, 1, {"A": [a0, a1], "Z": [Event.make(1, {"c": 2}), Event.make(1, {"c": 2})]})),
        Match((), ComplexEvent.make(0, 1, {"A": [a0, a1]})),
        Match((), ComplexEvent.make(0, 0, {"A": [a0]})),
    ]
    lines = to_json_lines(results)
    starts_ends = [(json.loads(x)["start"], json.loads(x)["end"]) for x in lines]
    assert starts_ends == [(0, 0), (0, 1), (0, 1), (1, 1)]
    assert lines[1] < lines[2]  # ties: the rest of the line
    assert json.loads(lines[1])["vars"]["Z"] == [{"time": 1, "attrs": {"c": 2}}] * 2  # ',' < '}'
    assert "Z" not in json.loads(lines[2])["vars"]
    assert to_json_lines(list(reversed(results))) == lines


def test_non_finite_floats_are_null() -> None:
    event = Event.make(0, {"type": "A", "x": math.inf, "y": math.nan})
    row = TrendRow((), None, (("AVG(a.x)", math.nan), ("MAX(a.x)", -math.inf), ("COUNT(*)", 1)))
    assert json.loads(to_json_lines([Match((), ComplexEvent.make(0, 0, {"A": [event]}))])[0])["vars"]["A"][0][
        "attrs"] == {"type": "A", "x": None, "y": None}
    assert to_json_lines([row]) == ['{"AVG(a.x)":null,"COUNT(*)":1,"MAX(a.x)":null}']


def test_trend_rows_key_window_and_order() -> None:
    rows = [
        TrendRow((("company", "MSFT"),), (5, 10), (("COUNT(*)", 2), ("SUM(s.price)", 10))),
        TrendRow((("company", "AMZN"),), (5, 10), (("COUNT(*)", 2**70), ("SUM(s.price)", 0))),
        TrendRow((("company", "AMZN"),), (0, 5), (("COUNT(*)", 0), ("SUM(s.price)", 0))),
    ]
    assert to_json_lines(rows) == [
        '{"COUNT(*)":0,"SUM(s.price)":0,"key":{"company":"AMZN"},"window":[0,5]}',
        f'{{"COUNT(*)":{2**70},"SUM(s.price)":0,"key":{{"company":"AMZN"}},"window":[5,10]}}',
        '{"COUNT(*)":2,"SUM(s.price)":10,"key":{"company":"MSFT"},"window":[5,10]}',
    ]
    assert to_json_lines([TrendRow((), None, (("COUNT(*)", 11), ("MIN(A.x)", None)))]) == [
        '{"COUNT(*)":11,"MIN(A.x)":null}'
    ]
    back = rows_from_json_lines(to_json_lines(rows))
    assert back == sort_results(rows)


def test_mixed_results_are_rejected() -> None:
    with pytest.raises(TypeError):
        to_json_lines([example_match(), TrendRow((), None, ())])  # type: ignore[arg-type]


def test_from_json_lines_restores_partition_order_and_reports_bad_lines() -> None:
    match = Match((("z", 1), ("a", "x")), ComplexEvent.make(0, 0, {"A": [Event.make(0, {"type": "A"})]}))
    lines = to_json_lines([match])
    assert from_json_lines(lines, partition_by=["z", "a"]) == [match]
    assert from_json_lines(lines)[0].key == (("a", "x"), ("z", 1))
    with pytest.raises(DataError, match="line 2: bad JSON"):
        from_json_lines([lines[0], "{"])
    with pytest.raises(DataError, match="line 1: not a complex event"):
        from_json_lines(['{"start": 0}'])


def test_write_results_files(tmp_path: Path) -> None:
    results = [example_match(), Match((), ComplexEvent.make(1, 2, {"B": [Event.make(2, {"type": "B", "ok": True})]}))]
    written = write_results(results, tmp_path / "out.jsonl")
    assert written == 2
    assert read_results(tmp_path / "out.jsonl") == sort_results(results)
    for suffix in (".csv", ".parquet"):
        path = tmp_path / f"out{suffix}"
        assert write_results(results, path) == 2
        records = read_table(path)
        assert [int(str(r["start"])) for r in records] == [1, 0]  # by end first
        assert matches_from_table(
            [{**r, "start": int(str(r["start"])), "end": int(str(r["end"]))} for r in records]
        ) == sort_results(results)


def test_write_rows_as_csv_and_parquet(tmp_path: Path) -> None:
    rows = [
        TrendRow((("carrier", "AA"),), (0, 60), (("carrier", "AA"), ("COUNT(*)", 3), ("AVG(d.delay)", 2.5))),
        TrendRow((("carrier", "UA"),), (0, 60), (("carrier", "UA"), ("COUNT(*)", 0), ("AVG(d.delay)", None))),
    ]
    text = results_to_string(rows, "csv")
    assert text.splitlines() == [
        "carrier,window_lo,window_hi,COUNT(*),AVG(d.delay)",
        "AA,0,60,3,2.5",
        "UA,0,60,0,",
    ]
    write_results(rows, tmp_path / "rows.parquet")
    assert read_table(tmp_path / "rows.parquet") == [
        {"carrier": "AA", "window_lo": 0, "window_hi": 60, "COUNT(*)": 3, "AVG(d.delay)": 2.5},
        {"carrier": "UA", "window_lo": 0, "window_hi": 60, "COUNT(*)": 0, "AVG(d.delay)": None},
    ]


def test_parquet_mixed_kind_column_falls_back_to_json_text(tmp_path: Path) -> None:
    rows = [TrendRow((("k", 1),), None, (("k", 1),)), TrendRow((("k", "x"),), None, (("k", "x"),))]
    write_results(rows, tmp_path / "r.parquet")
    assert [r["k"] for r in read_table(tmp_path / "r.parquet")] == ["1", '"x"']


def test_line_separators_inside_strings_stay_on_one_line(tmp_path: Path) -> None:
    """Regression (Hypothesis): U+0085 written raw split the line for splitlines()."""
    match = Match((), ComplexEvent.make(0, 0, {"A": [Event.make(0, {"type": "\x85", "s": "\u2028\r\n"})]}))
    [line] = to_json_lines([match])
    assert len(line.splitlines()) == 1
    write_results([match], tmp_path / "r.jsonl")
    assert read_results(tmp_path / "r.jsonl") == [match]


def test_write_to_stdout_and_format_errors(tmp_path: Path) -> None:
    buffer = io.StringIO()
    assert write_results([example_match()], stream=buffer) == 1
    assert buffer.getvalue() == to_json_lines([example_match()])[0] + "\n"
    with pytest.raises(DataError, match="unknown output format '.xlsx'"):
        write_results([], tmp_path / "x.xlsx")
    with pytest.raises(DataError, match="Parquet output needs a file"):
        write_results([], fmt="parquet")
    assert write_results([], tmp_path / "empty.jsonl") == 0
    assert (tmp_path / "empty.jsonl").read_text() == ""


# ----------------------------------------------------------------- round-trip property

values = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    st.sampled_from(["\u2028", "a\x85b", "\r\n", "é"]),
    st.booleans(),
)
attr_maps = st.dictionaries(st.sampled_from(["type", "x", "y", "time", "é"]), values, max_size=3)


@st.composite
def matches(draw: st.DrawFn) -> Match:
    start = draw(st.integers(0, 5))
    end = draw(st.integers(start, 8))
    mu = draw(st.dictionaries(
        st.sampled_from(["A", "B", "x", "z1"]),
        st.lists(st.builds(Event.make, st.integers(start, end), attr_maps), min_size=1, max_size=3),
        max_size=3,
    ))
    key = draw(st.sampled_from([(), (("k", 1),), (("k", "a"), ("j", 2.5))]))
    return Match(key, ComplexEvent.make(start, end, mu))


@settings(max_examples=max(20, settings().max_examples // 3))  # writes files
@given(st.lists(matches(), max_size=5), st.sampled_from([".jsonl", ".csv", ".parquet"]))
def test_complex_events_round_trip_through_every_format(
    tmp_path_factory: pytest.TempPathFactory, results: list[Match], suffix: str
) -> None:
    lines = to_json_lines(results)
    normalised = sort_results([Match(tuple(sorted(m.key)), m.event) for m in results])
    assert from_json_lines(lines) == normalised
    assert to_json_lines(from_json_lines(lines)) == lines
    if not results:
        return
    path = tmp_path_factory.mktemp("out") / f"r{suffix}"
    assert write_results(results, path) == len(results)
    if suffix == ".jsonl":
        assert path.read_text(encoding="utf-8").splitlines() == lines
        back = read_results(path)
    else:
        back = matches_from_table(
            {**r, "start": int(str(r["start"])), "end": int(str(r["end"]))} for r in read_table(path)
        )
    assert back == normalised


def test_spark_sinks_come_from_the_output_registry() -> None:
    """Spark's batch and streaming writers take their formats from the output registry
    (issue 34: no copied list of names in spark_backend)."""
    from acel.io.output_formats import spark_sink

    assert [spark_sink(name) for name in ("jsonl", "json", "parquet")] == ["json", "json", "parquet"]
    with pytest.raises(DataError, match=r"unknown output format 'csv' \(use jsonl or parquet\)"):
        spark_sink("csv")
