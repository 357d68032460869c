"""Parquet event files (``.parquet``, ``.pq``): Arrow columns, read one row group at a
time and checked column-wise where the data allows (:mod:`acel.io.arrow_source`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acel.io.arrow_source import arrow_rows, arrow_stream
from acel.io.formats import parquet_batches, parquet_file
from acel.io.options import SourceOptions
from acel.io.readers.registry import Reader, register
from acel.io.records import Row
from acel.io.stream import EventStream


class ParquetReader(Reader):
    """Parquet: a file of typed columns."""

    name = "parquet"
    suffixes = (".parquet", ".pq")
    spark_format = "parquet"

    def rows(self, path: Path) -> Iterator[list[Row]]:
        return arrow_rows(lambda: parquet_batches(path))

    def arrow_batches(self, path: Path) -> Iterator[Any] | None:
        return parquet_batches(path)

    def open(self, path: Path, options: SourceOptions) -> EventStream:
        names = list(parquet_file(path).schema_arrow.names)
        return arrow_stream(str(path), lambda: parquet_batches(path), names, options)


register(ParquetReader())
