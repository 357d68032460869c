"""Time slices read straight from a file's Parquet copy: no stage scans and shuffles it.

In a local session the driver's copy of a file (``frames.copy_file``, rows in stream
order, ``POS`` = row index) is visible to every task.  For a sliced query on a
``WITHIN d ON a`` axis that never decreases, the driver reads the ``a`` column alone
(pyarrow, one column), cuts each slice's data by row index (``searchsorted``) and the
engine stage is ``spark.range`` + ``mapInArrow``: each task opens the copy, reads the
row groups holding its slices' rows and runs them as a shuffled slice runs
(papers/spark.md, Pipeline step 4).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .executor import OWN, POS, SLICE, UnitSpec, evaluate_task, inject_fault
from .partitioning import Slicing

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .file_facts import AxisIndex
    from .in_place import InPlace
    from .numbered import Stream

DIRECT_ENV = "ACEL_SPARK_COPY_READ"
"""``0`` sends a file's units through Spark's shuffle instead (as for key buckets)."""

Cut = tuple[int, int, int]
"""A slice and the rows ``[lo, hi)`` of the copy that hold its data."""

Bracket = tuple[int, int, int, float, float]
"""A slice, rows ``[lo, hi)`` holding its data and more, and its ``ON`` values
``[start, end]`` that pick the exact rows (a file read in place, :func:`bracketed_cuts`)."""


def copy_of(spark: SparkSession, stream: Stream) -> str | None:
    """The file's Parquet copy when tasks may read it themselves (a local session, the
    copy on disk, not turned off), else ``None``."""
    from .frames import copy_target
    from .shipping import files_shared

    if (os.environ.get(DIRECT_ENV, "1") == "0" or stream.lazy or not stream.folders
            or not files_shared(spark)):
        return None
    target = copy_target(stream.folders[0])
    return target if os.path.exists(target) else None


AXIS_BATCH = 1 << 20
"""``ON`` values read at a time on the driver: the cuts need counts, not the column."""


def slice_bounds(slicing: Slicing, k_lo: int, k_hi: int) -> tuple[Any, Any, Any]:
    """Each slice's ``ON`` values ``[kL − P, (k+1)L + U)``, widened by a hair (floats;
    more contiguous context never changes what a slice owns, papers/spark.md Strategy 2)."""
    length = float(slicing.length)
    hair = 1e-9 * length
    ks = np.arange(k_lo, k_hi + 1, dtype=np.float64)
    return ks, ks * length - float(slicing.before) - hair, (ks + 1) * length + float(slicing.after) + hair


def bracketed_cuts(index: AxisIndex, slicing: Slicing, k_lo: int, k_hi: int) -> list[Bracket]:
    """Each slice's rows bracketed from the check's marks of the axis (no read): the task
    reading them finds the exact cut (:func:`exact_rows`), as :func:`slice_cuts` would."""
    ks, starts, ends = slice_bounds(slicing, k_lo, k_hi)
    lo, hi = index.bracket(starts, ends)
    return [(k, int(a), int(b), float(x), float(y))
            for k, a, b, x, y in zip(range(k_lo, k_hi + 1), lo, hi, starts, ends)]


def exact_rows(table: pa.Table, axis: str, first: int, start: float, end: float) -> tuple[int, int]:
    """The rows ``[lo, hi)`` of a bracket (``table``, its first row ``first``) whose carried
    ``ON`` value is in ``[start, end]``: :func:`slice_cuts`'s counts, since every row
    before the bracket carries a value below ``start`` (a missing value at the bracket's
    head counts below ``start`` either way)."""
    import pyarrow.compute as pc

    values = pc.cast(table.column(axis), pa.float64()).to_numpy(zero_copy_only=False)
    values = np.maximum.accumulate(np.where(np.isnan(values), -np.inf, values))
    return (first + int(np.searchsorted(values, start, "left")),
            first + int(np.searchsorted(values, end, "right")))


def slice_cuts(target: str, attr: str, slicing: Slicing, k_lo: int, k_hi: int) -> list[Cut]:
    """Rows of each slice's data (:func:`slice_bounds`), counted over the ``ON`` column.

    The ``ON`` column is read batch by batch (memory bounded at any size, issue 31's
    10^8 events): as doubles, a missing value taking the last value before it, so the
    values never decrease (such rows are dropped as keyless, or were refused by the
    axis check) and a slice's first row is the count of values below its start."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    ks, starts, ends = slice_bounds(slicing, k_lo, k_hi)
    lo = np.zeros(len(ks), dtype=np.int64)
    hi = np.zeros(len(ks), dtype=np.int64)
    carry = -np.inf
    for batch in pq.ParquetFile(target).iter_batches(batch_size=AXIS_BATCH, columns=[attr]):
        values = pc.cast(batch.column(0), pa.float64()).to_numpy(zero_copy_only=False)
        values = np.maximum.accumulate(np.where(np.isnan(values), -np.inf, values))
        values = np.maximum(values, carry)
        if len(values):
            carry = float(values[-1])
        lo += np.searchsorted(values, starts, "left")
        hi += np.searchsorted(values, ends, "right")
    return [(int(k), int(a), int(b)) for k, a, b in zip(range(k_lo, k_hi + 1), lo, hi)]


def direct_slices(
    spark: SparkSession, stream: Stream, attr: str, slicing: Slicing, k_lo: int, units: int,
    tasks: int, spec: UnitSpec, struct: Any,
) -> DataFrame | None:
    """The slices' engine stage reading the copy (``None``: not a local file's copy)."""
    import pyarrow.parquet as pq

    place = stream.in_place
    target = place.path if place is not None else copy_of(spark, stream)
    if target is None or attr not in stream.columns:
        return None
    names = place.layout.names if place is not None else pq.read_schema(target).names
    axis = place.file_column(attr) if place is not None else attr
    index = place.index.get(attr) if place is not None else None
    cuts: Sequence[Cut | Bracket] = (
        slice_cuts(target, axis, slicing, k_lo, k_lo + units - 1) if index is None
        else bracketed_cuts(index, slicing, k_lo, k_lo + units - 1))
    if place is not None:
        place = replace(place, index={})  # the driver's marks stay on the driver
    spec = replace(spec, attr_columns=tuple(c for c in spec.attr_columns if c in names))
    length = slicing.length
    count = max(1, min(tasks, units))

    def run_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return slice_task(batches, spec, target, cuts, attr, length, place)

    return spark.range(k_lo, k_lo + units, 1, count).mapInArrow(run_task, struct)


def slice_task(
    batches: Iterable[pa.RecordBatch], spec: UnitSpec, target: str, cuts: Sequence[Cut | Bracket],
    attr: str, length: float, place: InPlace | None = None,
) -> Iterator[pa.RecordBatch]:
    """One task's slices (its ``spark.range`` values) read from the copy, or from the
    user's file converted as the reader converts it (``place``), then run as
    :func:`executor.evaluate_task` runs shuffled slices.  A bracketed slice
    (:data:`Bracket`) is cut to its exact rows from the rows read."""
    import pyarrow.parquet as pq

    from .in_place import convert

    wanted = {int(v) for batch in batches for v in batch.column(0).to_pylist()}
    handle = pq.ParquetFile(target)
    starts = np.cumsum([0] + [handle.metadata.row_group(g).num_rows
                              for g in range(handle.metadata.num_row_groups)])
    if place is None:
        columns = [*spec.attr_columns, POS]
    else:
        columns = list(dict.fromkeys(place.file_column(c) for c in spec.attr_columns))
    fault = spec.fault
    spec = replace(spec, fault="")
    for k, lo, hi, *bounds in cuts:
        if k not in wanted or hi <= lo:
            continue
        first = int(np.searchsorted(starts, lo, "right")) - 1
        last = int(np.searchsorted(starts, hi, "left"))
        table = _rows(handle, columns, list(range(first, last)), int(starts[first]), lo, hi)
        if bounds:  # bracketed: the exact rows, as slice_cuts counts them
            cut_lo, cut_hi = exact_rows(table, place.file_column(attr) if place else attr, lo, *bounds)
            table, lo = table.slice(cut_lo - lo, max(cut_hi - cut_lo, 0)), cut_lo
            if not table.num_rows:
                continue
        # once a task, before its first slice holding rows, as a shuffled task's (not per slice)
        inject_fault(fault)
        fault = ""
        if place is not None:
            table = convert(table, place, spec.attr_columns, lo)
        table = _present(table, spec.key_names)
        values = table.column(attr).to_numpy(zero_copy_only=False).astype(np.float64)
        with np.errstate(invalid="ignore"):
            own = np.floor(values / float(length)) == k
        table = table.append_column(SLICE, pa.array(np.full(table.num_rows, k, np.int64)))
        # one slice at a time: a task holds one slice's rows, never its whole share
        yield from evaluate_task(table.append_column(OWN, pa.array(own)).to_batches(), spec)


def bare_parquet(frame: DataFrame) -> str | None:
    """The one Parquet file a DataFrame is a bare scan of (``spark.read.parquet(F)``:
    a file relation with no projection or filter, Spark's types the footer's), else
    ``None``.  No Spark job: the plan and the file index are the driver's."""
    from .frames import parquet_schema
    from .in_place import candidate

    try:
        analyzed = frame._jdf.queryExecution().analyzed()
        if analyzed.getClass().getSimpleName() != "LogicalRelation":
            return None
        files = list(frame.inputFiles())
    except Exception:  # noqa: BLE001 - any other plan keeps the DataFrame path
        return None
    if len(files) != 1:
        return None
    path = _local_path(str(files[0]))
    if path is None or not candidate(path):
        return None
    known = parquet_schema(path)
    if known is None or [(f.name, f.dataType) for f in known.fields] != [
            (f.name, f.dataType) for f in frame.schema.fields]:
        return None
    return path


ROWS_AT_ONCE = 65_536
"""Rows decoded at a time when a task reads its slice (so a big row group is not decoded
past the slice's last row)."""


def _rows(handle: Any, columns: list[str], groups: list[int], start: int, lo: int, hi: int) -> pa.Table:
    """Rows ``[lo, hi)`` of the file, read from ``groups`` (the first starting at row
    ``start``) batch by batch, stopping once ``hi`` is reached: a user's file may hold
    10^6 rows in one row group, and each of several tasks needs a part of it."""
    out: list[pa.RecordBatch] = []
    at = start
    for batch in handle.iter_batches(batch_size=ROWS_AT_ONCE, row_groups=groups, columns=columns):
        end = at + batch.num_rows
        if end > lo:
            out.append(batch.slice(max(lo - at, 0), min(hi, end) - max(lo, at)))
        at = end
        if at >= hi:
            break
    if not out:
        return handle.schema_arrow.empty_table().select(columns)
    return pa.Table.from_batches(out)


def _local_path(uri: str) -> str | None:
    """A ``file:`` URI (or a plain path) as a local path; other schemes ``None``."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return unquote(parsed.path)
    return None


def _present(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Rows holding every PARTITION BY attribute (NULL and NaN keys are dropped)."""
    import pyarrow.compute as pc

    for k in keys:
        if k not in table.column_names:
            return table.slice(0, 0)
        column = table.column(k)
        keep = pc.is_valid(column)
        if pa.types.is_floating(column.type):
            keep = pc.and_(keep, pc.invert(pc.is_nan(column)))
        table = table.filter(keep)
    return table


__all__ = ["bare_parquet", "direct_slices", "slice_cuts", "slice_task"]
