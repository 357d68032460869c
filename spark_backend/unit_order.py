"""A task's rows in stream order, and whether its ``ON`` axis never decreases, without a
sort when the rows already are in that order.

A slice task reads its rows from the file in stream order (``direct_read``), so the sorts
an executor used to make on every unit (by unit and position, by position, and by key and
position for the axis check) returned the table they were given: about 0.3 s of CPU per
slice of 1.25·10^6 events, a third of the slice's work (papers/spark.md, "Issue 31: the
per-key cost and the workers' imports").  The checks here are one vectorised pass over
the columns; a table out of order is still sorted as before (Arrow's sort is stable, so
an ordered table sorted is the same table).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from acel.lang.ast import Query


def _integers(column: pa.ChunkedArray) -> np.ndarray | None:
    """The column as an int64 array, ``None`` unless it is integers without NULL."""
    if not pa.types.is_integer(column.type) or column.null_count:
        return None
    return np.asarray(column.to_numpy(), dtype=np.int64)


def ordered(table: pa.Table, columns: Sequence[str]) -> bool:
    """Whether the rows are in ascending order of ``columns`` (lexicographic; ties allowed).

    Only integer columns without NULL are read; any other column answers ``False``,
    so the caller sorts as before.
    """
    if table.num_rows < 2:
        return True
    undecided = np.ones(table.num_rows - 1, dtype=bool)  # pairs equal on the columns so far
    for name in columns:
        values = _integers(table.column(name))
        if values is None:
            return False
        after, before = values[1:], values[:-1]
        if np.any(undecided & (after < before)):
            return False
        undecided &= after == before
        if not undecided.any():
            break
    return True


SMALL_CHUNKS = 1 << 16
"""Rows per chunk under which an ordered table's chunks are joined (:func:`in_order`)."""


def in_order(table: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``table`` sorted ascending by ``columns``: the table itself when it already is.

    A sort gives one chunk; an ordered table made of small batches (a shuffle's, 10^4
    rows each) is joined into one too, so that the native core's column blocks stay
    full-sized (a copy, a few per cent of a sort's cost).
    """
    if ordered(table, columns):
        chunks = max((table.column(i).num_chunks for i in range(table.num_columns)), default=1)
        return table.combine_chunks() if chunks > 1 and table.num_rows < chunks * SMALL_CHUNKS else table
    return table.sort_by([(name, "ascending") for name in columns])


def unit_monotone(table: pa.Table, query: Query, position: str) -> bool:
    """Whether the ``WITHIN … ON`` attribute never decreases inside any partition of the unit
    (values that are missing or not numbers are skipped, as ``acel.acea.engine.run`` does).

    ``table`` is in stream order (``position`` ascending).  When the axis never decreases
    along the whole unit it never does in any PARTITION BY key's part of it (a part keeps
    the stream's order), so the per-key check, a sort by key, runs only when it does.
    """
    within = query.within
    if within is None or within.attr is None or within.attr not in table.column_names:
        return True
    column = table.column(within.attr)
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        return True
    values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
    kept = values[~np.isnan(values)]
    if bool(np.all(kept[1:] >= kept[:-1])):
        return True
    keys = [k for k in query.partition_by if k in table.column_names]
    if not keys:
        return False
    return _monotone_per_key(table, keys, within.attr, position)


def _monotone_per_key(table: pa.Table, keys: list[str], attr: str, position: str) -> bool:
    """The axis never decreases inside any key's events (the table sorted by key, then by
    ``position``)."""
    table = table.sort_by([(k, "ascending") for k in keys] + [(position, "ascending")])
    values = pc.cast(table.column(attr), pa.float64()).to_numpy(zero_copy_only=False)
    valid = ~np.isnan(values)
    table = table.filter(pa.array(valid))
    values = values[valid]
    if len(values) < 2:
        return True
    same = np.ones(len(values) - 1, dtype=bool)
    for k in keys:
        col = table.column(k)
        equal = pc.equal(col.slice(1), col.slice(0, len(col) - 1))
        same &= np.asarray(pc.fill_null(equal, False).to_numpy(zero_copy_only=False), dtype=bool)
    return not bool(np.any(same & (values[1:] < values[:-1])))
