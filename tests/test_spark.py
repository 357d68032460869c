"""The Spark backend gives exactly the single-process engine's answers (issue 7).

One session-scoped Spark session (``local[2,2]``: two cores, a failed task is
retried once) serves every test; the generated examples are few because each
Spark run costs about a second.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from acel.acea import engine
from hypothesis import given
from hypothesis import strategies as st
from spark_fixtures import SPARK_MARKS, events_frame, spark_settings

from acel.io import read_events
from acel.lang.ast import As, Atom, CountStar, Plus, Query, ReturnAgg, ReturnAttr, Seq, Window
from acel.lang.clauses import TrendRow
from acel.lang.errors import AcelError, DataError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.testing import (
    SPEC_STOCK_EVENTS,
    SPEC_STOCK_SCHEMA,
    TEST_SCHEMA,
    queries,
    streams,
    trend_queries,
)

pytestmark = SPARK_MARKS

SPARK_SETTINGS = spark_settings(12)

PAPER = SPEC_STOCK_SCHEMA
PAPER_EVENTS = SPEC_STOCK_EVENTS
EXAMPLE_3_2 = (
    "(SELL AS msft ; SELL AS intel ; SELL AS amzn) "
    "FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL'] "
    "AND amzn[name = 'AMZN' AND price < 2000]"
)


def _spark(spark: Any, query: Query | str, events: list[Event], schema: Schema, **kw: Any) -> Any:
    from acel.spark_backend import run_to_results

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_to_results(query, events_frame(spark, events), schema=schema, session=spark, **kw)


def _approx(rows: list[Any]) -> list[Any]:
    """Floats may differ by summation order only (spec §4)."""
    out = []
    for row in rows:
        if isinstance(row, TrendRow):
            values = tuple((n, round(v, 9) if isinstance(v, float) else v) for n, v in row.values)
            out.append(TrendRow(row.key, row.window, values))
        else:
            out.append(row)
    return out


# ------------------------------------------------------------------ the paper's example


@pytest.mark.parametrize(
    "clauses, kind",
    [("", "single"), (" PARTITION BY name", "partition"), (" WITHIN 5 EVENTS", "slice")],
)
def test_example_3_2_under_every_strategy(spark: Any, clauses: str, kind: str) -> None:
    from acel.spark_backend import NotParallelWarning, plan

    query = parse_query(EXAMPLE_3_2 + clauses)
    expected = engine.run(query, PAPER_EVENTS, PAPER)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        planned = plan(query, events_frame(spark, PAPER_EVENTS), schema=PAPER, session=spark,
                       slice_size=2)
    assert planned.strategy.kind == kind
    assert any(isinstance(w.message, NotParallelWarning) for w in caught) == (kind == "single")
    from acel.spark_backend.run import _collect, results_of

    assert results_of(planned, _collect(planned.frame)) == expected
    if not clauses:
        assert [(m.event.start, m.event.end) for m in expected] == [
            (0, 4), (1, 4), (0, 6), (0, 6), (1, 6), (1, 6)
        ]


def test_match_frame_columns(spark: Any) -> None:
    from acel.spark_backend import run

    frame = run(EXAMPLE_3_2 + " PARTITION BY type", events_frame(spark, PAPER_EVENTS), schema=PAPER,
                session=spark)
    assert frame.columns == ["type", "start", "end", "vars"]
    rows = sorted(frame.collect(), key=lambda r: (r["end"], r["start"], r["vars"]))
    assert [(r["type"], r["start"], r["end"]) for r in rows][:2] == [("SELL", 0, 4), ("SELL", 1, 4)]
    first = json.loads(rows[0]["vars"])
    assert sorted(first) == ["SELL", "amzn", "intel", "msft"]
    assert first["msft"] == [{"time": 0, "attrs": {"name": "MSFT", "price": 101, "type": "SELL"}}]


def test_no_pandas_future_warnings(spark: Any) -> None:
    """pandas is pinned below 3, which pyspark 4 supports without a FutureWarning on every
    Arrow conversion (issue 25); a run and a ``toPandas`` raise none."""
    import warnings

    import acel

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = acel.spark.run(EXAMPLE_3_2 + " PARTITION BY type",
                               events_frame(spark, PAPER_EVENTS), schema=PAPER)
        assert len(frame.toPandas()) == 6
    assert not [w for w in caught if issubclass(w.category, FutureWarning)], caught


# ------------------------------------------------------------------ generated queries


@pytest.mark.slow
@SPARK_SETTINGS
@given(queries(top_negation=True), streams(max_len=9), st.integers(1, 3), st.booleans())
def test_spark_equals_engine_on_generated_queries(
    spark: Any, query: Query, stream: list[Event], size: int, force_within: bool
) -> None:
    if force_within and query.within is None:
        query = replace(query, within=Window(3))
    expected = engine.run(query, stream, TEST_SCHEMA)
    assert _spark(spark, query, stream, TEST_SCHEMA, slice_size=size) == expected


@pytest.mark.slow
@SPARK_SETTINGS
@given(trend_queries(top_negation=True), streams(max_len=9), st.integers(1, 3))
def test_spark_equals_engine_on_generated_trend_queries(
    spark: Any, query: Query, stream: list[Event], size: int
) -> None:
    expected = engine.run(query, stream, TEST_SCHEMA)
    got = _spark(spark, query, stream, TEST_SCHEMA, slice_size=size)
    assert _approx(got) == _approx(expected)


def test_sum_of_an_agg_average_is_a_float_column(spark: Any) -> None:
    """Regression (Hypothesis): ``SUM(z.n)`` with ``n := AVG(..)`` was typed DECIMAL."""
    query = parse_query(
        "RETURN SUM(z.n) PATTERN AGG z[n := AVG(C.k), s := SUM(C.k)]"
        "(AGG z[n := SUM(C.k)](NEXT(C)))"
    )
    stream = [Event.make(i, {"type": "A"}) for i in range(4)] + [
        Event.make(4, {"type": "C"}),
        Event.make(5, {"type": "C", "k": 0}),
    ]
    expected = engine.run(query, stream, TEST_SCHEMA)
    assert _spark(spark, query, stream, TEST_SCHEMA) == expected


def test_attribute_kinds_follow_agg_outputs() -> None:
    from acel.spark_backend.layout import attribute_kinds, item_kind

    query = parse_query(
        "RETURN SUM(z.n), SUM(z.c), MAX(z.m), SUM(z.k) PATTERN "
        "AGG z[n := AVG(C.k), c := COUNT(C), m := MAX(C.k), k := AVG(C.k)](C AS C)"
    )
    kinds = attribute_kinds(query, {"k": "int", "type": "str"})
    assert kinds == {"k": "mixed", "type": "str", "n": "float", "c": "int", "m": "mixed"}
    assert [item_kind(i, kinds) for i in query.returns or ()] == [
        "double", "decimal", "json", "json",
    ]


def _straddling_stream(n: int) -> list[Event]:
    """A, B alternating with x = position mod 4: matches cross every slice edge."""
    return [
        Event.make(i, {"type": "AB"[i % 2 if i % 5 else 0], "x": i % 4, "k": i % 2})
        for i in range(n)
    ]


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_matches_straddling_small_slices(spark: Any, size: int) -> None:
    query = parse_query("(A AS a)+ ; B AS b FILTER a[x < 3] WITHIN 4 EVENTS")
    stream = _straddling_stream(14)
    expected = engine.run(query, stream, TEST_SCHEMA)
    assert len(expected) >= 20
    assert any(m.event.start // size != m.event.end // size for m in expected)
    assert _spark(spark, query, stream, TEST_SCHEMA, slice_size=size) == expected


@pytest.mark.parametrize("returns", [False, True])
def test_many_slices_share_a_task(spark: Any, returns: bool) -> None:
    """More slices than the task cap (64 per core): tasks run several slices in turn."""
    from acel.spark_backend.run import MAX_TASKS_PER_CORE

    text = "(A AS a)+ ; B AS b FILTER a[x < 3] WITHIN 4 EVENTS"
    query = parse_query(("RETURN COUNT(*), SUM(a.x) PATTERN " if returns else "") + text)
    stream = _straddling_stream(3 * MAX_TASKS_PER_CORE)
    expected = engine.run(query, stream, TEST_SCHEMA)
    assert expected
    assert _spark(spark, query, stream, TEST_SCHEMA, slice_size=1, partitions=1) == expected


@pytest.mark.parametrize("slide", [None, 1, 2, 4])
def test_trend_rows_straddling_small_slices(spark: Any, slide: int | None) -> None:
    text = (
        "RETURN COUNT(*), COUNT(a), SUM(a.x), MIN(b.x), MAX(a.x), AVG(a.x) "
        "PATTERN (A AS a)+ ; B AS b WITHIN 4 EVENTS"
    ) + (f" SLIDE {slide} EVENTS" if slide else "")
    query = parse_query(text)
    stream = _straddling_stream(17)
    expected = engine.run(query, stream, TEST_SCHEMA)
    for size in (2, 3):
        assert _approx(_spark(spark, query, stream, TEST_SCHEMA, slice_size=size)) == _approx(
            expected
        )


TS = Schema.of({"A": ["ts", "x"], "B": ["ts", "x"]})


def _ts_stream(gaps: list[int]) -> list[Event]:
    ts = 0
    out = []
    for i, gap in enumerate(gaps):
        ts += gap
        out.append(Event.make(i, {"type": "AB"[i % 3 == 2], "ts": ts, "x": i % 4}))
    return out


@pytest.mark.parametrize("returns", [False, True])
def test_attribute_windows_slice_by_value(spark: Any, returns: bool) -> None:
    from acel.spark_backend import plan

    stream = _ts_stream([0, 1, 0, 2, 3, 0, 1, 1, 4, 0, 2, 1])
    formula = Seq(Plus(As(Atom("A"), "a")), As(Atom("B"), "b"))
    items = (CountStar(), ReturnAgg("SUM", "a", "x"), ReturnAgg("AVG", "a", "x"))
    query = Query(formula, items if returns else None, (), Window(4, "ts"),
                  Window(2, "ts") if returns else None)
    expected = engine.run(query, stream, TS)
    planned = plan(query, events_frame(spark, stream), schema=TS, session=spark, slice_size=3)
    assert planned.strategy.kind == "slice"
    from acel.spark_backend.run import _collect, results_of

    assert _approx(results_of(planned, _collect(planned.frame))) == _approx(expected)


def test_unsorted_attribute_window_runs_as_one_partition(spark: Any) -> None:
    from acel.spark_backend import NotParallelWarning, run_to_results

    stream = _ts_stream([0, 1, 0, 2, 3])
    stream = [stream[i] .at(i) for i in (0, 3, 1, 4, 2)]
    query = Query(Seq(As(Atom("A"), "a"), As(Atom("B"), "b")), None, (), Window(3, "ts"))
    with pytest.warns(NotParallelWarning, match="cannot be sliced"):
        got = run_to_results(query, events_frame(spark, stream), schema=TS, session=spark)
    assert got == engine.run(query, stream, TS)


# ------------------------------------------------------------------ exact big counts


def test_counts_beyond_64_bits_are_exact(spark: Any) -> None:
    from acel.spark_backend import run, run_to_results

    stream = [Event.make(i, {"type": "A", "x": 1, "k": 0}) for i in range(80)]
    query = parse_query("RETURN COUNT(*), SUM(a.x) PATTERN (A AS a)+ WITHIN 100 EVENTS")
    expected = engine.run(query, stream, TEST_SCHEMA)
    assert expected[0].value("COUNT(*)") == 2**80 - 1
    got = _spark(spark, query, stream, TEST_SCHEMA, slice_size=30)
    assert got == expected
    frame = run(query, events_frame(spark, stream), schema=TEST_SCHEMA, session=spark)
    assert dict(frame.dtypes)["COUNT(*)"] == "decimal(38,0)"
    assert int(frame.collect()[0]["COUNT(*)"]) == 2**80 - 1
    assert run_to_results(query, events_frame(spark, []), schema=TEST_SCHEMA, session=spark) == [
        TrendRow((), None, (("COUNT(*)", 0), ("SUM(a.x)", 0)))
    ]


def test_partitioned_trend_frame_columns(spark: Any) -> None:
    from acel.spark_backend import run

    query = Query(
        Seq(As(Atom("A"), "a"), As(Atom("B"), "b")),
        (ReturnAttr("k"), CountStar(), ReturnAgg("MAX", "a", "x")),
        ("k",), Window(4), Window(2),
    )
    stream = _straddling_stream(10)
    frame = run(query, events_frame(spark, stream), schema=TEST_SCHEMA, session=spark)
    assert frame.columns == ["k", "window_lo", "window_hi", "COUNT(*)", "MAX(a.x)"]
    assert _spark(spark, query, stream, TEST_SCHEMA) == engine.run(query, stream, TEST_SCHEMA)


# ------------------------------------------------------------------ files, time column


def test_files_with_a_time_column_give_the_file_readers_positions(
    spark: Any, tmp_path: Path
) -> None:
    from acel.spark_backend import run, run_to_results, write

    lines = [
        {"type": "A", "ts": 5, "x": 1}, {"type": "B", "ts": 2, "x": 2},
        {"type": "A", "ts": 2, "x": 3}, {"type": "B", "ts": 9, "x": 0},
        {"type": "A", "ts": 1, "x": 2}, {"type": "B", "ts": 5, "x": 1},
    ]
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    csv = tmp_path / "events.csv"
    csv.write_text("type,ts,x\n" + "".join(f"{r['type']},{r['ts']},{r['x']}\n" for r in lines))
    query = parse_query("A AS a ; B AS b WITHIN 4 EVENTS")
    for path in (jsonl, csv):
        events, schema = read_events(path, time_col="ts")
        expected = engine.run(query, events, schema)
        got = run_to_results(query, str(path), time_col="ts", schema=schema, session=spark,
                             slice_size=2)
        assert got == expected and len(expected) == 5
    frame = run(query, str(jsonl), time_col="ts", session=spark)
    write(frame, str(tmp_path / "out.parquet"))
    write(frame, str(tmp_path / "out.jsonl"), "jsonl")
    back = spark.read.parquet(str(tmp_path / "out.parquet"))
    assert back.count() == 5 and back.columns == ["start", "end", "vars"]
    assert spark.read.json(str(tmp_path / "out.jsonl")).count() == 5


def test_type_column_and_iso_times(spark: Any) -> None:
    from acel.spark_backend import run_to_results

    rows = [("A", "2024-01-01T00:00:03", 1), ("B", "2024-01-01T00:00:01", 2),
            ("A", "2024-01-01T00:00:00", 3)]
    frame = spark.createDataFrame(rows, "kind string, at string, x long")
    got = run_to_results("A AS a ; B AS b", frame, type_col="kind", time_col="at",
                         session=spark)
    assert [(m.event.start, m.event.end) for m in got] == [(0, 1)]
    assert got[0].event.bag("a")[0].get("x") == 3


def test_inferred_schema_equals_the_file_readers(spark: Any, tmp_path: Path) -> None:
    """Types and their attributes come out of the same job that numbers the stream."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from acel.spark_backend.frames import prepare

    lines = [
        {"type": "A", "x": 1, "y": None}, {"type": "B", "x": None, "y": "u"},
        {"type": "A", "x": 2, "y": None}, {"type": "C", "x": None, "y": None},
    ]
    path = tmp_path / "events.parquet"
    pq.write_table(pa.Table.from_pylist(lines), path)
    _, expected = read_events(path)
    stream = prepare(spark, str(path))
    try:
        assert stream.schema == expected and stream.count == 4
        assert stream.schema.attributes("C") == ("type",)
    finally:
        stream.release()
    only_types = prepare(spark, spark.createDataFrame([("A",), ("B",)], "type string"))
    try:
        assert only_types.schema == Schema.of({"A": [], "B": []})
    finally:
        only_types.release()


@pytest.mark.parametrize("shuffled", [False, True], ids=["in-time-order", "shuffled"])
def test_numbering_sorts_only_frames_out_of_time_order(spark: Any, tmp_path: Path, shuffled: bool) -> None:
    """A DataFrame already in time order (ties in input order) is numbered by its input
    order, with no sort (one cached frame, the input); another is sorted (a second);
    a file is sorted by the toolkit's reader, so Spark never sorts it and caches
    nothing.  All give acel.io's positions, across several input partitions (small
    Parquet row groups)."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq
    from acel.spark_backend.frames import POS, prepare

    rows = [{"type": "AB"[i % 2], "ts": i // 3, "n": i} for i in range(600)]
    if shuffled:
        random.Random(4).shuffle(rows)
    path = tmp_path / "events.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=50)
    events, _ = read_events(path, time_col="ts")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1k")  # a split per row group
    try:
        frame = spark.read.parquet(str(path))
        assert frame.rdd.getNumPartitions() > 2
        from_frame = prepare(spark, frame, time_col="ts")
        from_file = prepare(spark, str(path), time_col="ts")
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    try:
        assert len(from_frame.persisted) == (2 if shuffled else 1)
        assert from_file.persisted == ()
        for stream in (from_frame, from_file):
            got = sorted((r[POS], r["n"]) for r in stream.frame.select(POS, "n").collect())
            assert got == [(e.time, e.get("n")) for e in events]
    finally:
        from_frame.release()
        from_file.release()


# ------------------------------------------------------------------ bad input


def test_null_type_and_unreadable_time_are_reported(spark: Any, tmp_path: Path) -> None:
    """A DataFrame is checked on Spark; a file by the single-process reader (same words)."""
    from acel.spark_backend import run_to_results

    path = tmp_path / "bad.csv"
    path.write_text("type,ts,x\nA,1,0\n,2,0\nB,soon,1\nA,3,1\n,4,2\nB,,0\n")
    with pytest.raises(DataError) as info:
        run_to_results("A ; B", str(path), time_col="ts", session=spark)
    with pytest.raises(DataError) as single:
        read_events(path, time_col="ts")
    assert str(info.value) == str(single.value)
    rows = [("A", "1", 0), (None, "2", 0), ("B", "soon", 1), ("A", "3", 1), (None, "4", 2),
            ("B", None, 0)]
    frame = spark.createDataFrame(rows, "type string, ts string, x long")
    with pytest.raises(DataError) as info:
        run_to_results("A ; B", frame, time_col="ts", session=spark)
    message = str(info.value)
    assert "2 row(s) with a NULL or empty type" in message
    assert "2 row(s) with a NULL or unreadable time" in message
    assert "row 2:" in message and "row 5:" in message  # the null types
    assert "row 3: type='B', ts='soon'" in message and "row 6:" in message


def test_missing_columns_and_bad_window_attribute(spark: Any) -> None:
    from acel.spark_backend import run_to_results

    frame = events_frame(spark, PAPER_EVENTS)
    with pytest.raises(DataError, match="time column 'when' is not in the data"):
        run_to_results("SELL", frame, time_col="when", session=spark)
    with pytest.raises(DataError, match="needs a numeric attribute 'name'"):
        run_to_results("SELL ; SELL WITHIN 3 ON name", frame, schema=PAPER, session=spark)
    with pytest.raises(AcelError):
        run_to_results("SELL ;; SELL", frame, schema=PAPER, session=spark)


# ------------------------------------------------------------------ faults


def test_a_failed_first_attempt_is_retried_with_the_same_results(spark: Any) -> None:
    from acel.spark_backend.session import FAULT_CONF

    query = parse_query(
        "RETURN COUNT(*), SUM(a.x) PATTERN (A AS a)+ ; B AS b WITHIN 4 EVENTS"
    )
    stream = _straddling_stream(12)
    expected = engine.run(query, stream, TEST_SCHEMA)
    spark.conf.set(FAULT_CONF, "true")
    try:
        got = _spark(spark, query, stream, TEST_SCHEMA, slice_size=3)
        matches = _spark(spark, "A ; B PARTITION BY k", stream, TEST_SCHEMA)
    finally:
        spark.conf.unset(FAULT_CONF)
    assert got == expected
    assert matches == engine.run(parse_query("A ; B PARTITION BY k"), stream, TEST_SCHEMA)


def test_without_retries_the_injected_fault_fails(spark: Any) -> None:
    """The fault really fires: on a first attempt ``true`` raises, on a retry it does not."""
    from acel.spark_backend.executor import inject_fault

    class _Attempt:
        def __init__(self, number: int) -> None:
            self.number = number

        def attemptNumber(self) -> int:  # noqa: N802 - Spark's name
            return self.number

    import pyspark

    original = pyspark.TaskContext.get
    try:
        pyspark.TaskContext.get = staticmethod(lambda: _Attempt(0))  # type: ignore[assignment]
        with pytest.raises(RuntimeError, match="injected fault"):
            inject_fault("true")
        inject_fault("")  # no fault asked: nothing happens
        pyspark.TaskContext.get = staticmethod(lambda: _Attempt(1))  # type: ignore[assignment]
        inject_fault("true")
        with pytest.raises(RuntimeError, match="every task attempt"):
            inject_fault("raise-always")
    finally:
        pyspark.TaskContext.get = original  # type: ignore[method-assign]


def test_a_killed_python_worker_is_retried_with_the_same_results(
    spark: Any, tmp_path: Path
) -> None:
    """Issue 17: one Python worker process dies (SIGKILL) mid-job; the retry gives the same."""
    from acel.spark_backend.session import FAULT_CONF

    query = parse_query("RETURN COUNT(*), SUM(a.x) PATTERN (A AS a)+ ; B AS b WITHIN 4 EVENTS")
    stream = _straddling_stream(12)
    marker = tmp_path / "killed"
    spark.conf.set(FAULT_CONF, f"kill:{marker}")
    try:
        got = _spark(spark, query, stream, TEST_SCHEMA, slice_size=3)
    finally:
        spark.conf.unset(FAULT_CONF)
    assert marker.exists()  # a worker did kill itself
    assert got == engine.run(query, stream, TEST_SCHEMA)


@pytest.mark.parametrize(
    "fault, lines",
    [
        ("raise-always", ["Spark job failed in a Python worker",
                          "  cause: RuntimeError: acel: injected fault on every task attempt "
                          "(test only)"]),
        ("kill-always", ["Spark job failed: task * in stage * failed 2 times",
                         "  cause: Python worker exited unexpectedly (crashed)"]),
    ],
)
def test_a_failed_job_is_a_short_error(spark: Any, fault: str, lines: list[str]) -> None:
    """Issue 17: no Java stack trace, two lines: what failed and the root cause."""
    from fnmatch import fnmatchcase

    from acel.spark_backend.failures import SparkJobError
    from acel.spark_backend.session import FAULT_CONF

    spark.conf.set(FAULT_CONF, fault)
    try:
        with pytest.raises(SparkJobError) as info:
            _spark(spark, "A ; B PARTITION BY k", _straddling_stream(12), TEST_SCHEMA)
    finally:
        spark.conf.unset(FAULT_CONF)
    got = str(info.value).splitlines()
    assert len(got) == len(lines) and all(fnmatchcase(g, w) for g, w in zip(got, lines)), got
    # Spark's full text stays on the error, for whoever needs it; the chain is not shown.
    assert info.value.__suppress_context__ and len(info.value.detail.splitlines()) > 4


def test_an_unreadable_file_is_a_short_error(spark: Any, tmp_path: Path) -> None:
    """The file is read by the single-process reader (issue 17): its one-line error."""
    from acel.spark_backend import run_to_results

    path = tmp_path / "events.parquet"
    path.write_text("not parquet\n" * 10)
    with pytest.raises(DataError) as info:
        run_to_results("A ; B", str(path), session=spark)
    assert str(info.value).startswith(f"{path}: cannot read Parquet: ")
    assert len(str(info.value).splitlines()) == 1 and "Exception" not in str(info.value)


def test_a_count_too_large_for_the_frame_is_a_clear_error(spark: Any) -> None:
    """2^130 does not fit DECIMAL(38,0): the executor's DataError reaches the caller."""
    stream = [Event.make(i, {"type": "A", "x": 1, "k": 0}) for i in range(130)]
    query = parse_query("RETURN k, COUNT(*) PATTERN (A AS a)+ PARTITION BY k")
    with pytest.raises(DataError, match=r"COUNT\(\*\) = \d+ does not fit"):
        _spark(spark, query, stream, TEST_SCHEMA)
