"""Records into checked events: the two passes over a row-wise source (spec §9).

Without a given schema a source is read twice: the first pass infers the schema,
checks every record (all problems are reported before any event is handed out)
and notes the order facts; the second pass converts and streams the events.
With a given schema one pass checks as it streams.  The JSON Lines and CSV
readers (and memory records) meet here, through Python or through the C scanner
(:mod:`acel.io.native_scan`), whose loops are here, beside the checks they call for
each line it leaves (issue 34: the walk of one event stays in few files).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import acel.io.native_scan as native_scan
from acel.io.columns import ColumnBlock, ColumnSpec
from acel.io.formats import BATCH, BOM, json_rows, line_row
from acel.io.native_protocol import (
    CSV_FLAG_BOOL,
    CSV_FLAG_FLOAT,
    CSV_FLAG_INT,
    CSV_FLAG_NUMERIC,
    CSV_FLAG_TYPED,
    CSV_FLAGS,
    SCAN_END,
    SCAN_NOT_SIMPLE,
    SCAN_PYTHON,
)
from acel.io.options import SourceOptions
from acel.io.records import Inference, Problem, Problems, RecordChecker, Row, with_time_column
from acel.io.sorting import sort_by_time
from acel.io.stream import Attrs, EventStream, Facts
from acel.io.values import time_key
from acel.lang.errors import DataError
from acel.lang.schema import Schema


def require_columns(source: str, header: Sequence[str], options: SourceOptions) -> None:
    """The type column, and the time column if one is named, in ``header``."""
    for column, what in ((options.type_col, "type"), (options.time_col, "time")):
        if column is not None and column not in header:
            raise DataError(
                f"{source}: the {what} column {column!r} is not in the header "
                f"(columns: {', '.join(header) or 'none'})"
                + ("; name it with --type-col" if what == "type" else "")
            )

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
        for batch in ordered(_checked(source, rows(), options, final, trusted, plain), sort, chunk):
            stream.read += len(batch)
            yield batch

    return EventStream(source, final, batches, facts, time_col=time_col, sort=sort, chunk=chunk, counts=True)


_PLAIN = frozenset([str, int, float, bool, type(None)])


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


class Order:
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


class _FirstPass:
    """The first pass, one record at a time: schema, problems, order facts.

    A record whose *signature* (type, attribute names in order, value kinds)
    was already seen in a good record tells the schema nothing new, so only
    its time key and watched attributes are looked at: most records cost one
    tuple and one set lookup.  ``Facts.plain`` says whether every value was a
    plain JSON value (so the second pass can skip the conversions).
    """

    def __init__(self, source: str, options: SourceOptions) -> None:
        self.problems = Problems(source)
        self.checker = RecordChecker(options, problems=self.problems)
        self.inference = Inference(options)
        self.order = Order(options.watch)
        self.known: set[tuple[Any, ...]] = set()
        self.plain = True
        self.type_col = options.type_col
        self.time_col = options.time_col
        self.timed = options.time_col is not None or bool(options.watch)

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
        checked = self.checker.infer(row, self.inference)
        if checked is None:
            return False
        attrs, key = checked
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
        schema = self.inference.final_schema(self.problems)
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
                    raise _beyond_floats(source, row, floats) from None
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


def _plain_event(values: Mapping[str, Any], options: SourceOptions, floats: Sequence[str]) -> Attrs:
    """A record of a trusted, plain stream as its event: NaN is NULL, ints of float
    attributes become floats, the type column is ``type`` (the record's dict is reused)."""
    attrs: Attrs = values if type(values) is dict else dict(values)
    type_col = options.type_col
    if type_col != "type":
        attrs["type"] = attrs.pop(type_col)
    for column, value in attrs.items():
        if type(value) is float and value != value:
            attrs[column] = None
    for column in floats:
        if type(attrs.get(column)) is int:
            attrs[column] = float(attrs[column])
    return attrs


def native_given_stream(
    path: Path,
    native: Any,
    options: SourceOptions,
    schema: Schema,
    *,
    make_row: Callable[[int, int, bytes], Row] = line_row,
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


def native_lines_stream(
    path: Path,
    native: Any,
    options: SourceOptions,
    *,
    make_row: Callable[[int, int, bytes], Row] = line_row,
    pure_rows: Callable[[], Iterator[list[Row]]] | None = None,
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> EventStream:
    """A file without a schema through the C scanner (``acel.io.native_scan``): the same
    two passes as :func:`rows_stream`, the lines it leaves made into records by
    ``make_row`` (JSON Lines by default; ``csv`` for a CSV file, whose ``pure_rows`` read
    a second pass the scanner cannot take)."""
    source = str(path)
    type_col, time_col, chunk = options.type_col, options.time_col, options.chunk
    first = _FirstPass(source, options)
    wide = False

    def on_row(number: int, index: int, line: bytes) -> bool:
        nonlocal wide
        row = make_row(number, index, line)
        if not fits_int64(row.values):
            wide = True
        return first.row(row)

    first.counted(first_pass(native, path, options, first.order, on_row, csv))
    schema, facts = first.result()
    facts.int64 = not wide
    sort = time_col is not None and not facts.sorted_by_time
    floats = tuple(a for a, k in schema.kinds if k == "float")

    def event(number: int, index: int, line: bytes) -> tuple[Attrs | None, bool]:
        row = make_row(number, index, line)
        try:
            return _plain_event(row.values, options, floats), False
        except OverflowError:
            raise _beyond_floats(str(path), row, floats) from None

    def columns(spec: Any) -> Iterator[Any] | None:
        if not facts.plain or type_col != "type" or sort:
            return None
        return column_blocks(native, path, spec.with_floats(floats), event, csv)

    def pulled() -> Iterator[list[Attrs]]:
        if not facts.plain or type_col != "type":
            rows = pure_rows() if pure_rows is not None else json_rows(path)
            checked = _checked(source, rows, options, schema, True, facts.plain)
            return ordered(checked, sort, chunk)

        lines = events(native, path, floats, event, csv)
        if not sort:
            return lines
        column = time_col or "type"
        keyed = ([(time_key(a.get(column)), a) for a in batch] for batch in lines)
        return ordered(keyed, sort, chunk)

    def batches(stream: EventStream) -> Iterator[list[Attrs]]:
        for batch in pulled():
            stream.read += len(batch)
            yield batch

    return EventStream(
        source, schema, batches, facts, time_col=time_col, sort=sort, chunk=chunk, columns=columns, counts=True
    )



# ------------------------------------------------------------------ the C scanner's loops
# The passes over a file the C scanner reads own their loops here, beside the per-record
# checks they call for each new record shape (issue 34: one file for the walk).


def csv_kinds(native: Any, path: Path, width: int) -> tuple[list[str], set[int]]:
    """Each column's kind, as :class:`acel.io.readers.csv._ColumnKind` infers it over the whole
    column, and the columns it calls mixed (text beside numbers or bools); ``NotSimple``
    for a file the scanner does not read."""
    start = bytearray(CSV_FLAGS)  # every cell an int, a number, a bool, until one is not
    start[CSV_FLAG_INT] = start[CSV_FLAG_FLOAT] = start[CSV_FLAG_BOOL] = 1
    flags = start * width
    for data in blocks(path, header=True):
        if native.csv_kinds(data, width, flags):
            raise native_scan.NotSimple(str(path))
    kinds, mixed = [], set()
    for i in range(width):
        column = flags[CSV_FLAGS * i : CSV_FLAGS * (i + 1)]
        is_int, is_float, is_bool = column[CSV_FLAG_INT], column[CSV_FLAG_FLOAT], column[CSV_FLAG_BOOL]
        numeric, typed = column[CSV_FLAG_NUMERIC], column[CSV_FLAG_TYPED]
        kinds.append("int" if is_int else "float" if is_float and numeric else "bool" if is_bool else "str")
        if kinds[-1] == "str" and typed:
            mixed.add(i)
    return kinds, mixed


def blocks(path: Path, header: bool = False) -> Iterator[bytes]:
    """The file in blocks of whole lines (the last may lack its newline); a BOM dropped,
    and with ``header`` the first line too."""
    with open(path, "rb") as handle:
        if header:
            handle.readline()
        rest = handle.read(native_scan.BLOCK)
        if not header and rest.startswith(BOM):
            rest = rest[3:]
        while True:
            chunk = handle.read(native_scan.BLOCK)
            if not chunk:
                if rest:
                    yield rest
                return
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
                data = data[cut:]
            rest = data


def first_pass(
    native: Any,
    path: Path,
    options: SourceOptions,
    order: Any,
    on_row: Callable[[int, int, bytes], bool],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> int:
    """The schema pass: lines of a known shape are counted and their order noted in C
    (into ``order``, an ``acel.io.row_passes.Order``); every other line goes to ``on_row``,
    which says whether its shape is now known.  Returns how many lines C counted.  With
    ``csv`` (:func:`csv_spec`) the lines are CSV records after the header."""
    shapes: dict[bytes, None] = {}
    time_col = options.time_col
    type_key = options.type_col.encode()
    time_key = time_col.encode() if time_col is not None else None
    watch_keys = tuple(w.encode() for w in options.watch)
    names = tuple(options.watch)
    facts = order.facts
    index, number, counted = (2 if csv else 1), 0, 0
    for data in blocks(path, header=csv is not None):
        pos = 0
        while True:
            status, pos, after, index, number, n, order.last_key, facts.sorted_by_time, shape = (
                native.first_pass(
                    data, pos, index, number, type_key, time_key, watch_keys, names, shapes,
                    order.last, facts.monotone, order.last_key, facts.sorted_by_time, csv,
                )
            )
            counted += n
            if status == SCAN_END:
                break
            if status == SCAN_NOT_SIMPLE:
                raise native_scan.NotSimple(f"{path}: line {index}")
            if on_row(number, index, data[pos:after]) and shape is not None:
                shapes[shape] = None
            pos, index = after, index + 1
    return counted


def events(
    native: Any,
    path: Path,
    floats: Sequence[str],
    on_row: Callable[[int, int, bytes], tuple[dict[str, Any] | None, bool]],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
    *,
    shapes: dict[bytes, None] | None = None,
    drop_null: bool = False,
    simple: bool = False,
) -> Iterator[list[dict[str, Any]]]:
    """The event pass (a trusted, plain stream whose type column is ``type``): one dict per
    line, ints of ``floats`` attributes as floats, in batches of :data:`native_scan.BATCH`; a line the
    scanner leaves is turned into its event (``None``: none) by ``on_row``, which says too
    whether later lines of its shape may be converted by the scanner alone.  With
    ``shapes`` (a schema's single pass), only lines of such shapes are, their NULLs
    dropped with ``drop_null``.  ``simple``: every CSV line is known to be simple, so one
    whose cell is not of its column's kind goes to ``on_row`` too."""
    float_keys = tuple(f.encode() for f in floats)
    out: list[dict[str, Any]] = []
    index, number = (2 if csv else 1), 0
    for data in blocks(path, header=csv is not None):
        pos = 0
        while True:
            status, pos, after, index, number, got, shape = native.emit(
                data, pos, index, number, float_keys, native_scan.BATCH - len(out), csv, shapes, b"type", drop_null
            )
            if out:
                out.extend(got)
            else:
                out = got
            if status == SCAN_NOT_SIMPLE and not simple:
                raise native_scan.NotSimple(f"{path}: line {index}")
            if status in (SCAN_PYTHON, SCAN_NOT_SIMPLE):
                event, known = on_row(number, index, data[pos:after])
                if event is not None:
                    out.append(event)
                if known and shape is not None and shapes is not None:
                    shapes[shape] = None
                pos, index = after, index + 1
            if len(out) >= native_scan.BATCH:
                yield out
                out = []
            if status == SCAN_END:
                break
    if out:
        yield out


def column_blocks(
    native: Any,
    path: Path,
    spec: ColumnSpec,
    on_row: Callable[[int, int, bytes], tuple[dict[str, Any] | None, bool]],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> Iterator[ColumnBlock | list[dict[str, Any]]]:
    """The event pass of :func:`events` into typed columns (``papers/engine.md``, "Columns
    into the core"): blocks of at most :data:`native_scan.BATCH` rows holding ``spec``'s attributes,
    filled in C without a Python object per event; a line the scanner leaves (or whose
    value no column holds: a string outside the type column) comes, in its place in the
    stream, as a one-event list made by ``on_row``, exactly as :func:`events` gives it."""
    keys = tuple(name.encode() for name in spec.names)
    floats = bytes(1 if name in spec.floats else 0 for name in spec.names)
    types = [name.encode() for name in spec.type_names]
    block = ColumnBlock.empty(spec, types, native_scan.BATCH)
    index, number = (2 if csv else 1), 0
    for data in blocks(path, header=csv is not None):
        pos = 0
        while True:
            status, pos, after, index, number, block.n = native.columns(
                data, pos, index, number, keys, floats, types, block.kinds, block.vals, native_scan.BATCH, block.n, csv
            )
            if status == SCAN_NOT_SIMPLE:
                raise native_scan.NotSimple(f"{path}: line {index}")
            if status == SCAN_END:
                break
            if block.n:
                yield block
                block = ColumnBlock.empty(spec, types, native_scan.BATCH)
            if status == SCAN_PYTHON:
                event, _known = on_row(number, index, data[pos:after])
                if event is not None:
                    yield [event]
                pos, index = after, index + 1
    if block.n:
        yield block


_KIND_NAMES = {str: "str", int: "int", float: "float", bool: "bool"}


def fits_int64(values: Any) -> bool:
    """Whether every int among a record's values fits 64 bits (Arrow's int64)."""
    low, high = -(2**63), 2**63 - 1
    return all(type(v) is not int or low <= v <= high for v in values.values())


def ordered(
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

