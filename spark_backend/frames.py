"""Input DataFrames: loading, checking, and numbering the stream on Spark (spec §1, §9).

The spec numbers stream events ``0..n-1`` after a stable sort by the time
column (input order otherwise).  A file is read by the toolkit's own reader
(:func:`read_file`: its checks, messages and values) and handed to Spark as a
Parquet copy already in stream order.  On Spark: ``monotonically_increasing_id``
records input order (partition index in the high bits, row within the
partition in the low 33 bits); one scan job (:func:`scan`) counts rows per
input partition, checks bad rows, infers the schema, counts events per
PARTITION BY key and tells whether a DataFrame is already in time order.  Only
a DataFrame out of order is sorted (``orderBy(time, input id)``, stable) and
counted again; prefix sums of the per-partition counts on the driver turn
the order into exact 0-based positions.  A caller's DataFrame is persisted so
that positions never change between jobs; a file's copy is stable as it is.
"""

from __future__ import annotations

import atexit
import os
import tempfile
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import acel.spark_backend.in_place as in_place

from acel.lang.errors import DataError
from acel.lang.events import Event
from acel.lang.schema import Schema

from .executor import POS
from .file_facts import FileFacts, event_layout
from .scratch import make_folder, remove_stale

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

from .names import ID, IN, LOW_BITS, MAX_EXAMPLES, TKEY
from .numbered import (
    _TEMPORARY,
    Stream,
    _remove,
    axis_summary,
    check_axis,
    order_batches,
    order_summary,
    present,
)
from .scan import (
    MAX_KEYS,
    Scan,
    Summary,
    _bad_conditions,
    _with_positions,
    infer_schema,
    report_bad_rows,
    scan,
    summarise,
)

__all__ = ["ID", "IN", "LOW_BITS", "MAX_EXAMPLES", "MAX_KEYS", "TKEY", "Scan", "Stream", "Summary",
           "axis_summary", "check_axis", "infer_schema", "order_batches", "order_summary",
           "present", "report_bad_rows", "scan", "summarise"]


def load(spark: SparkSession, data: Any) -> tuple[DataFrame, str]:
    """A DataFrame from a DataFrame or a path (CSV, JSON Lines, Parquet by extension),
    read by Spark itself (:func:`prepare` reads files with :func:`read_file` instead)."""
    from pyspark.sql import DataFrame

    if isinstance(data, DataFrame):
        return data, "<DataFrame>"
    if not isinstance(data, (str, Path)):
        raise DataError(f"data must be a Spark DataFrame or a file path, not {type(data).__name__}")
    path = str(data)
    if not Path(path).exists():
        raise DataError(f"{path}: no such file")
    from acel.io.readers import reader_for

    return spark_reader(spark, path, reader_for(path)).load(path), path


def spark_reader(spark: SparkSession, path: str, reader: Any) -> Any:
    """Spark's ``DataFrameReader`` for a file of a registered input format (an
    ``acel.io.readers.Reader``: its Spark format and options; Parquet's schema from the footer)."""
    if reader.spark_format is None:
        raise DataError(f"{path}: Spark cannot read {reader.name} files")
    spark_read = spark.read.format(reader.spark_format)
    for key, value in reader.spark_options:
        spark_read = spark_read.option(key, value)
    known = parquet_schema(path) if reader.spark_format == "parquet" else None
    return spark_read if known is None else spark_read.schema(known)


def parquet_schema(path: str) -> Any:
    """Spark's schema of one Parquet file, read from its footer on the driver (or None).

    Without it, ``spark.read.parquet`` runs a Spark job just to read the footer
    (about a second, papers/spark.md).  Only plain column types, whose Spark
    type is unambiguous, are mapped; anything else is left to Spark's inference.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import types as T

    if not Path(path).is_file():
        return None
    try:
        arrow = pq.read_schema(path)
    except Exception:  # noqa: BLE001 - Spark reports unreadable files itself
        return None
    plain = {
        pa.bool_(): T.BooleanType(), pa.int8(): T.ByteType(), pa.int16(): T.ShortType(),
        pa.int32(): T.IntegerType(), pa.int64(): T.LongType(), pa.float32(): T.FloatType(),
        pa.float64(): T.DoubleType(), pa.string(): T.StringType(), pa.large_string(): T.StringType(),
    }
    fields = []
    for field in arrow:
        spark_type = plain.get(field.type)
        if spark_type is None:
            return None
        fields.append(T.StructField(field.name, spark_type, True))
    return T.StructType(fields)


# ------------------------------------------------------------------ event files

INT64 = (-(2**63), 2**63 - 1)
"""The integers a Spark ``bigint`` column holds."""


@dataclass(frozen=True)
class FileEvents:
    """An event file read by the toolkit's own reader, as a Parquet file Spark reads."""

    frame: DataFrame
    source: str
    schema: Schema
    count: int
    folder: str
    facts: FileFacts | None = None
    """What the driver learnt while writing the copy (so planning needs no Spark job)."""


@dataclass(frozen=True)
class FileCopy:
    """A file's events written for Spark by the driver (:func:`copy_file`), no Spark needed."""

    target: str
    source: str
    schema: Schema
    count: int
    folder: str
    facts: FileFacts


def read_file(
    spark: SparkSession,
    path: str,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    keys: Sequence[str] = (),
    axes: Sequence[str] = (),
) -> FileEvents:
    """An event file, read exactly as the single-process engines read it (spec §1, §9).

    The file goes through :func:`acel.io.open_events` on the driver: every
    check, every message (with its row and line) and every value is the
    single-process reader's, reported before any Spark job.  Spark's own
    readers would differ: they turn a column mixing kinds into text, keep the
    last of two equal JSON keys, reject a BOM, read an unclosed CSV quote as
    data and fail on an integer beyond 64 bits.  The events, already sorted by
    ``time_col`` and with the type in ``type``, are written in stream order to
    a Parquet file with one column type per attribute kind (:func:`copy_file`).
    When :func:`prefetch` started that copy (while the JVM started), its result
    is taken.  The copy holds each event's position (``POS``) and the driver
    counts ``keys`` and ``axes`` as it writes (:class:`FileFacts`): planning a
    file's run needs no Spark job.
    """
    key = _copy_key(path, type_col, time_col, schema, keys, axes)
    pending = _PREFETCHED.pop(key, None)
    copy = pending.result() if pending is not None else copy_file(
        path, type_col=type_col, time_col=time_col, schema=schema, keys=keys, axes=axes)
    known = parquet_schema(copy.target)  # no Spark job to read the footer
    reader = spark.read if known is None else spark.read.schema(known)
    return FileEvents(reader.parquet(copy.target), path, copy.schema, copy.count, copy.folder, copy.facts)


def copy_file(
    path: str,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    keys: Sequence[str] = (),
    axes: Sequence[str] = (),
) -> FileCopy:
    """The driver's part of :func:`read_file`: the events written to ``events.parquet``.

    The copy goes to a hidden temporary folder beside the input (executors that
    could read the input read it too), removed by :meth:`Stream.release` or when
    the process exits.  An integer beyond 64 bits, which no Spark column holds,
    is an error naming its row.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from acel.io import open_events

    stream = open_events(path, type_col=type_col, time_col=time_col, schema=schema)
    events_schema = stream.schema
    kinds = dict(events_schema.kinds)
    arrow_schema = event_layout(events_schema)
    facts = FileFacts(tuple(keys), tuple(axes), {} if keys else None)
    written = arrow_schema.append(pa.field(POS, pa.int64()))
    folder = _temporary_folder(path)
    _TEMPORARY.append(folder)
    target = copy_target(folder)
    count = 0
    try:
        if _EXITING:
            raise DataError(f"{path}: not copied, the process is ending")
        with pq.ParquetWriter(target, written) as writer:
            for table in _tables(stream, arrow_schema, path, type_col, schema, kinds):
                facts.add(table, kinds)
                positions = pa.array(range(count, count + table.num_rows), pa.int64())
                writer.write_table(table.append_column(written.field(POS), positions))
                count += table.num_rows
    except BaseException:
        _remove(folder)
        raise
    if count == 0 and schema is None:
        _remove(folder)
        raise DataError(
            f"{path}: the data holds no events, so there is no schema to check the query "
            "against (give a schema to run it on an empty stream)"
        )
    return FileCopy(target, path, events_schema, count, folder, facts)


def copy_target(folder: str) -> str:
    """The Parquet copy's path in its folder."""
    return os.path.join(folder, "events.parquet")


_PREFETCHED: dict[tuple[Any, ...], Future[FileCopy]] = {}
"""Copies started by :func:`prefetch`, taken by the :func:`read_file` with the same arguments."""


def prefetched_bytes() -> int | None:
    """The size of the files :func:`prefetch` is copying (Parquet counted 8 times, about
    its compression against JSON Lines), ``None`` when none is: a hint for the JVM's
    start (``session.jit_options``)."""
    if not _PREFETCHED and not in_place.PENDING:
        import acel.spark_backend.datasource as datasource

        return datasource.pending_bytes()
    total = 0
    for key in [*_PREFETCHED, *in_place.PENDING]:
        try:
            size = os.path.getsize(key[0])
        except OSError:
            continue
        total += size * (8 if str(key[0]).lower().endswith((".parquet", ".pq")) else 1)
    return total


def tasks_read_the_file() -> bool:
    """Whether the only input being prepared is a Parquet file checked for reading in place
    by the slices' tasks (``in_place.prefetch``): the JVM will carry no events."""
    return bool(in_place.PENDING) and not _PREFETCHED


def _copy_key(path: str, type_col: str, time_col: str | None, schema: Schema | None,
              keys: Sequence[str], axes: Sequence[str]) -> tuple[Any, ...]:
    return (os.path.abspath(path), type_col, time_col, schema, tuple(keys), tuple(sorted(axes)))


def prefetch(
    path: str,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    keys: Sequence[str] = (),
    axes: Sequence[str] = (),
    sliced_on: str | None = None,
) -> None:
    """Start :func:`copy_file` in a background thread, so that the driver's reading overlaps
    the JVM's start (papers/spark.md, Pipeline step 2); :func:`read_file` with the same
    arguments waits for it and takes it (its errors are raised there, unchanged).  A
    Parquet file a sliced query may read in place is only checked (``in_place.prefetch``)."""
    import threading

    import acel.spark_backend.datasource as datasource

    if datasource.wanted(path):  # the executors read it: only the driver's check starts now
        datasource.prefetch(path, type_col=type_col, time_col=time_col, schema=schema)
        return
    if sliced_on is not None and in_place.candidate(path):
        in_place.prefetch(path, type_col=type_col, time_col=time_col, schema=schema, keys=keys, axes=axes)
        return
    key = _copy_key(path, type_col, time_col, schema, keys, axes)
    if path == "-" or key in _PREFETCHED:  # standard input is read where it is used
        return
    pending: Future[FileCopy] = Future()
    pending.set_running_or_notify_cancel()

    def work() -> None:
        try:
            pending.set_result(copy_file(path, type_col=type_col, time_col=time_col,
                                         schema=schema, keys=keys, axes=axes))
        except BaseException as error:  # handed to read_file, which raises it
            pending.set_exception(error)

    _PREFETCHED[key] = pending
    threading.Thread(target=work, name="acel-copy", daemon=True).start()


def _tables(
    stream: Any, arrow_schema: Any, path: str, type_col: str, schema: Schema | None,
    kinds: dict[str, str],
) -> Any:
    """The stream's events as Arrow tables of ``arrow_schema``, in stream order.

    Columnar when the reader gives them so (``EventStream.arrow_batches``, issue 23:
    the same events, checks and errors as ``batches``), else built from the
    attribute maps of ``batches`` (also when ``arrow_batches`` returns ``None``).
    """
    import pyarrow as pa

    columnar = getattr(stream, "arrow_batches", None)
    batches = columnar() if columnar is not None else None
    if batches is not None:
        for batch in batches:
            yield _conformed(batch, arrow_schema)
        return
    for rows in stream.batches():
        try:
            yield pa.Table.from_pylist(rows, schema=arrow_schema)
        except (OverflowError, pa.ArrowInvalid):
            raise _too_big(path, type_col, schema, kinds, rows) from None


def _conformed(batch: Any, arrow_schema: Any) -> Any:
    """A record batch as a table with ``arrow_schema``'s columns, in its order (a column
    the batch lacks is all NULL)."""
    import pyarrow as pa

    names = batch.schema.names
    columns = [
        batch.column(names.index(f.name)).cast(f.type) if f.name in names
        else pa.nulls(batch.num_rows, f.type)
        for f in arrow_schema
    ]
    return pa.Table.from_arrays(columns, schema=arrow_schema)


def _too_big(
    path: str, type_col: str, schema: Schema | None, kinds: dict[str, str], batch: list[Any]
) -> DataError:
    """The error for an integer beyond 64 bits, naming the first row that holds one."""
    from acel.io import open_events
    from acel.io.values import int_text

    lo, hi = INT64
    columns = {c for attrs in batch for c, v in attrs.items() if type(v) is int and not lo <= v <= hi}
    if not columns:  # not an integer after all: say what Arrow said
        return DataError(f"{path}: cannot hand the events to Spark (a value fits no column type)")
    # the first such row in the file, counted as the reader counts rows (input order)
    for row, attrs in enumerate(open_events(path, type_col=type_col, schema=schema), start=1):
        for column, value in attrs.items():
            if type(value) is int and not lo <= value <= hi:
                digits = int_text(abs(value))
                shown = digits if len(digits) <= 60 else f"{digits[:12]}…{digits[-6:]}"
                return DataError(
                    f"{path}: row {row}, column {column!r}: the integer "
                    f"{'-' if value < 0 else ''}{shown} ({len(digits):,} digits) does not fit in "
                    "64 bits, the largest integers a Spark column holds; the single-process "
                    "engines read it exactly (--engine optimized), or store it as a float or "
                    "a string"
                )
    return DataError(f"{path}: an integer in column {sorted(columns)[0]!r} does not fit in 64 bits")


def _temporary_folder(path: str) -> str:
    """A new hidden folder beside the input file (so executors that could read the input on
    a shared file system read the events too), else in the system's temporary folder."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.access(parent, os.W_OK):
        remove_stale(parent)  # what a killed run left (issue 36 D12)
        try:
            return make_folder(parent)
        except OSError:
            pass
    remove_stale(tempfile.gettempdir())
    return make_folder(None, hidden=False)


_EXITING: list[bool] = []
"""Set when the process ends: a copy still starting in :func:`prefetch`'s thread then
removes its own folder (the clean-up below has already run)."""


@atexit.register
def _remove_all() -> None:
    """Folders of frames handed out lazily (``run``) live until the process ends."""
    _EXITING.append(True)
    for folder in list(_TEMPORARY):
        _remove(folder)


def _kind(data_type: Any) -> str | None:
    """The value kind of a Spark column type after :func:`normalise` (None: unsupported)."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.BooleanType):
        return "bool"
    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "int"
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return "float"
    if isinstance(data_type, T.StringType):
        return "str"
    return None


def normalise(frame: DataFrame, source: str) -> DataFrame:
    """Columns as event values: timestamps/dates → epoch seconds, decimals → numbers.

    The same conversions as ``acel.io.native``; nested, binary and other
    types are rejected with the column's name.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns: list[Column] = []
    for field in frame.schema.fields:
        name, data_type = field.name, field.dataType
        col = F.col(f"`{name}`")
        if isinstance(data_type, T.TimestampType) or type(data_type).__name__ == "TimestampNTZType":
            col = (F.unix_micros(col.cast("timestamp")) / F.lit(1_000_000)).cast("double")
        elif isinstance(data_type, T.DateType):
            col = (F.unix_date(col).cast("long") * F.lit(86400)).cast("long")
        elif isinstance(data_type, T.DecimalType):
            col = col.cast("long" if data_type.scale == 0 else "double")
        elif isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType)):
            col = col.cast("long")
        elif isinstance(data_type, T.FloatType):
            col = col.cast("double")
        elif isinstance(data_type, T.NullType):
            col = col.cast("string")
        elif _kind(data_type) is None:
            raise DataError(
                f"{source}: column {name!r} has type {data_type.simpleString()}, "
                "which cannot be an event attribute (int, float, string, bool, date, timestamp)"
            )
        columns.append(col.alias(name))
    return frame.select(*columns)


def _time_key(frame: DataFrame, time_col: str) -> Column:
    """The sort key of the time column: a number, a numeric string or an ISO date."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    col = F.col(f"`{time_col}`")
    data_type = frame.schema[time_col].dataType
    if isinstance(data_type, (T.LongType, T.DoubleType)):
        return F.when(F.isnan(col.cast("double")), F.lit(None)).otherwise(col.cast("double"))
    if isinstance(data_type, T.StringType):
        text = F.trim(col)
        as_number = text.try_cast("double")
        as_date = F.unix_micros(F.try_to_timestamp(text)) / F.lit(1_000_000)
        return F.coalesce(as_number, as_date.cast("double"))
    return F.lit(None).cast("double")




def shaped(
    frame: DataFrame, source: str, type_col: str, time_col: str | None
) -> tuple[DataFrame, str | None, tuple[str, ...], dict[str, str]]:
    """A caller's DataFrame as events (no job): its type and time columns checked, the
    type renamed ``type`` (text), values normalised; with the time column's new name,
    the attribute columns and their kinds."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    header = frame.columns
    for column, what in ((type_col, "type"), (time_col, "time")):
        if column is not None and column not in header:
            raise DataError(
                f"{source}: the {what} column {column!r} is not in the data "
                f"(columns: {', '.join(header) or 'none'})"
            )
    if type_col != "type" and "type" in header:
        raise DataError(f"{source}: a 'type' column clashes with the type column {type_col!r}")
    frame = normalise(frame, source)
    if type_col != "type":
        frame = frame.withColumnRenamed(type_col, "type")
        if time_col == type_col:
            time_col = "type"
    if not isinstance(frame.schema["type"].dataType, T.StringType):
        frame = frame.withColumn("type", F.col("type").cast("string"))
    columns = tuple(frame.columns)
    kinds = {f.name: k for f in frame.schema.fields if (k := _kind(f.dataType)) is not None}
    return frame, time_col, columns, kinds


def prepare(
    spark: SparkSession,
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    axes: Sequence[str] = (),
    keys: Sequence[str] = (),
    sliced_on: str | None = None,
) -> Stream:
    """Load, check and number the input stream (see the module docstring).

    ``sliced_on``: the query is cut into time slices on this ``ON`` axis when it never
    decreases; a Parquet file may then be read in place (:func:`in_place_stream`).

    ``axes``: ``WITHIN/SLIDE … ON`` attributes whose missing values (on events
    holding every ``keys`` attribute) the same pass counts, for
    :func:`check_axis` (``Stream.flags``).

    ``keys``: the PARTITION BY attributes, whose events per key the same pass
    counts (``Stream.key_sizes``, to balance keys over tasks).

    One job, one pass (:func:`scan`) counts rows per input partition, checks bad
    rows, infers the schema and, with a time column, checks whether the rows
    already come in time order, as event files usually do; only if not are they
    sorted (a range shuffle) and counted again.

    A file is read by the toolkit's reader (:func:`read_file`): the same
    checks and values as every other engine, already in stream order.
    """
    import acel.spark_backend.datasource as datasource
    from pyspark.sql import functions as F

    folders: tuple[str, ...] = ()
    path = str(data) if isinstance(data, (str, Path)) else None
    sourced = None
    if path is not None and datasource.wanted(path):  # executors read it (datasource)
        sourced = datasource.frame(spark, path, type_col=type_col, time_col=time_col, schema=schema)
    if sourced is not None:
        data, schema = sourced
        type_col = "type"
    elif isinstance(data, (str, Path)):
        direct = in_place_stream(spark, str(data), type_col=type_col, time_col=time_col, schema=schema,
                                 keys=keys, axes=axes, sliced_on=sliced_on)
        if direct is not None:  # the slices' tasks read the user's Parquet file: no copy
            return direct
        read = read_file(spark, str(data), type_col=type_col, time_col=time_col, schema=schema,
                         keys=keys, axes=axes)
        return _file_stream(read, keys)
    frame, source = load(spark, data)
    source = path or source
    frame, time_col, columns, kinds = shaped(frame, source, type_col, time_col)
    frame = frame.withColumn(IN, F.monotonically_increasing_id())
    if time_col is not None:
        frame = frame.withColumn(TKEY, _time_key(frame, time_col))
    # A file is scanned the same way by every job (same splits, same row order), so
    # its ids are stable without caching; a caller's DataFrame may not be.
    stable = bool(folders)
    base = frame if stable else _persist(frame)
    persisted: tuple[DataFrame, ...] = () if stable else (base,)
    floats = [c for c in columns if kinds.get(c) == "float"]
    conditions = _bad_conditions(time_col, floats)
    for attr in axes:
        if attr in columns and kinds.get(attr) in ("int", "float"):
            conditions[f"axis:{attr}"] = _keyed(columns, kinds, keys) & _missing(attr)
    others = [c for c in columns if c != "type"] if schema is None else None
    present_keys = [k for k in keys if k in columns]
    found = scan(base, IN, conditions, others, TKEY if time_col is not None else None,
                 present_keys if len(present_keys) == len(keys) else (),
                 _keyed(columns, kinds, keys))
    summary = found.summary
    try:
        report_bad_rows(base, summary.flags, source, type_col, time_col, floats)
        if not sum(summary.counts.values()) and schema is None:
            raise DataError(
                f"{source}: the data holds no events, so there is no schema to check the query "
                "against (give a schema to run it on an empty stream)"
            )
        if time_col is None or found.in_order:
            numbered = _with_positions(base, IN, summary.counts).drop(IN, TKEY)
            counts = summary.counts
        else:
            ordered = _persist(
                base.orderBy(F.col(TKEY), F.col(IN)).withColumn(ID, F.monotonically_increasing_id())
            )
            persisted = (ordered, *persisted)
            counts = summarise(ordered, ID).counts
            numbered = _with_positions(ordered, ID, counts).drop(ID, IN, TKEY)
    except BaseException:
        for cached in persisted:
            cached.unpersist()
        for folder in folders:
            _remove(folder)
        raise
    if schema is None:
        schema = infer_schema(summary.present, kinds)
    flags = {k: v for k, v in summary.flags.items() if k.startswith("axis:")}
    return Stream(numbered, sum(counts.values()), columns, kinds, schema, source, persisted, flags,
                  found.key_sizes, found.many_keys, folders)


def in_place_stream(
    spark: SparkSession, path: str, *, type_col: str, time_col: str | None, schema: Schema | None,
    keys: Sequence[str], axes: Sequence[str], sliced_on: str | None,
) -> Stream | None:
    """A Parquet file whose slices' tasks read it in place, with no copy and no Spark
    job (``in_place.take`` says when); ``None``: copy it.  The stream's frame is empty,
    with the copy's columns: only ``direct_read.direct_slices`` reads its events."""
    from pyspark.sql import types as T

    checked = in_place.take(spark, path, type_col=type_col, time_col=time_col, schema=schema,
                            keys=keys, axes=axes, sliced_on=sliced_on)
    if checked is None:
        return None
    spark_of = {"string": T.StringType(), "int64": T.LongType(), "double": T.DoubleType(),
                "bool": T.BooleanType()}
    struct = T.StructType([T.StructField(f.name, spark_of[str(f.type)], True) for f in checked.place.layout]
                          + [T.StructField(POS, T.LongType(), True)])
    read = FileEvents(spark.createDataFrame([], struct), path, checked.schema, checked.count, "",
                      checked.facts)
    return _file_stream(read, keys, checked.place)


def _file_stream(read: FileEvents, keys: Sequence[str], place: in_place.InPlace | None = None) -> Stream:
    """A file's numbered stream, with no Spark job: the copy holds ``POS`` and the
    driver counted keys and axes while writing it (:class:`FileFacts`); or the file
    read in place (``place``: no copy, no folder)."""
    frame = normalise(read.frame, read.source)
    columns = tuple(c for c in frame.columns if c != POS)
    kinds = {f.name: k for f in frame.schema.fields
             if f.name != POS and (k := _kind(f.dataType)) is not None}
    facts = read.facts or FileFacts()
    flags = {f"axis:{a}": n for a, n in (facts.missing or {}).items()}
    present_keys = all(k in columns for k in keys)
    sizes = None
    if keys and present_keys and facts.sizes is not None:
        sizes = sorted(facts.sizes.items(), key=lambda kv: repr(kv[0]))
    return Stream(frame, read.count, columns, kinds, read.schema, read.source, (), flags,
                  sizes, bool(keys) and sizes is None, (read.folder,) if read.folder else (),
                  facts.axis or {}, place)


def _keyed(columns: Sequence[str], kinds: dict[str, str], keys: Sequence[str]) -> Column:
    """Rows holding every ``keys`` attribute (not NULL, not NaN)."""
    from pyspark.sql import functions as F

    cond = F.lit(True)
    for key in keys:
        if key not in columns:
            return F.lit(False)
        col = F.col(f"`{key}`")
        cond = cond & col.isNotNull()
        if kinds.get(key) == "float":
            cond = cond & ~F.isnan(col)
    return cond


def _missing(attr: str) -> Column:
    from pyspark.sql import functions as F

    col = F.col(f"`{attr}`")
    return col.isNull() | F.isnan(col.cast("double"))


def _persist(frame: DataFrame) -> DataFrame:
    from pyspark import StorageLevel

    return frame.persist(StorageLevel.MEMORY_AND_DISK)


def events_frame(spark: SparkSession, events: Sequence[Event]) -> DataFrame:
    """A DataFrame of events in stream order (tests, benchmarks): one column per attribute."""
    import pyarrow as pa

    names = sorted({k for e in events for k, _ in e.attrs} | {"type"})
    data = {n: [e.get(n) for e in events] for n in names}
    return spark.createDataFrame(pa.table(data))
