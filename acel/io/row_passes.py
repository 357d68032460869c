"""Records into checked events: the two passes over a row-wise source (spec §9).

Without a given schema a source is read twice: the first pass infers the schema,
checks every record (all problems are reported before any event is handed out)
and notes the order facts; the second pass converts and streams the events.
With a given schema one pass checks as it streams.  The JSON Lines and CSV
readers (and memory records) meet here when Python reads them, or when the C scanner
reads a file with a schema; a file without one goes through
:func:`acel.io.record_pass.native_lines_stream`, whose module holds the per-record
check and the scanner's loops together (issue 34: the walk of one event stays in few
files).  The names of that module the readers use are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from acel.io.formats import json_line_row
from acel.io.options import SourceOptions
from acel.io.problems import Problems, beyond_floats
from acel.io.record_pass import (
    _KIND_NAMES,
    _SCALARS,
    Inference,
    RecordChecker,
    Row,
    _FirstPass,
    _plain_event,
    blocks,
    column_blocks,
    csv_kinds,
    events,
    first_pass,
    fits_int64,
    line_row,
    native_lines_stream,
    ordered,
    require_columns,
    scanned_csv_stream,
    scanned_lines_stream,
)
from acel.io.records import with_time_column
from acel.io.stream import Attrs, EventStream, Facts
from acel.io.values import time_key
from acel.lang.schema import Schema

JSON_LINE: Callable[[int, int, bytes], Row] = partial(line_row, slow=json_line_row)
"""One JSON Lines line the scanner leaves, as a record: :func:`~acel.io.record_pass.line_row`,
odd lines read by the reference reader."""

__all__ = [
    "JSON_LINE",
    "blocks",
    "checked_pass",
    "column_blocks",
    "csv_kinds",
    "events",
    "first_pass",
    "fits_int64",
    "native_given_stream",
    "native_lines_stream",
    "open_kinds",
    "ordered",
    "require_columns",
    "rows_stream",
    "scanned_csv_stream",
    "scanned_lines_stream",
]


# ------------------------------------------------------------------ row sources


def rows_stream(source: str, rows: Callable[[], Iterator[list[Row]]], options: SourceOptions) -> EventStream:
    """Row-wise records (JSON, CSV, in-memory dictionaries): two passes without a schema."""
    time_col, schema, chunk = options.time_col, options.schema, options.chunk
    facts: Facts | None = None
    trusted = False
    if schema is None:
        schema, facts = _infer(source, rows(), options)
        trusted = True
    else:
        kindless = open_kinds(schema)
        if kindless:
            schema = _with_data_kinds(source, rows(), options, schema, kindless)
        if time_col is not None:
            schema = with_time_column(schema, time_col, schema.type_names(), [])
    final = schema
    sort = time_col is not None and (facts is None or not facts.sorted_by_time)

    plain = facts is not None and facts.plain

    def batches(stream: EventStream) -> Iterator[list[Attrs]]:
        for batch in ordered(checked_pass(source, rows(), options, final, trusted, plain), sort, chunk):
            stream.read += len(batch)
            yield batch

    return EventStream(source, final, batches, facts, time_col=time_col, sort=sort, chunk=chunk, counts=True)


def open_kinds(schema: Schema) -> set[str]:
    """The attributes a given schema declares without a kind."""
    kinds = dict(schema.kinds)
    return {a for a in schema.all_attributes() if a != "type" and a not in kinds}


def _with_data_kinds(
    source: str,
    batches: Iterable[list[Row]],
    options: SourceOptions,
    schema: Schema,
    open_kinds: set[str],
) -> Schema:
    """The given schema with the kinds its data shows for ``open_kinds``.

    One kind per attribute holds with a schema too (``papers/io.md``): a
    first pass finds each open attribute's kind (int and float mix as float)
    and reports one that mixes kinds, naming both rows, before any event is
    handed out.
    """
    problems = Problems(source)
    checker = RecordChecker(options, problems=problems)
    inference = Inference(options)
    for batch in batches:
        for row in batch:
            checked = checker.check(row)
            if checked is not None:
                attrs = checked[0]
                inference.add(row, {c: v for c, v in attrs.items() if c in open_kinds or c == "type"})
    found = inference.schema(problems)
    problems.raise_if_any()
    kinds = dict(schema.kinds)
    kinds.update((a, k) for a, k in found.kinds if a in open_kinds)
    return Schema.of({t: list(schema.attributes(t)[1:]) for t in schema.type_names()}, kinds)


def _infer(source: str, batches: Iterable[list[Row]], options: SourceOptions) -> tuple[Schema, Facts]:
    """The first pass: schema, problems (raised), order facts (see :class:`_FirstPass`)."""
    first = _FirstPass(source, options)
    for batch in batches:
        for row in batch:
            first.row(row)
    return first.result()


def checked_pass(
    source: str,
    batches: Iterable[list[Row]],
    options: SourceOptions,
    schema: Schema,
    trusted: bool,
    plain: bool = False,
) -> Iterator[list[tuple[Any, Attrs]]]:
    """The second pass: ``(time key, attrs)`` per good record, in batches.

    ``trusted``: the schema was inferred from these very rows, so only the
    conversions are left (NaN is NULL, ints of float attributes become
    floats; with ``plain`` values nothing else).  Otherwise every row is
    checked; after the first problem nothing more is handed out, the rest is
    read for the count, and one DataError reports them all.
    """
    floats = tuple(a for a, k in schema.kinds if k == "float")
    time_col = options.time_col
    if trusted and plain:
        for batch in batches:
            out: list[tuple[Any, Attrs]] = []
            for row in batch:
                try:
                    attrs = _plain_event(row.values, options, floats)
                except OverflowError:
                    raise beyond_floats(source, row, floats) from None
                out.append((time_key(attrs.get(time_col)) if time_col is not None else 0, attrs))
            if out:
                yield out
        return
    second = _SecondPass(source, options, schema, trusted)
    for batch in batches:
        out = []
        for row in batch:
            item = second.row(row)
            if item is not None:
                out.append(item)
        if second.problems:
            continue
        if out:
            yield out
    second.problems.raise_if_any()


class _SecondPass:
    """The second (or only) pass of a stream not known to be plain, one record at a time:
    each record checked (against the schema unless ``trusted``) and converted.

    A record whose signature was seen in a clean record (one whose every value already
    has its attribute's kind) needs only the conversions.
    """

    def __init__(self, source: str, options: SourceOptions, schema: Schema, trusted: bool) -> None:
        self.problems = Problems(source)
        self.checker = RecordChecker(options, schema=None if trusted else schema, problems=self.problems)
        self.kinds = dict(schema.kinds)
        self.floats = tuple(a for a, k in schema.kinds if k == "float")
        self.clean: set[tuple[Any, ...]] = set()
        self.type_col = options.type_col
        self.time_col = options.time_col
        self.trusted = trusted

    def row(self, row: Row) -> tuple[Any, Attrs] | None:
        """``(time key, attrs)`` of a good record, ``None`` (its problems noted) otherwise."""
        try:
            return self._row(row)
        except OverflowError:
            raise beyond_floats(self.problems.source, row, self.floats) from None

    def _row(self, row: Row) -> tuple[Any, Attrs] | None:
        values = row.values
        type_col, time_col, floats = self.type_col, self.time_col, self.floats
        signature = None
        if row.failure is None and not self.trusted and type(values.get(type_col)) in _SCALARS:
            signature = (values.get(type_col), tuple(values), tuple(map(type, values.values())))
            if signature in self.clean:
                # checked before: only conversions that depend on the kinds are left
                attrs: Attrs = dict(values)
                if type_col != "type":
                    attrs["type"] = attrs.pop(type_col)
                for column, value in values.items():
                    if value is None or (type(value) is float and value != value):
                        del attrs[column if column != type_col else "type"]
                for column in floats:
                    if type(attrs.get(column)) is int:
                        attrs[column] = float(attrs[column])
                try:
                    key = time_key(attrs.get(time_col)) if time_col is not None else 0
                except ValueError:
                    pass
                else:
                    return key, attrs
        checked = self.checker.check(row)
        if checked is None:
            return None
        attrs, key = checked
        if self.trusted and floats:
            for column in floats:
                if type(attrs.get(column)) is int:
                    attrs[column] = float(attrs[column])
        if signature is not None and self._kinds_only(signature):
            self.clean.add(signature)
        return key, attrs

    def _kinds_only(self, signature: tuple[Any, ...]) -> bool:
        """Whether every record with this signature passes the checks a good one passed,
        with no conversion but int to float: each value's kind is its attribute's kind
        (or an int for a float attribute), so the verdict depends on the signature alone."""
        for column, value_type in zip(signature[1], signature[2]):
            if value_type is type(None):
                continue
            have = _KIND_NAMES.get(value_type)
            if have is None:
                return False
            if column == self.type_col:
                continue
            want = self.kinds.get(column)
            if want is not None and have != want and not (have == "int" and want == "float"):
                return False
        return True

    def is_clean(self, row: Row) -> bool:
        """Whether every later record of this one's signature passes without a check and
        has a numeric time (so the native scanner may convert it alone)."""
        values = row.values
        if row.failure is not None or type(values.get(self.type_col)) not in _SCALARS:
            return False
        signature = (values.get(self.type_col), tuple(values), tuple(map(type, values.values())))
        if signature not in self.clean:
            return False
        if self.time_col is None:
            return True
        return type(values.get(self.time_col)) in (int, float)


def native_given_stream(
    path: Path,
    native: Any,
    options: SourceOptions,
    schema: Schema,
    *,
    make_row: Callable[[int, int, bytes], Row] = JSON_LINE,
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> EventStream:
    """A file with a schema (every kind given, type column ``type``) through the C
    scanner: one pass, as :func:`rows_stream`; a line of a signature not yet seen clean
    is checked by :class:`_SecondPass`, later lines of that signature only converted
    (``csv``: a CSV file whose lines are all simple, ``make_row`` reading one)."""
    source = str(path)
    time_col, chunk = options.time_col, options.chunk
    if time_col is not None:
        schema = with_time_column(schema, time_col, schema.type_names(), [])
    final = schema
    sort = time_col is not None

    def checked() -> Iterator[list[tuple[Any, Attrs]]]:
        second = _SecondPass(source, options, final, False)

        def on_row(number: int, index: int, line: bytes) -> tuple[Attrs | None, bool]:
            row = make_row(number, index, line)
            item = second.row(row)
            return (None if item is None else item[1]), item is not None and second.is_clean(row)

        column = time_col or "type"
        for batch in events(
            native, path, second.floats, on_row, csv, shapes={}, drop_null=True, simple=csv is not None
        ):
            if second.problems:
                continue
            yield [(time_key(a.get(column)) if sort else 0, a) for a in batch]
        second.problems.raise_if_any()

    def batches(stream: EventStream) -> Iterator[list[Attrs]]:
        for batch in ordered(checked(), sort, chunk):
            stream.read += len(batch)
            yield batch

    return EventStream(source, final, batches, None, time_col=time_col, sort=sort, chunk=chunk, counts=True)


# ------------------------------------------------------------------ the C scanner's loops
# The passes over a file the C scanner reads own their loops here, beside the per-record
# checks they call for each new record shape (issue 34: one file for the walk).


