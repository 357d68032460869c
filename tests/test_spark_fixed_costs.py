"""Spark's fixed costs (issue 23 §3): the driver's reading of a file overlaps the JVM's start.

``spark_backend.run.prefetch`` (called by ``acel run --engine spark`` before it
starts the session) copies the file in a background thread; ``read_file`` with
the same arguments takes that copy.  The copy, the planning facts and every
error must be those of a reading started without it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spark_fixtures import SPARK_MARKS

from acel.lang.errors import DataError
from acel.lang.parser import parse_query

pytestmark = SPARK_MARKS

@pytest.fixture(autouse=True)
def driver_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the driver's copy: JSON Lines goes through it here too (by
    default the executors read JSON Lines and CSV, ``tests/test_spark_datasource.py``)."""
    monkeypatch.setenv("ACEL_SPARK_FILE_READ", "copy")


QUERY = "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 3 ON ts"


def _file(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


ROWS = [{"type": "ABCB"[i % 4], "ts": i, "v": i * 3 % 7, "k": i % 2} for i in range(40)]


def test_copy_file_is_what_read_file_writes_without_spark(tmp_path: Path) -> None:
    from acel.spark_backend import frames

    data = _file(tmp_path / "e.jsonl", ROWS)
    copy = frames.copy_file(str(data), keys=("k",), axes=("ts",))
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(copy.target)
        assert copy.count == table.num_rows == 40
        assert table.column(frames.POS).to_pylist() == list(range(40))
        assert copy.facts.sizes == {(0,): 20, (1,): 20}
    finally:
        frames._remove(copy.folder)


def test_a_prefetched_copy_is_taken_by_read_file(spark: Any, tmp_path: Path) -> None:
    from acel.spark_backend import frames
    from acel.spark_backend.run import prefetch, run_to_results

    data = _file(tmp_path / "e.jsonl", ROWS)
    plain = run_to_results(QUERY, str(data), session=spark)
    prefetch(parse_query(QUERY), str(data))
    assert len(frames._PREFETCHED) == 1
    assert run_to_results(QUERY, str(data), session=spark) == plain
    assert not frames._PREFETCHED  # taken, not read twice
    assert len(plain) == 2


def test_a_prefetch_with_other_arguments_is_not_taken(spark: Any, tmp_path: Path) -> None:
    from acel.spark_backend import frames
    from acel.spark_backend.run import prefetch, run_to_results

    data = _file(tmp_path / "e.jsonl", ROWS)
    prefetch(parse_query("A AS a ; B AS b"), str(data))  # no keys, no axis
    try:
        assert len(run_to_results(QUERY, str(data), session=spark)) == 2
        assert len(frames._PREFETCHED) == 1
    finally:
        frames._PREFETCHED.clear()


def test_a_prefetched_files_error_is_raised_by_the_run_unchanged(spark: Any, tmp_path: Path) -> None:
    from acel.spark_backend.run import prefetch, run_to_results

    data = _file(tmp_path / "bad.jsonl", ROWS[:3])
    with open(data, "a", encoding="utf-8") as handle:
        handle.write('{"type": "A", "ts": 3, "v": 1, "k": 0\n')
    with pytest.raises(DataError) as plain:
        run_to_results(QUERY, str(data), session=spark)
    prefetch(parse_query(QUERY), str(data))  # no error here: it is the run's to raise
    with pytest.raises(DataError) as fetched:
        run_to_results(QUERY, str(data), session=spark)
    assert str(fetched.value) == str(plain.value)
    assert "line 4" in str(plain.value) or "row 4" in str(plain.value)


@pytest.mark.parametrize("size, name, expected", [
    (1_000, "small.jsonl", "-XX:TieredStopAtLevel=1"),
    (200 * 2**20, "large.jsonl", ""),
    (10 * 2**20, "dense.parquet", ""),  # Parquet counts 8 times its bytes
])
def test_a_small_input_starts_the_jvm_with_the_quick_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, name: str, expected: str
) -> None:
    from concurrent.futures import Future

    from acel.spark_backend import frames, session

    monkeypatch.delenv(session.JAVA_OPTIONS_ENV, raising=False)
    assert frames.prefetched_bytes() is None and session.jit_options() == ""  # no file: full JIT
    data = tmp_path / name
    with open(data, "wb") as handle:
        handle.truncate(size)  # sparse: no bytes written
    monkeypatch.setattr(frames, "_PREFETCHED", {(str(data), "type"): Future()})
    assert session.jit_options() == expected
    monkeypatch.setenv(session.JAVA_OPTIONS_ENV, "-XX:+UseSerialGC")
    assert session.jit_options() == "-XX:+UseSerialGC"


def test_a_file_the_tasks_read_in_place_starts_the_jvm_with_the_quick_compiler_at_any_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JVM carries no events when the slices' tasks read a Parquet file in place: C1 at
    any size; a copy being written as well keeps the size rule (full JIT when large)."""
    from concurrent.futures import Future

    from acel.spark_backend import frames, in_place, session

    monkeypatch.delenv(session.JAVA_OPTIONS_ENV, raising=False)
    data = tmp_path / "large.parquet"
    with open(data, "wb") as handle:
        handle.truncate(200 * 2**20)
    monkeypatch.setattr(in_place, "PENDING", {(str(data), "type"): Future()})
    monkeypatch.setattr(frames, "_PREFETCHED", {})
    assert frames.tasks_read_the_file()
    assert session.jit_options() == session.QUICK_COMPILER
    monkeypatch.setattr(frames, "_PREFETCHED", {(str(data), "type"): Future()})
    assert not frames.tasks_read_the_file()
    assert session.jit_options() == ""


KEYED = [
    ("RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 3 ON ts", "k"),
    ("A AS a ; C AS c PARTITION BY k, g WITHIN 12 ON ts", "k"),
    ("RETURN g, COUNT(*) PATTERN A AS a ; B AS b PARTITION BY g", "g"),
]


@pytest.mark.parametrize("query, key", KEYED)
def test_partition_by_on_a_file_reads_the_copy_in_the_tasks_without_a_shuffle(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str, key: str
) -> None:
    from acel.spark_backend.run import plan, run_to_results

    import acel

    rows = [{**r, "g": ["x", "y", None][i % 3], "k": None if i % 7 == 3 else r["k"]}
            for i, r in enumerate(ROWS)]
    rows[5]["k"] = 2.5  # a float key beside the ints: one float column
    data = _file(tmp_path / "e.jsonl", rows)
    planned = plan(query, str(data), session=spark)
    shown = planned.frame._jdf.queryExecution().executedPlan().toString()
    # the engine tasks read the copy themselves: below their MapInArrow only the Range of
    # task numbers, no Exchange of events (a sliced RETURN merges its per-key partial
    # states above it, a shuffle of a few state rows, not of the events)
    below = shown.split("MapInArrow run_task", 1)[1]
    assert "Range" in below and "Exchange" not in below, shown
    direct = run_to_results(query, str(data), session=spark)
    monkeypatch.setenv("ACEL_SPARK_COPY_READ", "0")
    shuffled = run_to_results(query, str(data), session=spark)
    assert direct == shuffled == sorted(acel.run(query, str(data)), key=lambda r: r.sort_key())
    assert direct


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from(["a", "b"]),
                          st.lists(st.tuples(st.integers(0, 6), st.integers(-2, 2)), min_size=1, max_size=3),
                          st.sampled_from([(), (("k", 1),), (("k", "x"),)])), max_size=12))
def test_sorted_matches_is_the_spec_order(drawn: list[Any]) -> None:
    """The driver sorts complex events by end and start first, and by the full key only
    among ties: the same order as sorting by ``Match.sort_key`` (spec §12)."""
    from acel.spark_backend.run import sorted_matches

    from acel.lang.clauses import Match
    from acel.lang.events import ComplexEvent, Event

    matches = [
        Match(key, ComplexEvent.make(min(s, e), max(s, e), {var: [Event.make(t, {"v": v}) for t, v in bag]}))
        for s, e, var, bag, key in drawn
    ]
    assert sorted_matches(matches) == sorted(matches, key=Match.sort_key)
    assert [id(m) for m in sorted_matches(matches)] == [id(m) for m in sorted(matches, key=Match.sort_key)]

