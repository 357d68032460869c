"""The native trend core inside Spark's executors (issue 23 §3).

Engine tasks report which path each unit took (``executor.PATHS``, written to
the ``ACEL_SPARK_TRACE`` file): the C core (``native``) or pure Python.  The
driver's ``ACEL_NATIVE`` travels with the task (``UnitSpec.native``), so
``ACEL_NATIVE=0`` gives pure Python in the executors too, with the same
results; a worker without the extension falls back with the same results
(checked in-process: the extension cannot be removed from a running worker).
"""

from __future__ import annotations

import json
import math
import random
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from spark_fixtures import SPARK_MARKS

from acel.lang.parser import parse_query
from acel.lang.schema import Schema

pytestmark = SPARK_MARKS

W0_RETURN = "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON ts"
W0_SLICED = "RETURN COUNT(*), SUM(b.v), MAX(c.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
W0_WHOLE = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c"
W0_MATCH = "A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 5 ON ts"


def _w0(path: Path, n: int = 3000, keys: int = 3) -> Path:
    """W0 (bench/pipeline.py) with a key ``k``, as JSON Lines."""
    rnd = random.Random(5)
    with open(path, "w", encoding="utf-8") as handle:
        for ts, kind in enumerate(rnd.choices("ABC", [0.2, 0.6, 0.2], k=n)):
            record = {"type": kind, "ts": ts, "v": rnd.randrange(100), "k": rnd.randrange(keys)}
            handle.write(json.dumps(record) + "\n")
    return path


def _single(query: str, path: Path) -> list[Any]:
    import acel

    return sorted(acel.run(query, str(path)), key=repr)


def _traced(spark: Any, query: str, path: Path, trace: Path, monkeypatch: pytest.MonkeyPatch,
            native: str = "auto", feeds: dict[str, int] | None = None) -> tuple[list[Any], dict[str, int]]:
    """Results through Spark and the units per path the engine tasks reported (per feed
    into ``feeds`` when given)."""
    from acel.spark_backend import run_to_results

    trace.unlink(missing_ok=True)
    monkeypatch.setenv("ACEL_SPARK_TRACE", str(trace))
    # the driver's setting travels with the tasks: "auto" whatever the workers' environment
    monkeypatch.setenv("ACEL_NATIVE", native)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NotParallelWarning of the one-unit query
        results = run_to_results(query, str(path), session=spark)
    paths: dict[str, int] = {}
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        for name, count in record["paths"].items():
            paths[name] = paths.get(name, 0) + count
        for name, count in record["feeds"].items():
            if feeds is not None:
                feeds[name] = feeds.get(name, 0) + count
    return sorted(results, key=repr), paths


@pytest.mark.parametrize("query, n, path, feed", [
    (W0_RETURN, 3000, "native", "columns"),  # key buckets: Arrow columns into each key's core
    (W0_WHOLE, 40, "native", "columns"),  # one unit, its columns in blocks
    (W0_WHOLE, 130, "handed-over", "columns"),  # counts past 2^63: exact Python ints from there on
    (W0_SLICED, 3000, "native", "columns"),  # time slices: COUNT, SUM, MAX states from the core
])
def test_engine_tasks_report_their_path_and_acel_native_0_falls_back(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str, n: int, path: str, feed: str
) -> None:
    from acel.acea.engine import native_trend

    if not native_trend.available():
        pytest.skip("the native core is not built")
    data = _w0(tmp_path / "w0.jsonl", n=n)
    expected = _single(query, data)
    feeds: dict[str, int] = {}
    native, paths = _traced(spark, query, data, tmp_path / "trace.jsonl", monkeypatch, feeds=feeds)
    assert native == expected
    assert set(paths) == {path}
    assert set(feeds) == {feed}
    if path == "handed-over":
        assert any(isinstance(v, int) and v >= 2**63 for row in native for _, v in row.values)
    python, paths = _traced(spark, query, data, tmp_path / "trace.jsonl", monkeypatch, "0")
    assert python == expected
    assert set(paths) == {"python"}


def test_per_match_units_report_python(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _w0(tmp_path / "w0.jsonl", n=600)
    found, paths = _traced(spark, W0_MATCH, data, tmp_path / "trace.jsonl", monkeypatch)
    assert found == _single(W0_MATCH, data)
    assert set(paths) == {"python"}


# ------------------------------------------------------------------ in one process


def _spec_and_table(query: str) -> tuple[Any, pa.Table]:
    """A unit spec as the planner makes it, and one task's rows in two units (two key
    buckets, or two halves of the stream)."""
    from acel.spark_backend.executor import POS, SLICE, UnitSpec

    parsed = parse_query(query)
    keyed = bool(parsed.partition_by)
    schema = Schema.of({t: ("k", "ts", "v") for t in "ABC"}, {"k": "int", "ts": "int", "v": "int"})
    rnd = random.Random(11)
    n = 4000
    keys = [rnd.randrange(4) for _ in range(n)]
    table = pa.table({
        "type": rnd.choices("ABC", [0.2, 0.6, 0.2], k=n),
        "ts": list(range(n)),
        "v": [rnd.randrange(100) for _ in range(n)],
        "k": keys,
        POS: list(range(n)),
        SLICE: [k % 2 for k in keys] if keyed else [int(p >= n // 2) for p in range(n)],
    })
    items = [("COUNT(*)", pa.decimal128(38, 0)), ("SUM(b.v)", pa.decimal128(38, 0))]
    spec = UnitSpec(query=parsed, schema=schema, mode="rows", attr_columns=("k", "ts", "type", "v"),
                    key_names=("k",) if keyed else (), item_kinds=("decimal", "decimal"),
                    window_kind=None, out_schema=pa.schema([("k", pa.int64())] * keyed + items))
    return spec, table


def _rows(spec: Any, table: pa.Table, path: str) -> list[Any]:
    """One task's rows, checking that every unit took ``path``."""
    from acel.spark_backend import executor

    before = executor.PATHS.copy()
    got = pa.Table.from_batches(list(executor.evaluate_task(table.to_batches(max_chunksize=700), spec)))
    assert set(executor.PATHS - before) == {path}
    return sorted(got.to_pylist(), key=repr)


@pytest.mark.parametrize("query", [
    "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON ts",
    "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts",
])
def test_a_worker_without_the_extension_gives_the_same_rows(
    monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    from acel.acea.engine import native_trend

    spec, table = _spec_and_table(query)
    monkeypatch.delenv("ACEL_NATIVE", raising=False)
    native = _rows(spec, table, "native" if native_trend.available() else "python")
    monkeypatch.setattr(native_trend, "_native_core", None)
    assert _rows(spec, table, "python") == native
    assert len(native) == 4 if spec.key_names else 2
    assert all(r["COUNT(*)"] > 0 for r in native)


def test_the_drivers_acel_native_overrides_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    from acel.acea.engine import native_trend
    from acel.spark_backend import executor

    if not native_trend.available():
        pytest.skip("the native core is not built")
    spec, table = _spec_and_table("RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts")
    monkeypatch.setenv("ACEL_NATIVE", "1")  # the worker's own setting
    off = _rows(replace(spec, native="0"), table, "python")
    assert executor.os.environ["ACEL_NATIVE"] == "1"  # restored after the task
    assert _rows(spec, table, "native") == off


# ------------------------------------------------------------------ columns against maps

FEED_QUERIES = [
    "RETURN k, COUNT(*), SUM(b.v), MAX(c.w) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 6 ON ts",
    "RETURN COUNT(*), SUM(b.v), MIN(b.w) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 4 EVENTS",
    "RETURN COUNT(*), AVG(b.w) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[w > 1.5 OR v < 10] WITHIN 6 ON ts",
    "RETURN k, COUNT(*), SUM(a.v) PATTERN (A AS a)+ ; C AS c PARTITION BY k",
]
_FEED_SCHEMA = Schema.of({t: ("k", "ts", "v", "w") for t in "ABCD"},
                         {"k": "int", "ts": "int", "v": "int", "w": "float"})


def _feed_rows(query: Any, table: pa.Table, owned: Any, feed: str) -> tuple[list[str], dict[str, int]]:
    """``unit_run``'s results on one unit through ``feed``: columns, maps or events."""
    from acel.spark_backend import executor

    spec = executor.UnitSpec(query=query, schema=_FEED_SCHEMA, mode="rows",
                             attr_columns=tuple(c for c in table.column_names if not c.startswith("__")),
                             key_names=(), item_kinds=(), window_kind=None, out_schema=pa.schema([]),
                             sliced=owned is not None)
    positions = table.column(executor.POS).to_pylist()
    before = executor.FEEDS.copy()
    with pytest.MonkeyPatch.context() as patch:
        if feed == "maps":
            patch.setattr(executor, "unit_blocks", lambda *_: None)
        with executor.native_mode("0" if feed == "events" else "auto"):
            found = executor.unit_run(query, spec, table, positions, owned)
    return [repr(r) for r in found], dict(executor.FEEDS - before)


_maybe = st.one_of(st.none(), st.integers(-5, 40))
_event = st.tuples(st.sampled_from("ABCD"), st.one_of(st.none(), st.integers(0, 2)), _maybe,
                   st.one_of(st.none(), st.just(math.nan), st.floats(-3, 3, allow_nan=False)),
                   st.integers(0, 2))


@given(query_at=st.integers(0, len(FEED_QUERIES) - 1), rows=st.lists(_event, max_size=40),
       owned_from=st.integers(0, 40), owned_len=st.one_of(st.none(), st.integers(0, 40)),
       drop_w=st.booleans())
def test_arrow_columns_into_the_core_give_the_maps_rows(
    query_at: int, rows: list[Any], owned_from: int,
    owned_len: int | None, drop_w: bool,
) -> None:
    """A unit's Arrow columns into the native core (issue 31) give the rows, in order, of
    attribute maps into the core and of pure Python, with NULL and NaN values, types the
    query does not name, a column the task lacks and a slice's owned starts."""
    from acel.acea.engine import native_trend
    from acel.spark_backend.executor import POS

    if not native_trend.available():
        pytest.skip("the native core is not built")
    query = parse_query(FEED_QUERIES[query_at])
    ts = 0
    data: dict[str, list[Any]] = {"type": [], "k": [], "ts": [], "v": [], "w": [], POS: []}
    for position, (kind, key, v, w, step) in enumerate(rows):
        ts += step
        for name, value in zip(("type", "k", "ts", "v", "w", POS), (kind, key, ts, v, w, position)):
            data[name].append(value)
    table = pa.table({n: pa.array(vals, pa.float64() if n == "w" else pa.string() if n == "type"
                                  else pa.int64()) for n, vals in data.items()})
    if drop_w:
        table = table.drop(["w"])
    owned = None if owned_len is None or query.partition_by else range(
        min(owned_from, len(rows)), min(owned_from + owned_len, len(rows)))
    columns, fed = _feed_rows(query, table, owned, "columns")
    assert fed == {"columns": 1}
    maps, fed = _feed_rows(query, table, owned, "maps")
    assert fed == {"maps": 1}
    events, fed = _feed_rows(query, table, owned, "events")
    assert fed == {"events": 1}
    assert columns == maps == events


def test_a_slide_query_keeps_the_maps_feed() -> None:
    """SLIDE windows are not read from columns (``Runner.column_spec``): the maps feed."""
    from acel.acea.engine import native_trend
    from acel.spark_backend.executor import POS

    if not native_trend.available():
        pytest.skip("the native core is not built")
    query = parse_query("RETURN COUNT(*) PATTERN A AS a ; C AS c WITHIN 4 EVENTS SLIDE 2 EVENTS")
    table = pa.table({"type": list("ACAC"), POS: [0, 1, 2, 3]})
    found, fed = _feed_rows(query, table, None, "columns")
    assert fed == {"maps": 1}
    assert found == _feed_rows(query, table, None, "events")[0]


@pytest.mark.parametrize("query, path", [
    ("RETURN COUNT(*), SUM(b.v), MAX(c.v), MIN(a.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts",
     "native"),
    ("RETURN COUNT(*), AVG(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts", "python"),
])
def test_time_slices_states_from_the_core_equal_the_state_twins(query: str, path: str) -> None:
    """A time slice's partial states: COUNT, SUM, MIN and MAX finish with their state, so
    the slice runs on the native core (``executor.SELF_STATED``) and gives the states the
    pure-Python state twins give; AVG still needs its twin (Python)."""
    import pickle

    from acel.acea.engine import native_trend
    from acel.spark_backend import executor
    from acel.spark_backend.executor import OWN, POS, SLICE, STATE, WINDOW_HI, WINDOW_LO

    if not native_trend.available():
        pytest.skip("the native core is not built")
    rnd = random.Random(13)
    n = 3000
    table = pa.table({
        "type": rnd.choices("ABC", [0.2, 0.6, 0.2], k=2 * n), "ts": [p % n for p in range(2 * n)],
        "v": [rnd.randrange(100) for _ in range(2 * n)], POS: [p % n for p in range(2 * n)],
        SLICE: [p // n for p in range(2 * n)],  # two slices of one stream: owned halves
        OWN: [(p // n == 0) == (p % n < n // 2) for p in range(2 * n)],
    })
    schema = Schema.of({t: ("ts", "v") for t in "ABC"}, {"ts": "int", "v": "int"})
    spec = executor.UnitSpec(
        query=parse_query(query), schema=schema, mode="partial", attr_columns=("ts", "type", "v"),
        key_names=(), item_kinds=(), window_kind=None, sliced=True,
        out_schema=pa.schema([(WINDOW_LO, pa.int64()), (WINDOW_HI, pa.int64()), (STATE, pa.binary())]))

    def states(spec: Any, expected_path: str) -> list[Any]:
        before = executor.PATHS.copy()
        got = pa.Table.from_batches(list(executor.evaluate_task(table.to_batches(max_chunksize=1000), spec)))
        assert set(executor.PATHS - before) == {expected_path}
        return [pickle.loads(b) for b in got.column(STATE).to_pylist()]

    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ACEL_NATIVE", raising=False)
        from_core = states(spec, path)
        patch.setattr(executor, "SELF_STATED", ())
        twins = states(spec, "python")
    assert from_core == twins and len(twins) == 2 and all(s[0] > 0 for s in twins)
