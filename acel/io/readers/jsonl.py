"""JSON Lines event files (``.jsonl``, ``.ndjson``, ``.json``; spec §9): one JSON object a
line, or a ``.json`` file holding one array of objects.

A file of lines goes through the C scanner (:mod:`acel.io.record_pass`) when it is built
and ``ACEL_NATIVE`` wants it (and, with a given schema, when every kind is given and the
type column is ``type``);
the pure-Python reader (:func:`acel.io.formats.json_rows`) is the reference and fallback.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import acel.io.native_scan as native_scan
from acel.io.formats import BOM, json_rows
from acel.io.options import SourceOptions
from acel.io.readers.registry import Reader, register
from acel.io.records import Row
from acel.io.row_passes import (
    JSON_LINE,
    checked_pass,
    native_given_stream,
    open_kinds,
    rows_stream,
    scanned_lines_stream,
)
from acel.io.stream import EventStream


class JsonlReader(Reader):
    """JSON Lines (or one JSON array of objects)."""

    name = "jsonl"
    suffixes = (".jsonl", ".ndjson", ".json")
    spark_format = "json"

    def rows(self, path: Path) -> Iterator[list[Row]]:
        return json_rows(path)

    def open(self, path: Path, options: SourceOptions) -> EventStream:
        schema = options.schema
        if schema is None:  # the scanner chosen and run in one call (the walk of one event)
            stream = scanned_lines_stream(
                native_scan.reader, path, options, readable=is_lines_file(path), make_row=JSON_LINE,
                pure_rows=partial(json_rows, path), recheck=checked_pass,
            )
            if stream is not None:
                return stream
        else:
            native = self.native()
            if native is not None and is_lines_file(path) and options.type_col == "type" and not open_kinds(schema):
                return native_given_stream(path, native, options, schema)
        return rows_stream(str(path), lambda: json_rows(path), options)

    def native(self) -> Any | None:
        return native_scan.reader()


def is_lines_file(path: Path) -> bool:
    """Whether a ``.json``/``.jsonl`` file holds lines (not one JSON array, read as a whole)."""
    with open(path, "rb") as handle:
        head = handle.read(64)
    stripped = head[3:] if head.startswith(BOM) else head
    return not stripped.lstrip().startswith(b"[")


register(JsonlReader())
