"""Keyed time slices (issue 31): PARTITION BY with ``WITHIN d ON a`` cut by time.

The whole stream is sliced by its ``ON`` axis and every slice runs all its keys with
each key's own owned start range (papers/spark.md, Strategy 2, "Keyed slices"); a hot
key is spread over every slice.  The results must be the single process's, exactly:
generated streams with NULL keys, ties on the time value, a float axis, slices forced
tiny with ``slice_size``, RETURN rows and complex events, eager and lazy planners.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from acel.acea import engine
from hypothesis import given
from hypothesis import strategies as st
from spark_fixtures import SPARK_MARKS, events_frame, spark_settings

from acel.lang.clauses import TrendRow
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

pytestmark = SPARK_MARKS

SETTINGS = spark_settings(10)

SCHEMA = Schema.of({"A": ("k", "ts", "v"), "B": ("k", "ts", "v"), "C": ("k", "ts", "v")})

QUERIES = [
    "RETURN k, COUNT(*), SUM(b.v), MAX(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c "
    "PARTITION BY k WITHIN {d} ON ts",
    "RETURN k, COUNT(*), AVG(b.v) PATTERN A AS a ; (B AS b)+ PARTITION BY k WITHIN {d} ON ts",
    "A AS a ; B AS b PARTITION BY k WITHIN {d} ON ts",
    "A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN {d} ON ts",
    "NOT C ; A AS a ; B AS b PARTITION BY k WITHIN {d} ON ts",
    "RETURN k, COUNT(*) PATTERN A AS a ; B AS b ; NOT C PARTITION BY k WITHIN {d} ON ts",
]


@st.composite
def keyed_streams(draw: Any, max_len: int = 14) -> list[Event]:
    """Events of types A/B/C on a non-decreasing ``ts`` (ties, int or float), keys 0-2
    or missing, values small ints."""
    n = draw(st.integers(1, max_len))  # an empty frame has no ts column at all
    floats = draw(st.booleans())
    ts: float | int = 0.5 if floats else 0
    out = []
    for i in range(n):
        ts += draw(st.sampled_from([0, 0, 1, 2, 3])) * (0.75 if floats else 1)
        attrs: dict[str, Any] = {"type": draw(st.sampled_from("ABC")), "ts": ts,
                                 "v": draw(st.integers(-3, 5))}
        key = draw(st.sampled_from([0, 1, 1, 2, None]))
        if key is not None:
            attrs["k"] = key
        out.append(Event(i, tuple(sorted(attrs.items()))))
    return out


def _spark(spark: Any, query: str, events: list[Event], **kw: Any) -> Any:
    from acel.spark_backend import run_to_results

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_to_results(query, events_frame(spark, events), schema=SCHEMA, session=spark, **kw)


def _approx(rows: list[Any]) -> list[Any]:
    """Floats may differ by summation order only (spec §4)."""
    return [TrendRow(r.key, r.window, tuple((n, round(v, 9) if isinstance(v, float) else v)
                                            for n, v in r.values)) if isinstance(r, TrendRow) else r
            for r in rows]


def _seeded(n: int, seed: int, floats: bool = False) -> list[Event]:
    """A dense stream (many complex events per key): keys 0-2 or missing, ``ts`` with ties."""
    import random

    rng = random.Random(seed)
    out, ts = [], 0.0
    for i in range(n):
        ts += rng.choice([0, 0, 1]) * (0.5 if floats else 1)
        attrs: dict[str, Any] = {"type": rng.choice("AABBBC"), "ts": ts if floats else int(ts),
                                 "v": rng.randint(-2, 9)}
        key = rng.choice([0, 1, 2, 2, 2, None])
        if key is not None:
            attrs["k"] = key
        out.append(Event(i, tuple(sorted(attrs.items()))))
    return out


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("floats, size", [(False, 2), (True, 1.25), (False, None)])
def test_keyed_slices_on_a_dense_stream(spark: Any, text: str, floats: bool, size: float | None) -> None:
    from acel.spark_backend import plan
    from acel.spark_backend.run import _collect, results_of

    stream = _seeded(120, 7, floats)
    query = parse_query(text.format(d=3))
    planned = plan(query, events_frame(spark, stream), schema=SCHEMA, session=spark, slice_size=size)
    assert planned.strategy.kind == "slice"
    expected = engine.run(query, stream, SCHEMA)
    assert len(expected) > 2 and (query.returns is None or any(r.values[1][1] for r in expected))
    assert _approx(results_of(planned, _collect(planned.frame))) == _approx(expected)


@pytest.mark.parametrize("clauses, kind", [
    ("PARTITION BY k WITHIN 3 ON ts", "slice"),
    ("PARTITION BY k WITHIN 3 EVENTS", "partition"),  # counted per key: not bounded by time
    ("PARTITION BY k WITHIN 6 ON ts SLIDE 3 ON ts", "partition"),
    ("PARTITION BY k", "partition"),
])
def test_which_keyed_queries_are_sliced(clauses: str, kind: str) -> None:
    from acel.spark_backend.partitioning import choose

    query = parse_query(f"RETURN k, COUNT(*) PATTERN A AS a ; B AS b {clauses}")
    assert choose(query, attr_monotone=True).kind == kind
    assert choose(query, attr_monotone=False).kind == "partition"
    strategy = parse_query(f"SELECT NEXT A AS a ; B AS b {clauses}")
    assert choose(strategy, attr_monotone=True).kind == "partition"


@SETTINGS
@given(st.sampled_from(QUERIES), keyed_streams(), st.integers(1, 4), st.sampled_from([0.5, 1, 2, 3]),
       st.booleans())
def test_keyed_slices_equal_the_single_process(
    spark: Any, text: str, stream: list[Event], d: int, size: float, lazy: bool
) -> None:
    query = parse_query(text.format(d=d))
    expected = engine.run(query, stream, SCHEMA)
    got = _spark(spark, query, stream, slice_size=size, lazy=lazy)
    assert _approx(got) == _approx(expected)


def test_a_hot_key_is_spread_over_every_slice(spark: Any) -> None:
    """90 % of the events on one key: every slice holds some of them, the rows are exact."""
    from acel.spark_backend import plan
    from acel.spark_backend.run import _collect, results_of

    stream = [Event(i, (("k", 0 if i % 10 else 1 + i % 3), ("ts", i // 2), ("type", "ABC"[(i * 7) % 3]),
                        ("v", i % 5))) for i in range(400)]
    query = QUERIES[0].format(d=5)
    planned = plan(query, events_frame(spark, stream), schema=SCHEMA, session=spark, partitions=2)
    assert planned.strategy.kind == "slice"
    assert results_of(planned, _collect(planned.frame)) == engine.run(parse_query(query), stream, SCHEMA)


# ------------------------------------------------------------------ read straight from the copy


def _write(path: Any, stream: list[Event]) -> str:
    from acel.io.lines import object_json

    with open(path, "wb") as handle:
        for event in stream:
            handle.write(object_json(event.as_dict()) + b"\n")
    return str(path)


FILE_QUERIES = [*QUERIES, "RETURN COUNT(*), MIN(b.v) PATTERN A AS a ; (B AS b)+ WITHIN {d} ON ts",
                "A AS a ; B AS b WITHIN {d} ON ts"]


@pytest.mark.parametrize("text", FILE_QUERIES)
@pytest.mark.parametrize("floats, size", [(False, 2), (True, 1.25), (False, None)])
def test_a_files_slices_are_read_from_its_copy_by_the_tasks(
    spark: Any, tmp_path: Any, text: str, floats: bool, size: float | None
) -> None:
    """No stage scans the copy and shuffles it: ``spark.range`` + ``mapInArrow`` reading
    the row groups of each slice; the results are the single process's."""
    from acel.spark_backend import plan
    from acel.spark_backend.run import _collect, results_of

    stream = _seeded(150, 11, floats)
    path = _write(tmp_path / "s.jsonl", stream)
    query = parse_query(text.format(d=3))
    planned = plan(query, path, schema=SCHEMA, session=spark, slice_size=size)
    assert planned.strategy.kind == "slice"
    shown = planned.frame._jdf.queryExecution().executedPlan().toString()
    assert "Range" in shown and "Scan parquet" not in shown, shown
    try:
        got = results_of(planned, _collect(planned.frame))
    finally:
        planned.stream.release()
    assert _approx(got) == _approx(engine.run(query, stream, SCHEMA))


def test_a_file_whose_axis_decreases_keeps_the_key_buckets(spark: Any, tmp_path: Any) -> None:
    import acel

    stream = _seeded(60, 3)
    stream = [Event(e.time, tuple((n, (100 - e.time) if n == "ts" else v) for n, v in e.attrs))
              if e.time == 30 else e for e in stream]
    path = _write(tmp_path / "s.jsonl", stream)
    query = parse_query(QUERIES[0].format(d=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = acel.spark.collect(query, path, schema=SCHEMA, session=spark)
    assert got == engine.run(query, stream, SCHEMA)
