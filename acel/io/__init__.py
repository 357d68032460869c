"""Event files in, results out (spec §1, §9, §12).

Events: JSON Lines (``.jsonl``, ``.ndjson``, ``.json``), CSV (``.csv``) and
Parquet (``.parquet``, ``.pq``) files, standard input (JSON Lines), lists of
dictionaries, pandas DataFrames and pyarrow Tables.  :func:`open_events`
streams them in batches (:mod:`acel.io.source`); :func:`read_events` reads a
whole file into numbered :class:`~acel.lang.events.Event` objects.  Results:
:mod:`acel.io.results` (writers and readers of the §12 formats).  The choices
the spec leaves open are listed in ``papers/io.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acel.io.options import SourceOptions
from acel.io.readers import FORMATS, Reader, file_format, reader_for, register, unregister
from acel.io.record_pass import parse_cell
from acel.io.records import Problem, Row
from acel.io.schema_files import read_schema, write_schema
from acel.io.source import STDIN, EventStream, open_events
from acel.io.values import KINDS, infer_cell_kind, kind_of, native, time_key
from acel.lang.events import Event
from acel.lang.schema import Schema

__all__ = [
    "FORMATS",
    "KINDS",
    "STDIN",
    "EventStream",
    "Problem",
    "Reader",
    "Row",
    "SourceOptions",
    "events_from_arrow",
    "events_from_dataframe",
    "events_from_records",
    "file_format",
    "infer_cell_kind",
    "kind_of",
    "native",
    "open_events",
    "parse_cell",
    "read_events",
    "read_schema",
    "reader_for",
    "register",
    "time_key",
    "unregister",
    "write_schema",
]


def read_events(
    path: str | Path,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
) -> tuple[list[Event], Schema]:
    """Read an event file (format by extension) into a numbered stream and its schema."""
    stream = open_events(path, type_col=type_col, time_col=time_col, schema=schema)
    return stream.events(), stream.schema


def events_from_records(
    records: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
) -> tuple[list[Event], Schema]:
    """Events from in-memory dictionaries (native values), with every file check."""
    stream = open_events(list(records), type_col=type_col, time_col=time_col, schema=schema)
    return stream.events(), stream.schema


def events_from_dataframe(
    frame: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
) -> tuple[list[Event], Schema]:
    """Events from a pandas DataFrame (NaN/NaT are NULL and left out)."""
    stream = open_events(frame, type_col=type_col, time_col=time_col, schema=schema)
    return stream.events(), stream.schema


def events_from_arrow(
    table: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
) -> tuple[list[Event], Schema]:
    """Events from a pyarrow Table, column by column where the data allows."""
    stream = open_events(table, type_col=type_col, time_col=time_col, schema=schema)
    return stream.events(), stream.schema
