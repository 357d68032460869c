"""The input formats, one registered :class:`Reader` each (:mod:`acel.io.readers.registry`).

Importing this package registers the built-in readers: JSON Lines, CSV, Parquet.
"""

from __future__ import annotations

# isort: off
# registration order: the order error messages list the formats in
from acel.io.readers.jsonl import JsonlReader
from acel.io.readers.csv import CsvReader
from acel.io.readers.parquet import ParquetReader

# isort: on
from acel.io.readers.registry import (
    FORMATS,
    Reader,
    file_format,
    known_suffixes,
    reader_for,
    reader_named,
    readers,
    register,
    suffix_map,
    unregister,
)

__all__ = [
    "FORMATS",
    "CsvReader",
    "JsonlReader",
    "ParquetReader",
    "Reader",
    "file_format",
    "known_suffixes",
    "reader_for",
    "reader_named",
    "readers",
    "register",
    "suffix_map",
    "unregister",
]
