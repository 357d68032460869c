"""The input formats: one :class:`Reader` per format, each registered once (issue 34).

A reader names its format and file suffixes and opens a file as an
:class:`~acel.io.stream.EventStream` under one :class:`~acel.io.options.SourceOptions`.
The single process (:func:`acel.io.source.open_events`), Spark's input side and
Spark streaming all look formats up here, so a new input format is one registered
class: its :meth:`Reader.rows` is enough (the default :meth:`Reader.open` checks
and streams them as every row-wise source is).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from acel.io.options import SourceOptions
from acel.io.records import Row
from acel.io.row_passes import rows_stream
from acel.io.stream import EventStream
from acel.lang.errors import DataError


class Reader:
    """One input format: its name, suffixes, rows, Arrow columns and native path."""

    name: ClassVar[str]
    """The format's name (``jsonl``, ``csv``, ``parquet``)."""
    suffixes: ClassVar[tuple[str, ...]]
    """File extensions read as this format, lower case with the dot."""
    spark_format: ClassVar[str | None] = None
    """Spark's ``DataFrameReader.format`` for these files (``None``: Spark cannot read them)."""
    spark_options: ClassVar[tuple[tuple[str, bool | int | float | str], ...]] = ()
    """Options Spark's reader needs for these files (CSV: a header line)."""

    def rows(self, path: Path) -> Iterator[list[Row]]:
        """The file's records as they stand, in batches, each failure on its row (spec §9)."""
        raise NotImplementedError(f"the {self.name} reader gives no rows")

    def open(self, path: Path, options: SourceOptions) -> EventStream:
        """The file's checked events: :meth:`rows` through the row passes (schema, checks,
        order); a format with columns or a native path overrides this."""
        return rows_stream(str(path), lambda: self.rows(path), options)

    def arrow_batches(self, path: Path) -> Iterator[Any] | None:
        """The file's ``pyarrow.RecordBatch`` es as stored, when the format holds columns."""
        return None

    def native(self) -> Any | None:
        """The C reader this format's fast path uses, when built and wanted (else ``None``)."""
        return None


_READERS: dict[str, Reader] = {}
"""Format name → reader, in registration order."""

BY_SUFFIX: dict[str, Reader] = {}
"""File extension → reader, kept by :func:`register` and :func:`unregister`: opening a
file looks its reader up here without a call (issue 34, the walk of one event)."""


def register(reader: Reader) -> Reader:
    """Adds a format; a name or suffix already taken by another format is an error."""
    taken = suffix_map()
    clash = [s for s in reader.suffixes if s in taken and taken[s] != reader.name]
    if clash or (reader.name in _READERS and _READERS[reader.name] is not reader):
        raise ValueError(f"format {reader.name!r}: {', '.join(clash) or 'name'} already registered")
    _READERS[reader.name] = reader
    BY_SUFFIX.update(dict.fromkeys(reader.suffixes, reader))
    return reader


def unregister(name: str) -> None:
    """Removes a format (tests that register a toy one)."""
    gone = _READERS.pop(name, None)
    if gone is not None:
        for suffix in gone.suffixes:
            BY_SUFFIX.pop(suffix, None)


def readers() -> tuple[Reader, ...]:
    """Every registered reader."""
    return tuple(_READERS.values())


def suffix_map() -> dict[str, str]:
    """File extension → format name, over every registered reader."""
    return {suffix: r.name for r in _READERS.values() for suffix in r.suffixes}


def reader_named(name: str) -> Reader:
    """The reader of a format by name; DataError naming the known ones otherwise."""
    if name not in _READERS:
        raise DataError(f"unknown event format {name!r}; use {', '.join(_READERS)}")
    return _READERS[name]


def reader_for(path: str | Path) -> Reader:
    """The reader of a file by its extension; DataError listing the known ones otherwise."""
    suffix = Path(path).suffix.lower()
    for reader in _READERS.values():
        if suffix in reader.suffixes:
            return reader
    raise DataError(
        f"{path}: unknown event file format {suffix or '(no extension)'!r}; use {known_suffixes()}"
    )


def file_format(path: str | Path) -> str:
    """The format name of a file by its extension; DataError listing the known ones otherwise."""
    return reader_for(path).name


def known_suffixes() -> str:
    """The registered extensions, for a message: ``.jsonl/.ndjson/.json, .csv or .parquet/.pq``."""
    parts = ["/".join(r.suffixes) for r in _READERS.values()]
    return ", ".join(parts[:-1]) + " or " + parts[-1] if len(parts) > 1 else "".join(parts)


class _Suffixes(Mapping[str, str]):
    """A live view of :func:`suffix_map` (``acel.io.FORMATS``)."""

    def __getitem__(self, suffix: str) -> str:
        return suffix_map()[suffix]

    def __iter__(self) -> Iterator[str]:
        return iter(suffix_map())

    def __len__(self) -> int:
        return len(suffix_map())

    def __repr__(self) -> str:
        return repr(suffix_map())


FORMATS: Mapping[str, str] = _Suffixes()
"""File extension → input format name, as registered (a live view)."""
