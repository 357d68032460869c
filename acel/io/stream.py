"""The record every event source gives: an :class:`EventStream` (spec §1, §9).

A stream holds its schema, what is known about its order (:class:`Facts`) and
its events as attribute maps (``type`` included) in stream order, batch by
batch, never all at once; where the source allows, also as Arrow columns or as
the typed column blocks of a native core.  The readers of :mod:`acel.io.readers`
build it; :func:`acel.io.source.open_events` hands it out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from acel.io.sorting import DEFAULT_CHUNK
from acel.io.values import MAX_ATTRIBUTES, too_many_attributes
from acel.lang.errors import DataError
from acel.lang.events import Event
from acel.lang.schema import Schema, reserved_attribute, reserved_message

Attrs = dict[str, Any]

STDIN = "-"
"""The data argument that means standard input."""


@dataclass
class Facts:
    """What a first pass learned about a stream's order."""

    count: int = 0
    sorted_by_time: bool = True
    plain: bool = False
    """Every value was a plain JSON value (no conversion needed on the second pass)."""
    monotone: dict[str, bool] = field(default_factory=dict)
    """Watched attribute → whether it never decreases along the file (NULLs ignored)."""
    int64: bool = False
    """Every int of the stream is known to fit 64 bits (so Arrow's int64 holds it exactly)."""


class EventStream:
    """A schema and the events of a stream, read in batches (see the module doc)."""

    def __init__(
        self,
        source: str,
        schema: Schema,
        batches: Callable[..., Iterator[list[Attrs]]],
        facts: Facts | None,
        *,
        time_col: str | None,
        sort: bool,
        chunk: int = DEFAULT_CHUNK,
        once: bool = False,
        arrow: Callable[[], Iterator[Any]] | None = None,
        columns: Callable[[Any], Iterator[Any] | None] | None = None,
        counts: bool = False,
    ) -> None:
        names = schema.all_attributes()
        if len(names) > MAX_ATTRIBUTES + 1:
            raise DataError(f"{source}: {too_many_attributes(len(names) - 1, 'the schema')}")
        reserved = reserved_attribute(names)
        if reserved is not None:
            raise DataError(f"{source}: {reserved_message(reserved)}")
        self.source = source
        self.schema = schema
        self.facts = facts
        self.time_col = time_col
        self._batches = batches
        self._once = once
        self._arrow = arrow
        self._columns = columns
        self._counts = counts
        """``batches`` is a generator function of the stream that adds what it hands out
        to :attr:`read` itself: the engine then pulls the reader's own generator, with no
        generator of this module between them (issue 34, the walk of one event)."""
        self._used = False
        self.read = 0
        """Events handed out so far."""
        self.sort = sort
        self.chunk = chunk

    def monotone(self, attr: str) -> bool | None:
        """Whether ``attr`` never decreases along the stream (``None``: unknown, e.g. live)."""
        if self.time_col == attr:
            return True
        if self.facts is None or self.sort or attr not in self.facts.monotone:
            return None
        return self.facts.monotone[attr]

    def batches(self) -> Iterator[list[Attrs]]:
        """The events as attribute maps, in stream order (position = running count)."""
        if self._counts:
            self._used = True
            return self._batches(self)
        return self._counted_maps()

    def _counted_maps(self) -> Iterator[list[Attrs]]:
        if self._once and self._used:
            raise DataError(f"{self.source}: the stream can be read only once")
        self._used = True
        for batch in self._batches():
            self.read += len(batch)
            yield batch

    def arrow_batches(self) -> Iterator[Any] | None:
        """The events as ``pyarrow.RecordBatch`` columns, in stream order (issue 23).

        The same events as :meth:`batches` (same checks and errors): one column per
        attribute of ``schema.all_attributes()``, int64 / float64 / string / bool
        (string for an attribute that is only ever NULL), NULL where an event lacks the
        attribute.  ``None`` when the stream cannot promise such columns: a live
        stream, or one whose ints are not known to fit 64 bits (``Facts.int64``: the
        native JSON Lines reader and Arrow sources know it); use :meth:`batches` then.
        """
        from acel.io.columns import arrow_schema, as_record_batches

        if self._once or self.facts is None or not self.facts.int64:
            return None
        schema = arrow_schema(self.schema)
        if self._arrow is not None:
            if self._used:
                raise DataError(f"{self.source}: the stream can be read only once")
            return self._counted(self._arrow())
        return as_record_batches(self.batches(), schema)

    def column_blocks(self, spec: Any) -> Iterator[Any] | None:
        """The events as typed columns for a native trend core (``acel.io.columns``:
        :class:`ColumnBlock` s holding ``spec``'s attributes, and one-event lists for the
        lines the scanner leaves), in stream order, with :meth:`batches`' checks;
        ``None`` when this stream cannot give them (``papers/engine.md``, "Columns into
        the core")."""
        if self._once and self._used:
            return None
        if self._columns is None:
            if self._arrow is None or self.sort:  # re-sorted events exist only as maps
                return None
            arrow = self.arrow_batches()  # Parquet, tables: Arrow's columns, converted column-wise
            if arrow is None:
                return None
            from acel.io.columns import arrow_blocks

            self._used = True
            return arrow_blocks(spec, arrow)
        blocks = self._columns(spec)
        if blocks is None:
            return None
        self._used = True
        return self._counted(blocks)

    def _counted(self, batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            self.read += len(batch) if isinstance(batch, list) else _rows_of(batch)
            yield batch

    def __iter__(self) -> Iterator[Attrs]:
        for batch in self.batches():
            yield from batch

    def events(self, limit: int | None = None) -> list[Event]:
        """The events numbered ``0..n-1`` (the first ``limit`` only, if given)."""
        out: list[Event] = []
        for attrs in self:
            if limit is not None and len(out) >= limit:
                break
            out.append(Event(len(out), tuple(sorted((k, v) for k, v in attrs.items() if v is not None))))
        return out



def _rows_of(batch: Any) -> int:
    """Events in a batch of columns (a record batch or a :class:`ColumnBlock`)."""
    rows = getattr(batch, "num_rows", None)
    return len(batch) if rows is None else int(rows)

