"""How to read one event source: the options every reader takes, as one frozen record.

:class:`SourceOptions` travels from :func:`acel.io.source.open_events` to the
reader of a format (:mod:`acel.io.readers`) instead of a list of keyword
arguments repeated in every signature on the way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from acel.io.sorting import DEFAULT_CHUNK
from acel.lang.schema import Schema


@dataclass(frozen=True)
class SourceOptions:
    """The options of one event source (spec §1, §9; ``papers/io.md``).

    ``type_col``: the column naming each event's type.  ``time_col``: the column the
    stream is ordered by (sorted when it is not).  ``schema``: the given schema (``None``:
    inferred from the data).  ``watch``: attributes whose order the caller needs
    (``WITHIN … ON attr``).  ``chunk``: events sorted in memory at once.  Standard input
    only: ``max_delay`` (how late an event may arrive, in time units), ``infer_lines``
    (the first lines that fix the schema), ``idle_advance`` (time units a quiet second
    moves event time on).  ``observe``: called with each clean Arrow batch (NaN already
    NULL) of a column-wise source's checking pass, in order, so that a caller counting
    its own facts (Spark's driver, ``acel.spark_backend.file_facts``) needs no second
    read of the file; ignored by the other readers.
    """

    type_col: str = "type"
    time_col: str | None = None
    schema: Schema | None = None
    watch: tuple[str, ...] = ()
    chunk: int = DEFAULT_CHUNK
    max_delay: float | None = None
    infer_lines: int = 1000
    idle_advance: float | None = None
    observe: Callable[[Any], None] | None = field(default=None, compare=False, repr=False)

    def with_schema(self, schema: Schema | None) -> SourceOptions:
        """The same options with another schema (a reader completing the given one)."""
        return replace(self, schema=schema)
