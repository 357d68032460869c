"""A stream of events read from a file, standard input or memory, in batches (spec §1, §9).

:func:`open_events` gives an :class:`EventStream`: the stream's schema, what
is known about its order, and its events as attribute maps (``type``
included) in stream order, batch by batch, never all at once.

Without a given schema, a file is read twice: a first pass infers the schema
(and checks every row: all problems are reported before any work starts,
spec §9), notes whether the time column is already sorted and whether the
attributes a window reads never decrease; the second pass streams the events.
With a given schema a file is read once, and the rows are checked as they
stream.  Sorting by a time column is stable and bounded in memory
(:mod:`acel.io.sorting`).  Standard input is read once, as lines arrive: its
schema is the given one or the one its first lines show (a later event that
does not fit it is an error naming its line), and with a time column a
bounded reorder buffer (``max_delay``) restores order.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from acel.io import native_scan
from acel.io.formats import (
    BATCH,
    csv_cells,
    csv_header,
    file_format,
    json_rows,
    parquet_batches,
    parquet_file,
)
from acel.io.records import (
    Inference,
    Problem,
    Problems,
    RecordChecker,
    Row,
    memory_row,
    with_time_column,
)
from acel.io.sorting import DEFAULT_CHUNK, sort_by_time
from acel.io.values import (
    MAX_ATTRIBUTES,
    first_duplicate,
    parse_cell,
    time_key,
    too_many_attributes,
)
from acel.io.watermark import TICK, Advance, IdleClock
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


class _Order:
    """Tracks whether the time key and the watched attributes never decrease."""

    def __init__(self, watch: Sequence[str]) -> None:
        self.watch = tuple(watch)
        self.last_key: Any = None
        self.last: dict[str, Any] = {}
        self.facts = Facts(monotone={a: True for a in watch})

    def note(self, attrs: Mapping[str, Any], key: Any) -> None:
        facts = self.facts
        facts.count += 1
        if facts.sorted_by_time:
            if self.last_key is not None and key < self.last_key:
                facts.sorted_by_time = False
            self.last_key = key
        for attr in self.watch:
            value = attrs.get(attr)
            if type(value) is int or type(value) is float:
                last = self.last.get(attr)
                if last is not None and value < last:
                    facts.monotone[attr] = False
                self.last[attr] = value


class EventStream:
    """A schema and the events of a stream, read in batches (see the module doc)."""

    def __init__(
        self,
        source: str,
        schema: Schema,
        batches: Callable[[], Iterator[list[Attrs]]],
        facts: Facts | None,
        *,
        time_col: str | None,
        sort: bool,
        chunk: int = DEFAULT_CHUNK,
        once: bool = False,
        arrow: Callable[[], Iterator[Any]] | None = None,
        columns: Callable[[Any], Iterator[Any] | None] | None = None,
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


# ------------------------------------------------------------------ opening


def open_events(
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    watch: Sequence[str] = (),
    max_delay: float | None = None,
    infer_lines: int = 1000,
    chunk: int = DEFAULT_CHUNK,
    idle_advance: float | None = None,
) -> EventStream:
    """An :class:`EventStream` over a path, ``"-"`` (standard input), a list of
    dictionaries, a pandas DataFrame or a pyarrow Table.

    ``watch``: attributes whose order the caller needs (``WITHIN … ON attr``).
    ``max_delay`` (standard input with a time column): how far, in time-column
    units, an event may arrive after a later one.  ``infer_lines`` (standard
    input without a schema): how many first lines fix the schema.
    ``idle_advance`` (standard input with a time column): while no line arrives,
    event time moves on at this many time units a second (:mod:`acel.io.watermark`).
    """
    if isinstance(data, (str, Path)):
        if str(data) == STDIN:
            return _stdin_stream(
                sys.stdin.buffer, type_col, time_col, schema, max_delay, infer_lines,
                idle_advance,
            )
        return _file_stream(Path(data), type_col, time_col, schema, watch, chunk)
    if isinstance(data, list):
        rows = [memory_row(n, dict(r)) for n, r in enumerate(data, start=1)]
        return _rows_stream(
            "<records>", lambda: iter([rows]), type_col, time_col, schema, watch, chunk
        )
    table = _as_arrow(data)
    if table is not None:
        return _arrow_stream(
            "<table>" if not _is_pandas(data) else "<DataFrame>",
            lambda: iter(table.to_batches(BATCH)),
            list(table.column_names),
            type_col,
            time_col,
            schema,
            watch,
            chunk,
        )
    if _is_pandas(data):
        columns = [str(c) for c in data.columns]
        _require_columns("<DataFrame>", columns, type_col, time_col)
        frame_rows = [
            memory_row(n, {c: v for c, v in zip(columns, values) if not _is_missing(v)})
            for n, values in enumerate(data.itertuples(index=False, name=None), start=1)
        ]
        return _rows_stream(
            "<DataFrame>", lambda: iter([frame_rows]), type_col, time_col, schema, watch, chunk
        )
    raise DataError(
        f"cannot read events from a {type(data).__name__}: give a file path, '-', a list of "
        "dictionaries, a pandas DataFrame or a pyarrow Table"
    )


def _is_pandas(data: Any) -> bool:
    return type(data).__module__.startswith("pandas") and hasattr(data, "itertuples")


def _as_arrow(data: Any) -> Any:
    """A pyarrow Table for a Table, RecordBatch or a DataFrame Arrow can hold, else None."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if _is_pandas(data):
        try:
            return pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError):
            return None
    return None


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NaTType", "NAType")


def _require_columns(source: str, header: Sequence[str], type_col: str, time_col: str | None) -> None:
    for column, what in ((type_col, "type"), (time_col, "time")):
        if column is not None and column not in header:
            raise DataError(
                f"{source}: the {what} column {column!r} is not in the header "
                f"(columns: {', '.join(header) or 'none'})"
                + ("; name it with --type-col" if what == "type" else "")
            )


# ------------------------------------------------------------------ files


def _file_stream(
    path: Path,
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    watch: Sequence[str],
    chunk: int,
) -> EventStream:
    fmt = file_format(path)
    source = str(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", source)
    if path.is_dir():
        raise IsADirectoryError(21, "Is a directory", source)
    if fmt == "jsonl":
        native = native_scan.reader()
        if native is not None and native_scan.is_lines_file(path):
            if schema is None:
                return _native_lines_stream(path, native, type_col, time_col, watch, chunk)
            if type_col == "type" and not _open_kinds(schema):
                return _native_given_stream(path, native, type_col, time_col, schema, chunk)
        return _rows_stream(source, lambda: json_rows(path), type_col, time_col, schema, watch, chunk)
    if fmt == "csv":
        return _csv_stream(path, type_col, time_col, schema, watch, chunk)
    parquet = parquet_file(path)
    names = list(parquet.schema_arrow.names)
    return _arrow_stream(
        source,
        lambda: parquet_batches(path),
        names,
        type_col,
        time_col,
        schema,
        watch,
        chunk,
    )


# ------------------------------------------------------------------ row sources


def _rows_stream(
    source: str,
    rows: Callable[[], Iterator[list[Row]]],
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    watch: Sequence[str],
    chunk: int,
) -> EventStream:
    """Row-wise records (JSON, in-memory dictionaries): two passes without a schema."""
    facts: Facts | None = None
    trusted = False
    if schema is None:
        schema, facts = _infer(source, rows(), type_col, time_col, watch)
        trusted = True
    else:
        open_kinds = _open_kinds(schema)
        if open_kinds:
            schema = _with_data_kinds(source, rows(), type_col, time_col, schema, open_kinds)
        if time_col is not None:
            schema = with_time_column(schema, time_col, schema.type_names(), [])
    final = schema
    sort = time_col is not None and (facts is None or not facts.sorted_by_time)

    plain = facts is not None and facts.plain

    def batches() -> Iterator[list[Attrs]]:
        checked = _checked(source, rows(), type_col, time_col, final, trusted, plain)
        return _ordered(checked, sort, chunk)

    return EventStream(source, final, batches, facts, time_col=time_col, sort=sort, chunk=chunk)


_PLAIN = frozenset([str, int, float, bool, type(None)])


def _open_kinds(schema: Schema) -> set[str]:
    """The attributes a given schema declares without a kind."""
    kinds = dict(schema.kinds)
    return {a for a in schema.all_attributes() if a != "type" and a not in kinds}


def _with_data_kinds(
    source: str,
    batches: Iterable[list[Row]],
    type_col: str,
    time_col: str | None,
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
    checker = RecordChecker(type_col=type_col, time_col=time_col, problems=problems)
    inference = Inference(type_col=type_col, time_col=time_col)
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


def _infer(
    source: str,
    batches: Iterable[list[Row]],
    type_col: str,
    time_col: str | None,
    watch: Sequence[str],
) -> tuple[Schema, Facts]:
    """The first pass: schema, problems (raised), order facts (see :class:`_FirstPass`)."""
    first = _FirstPass(source, type_col, time_col, watch)
    for batch in batches:
        for row in batch:
            first.row(row)
    return first.result()


class _FirstPass:
    """The first pass, one record at a time: schema, problems, order facts.

    A record whose *signature* (type, attribute names in order, value kinds)
    was already seen in a good record tells the schema nothing new, so only
    its time key and watched attributes are looked at: most records cost one
    tuple and one set lookup.  ``Facts.plain`` says whether every value was a
    plain JSON value (so the second pass can skip the conversions).
    """

    def __init__(self, source: str, type_col: str, time_col: str | None, watch: Sequence[str]) -> None:
        self.problems = Problems(source)
        self.checker = RecordChecker(type_col=type_col, time_col=time_col, problems=self.problems)
        self.inference = Inference(type_col=type_col, time_col=time_col)
        self.order = _Order(watch)
        self.known: set[tuple[Any, ...]] = set()
        self.plain = True
        self.type_col = type_col
        self.time_col = time_col
        self.timed = time_col is not None or bool(watch)

    def row(self, row: Row) -> bool:
        """Note one record; whether its signature is now known (a later record of the same
        signature then needs only :meth:`counted` and the order notes)."""
        values = row.values
        type_col, time_col, order, known = self.type_col, self.time_col, self.order, self.known
        if row.failure is None and type(values.get(type_col)) in _SCALARS:
            kinds = tuple(map(type, values.values()))
            signature = (values.get(type_col), tuple(values), kinds)
            if signature in known and not (float in kinds and _infinite(values)):
                self.inference.count += 1
                if not self.timed:
                    order.facts.count += 1
                    return True
                try:
                    key = time_key(values.get(time_col)) if time_col is not None else 0  # type: ignore[arg-type]
                except ValueError:
                    pass
                else:
                    order.note(values, key)
                    return True
        else:
            signature = None
        before = self.problems.count
        checked = self.checker.check(row)
        if checked is None:
            return False
        attrs, key = checked
        self.inference.add(row, attrs)
        order.note(attrs, key)
        if signature is not None and self.problems.count == before:
            if not _PLAIN.issuperset(signature[2]):
                self.plain = False
            elif not any(type(v) is float and v != v for v in values.values()):
                known.add(signature)
                return True
        return False

    def counted(self, n: int) -> None:
        """``n`` records of known signatures whose order was noted elsewhere (the native pass)."""
        self.inference.count += n
        self.order.facts.count += n

    def result(self) -> tuple[Schema, Facts]:
        """The schema and the order facts; every problem found is raised here."""
        schema = self.inference.schema(self.problems)
        self.problems.raise_if_any()
        self.order.facts.plain = self.plain
        return schema, self.order.facts


_INFINITIES = (math.inf, -math.inf)
_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Types of a type value that can key a signature (an object or a list as the type is
checked in full and reported: issue 24 §3)."""


def _infinite(values: Mapping[str, Any]) -> bool:
    """Whether a record holds ±infinity (the full check reports it with its column)."""
    return any(type(v) is float and v in _INFINITIES for v in values.values())


def _checked(
    source: str,
    batches: Iterable[list[Row]],
    type_col: str,
    time_col: str | None,
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
    if trusted and plain:
        for batch in batches:
            out: list[tuple[Any, Attrs]] = []
            for row in batch:
                try:
                    attrs = _plain_event(row.values, type_col, floats)
                except OverflowError:
                    raise _beyond_floats(source, row, floats) from None
                out.append((time_key(attrs.get(time_col)) if time_col is not None else 0, attrs))
            if out:
                yield out
        return
    second = _SecondPass(source, type_col, time_col, schema, trusted)
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

    def __init__(self, source: str, type_col: str, time_col: str | None, schema: Schema, trusted: bool) -> None:
        self.problems = Problems(source)
        self.checker = RecordChecker(
            type_col=type_col, time_col=time_col, schema=None if trusted else schema, problems=self.problems
        )
        self.kinds = dict(schema.kinds)
        self.floats = tuple(a for a, k in schema.kinds if k == "float")
        self.clean: set[tuple[Any, ...]] = set()
        self.type_col = type_col
        self.time_col = time_col
        self.trusted = trusted

    def row(self, row: Row) -> tuple[Any, Attrs] | None:
        """``(time key, attrs)`` of a good record, ``None`` (its problems noted) otherwise."""
        try:
            return self._row(row)
        except OverflowError:
            raise _beyond_floats(self.problems.source, row, self.floats) from None

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
        if signature is not None and _kinds_only(signature, self.kinds, type_col):
            self.clean.add(signature)
        return key, attrs

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


def _beyond_floats(source: str, row: Row, floats: Sequence[str]) -> DataError:
    """The error for an integer no float holds in a column whose values are floats (an
    int and a float in one column read as float, papers/io.md; issue 36 D9's follow-up)."""
    problems = Problems(source)
    for column in floats:
        value = row.values.get(column)
        if type(value) is int and abs(value) >= 2**1024:
            problems.add(Problem(row.number, row.line, column, (
                f"the integer of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4,000'} "
                "digits is beyond the float range, and the column's other values are floats: "
                "write it as an integer column (no float in it) or give a smaller value")))
            break
    if not problems:  # not expected: say where, however
        problems.add(Problem(row.number, row.line, None, "a value is beyond the float range"))
    return problems.error()


def _plain_event(values: Mapping[str, Any], type_col: str, floats: Sequence[str]) -> Attrs:
    """A record of a trusted, plain stream as its event: NaN is NULL, ints of float
    attributes become floats, the type column is ``type`` (the record's dict is reused)."""
    attrs: Attrs = values if type(values) is dict else dict(values)
    if type_col != "type":
        attrs["type"] = attrs.pop(type_col)
    for column, value in attrs.items():
        if type(value) is float and value != value:
            attrs[column] = None
    for column in floats:
        if type(attrs.get(column)) is int:
            attrs[column] = float(attrs[column])
    return attrs


def _native_given_stream(
    path: Path,
    native: Any,
    type_col: str,
    time_col: str | None,
    schema: Schema,
    chunk: int,
    *,
    make_row: Callable[[int, int, bytes], Row] = native_scan.json_row,
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> EventStream:
    """A file with a schema (every kind given, type column ``type``) through the C
    scanner: one pass, as :func:`_rows_stream`; a line of a signature not yet seen clean
    is checked by :class:`_SecondPass`, later lines of that signature only converted
    (``csv``: a CSV file whose lines are all simple, ``make_row`` reading one)."""
    source = str(path)
    if time_col is not None:
        schema = with_time_column(schema, time_col, schema.type_names(), [])
    final = schema
    sort = time_col is not None

    def checked() -> Iterator[list[tuple[Any, Attrs]]]:
        second = _SecondPass(source, type_col, time_col, final, False)

        def on_row(number: int, index: int, line: bytes) -> tuple[Attrs | None, bool]:
            row = make_row(number, index, line)
            item = second.row(row)
            return (None if item is None else item[1]), item is not None and second.is_clean(row)

        column = time_col or "type"
        for batch in native_scan.events(
            native, path, second.floats, on_row, csv, shapes={}, drop_null=True, simple=csv is not None
        ):
            if second.problems:
                continue
            yield [(time_key(a.get(column)) if sort else 0, a) for a in batch]
        second.problems.raise_if_any()

    return EventStream(
        source, final, lambda: _ordered(checked(), sort, chunk), None, time_col=time_col, sort=sort, chunk=chunk
    )


def _native_lines_stream(
    path: Path,
    native: Any,
    type_col: str,
    time_col: str | None,
    watch: Sequence[str],
    chunk: int,
    *,
    make_row: Callable[[int, int, bytes], Row] = native_scan.json_row,
    pure_rows: Callable[[], Iterator[list[Row]]] | None = None,
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> EventStream:
    """A file without a schema through the C scanner (``acel.io.native_scan``): the same
    two passes as :func:`_rows_stream`, the lines it leaves made into records by
    ``make_row`` (JSON Lines by default; ``csv`` for a CSV file, whose ``pure_rows`` read
    a second pass the scanner cannot take)."""
    source = str(path)
    first = _FirstPass(source, type_col, time_col, watch)
    wide = False

    def on_row(number: int, index: int, line: bytes) -> bool:
        nonlocal wide
        row = make_row(number, index, line)
        if not native_scan.fits_int64(row.values):
            wide = True
        return first.row(row)

    first.counted(native_scan.first_pass(native, path, type_col, time_col, watch, first.order, on_row, csv))
    schema, facts = first.result()
    facts.int64 = not wide
    sort = time_col is not None and not facts.sorted_by_time
    floats = tuple(a for a, k in schema.kinds if k == "float")

    def event(number: int, index: int, line: bytes) -> tuple[Attrs | None, bool]:
        row = make_row(number, index, line)
        try:
            return _plain_event(row.values, type_col, floats), False
        except OverflowError:
            raise _beyond_floats(str(path), row, floats) from None

    def columns(spec: Any) -> Iterator[Any] | None:
        if not facts.plain or type_col != "type" or sort:
            return None
        return native_scan.column_blocks(native, path, spec.with_floats(floats), event, csv)

    def batches() -> Iterator[list[Attrs]]:
        if not facts.plain or type_col != "type":
            rows = pure_rows() if pure_rows is not None else json_rows(path)
            checked = _checked(source, rows, type_col, time_col, schema, True, facts.plain)
            return _ordered(checked, sort, chunk)

        lines = native_scan.events(native, path, floats, event, csv)
        if not sort:
            return lines
        column = time_col or "type"
        keyed = ([(time_key(a.get(column)), a) for a in batch] for batch in lines)
        return _ordered(keyed, sort, chunk)

    return EventStream(
        source, schema, batches, facts, time_col=time_col, sort=sort, chunk=chunk, columns=columns
    )


def _rows_of(batch: Any) -> int:
    """Events in a batch of columns (a record batch or a :class:`ColumnBlock`)."""
    rows = getattr(batch, "num_rows", None)
    return len(batch) if rows is None else int(rows)


_KIND_NAMES = {str: "str", int: "int", float: "float", bool: "bool"}


def _kinds_only(signature: tuple[Any, ...], kinds: Mapping[str, str], type_col: str) -> bool:
    """Whether every record with this signature passes the checks a good one passed,
    with no conversion but int to float: each value's kind is its attribute's kind
    (or an int for a float attribute), so the verdict depends on the signature alone."""
    for column, value_type in zip(signature[1], signature[2]):
        if value_type is type(None):
            continue
        have = _KIND_NAMES.get(value_type)
        if have is None:
            return False
        if column == type_col:
            continue
        want = kinds.get(column)
        if want is not None and have != want and not (have == "int" and want == "float"):
            return False
    return True


def _ordered(
    checked: Iterator[list[tuple[Any, Attrs]]], sort: bool, chunk: int
) -> Iterator[list[Attrs]]:
    """Batches of attribute maps in stream order (stable-sorted by time when needed)."""
    if not sort:
        for batch in checked:
            yield [attrs for _, attrs in batch]
        return
    flat = (item for batch in checked for item in batch)
    out: list[Attrs] = []
    for attrs in sort_by_time(flat, chunk):
        out.append(attrs)
        if len(out) >= BATCH:
            yield out
            out = []
    if out:
        yield out


# ------------------------------------------------------------------ CSV


class _ColumnKind:
    """The incremental form of :func:`acel.io.values.infer_cell_kind`."""

    __slots__ = ("is_int", "is_float", "is_bool", "numeric", "typed")

    def __init__(self) -> None:
        self.is_int = self.is_float = self.is_bool = True
        self.numeric = self.typed = False

    def add(self, raw: str) -> None:
        from acel.io.values import _BOOL, _FLOAT, _INT, _SPECIAL_FLOAT

        cell = raw.strip()
        number, truth = _FLOAT.fullmatch(cell) is not None, cell.lower() in _BOOL
        if number or truth:
            self.typed = True
        if self.is_int and not _INT.fullmatch(cell):
            self.is_int = False
        if self.is_float:
            if number:
                self.numeric = True
            elif not _SPECIAL_FLOAT.fullmatch(cell):
                self.is_float = False
        if self.is_bool and not truth:
            self.is_bool = False

    def mixed(self) -> bool:
        """Text beside numbers or bools: no kind reads every cell (issue 37)."""
        return self.typed and self.kind() == "str"

    def kind(self) -> str:
        if self.is_int:
            return "int"
        if self.is_float and self.numeric:
            return "float"
        if self.is_bool:
            return "bool"
        return "str"


def _csv_stream(
    path: Path,
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    watch: Sequence[str],
    chunk: int,
) -> EventStream:
    """CSV: cells take their column's kind (the schema's, else inferred over the whole column)."""
    source = str(path)
    header = csv_header(path)
    _require_columns(source, header, type_col, time_col)
    native = native_scan.reader()
    if native is not None:
        try:
            if schema is None:
                return _native_csv_stream(path, native, header, type_col, time_col, watch, chunk)
            if type_col == "type" and not _open_kinds(schema):
                return _native_csv_given(path, native, header, type_col, time_col, schema, chunk)
        except native_scan.NotSimple:
            pass  # the Python reader reads the file (and reports what is wrong with it)
    given = dict(schema.kinds) if schema is not None else {}
    unknown = [i for i, name in enumerate(header) if name != type_col and name not in given]
    scanned: dict[int, str] = {}
    if unknown:
        columns = {i: _ColumnKind() for i in unknown}
        for batch in csv_cells(path, len(header)):
            for _, _, cells in batch:
                if isinstance(cells, str):
                    continue
                for i, column in columns.items():
                    if cells[i] != "":
                        column.add(cells[i])
        scanned = {i: c.kind() for i, c in columns.items()}
        _refuse_mixed(path, header, [i for i, c in columns.items() if c.mixed()])
    kinds = [
        "str" if name == type_col else given.get(name) or scanned[i]
        for i, name in enumerate(header)
    ]
    if schema is not None and _open_kinds(schema):
        # a column has one kind: the schema's open attributes take the column's
        completed = dict(schema.kinds)
        completed.update(
            (name, kinds[i]) for i, name in enumerate(header) if name in _open_kinds(schema)
        )
        schema = Schema.of({t: schema.attributes(t) for t in schema.type_names()}, completed)
    if schema is not None and time_col is not None:
        schema = with_time_column(
            schema, time_col, schema.type_names(), [kinds[header.index(time_col)]]
        )

    return _rows_stream(
        source, lambda: _csv_rows(path, header, kinds), type_col, time_col, schema, watch, chunk
    )


def _csv_rows(path: Path, header: list[str], kinds: list[str]) -> Iterator[list[Row]]:
    """The records of a CSV file, each cell read as its column's kind."""
    for batch in csv_cells(path, len(header)):
        yield [
            Row(number, line, {}, cells) if isinstance(cells, str) else _csv_row(number, line, cells, header, kinds)
            for number, line, cells in batch
        ]


def _csv_row(number: int, line: int, cells: list[str], header: list[str], kinds: list[str]) -> Row:
    """One CSV record of the right width: empty cells are not mentioned, the others read
    as their column's kind (a cell that is not one fails the record)."""
    values: dict[str, object] = {}
    for name, kind, cell in zip(header, kinds, cells):
        if cell == "":
            continue
        try:
            values[name] = parse_cell(cell, kind)
        except ValueError as error:
            return Row(number, line, values, f"{error}, but the schema says {kind}", name)
    return Row(number, line, values)


def _native_csv_stream(
    path: Path,
    native: Any,
    header: list[str],
    type_col: str,
    time_col: str | None,
    watch: Sequence[str],
    chunk: int,
) -> EventStream:
    """A CSV file without a schema through the C scanner; ``NotSimple`` when a line is not
    simple (see ``acel.io.native_scan``): the Python reader then reads the file."""
    kinds, mixed = _simple_csv_kinds(path, native, header)
    _refuse_mixed(path, header, [i for i in sorted(mixed) if header[i] != type_col])
    kinds = ["str" if name == type_col else kind for name, kind in zip(header, kinds)]
    return _native_lines_stream(
        path, native, type_col, time_col, watch, chunk, make_row=_simple_csv_row(header, kinds),
        pure_rows=lambda: _csv_rows(path, header, kinds), csv=native_scan.csv_spec(header, kinds),
    )


def _native_csv_given(
    path: Path,
    native: Any,
    header: list[str],
    type_col: str,
    time_col: str | None,
    schema: Schema,
    chunk: int,
) -> EventStream:
    """A CSV file with a schema (every kind given) through the C scanner, one pass; a
    first scan makes sure every line is simple (``NotSimple`` otherwise), so a line whose
    cell is not of its kind is read and reported by Python alone."""
    scanned, mixed = _simple_csv_kinds(path, native, header)
    given = dict(schema.kinds)
    _refuse_mixed(path, header, [i for i in sorted(mixed) if header[i] not in given and header[i] != type_col])
    kinds = ["str" if name == type_col else given.get(name) or scanned[i] for i, name in enumerate(header)]
    if time_col is not None:
        schema = with_time_column(schema, time_col, schema.type_names(), [kinds[header.index(time_col)]])
    return _native_given_stream(
        path, native, type_col, time_col, schema, chunk, make_row=_simple_csv_row(header, kinds),
        csv=native_scan.csv_spec(header, kinds),
    )


def _refuse_mixed(path: Path, header: list[str], mixed: list[int]) -> None:
    """A column mostly of numbers or bools with a few text cells is an error naming those
    rows: inferred as text, ``price > 100`` would be false on every row (a silent wrong
    answer, issue 37; papers/io.md "Mixed CSV columns").  A column mostly of text stays text."""
    if not mixed:
        return
    cells_of: dict[int, tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]] = {
        i: ([], []) for i in mixed}
    for batch in csv_cells(path, len(header)):
        for number, line, cells in batch:
            if isinstance(cells, str):
                continue
            for i, (typed, text) in cells_of.items():
                if cells[i].strip() != "":
                    probe = _ColumnKind()
                    probe.add(cells[i])
                    (typed if probe.typed else text).append((number, line, cells[i]))
    for i, (typed, text) in cells_of.items():
        if len(text) >= len(typed):
            continue  # mostly text (codes such as 007 beside names): text, as inferred
        shown = "\n".join(f"  row {n} (line {line}): {cell!r}" for n, line, cell in text[:5])
        more = f"\n  … and {len(text) - 5:,} more" if len(text) > 5 else ""
        raise DataError(
            f"{path}: column {header[i]!r} holds numbers or bools ({len(typed):,} rows) and text "
            f"({len(text):,} row{'s' if len(text) != 1 else ''}), so no kind reads every cell; fix "
            f"{'that row' if len(text) == 1 else 'those rows'}, or declare the column's kind with "
            f"--schema:\n{shown}{more}")


def _simple_csv_kinds(path: Path, native: Any, header: list[str]) -> tuple[list[str], set[int]]:
    """Each column's kind as the Python reader infers it, and the mixed columns, when the
    header is one line and every line is simple (``NotSimple`` otherwise)."""
    import csv

    first = native_scan.csv_data_start(path)
    try:
        if [h.strip() for h in next(csv.reader([first.decode("utf-8")]))] != header:
            raise native_scan.NotSimple(str(path))  # a header over several lines
    except (UnicodeDecodeError, csv.Error, StopIteration):
        raise native_scan.NotSimple(str(path)) from None
    return native_scan.csv_kinds(native, path, len(header))


def _simple_csv_row(header: list[str], kinds: list[str]) -> Callable[[int, int, bytes], Row]:
    """Reads one simple CSV line (no quotes: its cells are its text split at commas)."""

    def make_row(number: int, index: int, line: bytes) -> Row:
        text = line.decode("utf-8").removesuffix("\n").removesuffix("\r")
        return _csv_row(number, index, text.split(","), header, kinds)

    return make_row


# ------------------------------------------------------------------ Arrow


def _arrow_stream(
    source: str,
    batches: Callable[[], Iterator[Any]],
    names: list[str],
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    watch: Sequence[str],
    chunk: int,
) -> EventStream:
    """Parquet files, pyarrow Tables, DataFrames: column-wise where the data allows."""
    if not names:  # not even a column (``pd.DataFrame()``): no events
        return EventStream(
            source, schema or Schema.of({}), lambda: iter(()), Facts(), time_col=time_col, sort=False
        )
    _require_columns(source, names, type_col, time_col)
    if len(names) > MAX_ATTRIBUTES + 1:
        raise DataError(f"{source}: {too_many_attributes(len(names) - 1, 'the table')}")
    duplicate = first_duplicate(names)
    if duplicate is not None:
        raise DataError(f"{source}: duplicate column name {duplicate!r}")

    def rows() -> Iterator[list[Row]]:
        number = 0
        for batch in batches():
            out = []
            for record in _normalised(batch).to_pylist():
                number += 1
                out.append(Row(number, None, {k: v for k, v in record.items() if v is not None}))
            yield out

    fast = all(_plain_type(f.type) for f in _first_schema(batches, names))
    if not fast:
        return _rows_stream(source, rows, type_col, time_col, schema, watch, chunk)
    try:
        inferred, facts = _infer_columns(source, batches, names, type_col, time_col, watch)
    except DataError:
        if schema is None:
            raise
        inferred = None  # the row-wise check reports every problem, the schema's too
    if schema is not None:
        fitted = _columns_fit(schema, inferred, time_col) if inferred is not None else None
        if fitted is None:
            return _rows_stream(source, rows, type_col, time_col, schema, watch, chunk)
        inferred = fitted
    assert inferred is not None
    sort = time_col is not None and not facts.sorted_by_time
    # ints become floats where the attribute is float but its column holds integers
    columns = {f.name: f.type for f in _first_schema(batches, names)}
    floats = tuple(
        a for a, k in inferred.kinds if k == "float" and a in columns and not _is_floating(columns[a])
    )

    def fast_batches() -> Iterator[list[Attrs]]:
        if not sort and not floats and type_col == "type":
            # nothing to convert or sort: Arrow's dictionaries are the events
            for batch in batches():
                yield _normalised(batch).to_pylist()
            return
        yield from _fast_converted()

    def _fast_converted() -> Iterator[list[Attrs]]:
        def keyed() -> Iterator[list[tuple[Any, Attrs]]]:
            for batch in batches():
                records = _normalised(batch).to_pylist()
                out = []
                for record in records:
                    record["type"] = record.pop(type_col) if type_col != "type" else record["type"]
                    for column in floats:
                        if type(record.get(column)) is int:
                            record[column] = float(record[column])
                    out.append((time_key(record.get(time_col)) if sort else 0, record))
                yield out

        return _ordered(keyed(), sort, chunk)

    facts.int64 = all(_fits_int64(t) for t in columns.values())
    final = inferred

    def arrow() -> Iterator[Any]:
        from acel.io.columns import arrow_schema, as_columns, as_record_batches

        target = arrow_schema(final)
        if sort:
            return as_record_batches(_fast_converted(), target)
        return (as_columns(_normalised(batch), type_col, target) for batch in batches())

    return EventStream(source, inferred, fast_batches, facts, time_col=time_col, sort=sort, chunk=chunk,
                       arrow=arrow)


def _fits_int64(arrow_type: Any) -> bool:
    """Whether every value of an Arrow type is an int64 when an int (uint64 may not be)."""
    import pyarrow as pa

    return not pa.types.is_unsigned_integer(arrow_type) or arrow_type.bit_width < 64


def _columns_fit(given: Schema, found: Schema, time_col: str | None) -> Schema | None:
    """The given schema (its open kinds taken from the columns) when every type and
    attribute the columns hold is declared with a kind the values fit (an int column
    fits a float attribute); ``None`` sends the data through the row-wise check, which
    names each row that does not fit."""
    declared = {t: set(given.attributes(t)) for t in given.type_names()}
    kinds = dict(given.kinds)
    for type_name in found.type_names():
        allowed = declared.get(type_name)
        if allowed is None:
            return None
        if any(a not in allowed and a != time_col for a in found.attributes(type_name)):
            return None
    for attr, kind in found.kinds:
        want = kinds.get(attr)
        if want is None:
            kinds[attr] = kind
        elif want != kind and not (kind == "int" and want == "float"):
            return None
    schema = Schema.of({t: list(given.attributes(t)[1:]) for t in given.type_names()}, kinds)
    if time_col is not None:
        schema = with_time_column(schema, time_col, schema.type_names(), [])
    return schema


def _first_schema(batches: Callable[[], Iterator[Any]], names: list[str]) -> list[Any]:
    for batch in batches():
        return list(batch.schema)
    return []


def _is_floating(arrow_type: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_floating(arrow_type))


def _plain_type(arrow_type: Any) -> bool:
    import pyarrow as pa

    t = arrow_type
    return bool(
        pa.types.is_boolean(t)
        or pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_null(t)
    )


def _normalised(batch: Any) -> Any:
    """NaN → NULL in float columns (spec §1: NaN means missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    changed = False
    for column in batch.columns:
        if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
            column = pc.if_else(pc.is_nan(column), pa.scalar(None, column.type), column)
            changed = True
        columns.append(column)
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def _infer_columns(
    source: str,
    batches: Callable[[], Iterator[Any]],
    names: list[str],
    type_col: str,
    time_col: str | None,
    watch: Sequence[str],
) -> tuple[Schema, Facts]:
    """The first pass over clean Arrow batches, column by column: per batch, the type
    column's problems, the time column's order, the watched attributes' order, each
    column's kind and which attributes each type mentions."""
    problems = Problems(source)
    inference = Inference(type_col=type_col, time_col=time_col)
    facts = Facts(monotone={a: True for a in watch})
    last: dict[str, Any] = {}
    number = 0
    kinds: dict[str, str] = {}
    for batch in batches():
        batch = _normalised(batch)
        n = batch.num_rows
        if not _check_types(batch, type_col, number, problems):
            number += n
            continue
        if time_col is not None:
            _check_times(batch, time_col, number, problems, facts, last)
        _watch_order(batch, watch, facts, last)
        _column_kinds(batch, names, type_col, number, problems, kinds)
        _mentions(batch, names, type_col, inference)
        number += n
        facts.count += n
    problems.raise_if_any()
    present = {a for _, attrs in inference.mentioned.items() for a in attrs}
    schema = Schema.of(
        {t: list(a) for t, a in inference.mentioned.items()},
        {n_: k for n_, k in kinds.items() if n_ in present},
    )
    return schema, facts


def _check_types(batch: Any, type_col: str, number: int, problems: Problems) -> bool:
    """Problems of the type column (NULL, empty, not text; a clashing ``type`` column);
    False when the column is not text at all (the batch tells nothing more)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    types = batch.column(type_col)
    if not (pa.types.is_string(types.type) or pa.types.is_large_string(types.type)):
        for i, value in enumerate(types.to_pylist()):
            message = (
                "event type is NULL"
                if value is None
                else f"event type must be a non-empty string, found {value!r}"
            )
            problems.add(Problem(number + i + 1, None, type_col, message))
        return False
    bad = pc.or_kleene(pc.is_null(types), pc.equal(types, ""))
    if pc.any(bad).as_py():
        for i, value in enumerate(types.to_pylist()):
            if value is None:
                problems.add(Problem(number + i + 1, None, type_col, "event type is NULL"))
            elif value == "":
                problems.add(
                    Problem(number + i + 1, None, type_col, "event type must be a non-empty string, found ''")
                )
    if type_col != "type" and "type" in batch.schema.names:
        clash = batch.column("type")
        for i in range(batch.num_rows):
            if clash[i].is_valid:
                problems.add(
                    Problem(number + i + 1, None, "type", f"a 'type' column clashes with the type column {type_col!r}")
                )
    return True


def _check_times(batch: Any, time_col: str, number: int, problems: Problems, facts: Facts,
                 last: dict[str, Any]) -> None:
    """Problems of the time column (NULL, not a time) and whether it is sorted so far."""
    import pyarrow as pa

    times = batch.column(time_col)
    if not (pa.types.is_integer(times.type) or pa.types.is_floating(times.type)):
        for i, value in enumerate(times.to_pylist()):
            try:
                key = time_key(value)
            except ValueError as error:
                problems.add(Problem(number + i + 1, None, time_col, str(error)))
                continue
            if facts.sorted_by_time:
                if "@time" in last and key < last["@time"]:
                    facts.sorted_by_time = False
                last["@time"] = key
        return
    if times.null_count:
        for i in range(batch.num_rows):
            if not times[i].is_valid:
                problems.add(Problem(number + i + 1, None, time_col, "the time value is NULL"))
    facts.sorted_by_time = facts.sorted_by_time and _non_decreasing(times, last, "@time")


def _watch_order(batch: Any, watch: Sequence[str], facts: Facts, last: dict[str, Any]) -> None:
    """Whether each watched numeric attribute still never decreases."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for attr in watch:
        if attr in batch.schema.names and facts.monotone.get(attr, False):
            column = batch.column(attr)
            if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
                facts.monotone[attr] = _non_decreasing(pc.drop_null(column), last, attr)


def _arrow_kind(t: Any) -> str | None:
    """The attribute kind of an Arrow type (None: not one of ours)."""
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "str"
    return None


def _column_kinds(batch: Any, names: list[str], type_col: str, number: int, problems: Problems,
                  kinds: dict[str, str]) -> None:
    """Each non-empty column's kind (into ``kinds``); ±infinity in float columns reported."""
    import pyarrow as pa

    for name in names:
        if name == type_col:
            continue
        t = batch.schema.field(name).type
        if pa.types.is_floating(t):
            _report_infinities(problems, batch.column(name), name, number)
        kind = _arrow_kind(t)
        if kind is not None and batch.column(name).null_count < batch.num_rows:
            kinds[name] = kind


def _mentions(batch: Any, names: list[str], type_col: str, inference: Inference) -> None:
    """Which attributes each type mentions (a non-NULL value in some row of that type)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = batch.num_rows
    valid = [n_ for n_ in names if n_ != type_col]
    if valid and n:
        table = pa.Table.from_batches([batch.select(names)])
        counts = table.group_by(type_col).aggregate([(c, "count") for c in valid])
        for record in counts.to_pylist():
            type_value = record[type_col]
            if not isinstance(type_value, str) or not type_value:
                continue
            mentioned = [c for c in valid if record[f"{c}_count"] > 0]
            inference.add_mentions(type_value, mentioned)
    elif n:
        for type_value in pc.unique(batch.column(type_col)).to_pylist():
            if isinstance(type_value, str) and type_value:
                inference.add_mentions(type_value, [])


def _report_infinities(problems: Problems, column: Any, name: str, offset: int) -> None:
    """±infinity in a float column: a problem per row (see ``records.infinity_message``)."""
    import pyarrow.compute as pc

    from acel.io.records import infinity_message

    infinite = pc.fill_null(pc.is_inf(column), False)
    if not pc.any(infinite).as_py():
        return
    for i, (flag, value) in enumerate(zip(infinite.to_pylist(), column.to_pylist())):
        if flag:
            problems.add(Problem(offset + i + 1, None, name, infinity_message(value)))


def _non_decreasing(column: Any, last: dict[str, Any], name: str) -> bool:
    """Whether a numeric Arrow column never decreases (and starts at or above ``last[name]``)."""
    import pyarrow.compute as pc

    if len(column) == 0:
        return True
    first = column[0].as_py()
    if name in last and last[name] is not None and first is not None and first < last[name]:
        return False
    last[name] = column[len(column) - 1].as_py()
    if len(column) < 2:
        return True
    return bool(pc.all(pc.greater_equal(column.slice(1), column.slice(0, len(column) - 1))).as_py() is not False)


# ------------------------------------------------------------------ standard input


def _stdin_stream(
    handle: IO[bytes],
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    max_delay: float | None,
    infer_lines: int,
    idle_advance: float | None = None,
) -> EventStream:
    """JSON Lines as they arrive on standard input (read once).

    Without a schema, the schema is the one of the lines that arrive first: up
    to ``infer_lines``, or fewer if the input pauses for half a second (a live
    stream must not wait for a thousand events before its first result).
    """
    source = "<stdin>"
    lines = _LiveLines(handle)
    head: list[Row] = []
    if schema is None:
        problems = Problems(source)
        checker = RecordChecker(type_col=type_col, time_col=time_col, problems=problems)
        inference = Inference(type_col=type_col, time_col=time_col)
        for row in lines.rows(pause=0.5):
            head.append(row)
            checked = checker.check(row)
            if checked is not None:
                inference.add(row, checked[0])
            if len(head) >= infer_lines:
                break
        schema = inference.schema(problems)
        problems.raise_if_any()
        inferred = True
    else:
        inferred = False
    final = schema

    def batches() -> Iterator[list[Attrs]]:
        problems = Problems(source)
        checker = RecordChecker(type_col=type_col, time_col=time_col, schema=final, problems=problems)
        reorder = _Reorder(max_delay, source) if time_col is not None else None
        clock = IdleClock(idle_advance) if idle_advance is not None and reorder is not None else None
        for row in _chain(head, lines.ticking(None, TICK if clock is not None else None)):
            if row is None:  # a quiet moment (only with a clock): event time moves on
                assert clock is not None and reorder is not None
                advanced = reorder.idle(clock.quiet())
                if advanced is not None:
                    yield advanced
                continue
            if clock is not None:
                clock.arrived()
            checked = checker.check(row)
            if checked is None:
                problem = problems.shown[-1]
                hint = (
                    f" (the schema was taken from the first {len(head)} lines; give --schema)"
                    if inferred
                    else ""
                )
                raise DataError(f"{source}: {problem}{hint}")
            if reorder is None:
                yield [checked[0]]  # one at a time: each event as soon as its line arrives
            else:
                released = reorder.push(checked[1], checked[0], row)
                if released:
                    yield released
        if reorder is not None:
            rest = reorder.drain()
            if rest:
                yield rest

    return EventStream(source, final, batches, None, time_col=time_col, sort=False, once=True)


def _chain(head: list[Row], rest: Iterator[Row | None]) -> Iterator[Row | None]:
    yield from head
    yield from rest


class _LiveLines:
    """The records of a live binary stream as their lines arrive.

    A thread reads lines into a queue, so the reader can ask for what has
    arrived so far without blocking (``pause``) and a line is parsed as soon
    as it is complete.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        import queue
        import threading

        self.queue: queue.Queue[bytes | None] = queue.Queue()
        self.index = 0
        self.number = 0
        self.done = False
        source = _private_reader(handle)

        def pump() -> None:
            try:
                for line in iter(source.readline, b""):
                    self.queue.put(line)
            finally:
                self.queue.put(None)

        threading.Thread(target=pump, name="acel-stdin", daemon=True).start()

    def rows(self, pause: float | None = None) -> Iterator[Row]:
        """Records in order; with ``pause``, stop when no line arrives for that long."""
        for row in self.ticking(pause, None):
            if row is None:
                return
            yield row

    def ticking(self, pause: float | None, tick: float | None) -> Iterator[Row | None]:
        """Records in order; ``None`` after ``pause`` seconds without a line (then stop),
        or every ``tick`` seconds without one (then go on waiting)."""
        import queue

        from acel.io.formats import BOM, json_line_row

        wait = pause if pause is not None else tick
        while not self.done:
            try:
                line = self.queue.get(timeout=wait) if wait is not None else self.queue.get()
            except queue.Empty:
                yield None
                if pause is not None:
                    return
                continue
            if line is None:
                self.done = True
                return
            self.index += 1
            if self.index == 1 and line.startswith(BOM):
                line = line[3:]
            if not line.strip():
                continue
            self.number += 1
            yield json_line_row(self.number, self.index, line)


def _private_reader(handle: IO[bytes]) -> IO[bytes]:
    """A reader of its own on ``handle``'s file descriptor, when it has one.

    The reading thread may be blocked inside ``readline`` when the run stops on an
    error while the pipe is still open; had it locked ``sys.stdin.buffer``, closing
    that at interpreter exit would abort the process (``_enter_buffered_busy``).
    """
    import io
    import os

    try:
        return os.fdopen(os.dup(handle.fileno()), "rb")
    except (AttributeError, OSError, io.UnsupportedOperation):
        return handle


class _Reorder:
    """A bounded reorder buffer: events wait until no earlier one can still arrive.

    An event may arrive up to ``max_delay`` time units after one with a later
    time; one that arrives later than that is reported with its line (never
    dropped or reordered silently).
    """

    def __init__(self, max_delay: float | None, source: str) -> None:
        import heapq

        self.heapq = heapq
        self.delay = 0 if max_delay is None else max_delay
        self.source = source
        self.heap: list[tuple[Any, int, Attrs]] = []
        self.seq = 0
        self.high: Any = None
        self.released: Any = None
        self.watermark: Any = None
        """Where quiet time moved event time (``--idle-advance``): no later event may be below."""

    def push(self, key: Any, attrs: Attrs, row: Row) -> list[Attrs]:
        if self.watermark is not None and key < self.watermark:
            raise DataError(
                f"{self.source}: {row.where()}: time {key!r} arrives after the input was quiet "
                f"and event time had moved on to {round(self.watermark, 3)!r} (--idle-advance); raise "
                "--max-delay or lower --idle-advance"
            )
        if self.released is not None and key < self.released:
            raise DataError(
                f"{self.source}: {row.where()}: time {key!r} arrives after events up to "
                f"{self.released!r} were already processed (more than --max-delay "
                f"{self.delay!r} late); raise --max-delay or sort the input"
            )
        self.heapq.heappush(self.heap, (key, self.seq, attrs))
        self.seq += 1
        if self.high is None or key > self.high:
            self.high = key
        out: list[Attrs] = []
        limit = self.high - self.delay
        while self.heap and self.heap[0][0] <= limit:
            k, _, item = self.heapq.heappop(self.heap)
            self.released = k
            out.append(item)
        return out

    def idle(self, quiet: float) -> Advance | None:
        """No line for ``quiet`` time units: the watermark moves to ``high − delay + quiet``,
        and the events at or below it leave the buffer (``None`` before the first event)."""
        if self.high is None:
            return None
        mark = self.high - self.delay + quiet
        if self.watermark is not None and mark <= self.watermark:
            return None
        self.watermark = mark
        out: list[Attrs] = []
        while self.heap and self.heap[0][0] <= mark:
            k, _, item = self.heapq.heappop(self.heap)
            self.released = k
            out.append(item)
        return Advance(out, mark)

    def drain(self) -> list[Attrs]:
        out = []
        while self.heap:
            k, _, item = self.heapq.heappop(self.heap)
            self.released = k
            out.append(item)
        return out


__all__ = ["STDIN", "EventStream", "Facts", "open_events", "with_time_column"]
