"""The output formats, a registry of their own (spec §12; issue 34).

Input formats are :mod:`acel.io.readers`; an extension a reader takes is not thereby
an output (a new input format would otherwise be accepted by ``--out`` and silently
written as something else).  Each :class:`OutputFormat` says what the writer
(:mod:`acel.io.results`) and Spark's streaming sink need to know of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from acel.lang.errors import DataError


@dataclass(frozen=True)
class OutputFormat:
    """One output format: its name, file extensions and where it can be written."""

    name: str
    suffixes: tuple[str, ...]
    into_pipe: bool
    """Whether it can be written into a pipe or a device as it goes (Parquet cannot)."""
    spark_sink: str | None = None
    """Spark's streaming file sink for a folder of it (``None``: no folder of it)."""


_OUTPUTS: dict[str, OutputFormat] = {}


def register_output(fmt: OutputFormat) -> OutputFormat:
    """Adds an output format; a name or extension already taken is an error."""
    taken = {s for f in _OUTPUTS.values() if f.name != fmt.name for s in f.suffixes}
    if taken.intersection(fmt.suffixes):
        raise ValueError(f"output format {fmt.name!r}: an extension is already registered")
    _OUTPUTS[fmt.name] = fmt
    return fmt


def output_formats() -> tuple[OutputFormat, ...]:
    """Every registered output format."""
    return tuple(_OUTPUTS.values())


def output_named(name: str) -> OutputFormat:
    """An output format by name; DataError naming the known ones otherwise."""
    if name not in _OUTPUTS:
        raise DataError(f"unknown output format {name!r}; use {_names()}")
    return _OUTPUTS[name]


def spark_sink(name: str) -> str:
    """Spark's file format for a folder of output format ``name`` (a format's name, or
    its Spark sink's own name: ``json``); DataError naming those Spark can write otherwise."""
    for fmt in _OUTPUTS.values():
        if fmt.spark_sink is not None and name in (fmt.name, fmt.spark_sink):
            return fmt.spark_sink
    sinks = [f.name for f in _OUTPUTS.values() if f.spark_sink is not None]
    raise DataError(f"unknown output format {name!r} (use {' or '.join(sinks)})")


def output_for(path: str | Path) -> OutputFormat:
    """The output format of a file by its extension; DataError naming the known ones otherwise."""
    suffix = Path(path).suffix.lower()
    for fmt in _OUTPUTS.values():
        if suffix in fmt.suffixes:
            return fmt
    raise DataError(f"{path}: unknown output format {suffix or '(no extension)'!r}; "
                    f"use {_names('.')}")


def _names(dot: str = "") -> str:
    names = [dot + f.name for f in _OUTPUTS.values()]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


JSONL = register_output(OutputFormat("jsonl", (".jsonl", ".ndjson", ".json"), into_pipe=True, spark_sink="json"))
CSV = register_output(OutputFormat("csv", (".csv",), into_pipe=True))
PARQUET = register_output(OutputFormat("parquet", (".parquet", ".pq"), into_pipe=False, spark_sink="parquet"))
