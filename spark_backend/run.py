"""Running an ACEL query on Spark: plan on the driver, engine on the executors.

``run`` returns a lazy DataFrame; ``run_to_results`` collects it into the
same ``Match``/``TrendRow`` objects as the single-process engines (sorted as
spec §12 says).  The query is parsed and checked once on the driver; the
stream is numbered on Spark (``frames``), cut into units (``partitioning``)
and each unit is run through Arrow by ``executor.evaluate_unit``.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import acel.spark_backend.frames as frames
import pyarrow as pa

from acel.io import native_switch
from acel.io.output_formats import spark_sink
from acel.io.results import match_from_json
from acel.lang.ast import Query, ReturnAttr
from acel.lang.clauses import Key, Match, TrendRow, item_name
from acel.lang.schema import Schema

from .direct_read import bare_parquet, direct_slices
from .executor import (
    OWN,
    POS,
    SLICE,
    STATE,
    TRACE_ENV,
    WINDOW_HI,
    WINDOW_LO,
    UnitSpec,
    copy_task,
    evaluate_task,
    identity_row,
    item_columns,
    merge_partials,
    python_value,
    typed_value,
)
from .failures import spark_errors
from .layout import _SPARK_OF, Layout, result_fields, result_layout
from .lazy import AX_HI, AX_LO, AX_OK, TOTAL, drop_helpers, identity_unless_rows, with_axis
from .partitioning import Strategy, balance, choose, keyed_slices, slicing_for
from .progress import Report, watch
from .session import FAULT_CONF, get_session, prepare_session

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


UNITS_PER_CORE = 4
"""Units (key buckets or time slices) per core: small enough tasks that Spark's
scheduler balances uneven units, few enough that per-task costs stay small."""

SLICE_EVENTS = 1 << 21
"""At most about this many events in a time slice of a counted stream (more slices
when there are more events): a task holds one slice at a time, so a Python worker's
memory stays bounded at any input size (issue 31: 10^8 events under 2 GiB a process)."""


class NotParallelWarning(UserWarning):
    """The query runs as one ordered partition on one core."""


@dataclass(frozen=True)
class Planned:
    """A planned run: the lazy result frame and what is needed to read it."""

    frame: DataFrame
    query: Query
    strategy: Strategy
    layout: Layout
    stream: frames.Stream


def caller_level() -> int:
    """The ``stacklevel`` of a warning raised here that names the first frame outside
    acel: the user's line, however many of acel's calls lie between (a fixed count
    named IPython's own code from ``acel.spark.run`` in a notebook, issue 37 §4)."""
    import sys
    from types import FrameType

    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("acel"):
        frame, level = frame.f_back, level + 1
    return level


# ------------------------------------------------------------------ query


def check_supported(query: Query, schema: Schema) -> None:
    """The executors' own compilation, once on the driver: a query the compiled engine
    refuses raises ``UnsupportedQuery`` here, before any Spark job reads data (issue 32)."""
    from acel.acea.engine import Runner

    Runner(query, schema)


def _query(query: Query | str, schema: Schema) -> Query:
    """Parse (when text) and check the query once, on the driver."""
    if isinstance(query, str):
        from acel.lang.parser import parse_query

        parsed = parse_query(query)
    else:
        parsed = query
    try:
        from acel.lang.checker import check_query
    except ImportError:  # pragma: no cover - the checker is another helper's module
        return parsed
    check_query(parsed, schema)
    return parsed


def _struct(fields: list[tuple[str, str]]) -> Any:
    from pyspark.sql import types as T

    return T.StructType(
        [T.StructField(name, T._parse_datatype_string(kind), True) for name, kind in fields]
    )


def _arrow(schema: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)


# ------------------------------------------------------------------ planning


def plan(
    query: Query | str,
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    session: SparkSession | None = None,
    master: str | None = None,
    partitions: int | None = None,
    slice_size: int | float | None = None,
    lazy: bool = False,
) -> Planned:
    """Number the stream, choose the strategy and build the (lazy) result frame.

    A file is read on the driver and needs no Spark job.  A DataFrame is numbered
    by a scan job (eager: keys balanced by size, no sort when already in time
    order), or with ``lazy`` inside the result's own plan (``lazy.number``: no job
    before an action, except schema inference when no schema is given).  A failed
    job is a short ``AcelError``.
    """
    with spark_errors():
        spark = session or get_session(master)
        prepare_session(spark)
        return _plan(query, data, spark, type_col=type_col, time_col=time_col, schema=schema,
                     partitions=partitions, slice_size=slice_size, lazy=lazy)


def prefetch(
    query: Query,
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
) -> None:
    """Start the driver's reading of an event file now, in the background, for the
    :func:`run_to_results` that follows (the command line calls this before it starts
    the JVM, so the two overlap: papers/spark.md, Pipeline step 2); other data: nothing."""
    from pathlib import Path

    if isinstance(data, (str, Path)):
        frames.prefetch(str(data), type_col=type_col, time_col=time_col, schema=schema,
                        keys=tuple(query.partition_by), axes=_axes(query), sliced_on=_sliced_on(query))


def _sliced_on(query: Query) -> str | None:
    """The ``ON`` axis the query is cut into time slices on, should it never decrease
    (then a Parquet file may be read in place: ``frames.in_place_stream``)."""
    within = query.within
    if within is None or within.attr is None:
        return None
    return within.attr if choose(query, attr_monotone=True).kind == "slice" else None


def _axes(query: Query) -> list[str]:
    """The ``WITHIN/SLIDE … ON`` attributes whose missing values the reading counts."""
    return sorted({w.attr for w in (query.within, query.slide) if w is not None and w.attr is not None})


def _plan(
    query: Query | str,
    data: Any,
    spark: SparkSession,
    *,
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    partitions: int | None,
    slice_size: int | float | None,
    lazy: bool = False,
    in_place: bool = True,
) -> Planned:
    from pyspark.sql import functions as F

    if isinstance(query, str):
        from acel.lang.parser import parse_query

        query = parse_query(query)  # syntax errors before any Spark job
    if schema is not None:  # known before reading: refuse before the numbering job too
        check_supported(_query(query, schema), schema)
    stream = _stream(spark, data, query, type_col=type_col, time_col=time_col, schema=schema, lazy=lazy,
                     in_place=in_place)
    parsed = _query(query, stream.schema)
    check_supported(parsed, stream.schema)
    keys = tuple(parsed.partition_by)
    for window in (parsed.within, parsed.slide):
        if window is not None and window.attr is not None:
            frames.check_axis(stream, window.attr, keys)
    monotone: bool | None = None
    span: tuple[int | float, int | float] | None = None
    if stream.lazy:
        monotone = True  # decided in the plan: a decreasing axis runs as one unit (_sliced)
    elif (parsed.within is not None and parsed.within.attr is not None
          and (not keys or keyed_slices(parsed))):
        monotone, lo, hi = frames.axis_summary(stream, parsed.within.attr)
        if lo is not None and hi is not None:
            integral = stream.kinds.get(parsed.within.attr) == "int"
            span = (int(lo), int(hi)) if integral else (lo, hi)
    strategy = choose(parsed, attr_monotone=monotone)
    if stream.in_place is not None and strategy.kind != "slice":  # read in place only when sliced
        return _plan(query, data, spark, type_col=type_col, time_col=time_col, schema=schema,
                     partitions=partitions, slice_size=slice_size, lazy=lazy, in_place=False)
    if strategy.kind == "single":
        warnings.warn(strategy.reason, NotParallelWarning, stacklevel=caller_level())
    n_parts = partitions or spark.sparkContext.defaultParallelism
    fault = spark.conf.get(FAULT_CONF, "") or ""

    layout = result_layout(parsed, stream.kinds)
    result_struct = _struct(result_fields(layout, stream))
    base = UnitSpec(
        query=parsed,
        schema=stream.schema,
        mode=layout.mode,
        attr_columns=stream.columns,
        key_names=keys,
        item_kinds=layout.item_kinds,
        window_kind=layout.window_kind,
        out_schema=_arrow(result_struct),
        fault="" if fault == "false" else fault,
        native=os.environ.get(native_switch.VARIABLE, ""),
        trace=os.environ.get(TRACE_ENV, ""),
    )
    frame = stream.frame
    for k in keys:
        if k not in stream.columns:  # no event has the attribute: every event is dropped
            frame = frame.withColumn(k, F.lit(None).cast("string"))
    if strategy.kind == "partition":
        scoped = frame.filter(frames.present(stream, keys))
        # Keys go into a few buckets per core, one task each; one engine call per
        # bucket splits its keys itself (one compilation per bucket, not per key).
        buckets = UNITS_PER_CORE * n_parts
        direct = _copy_read(spark, stream, keys, buckets, base, result_struct)
        if direct is not None:
            result = direct
        elif stream.lazy:
            bucketed = _bucketed_in_plan(scoped, keys, buckets)
            result = _run_units(drop_helpers(bucketed), 0, buckets, buckets, base, result_struct)
        else:
            bucketed = _bucketed(spark, scoped, keys, buckets, stream.key_sizes, stream.many_keys)
            result = _run_units(drop_helpers(bucketed), 0, buckets, buckets, base, result_struct)
    elif strategy.kind == "single":
        single = drop_helpers(frame).withColumn(SLICE, F.lit(0))
        result = _run_units(single, 0, 1, 1, base, result_struct)
    else:
        if keys:  # keyed slices: rows lacking a key are dropped before they are copied
            frame = frame.filter(frames.present(stream, keys))
        result = _sliced(stream, frame, parsed, base, result_struct, n_parts, span, slice_size)
    if parsed.returns is not None and not keys and parsed.slide is None:
        if stream.lazy:
            result = identity_unless_rows(result, _identity_frame(spark, base, result_struct), frame)
        elif stream.count == 0:
            result = _identity_frame(spark, base, result_struct)
    return Planned(result, parsed, strategy, layout, stream)


def _stream(spark: SparkSession, data: Any, query: Query, *, type_col: str, time_col: str | None,
            schema: Schema | None, lazy: bool, in_place: bool = True) -> frames.Stream:
    """The numbered input: a file or a bare one-file Parquet scan read in place by a
    sliced query's tasks, a DataFrame numbered lazily or by a scan, a file copied."""
    from pyspark.sql import DataFrame

    axes, keys = _axes(query), tuple(query.partition_by)
    sliced_on = _sliced_on(query) if in_place else None
    if isinstance(data, DataFrame) and sliced_on is not None:
        path = bare_parquet(data)
        direct = None if path is None else frames.in_place_stream(
            spark, path, type_col=type_col, time_col=time_col, schema=schema, keys=keys,
            axes=axes, sliced_on=sliced_on)
        if direct is not None:
            return direct
    if lazy and isinstance(data, DataFrame):
        from .lazy import number

        return number(spark, data, type_col=type_col, time_col=time_col, schema=schema,
                      axes=axes, keys=keys)
    return frames.prepare(spark, data, type_col=type_col, time_col=time_col, schema=schema,
                          axes=axes, keys=keys, sliced_on=sliced_on)


MAX_BALANCED_KEYS = frames.MAX_KEYS
"""Up to this many PARTITION BY keys are placed by size; more are hashed."""

KEY_EVENTS = "__acel_key_events"


def _bucketed(
    spark: SparkSession,
    frame: DataFrame,
    keys: tuple[str, ...],
    buckets: int,
    sizes: list[tuple[tuple[Any, ...], int]] | None = None,
    many: bool = False,
) -> DataFrame:
    """Column ``SLICE``: the bucket of each row's PARTITION BY key.

    With few keys (the usual case: airports, stocks, machines) one small job
    counts each key's events and ``balance`` spreads them over the buckets by
    size, joined back as a broadcast table; a hash of a hundred keys onto eight
    buckets left one bucket with over twice the events of another.  Beyond
    ``MAX_BALANCED_KEYS`` keys a hash is balanced enough on its own.
    """
    from pyspark.sql import functions as F

    cols = [F.col(f"`{k}`") for k in keys]
    if many:
        return frame.withColumn(SLICE, F.pmod(F.xxhash64(*cols), F.lit(buckets)))
    if sizes is None:  # not counted by the numbering pass
        counted = frame.groupBy(*cols).agg(F.count(F.lit(1)).alias(KEY_EVENTS))
        rows = counted.limit(MAX_BALANCED_KEYS + 1).collect()
        if len(rows) > MAX_BALANCED_KEYS:
            return frame.withColumn(SLICE, F.pmod(F.xxhash64(*cols), F.lit(buckets)))
        sizes = [(tuple(row[k] for k in keys), row[KEY_EVENTS]) for row in rows]
    bins = balance([n for _, n in sizes], buckets)
    fields = [(k, frame.schema[k].dataType.simpleString()) for k in keys] + [(SLICE, "bigint")]
    struct = _struct(fields)
    # An Arrow table goes to the JVM as it is; a list of tuples would become a
    # Python RDD, and its first job would start Python workers just to read it.
    arrow = _arrow(struct)
    columns = [[key[i] for key, _ in sizes] for i in range(len(keys))] + [bins]
    table = pa.Table.from_arrays(
        [pa.array(values, type=field.type) for values, field in zip(columns, arrow)], schema=arrow
    )
    return frame.join(F.broadcast(spark.createDataFrame(table, struct)), on=list(keys), how="inner")


COPY_READ_ENV = "ACEL_SPARK_COPY_READ"
"""Set to ``0`` to send a file's PARTITION BY buckets through Spark's shuffle instead."""


def _copy_read(
    spark: SparkSession, stream: frames.Stream, keys: tuple[str, ...], buckets: int,
    spec: UnitSpec, struct: Any,
) -> DataFrame | None:
    """PARTITION BY on a file's copy in a local session: each engine task reads the copy
    itself and keeps its bucket's keys (``executor.copy_task``), so no Spark stage
    reads the copy and shuffles it (papers/spark.md, Pipeline step 4).

    ``None`` (the shuffle) for a DataFrame, a cluster (executors may not see the
    driver's folder), keys not counted while copying (more than ``MAX_KEYS``), a key
    attribute no event has or one of kind ``bool``, or ``ACEL_SPARK_COPY_READ=0``.
    """
    from .shipping import files_shared

    if (os.environ.get(COPY_READ_ENV, "1") == "0" or stream.lazy or not stream.folders
            or stream.key_sizes is None or stream.many_keys
            or not files_shared(spark)
            or any(k not in stream.columns or stream.kinds.get(k) not in ("int", "float", "str")
                   for k in keys)):
        return None
    target = frames.copy_target(stream.folders[0])
    if not os.path.exists(target):
        return None
    import pyarrow.parquet as pq

    copied = pq.read_schema(target)
    sizes = stream.key_sizes
    bins = balance([n for _, n in sizes], buckets)
    key_table = pa.Table.from_arrays(
        [pa.array([key[i] for key, _ in sizes], type=copied.field(k).type) for i, k in enumerate(keys)]
        + [pa.array(bins, type=pa.int64())],
        names=[*keys, SLICE],
    )
    spec = replace(spec, attr_columns=tuple(c for c in spec.attr_columns if c in copied.names))

    def run_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return copy_task(batches, spec, target, key_table)

    return spark.range(0, buckets, 1, buckets).mapInArrow(run_task, struct)


def _bucketed_in_plan(frame: DataFrame, keys: tuple[str, ...], buckets: int) -> DataFrame:
    """Column ``SLICE`` without a job before the action: the keys' event counts, ranked
    largest first, are dealt to the buckets in snake order (0…B−1, B−1…0, …), joined
    back as a broadcast table.  Hashing eight keys into eight buckets left some
    buckets with two or three keys and others empty (W0 with 8 keys, 2026-11-25).
    The ranking is one window over the key table (one partition): fine for the
    thousands of keys of the usual case, slow only for millions."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    cols = [F.col(f"`{k}`") for k in keys]
    counted = frame.groupBy(*cols).agg(F.count(F.lit(1)).alias(KEY_EVENTS))
    rank = F.row_number().over(Window.orderBy(F.col(KEY_EVENTS).desc(), *cols)) - F.lit(1)
    lap, at = F.floor(rank / F.lit(buckets)), F.pmod(rank, F.lit(buckets))
    bucket = F.when(F.pmod(lap, F.lit(2)) == F.lit(0), at).otherwise(F.lit(buckets - 1) - at)
    table = counted.select(*cols, bucket.cast("long").alias(SLICE))
    return frame.join(F.broadcast(table), on=list(keys), how="inner")


MAX_TASKS_PER_CORE = 64
"""A cap on slice tasks (a tiny ``slice_size`` shares tasks between slices)."""


def _run_units(
    frame: DataFrame,
    first_unit: int | Column,
    units: int | Column,
    tasks: int,
    spec: UnitSpec,
    struct: Any,
) -> DataFrame:
    """Run units ``first_unit .. first_unit + units - 1`` (column ``SLICE``) in ``tasks`` tasks.

    Unit ``u`` goes to task ``⌊(u − first) · tasks / units⌋`` by
    ``repartitionById``: neighbouring units share a task, every task gets as
    many units as any other, and there is no sampling job (range
    partitioning of a few distinct ids could put three quarters of the work
    on one task).  Each task is one ``mapInArrow`` call, so the JVM does not
    sort the rows either; ``evaluate_task`` splits a task into its units.
    ``first_unit`` and ``units`` may be columns (known only when the plan runs).
    """
    from pyspark.sql import functions as F

    if isinstance(units, int):
        tasks = max(1, min(tasks, units))
        units = F.lit(max(units, 1))
    first = F.lit(first_unit) if isinstance(first_unit, int) else first_unit
    task = F.floor(
        (F.col(SLICE) - first).cast("double") * F.lit(tasks) / units
    )

    def run_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return evaluate_task(batches, spec)

    return frame.repartitionById(tasks, task.cast("int")).mapInArrow(run_task, struct)


@dataclass(frozen=True)
class Geometry:
    """Slice length and the first and last slices owning events: numbers, or columns when
    the stream is numbered inside the plan; ``ok`` false runs the stream as one unit."""

    length: Column
    k_lo: Column
    k_hi: Column
    ok: Column


def _geometry(
    stream: frames.Stream,
    query: Query,
    slicing: Any,
    slices: int,
    span: tuple[int | float, int | float] | None,
    slice_size: int | float | None,
) -> Geometry:
    """Where the slices lie (papers/spark.md, "Slice length"), from the scan's count and
    span, or, for a lazily numbered stream, from its ``TOTAL`` and ``AX_*`` columns (the
    same arithmetic in Spark's doubles as ``partitioning.slicing_for`` in Python's)."""
    from pyspark.sql import functions as F

    assert query.within is not None
    events_axis = query.within.attr is None
    if not stream.lazy:
        length = slicing.length
        lo_v, hi_v = (0, max(stream.count - 1, 0)) if events_axis else (span or (0, 0))
        k_lo = math.floor(float(lo_v) / float(length))
        k_hi = max(math.floor(float(hi_v) / float(length)), k_lo)
        return Geometry(F.lit(length), F.lit(k_lo), F.lit(k_hi), F.lit(True))
    w = query.within.size
    if events_axis:
        lo, hi, ok = F.lit(0), F.greatest(F.col(TOTAL) - F.lit(1), F.lit(0)), F.lit(True)
        if slice_size is not None:
            length = F.lit(slicing.length)
        else:
            share = F.floor((F.col(TOTAL) + F.lit(slices - 1)) / F.lit(slices))
            length = F.greatest(F.lit(int(math.ceil(w))), share, F.lit(1)).cast("long")
            if query.slide is not None:
                step = int(query.slide.size)
                length = (F.floor((length + F.lit(step - 1)) / F.lit(step)) * F.lit(step)).cast("long")
    else:
        lo, hi, ok = F.col(AX_LO), F.col(AX_HI), F.col(AX_OK)
        if slice_size is not None:
            length = F.lit(slicing.length)
        else:
            length = F.greatest(F.lit(w).cast("double"), (hi - lo) / F.lit(slices))
            if isinstance(w, int) and stream.kinds.get(query.within.attr or "") == "int":
                length = F.ceil(length).cast("double")
            length = F.when(length <= F.lit(0), F.lit(1.0)).otherwise(length)
    first = F.floor(lo.cast("double") / length.cast("double"))
    last = F.greatest(F.floor(hi.cast("double") / length.cast("double")), first)
    return Geometry(length, first, last, ok)


def _sliced(
    stream: frames.Stream,
    frame: DataFrame,
    query: Query,
    base: UnitSpec,
    result_struct: Any,
    n_parts: int,
    span: tuple[int | float, int | float] | None,
    slice_size: int | float | None,
) -> DataFrame:
    """Time slices with one window of overlap; each keeps the starts it owns.

    A lazily numbered stream whose ``ON`` axis turns out to decrease somewhere
    (``AX_OK`` false) runs as one unit owning every event: the one ordered
    partition the eager planner chooses (without its ``NotParallelWarning``).  With
    PARTITION BY (keyed slices) every slice runs all its keys, and RETURN states merge
    per key and window.
    """
    from dataclasses import replace

    from pyspark.sql import functions as F

    assert query.within is not None
    slices = max(UNITS_PER_CORE * n_parts, -(-stream.count // SLICE_EVENTS))
    slicing = slicing_for(
        query,
        count=stream.count,
        span=span,
        slices=slices,
        slice_size=slice_size,
    )
    if stream.lazy and query.within.attr is not None:
        frame = with_axis(frame, query.within.attr)
    at = _geometry(stream, query, slicing, slices, span, slice_size)
    events_axis = query.within.attr is None
    v = F.col(POS) if events_axis else F.col(f"`{query.within.attr}`").cast("double")
    length, before, after = at.length, slicing.before, slicing.after
    # Float axes: widen the data range by a hair so rounding never loses an event
    # (more contiguous context never changes the complex events a slice owns).
    eps = 0.0 if events_axis else 1e-9
    first = F.greatest(F.floor((v - F.lit(after)) / length - F.lit(eps)), at.k_lo)
    last = F.least(F.floor((v + F.lit(before)) / length), at.k_hi)
    owner = F.floor(v / length)
    sliced: DataFrame | None = None
    if stream.lazy:
        every = F.when(at.ok, F.sequence(first.cast("long"), last.cast("long")))
        every = every.otherwise(F.array(F.lit(0).cast("long")))
        sliced = (
            frame.withColumn(SLICE, F.explode(every))
            .withColumn(OWN, F.when(at.ok, owner.cast("long") == F.col(SLICE)).otherwise(F.lit(True)))
        )
        k_lo: int | Column = F.when(at.ok, at.k_lo).otherwise(F.lit(0))
        units: int | Column = F.when(at.ok, at.k_hi - at.k_lo + F.lit(1)).otherwise(F.lit(1))
        tasks = UNITS_PER_CORE * n_parts
        sliced = drop_helpers(sliced)
    else:  # the slices' rows are built only if the tasks do not read the file (run_units)
        lo_v, hi_v = (0, max(stream.count - 1, 0)) if events_axis else (span or (0, 0))
        k_lo = math.floor(float(lo_v) / float(slicing.length))
        units = max(math.floor(float(hi_v) / float(slicing.length)), k_lo) - k_lo + 1
        tasks = MAX_TASKS_PER_CORE * n_parts
    spec = replace(base, sliced=True, shift_windows=events_axis and query.slide is not None)

    def run_units(spec: UnitSpec, struct: Any) -> DataFrame:
        if not stream.lazy and query.within is not None and query.within.attr is not None:
            assert isinstance(k_lo, int) and isinstance(units, int)
            direct = direct_slices(frame.sparkSession, stream, query.within.attr, slicing, k_lo,
                                   units, tasks, spec, struct)
            if direct is not None:  # a local file's copy: each task reads its own rows
                return direct
        if stream.in_place is not None:  # its frame is empty: only the tasks read the file
            raise RuntimeError(f"{stream.source}: read in place but not sliced on its ON axis")
        # Each slice's copy of its rows: Spark analyses a frame when it is made (a second
        # or more on a cold JVM), so it is made only here, when the tasks use it.
        rows = sliced if sliced is not None else (
            frame.withColumn(SLICE, F.explode(F.sequence(first.cast("long"), last.cast("long"))))
            .withColumn(OWN, owner.cast("long") == F.col(SLICE)))
        return _run_units(rows, k_lo, units, tasks, spec, struct)

    if query.returns is None:
        return run_units(spec, result_struct)
    window_type = _SPARK_OF[base.window_kind] if base.window_kind is not None else "bigint"
    keys = list(base.key_names)
    key_fields = [(f.name, f.dataType.simpleString()) for f in result_struct.fields if f.name in keys]
    partial_struct = _struct(
        [*key_fields, (WINDOW_LO, window_type), (WINDOW_HI, window_type), (STATE, "binary")]
    )
    partial_spec = replace(spec, mode="partial", out_schema=_arrow(partial_struct))
    merge_spec = base

    def merge(table: pa.Table) -> pa.Table:
        return merge_partials(table, merge_spec)

    partials = run_units(partial_spec, partial_struct)
    return partials.groupBy(*keys, WINDOW_LO, WINDOW_HI).applyInArrow(merge, result_struct)


def _identity_frame(spark: SparkSession, spec: UnitSpec, struct: Any) -> DataFrame:
    """The one RETURN row of an empty stream (COUNT 0, SUM 0, MIN/MAX/AVG NULL)."""
    values = identity_row(spec.query.returns or ())
    shown = item_columns(spec.query.returns or (), ())
    row = [typed_value(k, values[i][1], values[i][0]) for i, k in zip(shown, spec.item_kinds)]
    return spark.createDataFrame([tuple(row)], struct)


# ------------------------------------------------------------------ public API


def run(
    query: Query | str,
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    session: SparkSession | None = None,
    master: str | None = None,
    partitions: int | None = None,
    slice_size: int | float | None = None,
) -> DataFrame:
    """Run an ACEL query on Spark; a lazy DataFrame of complex events or RETURN rows.

    Complex events: the PARTITION BY columns, ``start``, ``end`` (global
    positions) and ``vars`` (spec §12 JSON text).  RETURN: the PARTITION BY
    columns, ``window_lo``/``window_hi`` with SLIDE, and one column per item
    named as in spec §12 (counts as DECIMAL(38,0), exact).  Row order is not
    specified; ``run_to_results`` sorts.
    """
    return plan(
        query, data, type_col=type_col, time_col=time_col, schema=schema, session=session,
        master=master, partitions=partitions, slice_size=slice_size,
    ).frame


def _collect(frame: DataFrame) -> list[Any]:
    """Collect; a failed job is a short ``AcelError`` (the executor's own errors word for word)."""
    with spark_errors():
        return frame.collect()


def sorted_matches(matches: list[Match]) -> list[Match]:
    """``sorted(matches, key=Match.sort_key)`` (spec §12), computing the full key (every
    event's sort key) only among complex events with the same end and start: the
    key's first two items, so the order is the same (both sorts are stable)."""
    matches = sorted(matches, key=lambda m: (m.event.end, m.event.start))
    out: list[Match] = []
    i, n = 0, len(matches)
    while i < n:
        j = i + 1
        head = matches[i].event
        while j < n and matches[j].event.end == head.end and matches[j].event.start == head.start:
            j += 1
        out.extend(matches[i:j] if j == i + 1 else sorted(matches[i:j], key=Match.sort_key))
        i = j
    return out


def results_of(planned: Planned, rows: list[Any]) -> list[Match] | list[TrendRow]:
    """Spark rows back into sorted ``Match``/``TrendRow`` objects."""
    layout = planned.layout
    if layout.mode == "matches":
        matches: list[Match] = []
        for row in rows:
            key: Key = tuple(
                (k, row[k]) for k in layout.key_names if row[k] is not None
            )
            m = match_from_json({"start": row["start"], "end": row["end"],
                                 "vars": json.loads(row["vars"])})
            matches.append(Match(key, m.event))
        return sorted_matches(matches)
    shown = item_columns(layout.items, layout.key_names)
    kinds = dict(zip(shown, layout.item_kinds))
    out: list[TrendRow] = []
    for row in rows:
        key = tuple((k, row[k]) for k in layout.key_names if row[k] is not None)
        window = None
        if layout.window_kind is not None:
            window = (row[WINDOW_LO], row[WINDOW_HI])
        values = []
        key_map = dict(key)
        for index, item in enumerate(layout.items):
            name = item_name(item)
            if index in kinds:
                values.append((name, python_value(kinds[index], row[name])))
            else:
                assert isinstance(item, ReturnAttr)
                values.append((name, key_map.get(item.name)))
        out.append(TrendRow(key, window, tuple(values)))
    return sorted(out, key=TrendRow.sort_key)


def run_to_results(
    query: Query | str,
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    session: SparkSession | None = None,
    master: str | None = None,
    partitions: int | None = None,
    slice_size: int | float | None = None,
    progress: Report | None = None,
    lazy: bool = False,
) -> list[Match] | list[TrendRow]:
    """``run`` collected into the single-process engines' objects, sorted (spec §12).

    ``progress`` (say ``print``) hears the plan and, about once a second, how
    many Spark tasks are done.  ``lazy`` plans a DataFrame as :func:`plan` does
    with ``lazy`` (no scan job; keys hashed, not balanced by size).
    """
    with spark_errors():
        spark = session or get_session(master)
    with watch(spark, progress):
        planned = plan(
            query, data, type_col=type_col, time_col=time_col, schema=schema, session=spark,
            partitions=partitions, slice_size=slice_size, lazy=lazy,
        )
        try:
            if progress is not None and not planned.stream.lazy:
                progress(f"{planned.stream.count:,} events numbered; {planned.strategy.reason}")
            return results_of(planned, _collect(planned.frame))
        finally:
            planned.stream.release()


def write(frame: DataFrame, path: str, fmt: str = "parquet") -> None:
    """Write a result frame as Parquet or JSON Lines (a Spark output directory)."""
    sink = spark_sink(fmt)  # the output registry's formats with a Spark sink
    with spark_errors():
        frame.write.mode("overwrite").format(sink).save(path)


__all__ = ["NotParallelWarning", "Planned", "plan", "prefetch", "run", "run_events", "run_to_results", "write"]


def run_events(query: Query, stream: Any, schema: Schema) -> list[Match] | list[TrendRow]:
    """:func:`run_to_results` on events held in memory (the engines' batch signature)."""
    import tempfile
    from pathlib import Path

    from acel.io.lines import object_json

    with tempfile.TemporaryDirectory(prefix="acel-spark-") as folder:
        path = Path(folder) / "stream.jsonl"
        with open(path, "wb") as handle:
            for event in stream:
                handle.write(object_json(event.as_dict()) + b"\n")
        return run_to_results(query, str(path), schema=schema)
