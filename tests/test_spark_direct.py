"""A sliced query's Parquet file read in place by the tasks: no driver copy (issue 31).

A Parquet file of plain columns in stream order, under a query cut into time slices
on ``WITHIN d ON a``, is checked on the driver by the single-process reader and read
by each engine task from the user's own file (``spark_backend/in_place.py``): no
``.acel-spark-*`` folder is written, the plan is ``Range`` + ``MapInArrow`` with no
Parquet scan, and the results are the single process's on the same file.  A file out
of time order, a timestamp column, or a DataFrame that is more than a bare scan keeps
the old path, with the same results.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from spark_fixtures import SPARK_MARKS

from acel.lang.clauses import TrendRow
from acel.lang.errors import DataError
from acel.lang.parser import parse_query

pytestmark = SPARK_MARKS

QUERIES = [
    "RETURN k, COUNT(*), SUM(b.v), MAX(b.f) PATTERN A AS a ; (B AS b)+ ; C AS c "
    "PARTITION BY k WITHIN {d} ON ts",
    "A AS a ; B AS b PARTITION BY k WITHIN {d} ON ts",
    "RETURN COUNT(*), MIN(b.v) PATTERN A AS a ; (B AS b)+ WITHIN {d} ON ts",
    "NOT C ; A AS a ; B AS b WITHIN {d} ON ts",
]


def _columns(n: int, seed: int, keys: int, floats: bool) -> dict[str, list[Any]]:
    """A dense W0-like stream: ``ts`` never decreasing (ties), keys NULL on some events,
    a float column with NaN and NULL, a text column NULL on some types."""
    import random

    rng = random.Random(seed)
    out: dict[str, list[Any]] = {"type": [], "ts": [], "v": [], "k": [], "f": [], "s": []}
    ts = 0.0
    for _ in range(n):
        ts += rng.choice([0, 0, 1]) * (0.5 if floats else 1)
        kind = rng.choice("AABBBC")
        out["type"].append(kind)
        out["ts"].append(ts if floats else int(ts))
        out["v"].append(rng.randint(-2, 9))
        out["k"].append(None if rng.random() < 0.15 else rng.randrange(keys))
        out["f"].append(rng.choice([float("nan"), None, rng.uniform(-5, 5), 2.5]))
        out["s"].append(None if kind == "C" else rng.choice(["x", "y"]))
    return out


def _write(path: Path, columns: dict[str, list[Any]], group: int = 64) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path, row_group_size=group)
    return str(path)


def _approx(rows: list[Any]) -> list[Any]:
    """Floats may differ by summation order only (spec §4)."""
    return [TrendRow(r.key, r.window, tuple((n, round(v, 9) if isinstance(v, float) else v)
                                            for n, v in r.values)) if isinstance(r, TrendRow) else r
            for r in rows]


def _single(text: str, path: str, **kw: Any) -> list[Any]:
    import acel

    return list(acel.run(text, path, **kw))


def _spark(spark: Any, text: str, data: Any, **kw: Any) -> tuple[Any, list[Any]]:
    from acel.spark_backend import plan
    from acel.spark_backend.run import _collect, results_of

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planned = plan(parse_query(text), data, session=spark, **kw)
        try:
            return planned, results_of(planned, _collect(planned.frame))
        finally:
            planned.stream.release()


def _copies(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".acel-spark-")]


def _executed(planned: Any) -> str:
    return str(planned.frame._jdf.queryExecution().executedPlan().toString())


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("floats, size, keys", [(False, 2, 3), (True, 1.25, 8), (False, None, 300)])
def test_a_parquet_file_in_order_is_read_in_place(
    spark: Any, tmp_path: Path, text: str, floats: bool, size: float | None, keys: int
) -> None:
    path = _write(tmp_path / "s.parquet", _columns(900, 5, keys, floats))
    text = text.format(d=3)
    planned, got = _spark(spark, text, path, slice_size=size)
    assert planned.strategy.kind == "slice" and planned.stream.in_place is not None
    assert _copies(tmp_path) == []
    shown = _executed(planned)
    assert "Range" in shown and "Scan parquet" not in shown, shown
    expected = _single(text, path)
    assert len(expected) > 2 or expected[0].values[0][1] > 2  # not a trivial result
    assert _approx(got) == _approx(expected)


def test_in_place_equals_the_copy(spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """The same rows through the copy (``ACEL_SPARK_IN_PLACE=0``) and in place, with a
    time column named ``ts`` and the type in a column ``kind``."""
    from acel.spark_backend.in_place import IN_PLACE_ENV

    columns = _columns(700, 9, 8, False)
    columns["kind"] = columns.pop("type")
    path = _write(tmp_path / "s.parquet", columns)
    text = QUERIES[0].format(d=4)
    planned, direct = _spark(spark, text, path, type_col="kind", time_col="ts")
    assert planned.stream.in_place is not None
    monkeypatch.setenv(IN_PLACE_ENV, "0")
    planned, copied = _spark(spark, text, path, type_col="kind", time_col="ts")
    assert planned.stream.in_place is None
    assert _approx(direct) == _approx(copied) == _approx(_single(text, path, type_col="kind", time_col="ts"))


def test_a_file_out_of_time_order_is_copied(spark: Any, tmp_path: Path) -> None:
    columns = _columns(400, 3, 8, False)
    columns["ts"][100], columns["ts"][101] = columns["ts"][101] + 1, columns["ts"][100]
    path = _write(tmp_path / "s.parquet", columns)
    text = QUERIES[0].format(d=3)
    planned, got = _spark(spark, text, path, time_col="ts")
    assert planned.stream.in_place is None and planned.strategy.kind == "slice"
    assert _approx(got) == _approx(_single(text, path, time_col="ts"))


def test_a_timestamp_column_keeps_the_copy(spark: Any, tmp_path: Path) -> None:
    """A column the reader converts row-wise (a timestamp) is not read in place."""
    import datetime

    columns: dict[str, Any] = _columns(300, 4, 8, False)
    base = datetime.datetime(2026, 1, 1)
    columns["when"] = [base + datetime.timedelta(seconds=t) for t in columns["ts"]]
    path = _write(tmp_path / "s.parquet", columns)
    text = "RETURN k, COUNT(*), MAX(b.when) PATTERN A AS a ; B AS b PARTITION BY k WITHIN 3 ON ts"
    planned, got = _spark(spark, text, path)
    assert planned.stream.in_place is None
    assert _approx(got) == _approx(_single(text, path))


def test_a_bare_dataframe_scan_is_read_in_place_and_stays_lazy(spark: Any, tmp_path: Path) -> None:
    import acel

    path = _write(tmp_path / "s.parquet", _columns(800, 6, 8, False))
    text = QUERIES[0].format(d=3)
    frame = spark.read.parquet(path)
    planned, got = _spark(spark, text, frame, lazy=True)
    assert planned.stream.in_place is not None and planned.stream.in_place.path == path
    assert "Scan parquet" not in _executed(planned)
    assert _approx(got) == _approx(_single(text, path))
    group = "acel-in-place-lazy"
    spark.sparkContext.setJobGroup(group, "planning (test)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = acel.spark.run(text, frame, session=spark)
    finally:
        spark.sparkContext.setJobGroup("after-" + group, "actions (test)")
    assert len(spark.sparkContext.statusTracker().getJobIdsForGroup(group)) == 0
    assert result.count() == len(got)


def test_a_filtered_or_selected_dataframe_keeps_the_dataframe_path(spark: Any, tmp_path: Path) -> None:
    path = _write(tmp_path / "s.parquet", _columns(500, 8, 8, False))
    text = QUERIES[0].format(d=3)
    frame = spark.read.parquet(path)
    for changed in (frame.filter("v > 0"), frame.select("type", "ts", "v", "k", "f")):
        planned, got = _spark(spark, text, changed, lazy=True)
        assert planned.stream.in_place is None
        rows = changed.toPandas()
        assert _approx(got) == _approx(_single(text, rows))


def test_a_prefetched_check_is_taken_and_its_error_raised_unchanged(spark: Any, tmp_path: Path) -> None:
    """``acel run --engine spark`` starts only the driver's check before the JVM (no copy)."""
    from acel.spark_backend import in_place
    from acel.spark_backend.run import prefetch

    path = _write(tmp_path / "s.parquet", _columns(400, 2, 8, False))
    text = QUERIES[0].format(d=3)
    prefetch(parse_query(text), path)
    assert len(in_place.PENDING) == 1
    planned, got = _spark(spark, text, path)
    assert not in_place.PENDING and planned.stream.in_place is not None
    assert _approx(got) == _approx(_single(text, path))
    bad = _columns(10, 2, 8, False)
    bad["type"][3] = None
    path = _write(tmp_path / "bad.parquet", bad)
    prefetch(parse_query(text), path)  # no error here: it is the run's to raise
    with pytest.raises(DataError) as fetched:
        _spark(spark, text, path)
    assert not in_place.PENDING
    assert str(fetched.value) == f"{path}: 1 bad row:\n  row 4, column 'type': event type is NULL"


@pytest.mark.parametrize("lo, hi", [(0, 7), (95, 105), (130, 300), (299, 300), (0, 300), (64, 192)])
def test_a_tasks_rows_are_read_across_row_groups_and_stop_at_the_last(tmp_path: Path, lo: int, hi: int) -> None:
    """``direct_read._rows``: rows ``[lo, hi)`` of a file of row groups of 100 rows read
    in batches of 32, equal to slicing the whole file."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from acel.spark_backend import direct_read

    path = tmp_path / "g.parquet"
    pq.write_table(pa.table({"a": np.arange(300), "b": np.arange(300) * 2.0}), path, row_group_size=100)
    handle = pq.ParquetFile(path)
    first, last = lo // 100, (hi + 99) // 100
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(direct_read, "ROWS_AT_ONCE", 32)
        got = direct_read._rows(handle, ["a", "b"], list(range(first, last)), first * 100, lo, hi)
    assert got.column("a").to_pylist() == list(range(lo, hi))
    assert got.column("b").to_pylist() == [2.0 * i for i in range(lo, hi)]


@pytest.mark.parametrize("once", ["1", "0"], ids=["marks", "second-read"])
def test_bracketed_slices_give_the_cuts_results_and_a_failed_attempt_is_retried(
    spark: Any, tmp_path: Path, monkeypatch: Any, once: str
) -> None:
    """Slices bracketed from the check's marks of ``ts`` (cut exactly in the tasks) give
    the single process's rows, as the driver's cuts from a second read do; the injected
    fault fires before a task's first slice holding rows and its retry gives them too."""
    from acel.spark_backend import file_facts
    from acel.spark_backend.in_place import ONE_READ_ENV
    from acel.spark_backend.session import FAULT_CONF

    monkeypatch.setattr(file_facts, "AXIS_STEP", 50)  # marks inside every slice
    monkeypatch.setenv(ONE_READ_ENV, once)
    path = _write(tmp_path / "s.parquet", _columns(900, 13, 5, False))
    text = QUERIES[0].format(d=3)
    spark.conf.set(FAULT_CONF, "true")
    try:
        planned, got = _spark(spark, text, path, slice_size=2)
    finally:
        spark.conf.unset(FAULT_CONF)
    assert planned.stream.in_place is not None
    assert bool(planned.stream.in_place.index) == (once == "1")
    assert _approx(got) == _approx(_single(text, path))
    spark.conf.set(FAULT_CONF, "raise-always")  # the fault really fires on this path
    try:
        with pytest.raises(Exception, match="injected"):
            _spark(spark, text, path, slice_size=2)
    finally:
        spark.conf.unset(FAULT_CONF)
