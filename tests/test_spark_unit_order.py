"""A task's rows kept in stream order without a sort when they already are (issue 31):
``spark_backend.unit_order`` must give what the sorts gave, and the ``ON`` axis check
what the per-key check gave.  No Spark needed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from acel.spark_backend import executor
from acel.spark_backend.unit_order import _monotone_per_key, in_order, ordered, unit_monotone
from hypothesis import given, settings
from hypothesis import strategies as st

from acel.lang.parser import parse_query

POS = executor.POS
SLICE = executor.SLICE


def _sorted(table: pa.Table, columns: list[str]) -> pa.Table:
    return table.sort_by([(c, "ascending") for c in columns])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6)), max_size=30), st.integers(1, 4))
def test_in_order_is_the_sort(rows: list[tuple[int, int]], chunks: int) -> None:
    """Ordered or not, in one chunk or several: the same rows as Arrow's stable sort."""
    table = pa.table({SLICE: [s for s, _ in rows], POS: [p for _, p in rows],
                      "i": list(range(len(rows)))}, schema=pa.schema(
                          [(SLICE, pa.int64()), (POS, pa.int64()), ("i", pa.int64())]))
    step = max(1, -(-len(rows) // chunks))
    table = pa.Table.from_batches(table.to_batches(max_chunksize=step), schema=table.schema)
    got = in_order(table, [SLICE, POS])
    assert got.equals(_sorted(table, [SLICE, POS]))
    assert ordered(got, [SLICE, POS])
    assert ordered(table, [SLICE, POS]) == (rows == sorted(rows, key=lambda r: r))


def test_an_ordered_table_is_not_sorted_again() -> None:
    """Large chunks stay as they are (no copy); a shuffle's small batches become one chunk."""
    big = pa.Table.from_batches(pa.table({POS: np.arange(200_000)}).to_batches(max_chunksize=100_000))
    assert in_order(big, [POS]) is big
    small = pa.Table.from_batches(pa.table({POS: np.arange(50_000)}).to_batches(max_chunksize=10_000))
    joined = in_order(small, [POS])
    assert joined.column(POS).num_chunks == 1 and joined.equals(small)


def test_columns_it_cannot_read_are_sorted() -> None:
    """NULLs or strings: not read, so the table is sorted as before."""
    with_null = pa.table({POS: pa.array([1, None, 0], pa.int64())})
    assert not ordered(with_null, [POS])
    assert in_order(with_null, [POS]).equals(_sorted(with_null, [POS]))
    text = pa.table({POS: ["a", "b"]})
    assert not ordered(text, [POS])


QUERY = parse_query("RETURN k, COUNT(*) PATTERN A AS a ; B AS b PARTITION BY k WITHIN 5 ON ts")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([None, 1, 2, 3]),
                          st.one_of(st.none(), st.integers(0, 6), st.just(float("nan")))),
                max_size=25))
def test_the_axis_check_is_the_per_key_check(rows: list[tuple[int | None, float | None]]) -> None:
    """The whole unit's order first, then per key: the answer the per-key check alone gave."""
    table = pa.table({"k": pa.array([k for k, _ in rows], pa.int64()),
                      "ts": pa.array([t for _, t in rows], pa.float64()),
                      POS: pa.array(range(len(rows)), pa.int64())})
    assert unit_monotone(table, QUERY, POS) == _monotone_per_key(table, ["k"], "ts", POS)


def test_the_axis_check_without_keys_reads_the_stream_order() -> None:
    query = parse_query("RETURN COUNT(*) PATTERN A AS a ; B AS b WITHIN 5 ON ts")
    up = pa.table({"ts": [1, 2, None, 2, 5], POS: [0, 1, 2, 3, 4]})
    down = pa.table({"ts": [1, 3, 2], POS: [0, 1, 2]})
    assert unit_monotone(up, query, POS)
    assert not unit_monotone(down, query, POS)
    # per key (k = 1: 1, 2; k = 2: 3): every key's part never decreases
    keyed = pa.table({"k": [1, 2, 1], "ts": [1, 3, 2], POS: [0, 1, 2]})
    assert unit_monotone(keyed, QUERY, POS)
    assert not unit_monotone(pa.table({"k": [1, 1], "ts": [3, 2], POS: [0, 1]}), QUERY, POS)
