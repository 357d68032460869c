"""Event files read by the executors: Spark 4 Python data sources on the toolkit's reader.

``acel-jsonl`` and ``acel-csv`` read a JSON Lines or CSV file in an executor
through :func:`acel.io.open_events` (the C scanner where it applies), so the
events, their values and their order are the single process's, and hand Spark
Arrow record batches (issue 31).  The driver then writes no Parquet copy of the
file (``frames.copy_file``, about 1 s CPU per 10^6 events); it runs
only the reader's first pass (0.1–0.2 s per 10^6 events with the C scanner),
which checks every row and infers the schema, so that a bad row is reported
on the driver with the single process's message before any Spark job, and
Spark is given the schema instead of asking a Python worker for it.

One split per file: the reader's kinds, its row numbers in messages and its
stable sort by the time column are properties of the whole file, and a byte
range read alone cannot reproduce them (papers/spark.md, "Files read by the
executors").

Not the default: measured on W0 at 10^6 events with 8 keys (``bench/spark_file_read.py``),
the whole process tree used about 1.6 times the CPU of the driver's copy (31 s against
19 s): the copy needs no Spark job to plan (the driver counts keys and axes as it writes)
and its engine tasks read it without a shuffle, while a data source's frame is scanned,
cached and shuffled by Spark.  ``ACEL_SPARK_FILE_READ=source`` turns it on.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from acel.lang.errors import DataError
from acel.lang.schema import Schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

FILE_READ_ENV = "ACEL_SPARK_FILE_READ"
"""``source``: the executors read a JSON Lines/CSV file through these data sources;
anything else (default ``copy``): the driver copies it to Parquet (``frames.copy_file``)."""

FORMATS = {"jsonl": "acel-jsonl", "csv": "acel-csv"}
"""Input format (``acel.io.readers``' registered ``Reader.name``) → data source name."""

_SPARK_TYPE = {"int": "bigint", "float": "double", "str": "string", "bool": "boolean"}


def wanted(path: str) -> bool:
    """Whether ``path`` is read by the executors (a JSON Lines or CSV file, not ``-``)."""
    if os.environ.get(FILE_READ_ENV, "copy") != "source" or path == "-":
        return False
    return _format(path) in FORMATS


def _format(path: str) -> str | None:
    """The registered input format of ``path`` (``None``: none is)."""
    from acel.io.readers import reader_for

    try:
        return str(reader_for(path).name)
    except DataError:
        return None


def columns(schema: Schema) -> list[tuple[str, str]]:
    """The frame's columns and Spark types: ``type``, then the attributes in order of first
    appearance over the types (as ``frames.copy_file`` lays them out)."""
    kinds = dict(schema.kinds)
    order: dict[str, None] = {}
    for type_name in schema.type_names():
        order.update(dict.fromkeys(schema.attributes(type_name)))
    names = [a for a in order if a != "type"]
    return [("type", "string")] + [(a, _SPARK_TYPE.get(kinds.get(a, "str"), "string")) for a in names]


def struct(schema: Schema) -> str:
    """The Spark DDL schema of a file's events."""
    return ", ".join(f"`{name}` {kind}" for name, kind in columns(schema))


class _EventFile(DataSource):
    """An event file read by :func:`acel.io.open_events` in one executor task.

    Options: ``path`` (from ``load``), ``type_col``, ``time_col``, ``schema`` (the
    user's schema as JSON, ``Schema.to_json``); the Spark schema must be given
    (``.schema(struct(...))``): inferring it needs the whole file.
    """

    def schema(self) -> StructType | str:
        raise DataError(f"{self.options.get('path')}: give the schema (datasource.struct) to read this file")

    def reader(self, schema: StructType) -> DataSourceReader:
        options = self.options
        given = options.get("schema")
        return _EventReader(
            str(options["path"]),
            str(options.get("type_col") or "type"),
            options.get("time_col") or None,
            Schema.from_json(json.loads(given)) if given else None,
            [(f.name, f.dataType.simpleString()) for f in schema.fields],
        )


class JsonLinesEvents(_EventFile):
    """``spark.read.format("acel-jsonl")``: JSON Lines events, the toolkit's reader."""

    @classmethod
    def name(cls) -> str:
        return "acel-jsonl"


class CsvEvents(_EventFile):
    """``spark.read.format("acel-csv")``: CSV events, the toolkit's reader."""

    @classmethod
    def name(cls) -> str:
        return "acel-csv"


class _EventReader(DataSourceReader):
    def __init__(self, path: str, type_col: str, time_col: str | None, schema: Schema | None,
                 fields: list[tuple[str, str]]) -> None:
        self.path = path
        self.type_col = type_col
        self.time_col = time_col
        self.given = schema
        self.fields = fields

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """The file's events in stream order, as record batches of the given columns."""
        return record_batches(self.path, self.type_col, self.time_col, self.given, self.fields)


def record_batches(path: str, type_col: str, time_col: str | None, given: Schema | None,
                   fields: Sequence[tuple[str, str]]) -> Iterator[Any]:
    """The events of ``path`` as Arrow record batches with ``fields`` (name, Spark type)."""
    import pyarrow as pa

    from acel.io import open_events
    from acel.io.columns import arrow_schema

    types = {"bigint": pa.int64(), "double": pa.float64(), "string": pa.string(), "boolean": pa.bool_()}
    target = pa.schema([(name, types[kind]) for name, kind in fields])
    stream = open_events(path, type_col=type_col, time_col=time_col, schema=given)
    columnar = stream.arrow_batches()
    if columnar is None:  # integers not known to fit 64 bits: attribute maps, checked below
        columnar = _checked_maps(stream, arrow_schema(stream.schema), path)
    for batch in columnar:
        names = batch.schema.names
        yield pa.RecordBatch.from_arrays(
            [batch.column(names.index(f.name)).cast(f.type) if f.name in names
             else pa.nulls(batch.num_rows, f.type) for f in target],
            schema=target,
        )


def _checked_maps(stream: Any, schema: Any, path: str) -> Iterator[Any]:
    import pyarrow as pa

    for rows in stream.batches():
        try:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)
        except (OverflowError, pa.ArrowInvalid):
            raise DataError(f"{path}: an integer does not fit in 64 bits, the largest a Spark "
                            "column holds") from None


_REGISTERED: set[int] = set()
_LOCK = threading.Lock()


def register(spark: SparkSession) -> None:
    """Register both data sources with ``spark`` (once per session)."""
    with _LOCK:
        if id(spark) in _REGISTERED:
            return
        spark.dataSource.register(JsonLinesEvents)
        spark.dataSource.register(CsvEvents)
        _REGISTERED.add(id(spark))


def checked(path: str, *, type_col: str, time_col: str | None, schema: Schema | None) -> Any:
    """The reader's first pass on the driver (every check, the schema), or its prefetched
    result; ``None`` when the file needs the driver's copy (integers beyond 64 bits, whose
    message names the row there)."""
    key = _key(path, type_col, time_col, schema)
    pending = _PENDING.pop(key, None)
    stream = pending.result() if pending is not None else _first_pass(path, type_col, time_col, schema)
    if stream.facts is not None and not stream.facts.int64:
        return None
    return stream


def _first_pass(path: str, type_col: str, time_col: str | None, schema: Schema | None) -> Any:
    from acel.io import open_events

    return open_events(path, type_col=type_col, time_col=time_col, schema=schema)


def frame(spark: SparkSession, path: str, *, type_col: str, time_col: str | None,
          schema: Schema | None) -> tuple[DataFrame, Schema] | None:
    """A file's events as a DataFrame the executors read (``type`` holds the type), and the
    stream's schema; ``None`` when the driver's copy must read it (see :func:`checked`).

    Raises the reader's ``DataError`` for a bad row or an empty file without a schema,
    word for word the single process's."""
    stream = checked(path, type_col=type_col, time_col=time_col, schema=schema)
    if stream is None:
        return None
    found: Schema = stream.schema
    if schema is None and not found.type_names():
        raise DataError(
            f"{path}: the data holds no events, so there is no schema to check the query "
            "against (give a schema to run it on an empty stream)"
        )
    register(spark)
    reader = (spark.read.format(FORMATS[str(_format(path))]).schema(struct(found))
              .option("type_col", type_col))
    if time_col is not None:
        reader = reader.option("time_col", time_col)
    if schema is not None:
        reader = reader.option("schema", json.dumps(schema.to_json()))
    return reader.load(os.path.abspath(path)), found


_PENDING: dict[tuple[Any, ...], Future[Any]] = {}
"""First passes started by :func:`prefetch`, taken by :func:`checked`."""


def _key(path: str, type_col: str, time_col: str | None, schema: Schema | None) -> tuple[Any, ...]:
    return (os.path.abspath(path), type_col, time_col, schema)


def prefetch(path: str, *, type_col: str, time_col: str | None, schema: Schema | None) -> None:
    """Start the driver's first pass in a background thread (it overlaps the JVM's start)."""
    key = _key(path, type_col, time_col, schema)
    if key in _PENDING:
        return
    pending: Future[Any] = Future()
    pending.set_running_or_notify_cancel()

    def work() -> None:
        try:
            pending.set_result(_first_pass(path, type_col, time_col, schema))
        except BaseException as error:  # handed to checked(), which raises it
            pending.set_exception(error)

    _PENDING[key] = pending
    threading.Thread(target=work, name="acel-check", daemon=True).start()


def pending_bytes() -> int | None:
    """The size of the files being checked by :func:`prefetch` (``None``: none is)."""
    if not _PENDING:
        return None
    return sum(os.path.getsize(key[0]) for key in _PENDING if os.path.exists(key[0]))
