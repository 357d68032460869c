"""``acel.spark.run`` is lazy: no Spark job until an action, and the same results (issue 25 §4).

Jobs are counted with a job group and ``statusTracker``: building the result
frame must start none; the action then gives what the eager planner and the
single-process engine give.  The lazy plan (``spark_backend.lazy``) is also
cross-checked on generated queries and streams, as ``tests/test_spark.py`` does
for the eager one.
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

from acel.lang.ast import Query, Window
from acel.lang.clauses import Match
from acel.lang.errors import DataError
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

SETTINGS = spark_settings(10)

QUERIES = [
    "SELL AS a ; SELL AS b",  # one unit
    "SELL AS a ; SELL AS b PARTITION BY name",  # key buckets
    "SELL AS a ; BUY AS b WITHIN 3 EVENTS",  # slices by position
    "RETURN COUNT(*), SUM(b.price) PATTERN SELL AS a ; BUY AS b WITHIN 300 ON price",  # ON axis
    "RETURN COUNT(*) PATTERN SELL AS a ; BUY AS b WITHIN 4 EVENTS SLIDE 2 EVENTS",
    "RETURN COUNT(*), MAX(a.price) PATTERN SELL AS a ; BUY AS b",
]


def _jobs(spark: Any, group: str) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def _quiet_run(spark: Any, group: str, query: str, data: Any, **kw: Any) -> Any:
    import acel

    spark.sparkContext.setJobGroup(group, "acel.spark.run planning (test)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return acel.spark.run(query, data, session=spark, vars="json", **kw)
    finally:
        spark.sparkContext.setJobGroup("after-" + group, "actions (test)")


def _lazy(spark: Any, query: Query | str, data: Any, schema: Schema | None, **kw: Any) -> Any:
    from acel.spark_backend import run_to_results

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_to_results(query, data, schema=schema, session=spark, lazy=True, **kw)


def _plain(events: list[Event]) -> list[dict[str, Any]]:
    return [e.as_dict() for e in events]


@pytest.mark.parametrize("index", range(len(QUERIES)))
def test_building_the_frame_runs_no_job(spark: Any, index: int) -> None:
    """A DataFrame with its schema: zero jobs until ``collect``, then the engine's results."""
    import acel

    query = QUERIES[index]
    group = f"lazy-frame-{index}"
    frame = _quiet_run(spark, group, query, events_frame(spark, SPEC_STOCK_EVENTS),
                       schema=SPEC_STOCK_SCHEMA)
    assert _jobs(spark, group) == 0
    rows = frame.collect()
    expected = list(acel.run(query, _plain(SPEC_STOCK_EVENTS), schema=SPEC_STOCK_SCHEMA))
    assert len(rows) == len(expected) and len(rows) > 0
    got = _lazy(spark, query, events_frame(spark, SPEC_STOCK_EVENTS), SPEC_STOCK_SCHEMA)
    assert got == expected


@pytest.mark.parametrize("index", [1, 2, 3])
def test_a_file_is_planned_without_a_job(spark: Any, tmp_path: Path, index: int) -> None:
    """A path: read on the driver (its copy carries positions, keys and the axis are
    counted while writing), so no Spark job before the action either, schema inferred."""
    import acel

    path = tmp_path / "stocks.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _plain(SPEC_STOCK_EVENTS)))
    query = QUERIES[index]
    group = f"lazy-file-{index}"
    frame = _quiet_run(spark, group, query, str(path))
    assert _jobs(spark, group) == 0
    expected = list(acel.run(query, str(path)))
    assert len(frame.collect()) == len(expected)
    assert acel.spark.collect(query, str(path), session=spark) == expected


def test_a_files_keyed_slices_are_planned_without_a_job(spark: Any, tmp_path: Path) -> None:
    """Keyed time slices read from the file's copy (issue 31): the driver reads the ``ON``
    column with pyarrow to cut the slices, which is no Spark job either."""
    import acel

    path = tmp_path / "keyed.jsonl"
    path.write_text("".join(
        json.dumps({"type": "ABC"[(i * 7) % 3], "k": i % 3, "ts": i // 2, "v": i % 5}) + "\n"
        for i in range(200)))
    query = "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 6 ON ts"
    frame = _quiet_run(spark, "lazy-keyed-slices", query, str(path))
    assert _jobs(spark, "lazy-keyed-slices") == 0
    expected = list(acel.run(query, str(path)))
    assert len(frame.collect()) == len(expected) == 3
    assert acel.spark.collect(query, str(path), session=spark) == expected


@pytest.mark.slow
@SETTINGS
@given(queries(top_negation=True), streams(max_len=9), st.integers(1, 3), st.booleans())
def test_lazy_plan_equals_engine_on_generated_queries(
    spark: Any, query: Query, stream: list[Event], size: int, force_within: bool
) -> None:
    if force_within and query.within is None:
        query = replace(query, within=Window(3))
    expected = engine.run(query, stream, TEST_SCHEMA)
    assert _lazy(spark, query, events_frame(spark, stream), TEST_SCHEMA, slice_size=size) == expected


@pytest.mark.slow
@SETTINGS
@given(trend_queries(top_negation=True), streams(max_len=9), st.integers(1, 3))
def test_lazy_plan_equals_engine_on_generated_trend_queries(
    spark: Any, query: Query, stream: list[Event], size: int
) -> None:
    expected = engine.run(query, stream, TEST_SCHEMA)
    got = _lazy(spark, query, events_frame(spark, stream), TEST_SCHEMA, slice_size=size)
    assert _round(got) == _round(expected)


def _round(rows: list[Any]) -> list[Any]:
    """Floats may differ by summation order only (spec §4)."""
    from acel.lang.clauses import TrendRow

    return [
        TrendRow(r.key, r.window, tuple((n, round(v, 9) if isinstance(v, float) else v)
                                        for n, v in r.values))
        if isinstance(r, TrendRow) else r
        for r in rows
    ]


def test_a_frame_out_of_time_order_is_sorted_in_the_plan(spark: Any) -> None:
    """With a time column the plan sorts by (time, input order), stably, as the readers do."""
    import acel

    rows = [("A", 3, 1), ("B", 1, 2), ("A", 1, 3), ("B", 2, 4), ("A", 2, 5), ("B", 3, 6)]
    frame = spark.createDataFrame(rows, "type string, ts long, x long")
    query = "A AS a ; B AS b WITHIN 2 ON ts"
    group = "lazy-time"
    lazy_frame = _quiet_run(spark, group, query, frame, time_col="ts",
                            schema=Schema.of({"A": ["ts", "x"], "B": ["ts", "x"]}))
    assert _jobs(spark, group) == 0
    events = [{"type": t, "ts": ts, "x": x} for t, ts, x in rows]
    expected = list(acel.run(query, events, time_col="ts"))
    got = sorted((r["start"], r["end"]) for r in lazy_frame.collect())
    assert got == sorted((m.event.start, m.event.end) for m in expected if isinstance(m, Match))
    assert got
    assert _lazy(spark, query, frame, None, time_col="ts") == expected


def test_a_decreasing_on_axis_runs_as_one_unit(spark: Any) -> None:
    """The plan cannot know the axis' order beforehand: a decreasing axis found while
    the action runs makes one unit of the whole stream, exact as the eager fallback."""
    values = [5, 1, 9, 2, 8, 3, 7, 4]
    events = [Event(i, (("type", "A" if i % 2 else "B"), ("v", v))) for i, v in enumerate(values)]
    schema = Schema.of({"A": ["v"], "B": ["v"]})
    query = parse_query("B AS b ; A AS a WITHIN 3 ON v")
    expected = engine.run(query, events, schema)
    assert expected
    assert _lazy(spark, query, events_frame(spark, events), schema, slice_size=1) == expected


def test_bad_rows_fail_the_action_in_one_line(spark: Any) -> None:
    frame = spark.createDataFrame([("A", 1), (None, 2), ("", 3)], "type string, x long")
    with pytest.raises(DataError) as caught:
        _lazy(spark, "A AS a", frame, Schema.of({"A": ["x"]}))
    message = str(caught.value)
    assert "\n" not in message
    assert "bad input rows, nothing was run: 2 row(s) with a NULL or empty type" in message


def test_a_missing_axis_value_fails_the_action(spark: Any) -> None:
    frame = spark.createDataFrame([("A", 1), ("B", None), ("A", 3)], "type string, v long")
    with pytest.raises(DataError, match=r"1 event\(s\) have no numeric 'v'"):
        _lazy(spark, "A AS a ; A AS b WITHIN 5 ON v", frame, Schema.of({"A": ["v"], "B": ["v"]}))


def test_an_empty_stream_gives_the_identity_row(spark: Any) -> None:
    frame = spark.createDataFrame([], "type string, x long")
    got = _lazy(spark, "RETURN COUNT(*), SUM(a.x) PATTERN A AS a WITHIN 3 EVENTS", frame,
                Schema.of({"A": ["x"]}))
    assert [r.values for r in got] == [(("COUNT(*)", 0), ("SUM(a.x)", 0))]


class _NoSpark:
    """Stands in for a session: ``read_file``'s last step only builds a reader."""

    @property
    def read(self) -> Any:
        return self

    def schema(self, _: Any) -> Any:
        return self

    def parquet(self, path: str) -> str:
        return path


@pytest.mark.parametrize("columnar", ["given", "none", "absent"])
def test_a_files_copy_is_the_same_from_columnar_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columnar: str
) -> None:
    """``read_file`` writes the same copy from ``EventStream.arrow_batches`` (issue 23,
    columns in any order) as from ``batches``, and falls back when it gives ``None``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from acel.spark_backend import frames

    from acel.io.source import EventStream

    path = tmp_path / "e.jsonl"
    events = _plain(SPEC_STOCK_EVENTS) + [{"type": "BUY", "name": "X", "price": 2, "ts": 3}]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    plain = frames.read_file(_NoSpark(), str(path), keys=("name",))  # type: ignore[arg-type]
    expected = pq.read_table(plain.frame)
    calls: list[int] = []
    if columnar == "given":
        def arrow_batches(self: EventStream) -> Any:
            calls.append(1)
            order = sorted({"type", *self.schema.all_attributes()}, reverse=True)
            return (pa.RecordBatch.from_pylist([{n: r.get(n) for n in order} for r in rows])
                    for rows in self.batches())
    else:
        def arrow_batches(self: EventStream) -> Any:
            return None
    if columnar != "absent":
        monkeypatch.setattr(EventStream, "arrow_batches", arrow_batches, raising=False)
    got = frames.read_file(_NoSpark(), str(path), keys=("name",))  # type: ignore[arg-type]
    assert pq.read_table(got.frame).equals(expected)
    assert got.count == len(events) and got.facts is not None and plain.facts is not None
    assert got.facts.sizes == plain.facts.sizes and got.facts.sizes
    assert bool(calls) == (columnar == "given")


def test_keys_are_dealt_to_buckets_by_size_in_the_plan(spark: Any) -> None:
    """Largest first, snake order: 8 equal keys fill 8 buckets one each; with sizes
    8, 7, …, 1 on 4 buckets every bucket holds 9 events (hashing gave no such bound)."""
    from acel.spark_backend.executor import SLICE
    from acel.spark_backend.run import _bucketed_in_plan

    equal = spark.createDataFrame([(k,) for k in range(8) for _ in range(3)], "k long")
    placed = {r["k"]: r[SLICE] for r in _bucketed_in_plan(equal, ("k",), 8).collect()}
    assert sorted(placed.values()) == list(range(8))
    uneven = spark.createDataFrame([(k,) for k in range(1, 9) for _ in range(k)], "k long")
    load: dict[int, int] = {}
    for row in _bucketed_in_plan(uneven, ("k",), 4).collect():
        load[row[SLICE]] = load.get(row[SLICE], 0) + 1
    assert load == {0: 9, 1: 9, 2: 9, 3: 9}


def test_a_parquet_frame_is_planned_and_explained_without_a_job(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31's case: W0 per key from a Parquet DataFrame Spark reads, schema given.
    Building the frame and ``explain()`` start no job (the plan names the engine's
    ``MapInArrow``); the action gives the single process's rows."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    import acel

    rnd = random.Random(3)
    n = 600
    table = pa.table({"type": rnd.choices("ABC", [0.2, 0.6, 0.2], k=n), "ts": list(range(n)),
                      "v": [rnd.randrange(100) for _ in range(n)], "k": [rnd.randrange(3) for _ in range(n)]})
    path = tmp_path / "w0.parquet"
    pq.write_table(table, path)
    query = "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON ts"
    schema = Schema.of({t: ("ts", "v", "k") for t in "ABC"}, {"ts": "int", "v": "int", "k": "int"})
    data = spark.read.schema("type string, ts long, v long, k long").parquet(str(path))
    group = "lazy-parquet-w0"
    frame = _quiet_run(spark, group, query, data, schema=schema)
    spark.sparkContext.setJobGroup(group, "explain (test)")
    frame.explain()
    assert _jobs(spark, group) == 0
    assert "MapInArrow" in capsys.readouterr().out
    want = sorted(tuple(v for _, v in r.values) for r in acel.run(query, table.to_pylist(), schema=schema))
    got = sorted(tuple(int(v) for v in row) for row in frame.collect())
    assert got == want and len(got) == 3


def test_an_unsupported_query_is_refused_before_any_job(spark: Any) -> None:
    """Issue 32 item 5: the driver compiles the query as the executors would, so a query
    the compiled engine refuses is a clean ``UnsupportedQuery`` with no Spark job started
    (it was four failed task attempts, then a ``SparkJobError``)."""
    from acel.spark_backend import run_to_results

    from acel.lang.errors import UnsupportedQuery

    query = "(SELL AS x)+ ; (BUY AS y)+ FILTER x[price != y.price]"  # spec §5.1's refusal
    group = "unsupported-before-jobs"
    spark.sparkContext.setJobGroup(group, "an unsupported query (test)")
    try:
        with pytest.raises(UnsupportedQuery, match="!="):
            run_to_results(query, events_frame(spark, SPEC_STOCK_EVENTS),
                           schema=SPEC_STOCK_SCHEMA, session=spark)
        assert _jobs(spark, group) == 0
    finally:
        spark.sparkContext.setJobGroup("after-" + group, "actions (test)")
