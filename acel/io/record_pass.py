"""The C scanner's path: its choice, its loops, and every step they take for a line it leaves.

:func:`scanner` says whether the scanner (``acel.io._native_reader``) reads a file;
:func:`scanned_lines_stream` and :func:`scanned_csv_stream` open a file through it.  A
reader's records are :class:`Row` s (:func:`line_row`, CSV cells by :func:`parse_cells`);
a :class:`RecordChecker` turns each into an event's attribute map or into problems (spec
§9), an :class:`Inference` collects what a stream says about its schema, an :class:`Order`
whether it is sorted.  A new record shape costs no trip to another module, so the walk of
one event from ``open_events`` to the engine stays in four files (issue 34,
``tools/walk.py``).  The pure-Python passes (:mod:`acel.io.row_passes`) use the same
checker; JSON Lines's Python reader (:mod:`acel.io.formats`) the same :func:`line_row`.
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

try:
    import orjson
except ImportError:  # a Spark worker with only pyarrow and pandas (_json_fallback)
    import acel.io._json_fallback as orjson  # type: ignore[no-redef]

import acel.io.native_switch as native_switch
from acel.io.columns import column_blocks
from acel.io.conform import conform
from acel.io.native_protocol import (
    BIG,
    CSV_BOOL,
    CSV_FLAG_BOOL,
    CSV_FLAG_FLOAT,
    CSV_FLAG_INT,
    CSV_FLAG_NUMERIC,
    CSV_FLAG_TYPED,
    CSV_FLAGS,
    CSV_FLOAT,
    CSV_INT,
    CSV_STR,
    SCAN_END,
    SCAN_NOT_SIMPLE,
    SCAN_PYTHON,
    NotSimple,
)
from acel.io.options import SourceOptions
from acel.io.problems import Problem, Problems, beyond_floats, infinity_message
from acel.io.sorting import BATCH, ordered
from acel.io.stream import Attrs, EventStream, Facts
from acel.io.values import (
    _BOOL,
    _FLOAT,
    _INT,
    _SPECIAL_FLOAT,
    MAX_ATTRIBUTES,
    BadValue,
    int_from_digits,
    lone_surrogate,
    native,
    surrogate_message,
    time_key,
)
from acel.lang.errors import DataError
from acel.lang.events import OptValue, Value
from acel.lang.schema import Schema


class Row:
    """One raw input record: 1-based data row, physical line (when known), values.

    ``values`` holds only the attributes the record mentions (a CSV empty cell
    or a Parquet NULL is not mentioned; a JSON ``null`` is), already converted
    to Python values (still unchecked).  ``failure`` says why a record could
    not be read at all (bad JSON, a ragged CSV row).  (A plain class with
    slots: a reader makes one per record.)
    """

    __slots__ = ("number", "line", "values", "failure", "failure_column")

    def __init__(
        self,
        number: int,
        line: int | None,
        values: Mapping[str, object],
        failure: str | None = None,
        failure_column: str | None = None,
    ) -> None:
        self.number = number
        self.line = line
        self.values = values
        self.failure = failure
        self.failure_column = failure_column

    def where(self) -> str:
        return f"row {self.number}" + (f" (line {self.line})" if self.line is not None else "")

BOM = b"\xef\xbb\xbf"

_BIG = BIG
"""Floats this large may be integers orjson read as floats (it has 64-bit ints only; the C
reader leaves them to Python too: acel.io.native_protocol)."""


_SPACED_COLONS = (b" :", b"\t:", b"\r:", b"\n:")

def _keys_distinct(line: bytes, n: int) -> bool:
    """Whether the ``n`` keys orjson kept (the last of equal ones) are all the line's keys.

    Every key's colon follows its closing quote, maybe after JSON whitespace. With no
    whitespace before any colon, ``'":'`` occurs once per key and maybe inside strings,
    so ``n`` occurrences mean no key repeats; any other line is decided exactly (issue 36
    D10: ``"v" :2`` hid a repeated key from the count)."""
    return line.count(b'":') == n and not any(spaced in line for spaced in _SPACED_COLONS)

def line_row(number: int, index: int, line: bytes, slow: Callable[[int, int, bytes], Row]) -> Row:
    """One non-blank JSON Lines line (its newline included) as a record: the common case
    (orjson parses an object whose keys are distinct and whose numbers fit) at once, every
    other line checked by ``slow`` (:func:`acel.io.formats.json_line_row`, the reference)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return slow(number, index, line)
    if type(value) is dict and len(value) <= _WIDEST and _keys_distinct(line, len(value)) and not (
        float in set(map(type, value.values())) and _big_float(value)
    ):
        return Row(number, index, value)
    return slow(number, index, line)


def parse_cell(text: str, kind: str) -> Value:
    """A CSV cell as a value of ``kind``; ``ValueError`` when it is not one."""
    cell = text.strip()
    if kind == "str":
        return text
    if kind == "int":
        if _INT.fullmatch(cell):
            return int(cell) if len(cell) <= 4000 else int_from_digits(cell)  # any length (int() stops at 4,300)
        raise ValueError(f"{text!r} is not an int")
    if kind == "float":
        if _FLOAT.fullmatch(cell) or _SPECIAL_FLOAT.fullmatch(cell):
            return float(cell)
        raise ValueError(f"{text!r} is not a float")
    if kind == "bool":
        if cell.lower() in _BOOL:
            return _BOOL[cell.lower()]
        raise ValueError(f"{text!r} is not a bool (true/false)")
    raise ValueError(f"unknown kind {kind!r}")


def parse_cells(
    header: Sequence[str], kinds: Sequence[str], cells: Sequence[str]
) -> tuple[dict[str, object], str | None, str | None]:
    """A CSV record's non-empty cells read as their columns' kinds (:func:`parse_cell`):
    the values, and for the first cell that is not of its kind the failure and its column
    (``None`` twice when every cell is).  One call a record, not one a cell."""
    values: dict[str, object] = {}
    for name, kind, cell in zip(header, kinds, cells):
        if cell == "":
            continue
        if kind == "str":
            values[name] = cell
            continue
        try:
            values[name] = parse_cell(cell, kind)
        except ValueError as error:
            return values, f"{error}, but the schema says {kind}", name
    return values, None, None


def csv_line_row(number: int, index: int, line: bytes, header: list[str], kinds: list[str]) -> Row:
    """One simple CSV line (no quotes: its cells are its text split at commas) as a record,
    each cell read as its column's kind (:func:`parse_cells`)."""
    text = line.decode("utf-8").removesuffix("\n").removesuffix("\r")
    values, failure, column = parse_cells(header, kinds, text.split(","))
    return Row(number, index, values, failure, column)


_WIDEST = MAX_ATTRIBUTES + 1
"""A JSON object with more keys goes the slow way, to be refused there."""

def _big_float(value: dict[str, Any]) -> bool:
    """A float that may be an integer orjson could not hold (it has 64-bit ints only)."""
    return any(type(v) is float and (v >= _BIG or v <= -_BIG) for v in value.values())


# ------------------------------------------------------------------ the check and inference


_INFINITIES = (math.inf, -math.inf)

def plain_values(row: Row, errors: list[tuple[str | None, str]]) -> dict[str, OptValue]:
    """A record's values as attribute values (NaN is NULL; nested values are errors)."""
    values: dict[str, OptValue] = {}
    for column, raw in row.values.items():
        kind_type = type(raw)
        if kind_type is str and not raw.isascii() and lone_surrogate(raw):  # type: ignore[attr-defined,arg-type]
            errors.append((column, surrogate_message(column)))
        elif kind_type is str or kind_type is int or kind_type is bool or raw is None:
            values[column] = raw  # type: ignore[assignment]
        elif kind_type is float:
            if raw != raw:  # type: ignore[comparison-overlap]
                values[column] = None  # NaN is NULL
            elif raw in _INFINITIES:
                errors.append((column, infinity_message(raw)))  # type: ignore[arg-type]
            else:
                values[column] = raw  # type: ignore[assignment]
        else:
            try:
                value = native(raw)
            except BadValue as error:
                errors.append((column, str(error)))
                continue
            if type(value) is str and lone_surrogate(value):
                errors.append((column, surrogate_message(column)))
            elif type(value) is float and value in _INFINITIES:
                errors.append((column, infinity_message(value)))
            else:
                values[column] = value
    return values

class RecordChecker:
    """Checks records and builds attribute maps (``type`` included) with time keys.

    The type and time columns are the source's ``options``.  With a ``schema`` (the
    one checked against: given, or inferred by a first pass): an unknown type, an
    attribute its type does not declare (with a non-NULL value) or a value of a kind
    other than the schema's is a problem; ints of a ``float`` attribute become floats.
    Without: every record is accepted but for a missing type or time, or a nested value.
    """

    def __init__(
        self,
        options: SourceOptions,
        *,
        schema: Schema | None = None,
        problems: Problems,
    ) -> None:
        self.type_col = options.type_col
        self.time_col = options.time_col
        self.schema = schema
        self.problems = problems
        self.kinds = dict(schema.kinds) if schema is not None else {}
        self.learned: dict[str, Row] = {}
        """Attributes whose kind the schema left open: the row that fixed it."""
        self.declared = (
            {t: set(schema.attributes(t)) for t in schema.type_names()}
            if schema is not None
            else {}
        )

    def check(self, row: Row) -> tuple[dict[str, Any], Any] | None:
        """``(attrs, time key)`` of a good record, ``None`` (problems logged) otherwise."""
        if row.failure is not None:
            self.problems.add(Problem(row.number, row.line, row.failure_column, row.failure))
            return None
        errors: list[tuple[str | None, str]] = []
        values = plain_values(row, errors)
        type_col = self.type_col
        type_value = values.pop(type_col, None)
        if type_col != "type" and values.get("type") is not None:
            errors.append(("type", f"a 'type' column clashes with the type column {type_col!r}"))
        if type_value is None:
            if type_col not in row.values:
                errors.append((type_col, "missing event type"))
            elif not any(column == type_col for column, _ in errors):  # not reported above
                errors.append((type_col, "event type is NULL"))
        elif type(type_value) is not str or not type_value:
            errors.append(
                (type_col, f"event type must be a non-empty string, found {type_value!r}")
            )
        key: Any = 0
        time_col = self.time_col
        if time_col is not None:
            try:
                key = time_key(values.get(time_col))
            except ValueError as error:
                errors.append(
                    (time_col, str(error) if time_col in row.values else "missing time value")
                )
        if self.schema is not None:
            attrs = conform(self, values, type_value, errors, row)
        else:
            attrs = values
        if errors:
            for column, message in errors:
                self.problems.add(Problem(row.number, row.line, column, message))
            return None
        attrs["type"] = type_value
        return attrs, key

    def infer(self, row: Row, inference: Inference) -> tuple[dict[str, Any], Any] | None:
        """:meth:`check`, a good record noted in ``inference`` too: a first pass's one call
        a record (the walk of one event stays here, issue 34)."""
        checked = self.check(row)
        if checked is not None:
            inference.add(row, checked[0])
        return checked

_KIND_OF_TYPE = {int: "int", float: "float", str: "str", bool: "bool"}

class Inference:
    """What a stream says about its schema, one record at a time.

    Each type gets the attributes its events mention, in order of first
    appearance; each attribute one kind (int and float mix into float).  An
    attribute that mixes other kinds (an int in one row, a string in another)
    is a problem naming both rows: every engine must read one kind per
    attribute, as a columnar engine does (spec §9, ``papers/io.md``).
    """

    def __init__(self, options: SourceOptions) -> None:
        self.type_col = options.type_col
        self.time_col = options.time_col
        self.mentioned: dict[str, dict[str, None]] = {}
        self.layouts: set[tuple[str, tuple[str, ...]]] = set()
        self.first_of_kind: dict[str, dict[str, Row]] = {}
        self.count = 0

    def add(self, row: Row, attrs: Mapping[str, Any]) -> None:
        """Note a good record (``attrs`` from :class:`RecordChecker` without a schema)."""
        self.count += 1
        type_value = attrs["type"]
        names = tuple(c for c in row.values if c != self.type_col)
        layout = (type_value, names)
        if layout not in self.layouts:
            self.layouts.add(layout)
            self.mentioned.setdefault(type_value, {}).update(dict.fromkeys(names))
        first = self.first_of_kind
        for column, value in attrs.items():
            if value is None or column == "type":
                continue
            kind = _KIND_OF_TYPE.get(type(value))
            if kind is None:
                continue
            seen = first.get(column)
            if seen is None:
                first[column] = {kind: row}
            elif kind not in seen:
                seen[kind] = row

    def add_mentions(self, type_value: str, names: Iterable[str]) -> None:
        """Note the attributes one type mentions (columnar readers)."""
        self.mentioned.setdefault(type_value, {}).update(dict.fromkeys(names))

    def final_schema(self, problems: Problems) -> Schema:
        """:meth:`schema`, every problem logged so far raised (the end of a first pass)."""
        schema = self.schema(problems)
        if problems.count:  # (no call: the walk of one event stays in this module)
            raise problems.error()
        return schema

    def schema(self, problems: Problems) -> Schema:
        """The inferred schema; mixed kinds are logged as problems."""
        kinds: dict[str, str] = {}
        for column, seen in self.first_of_kind.items():
            names = set(seen)
            if len(names) == 1:
                kinds[column] = names.pop()
            elif names == {"int", "float"}:
                kinds[column] = "float"
            else:
                rows = sorted(seen.items(), key=lambda item: item[1].number)
                (k1, r1), (k2, r2) = rows[0], next(
                    (kr for kr in rows[1:] if {kr[0], rows[0][0]} != {"int", "float"}), rows[1]
                )
                problems.add(
                    Problem(
                        r2.number,
                        r2.line,
                        column,
                        f"value is {k2}, but {column!r} is {k1} in {r1.where()}: "
                        "an attribute holds one kind of value (int and float mix as float)",
                    )
                )
        return Schema.of({t: list(a) for t, a in self.mentioned.items()}, kinds)


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

_PLAIN = frozenset([str, int, float, bool, type(None)])


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Types of a type value that can key a signature (an object or a list as the type is
checked in full and reported: issue 24 §3)."""

def _infinite(values: Mapping[str, Any]) -> bool:
    """Whether a record holds ±infinity (the full check reports it with its column)."""
    return any(type(v) is float and v in _INFINITIES for v in values.values())


# ------------------------------------------------------------------ the C scanner's loops


BLOCK = 1 << 20
"""Bytes read at a time (whole lines are scanned, the rest waits for the next block)."""


def blocks(path: Path, header: bool = False) -> Iterator[bytes]:
    """The file in blocks of whole lines (the last may lack its newline); a BOM dropped,
    and with ``header`` the first line too."""
    with open(path, "rb") as handle:
        if header:
            handle.readline()
        rest = handle.read(BLOCK)
        if not header and rest.startswith(BOM):
            rest = rest[3:]
        while True:
            chunk = handle.read(BLOCK)
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

def csv_kinds(native: Any, path: Path, width: int) -> tuple[list[str], set[int]]:
    """Each column's kind, as :class:`acel.io.readers.csv._ColumnKind` infers it over the whole
    column, and the columns it calls mixed (text beside numbers or bools); ``NotSimple``
    for a file the scanner does not read."""
    start = bytearray(CSV_FLAGS)  # every cell an int, a number, a bool, until one is not
    start[CSV_FLAG_INT] = start[CSV_FLAG_FLOAT] = start[CSV_FLAG_BOOL] = 1
    flags = start * width
    for data in blocks(path, header=True):
        if native.csv_kinds(data, width, flags):
            raise NotSimple(str(path))
    kinds, mixed = [], set()
    for i in range(width):
        column = flags[CSV_FLAGS * i : CSV_FLAGS * (i + 1)]
        is_int, is_float, is_bool = column[CSV_FLAG_INT], column[CSV_FLAG_FLOAT], column[CSV_FLAG_BOOL]
        numeric, typed = column[CSV_FLAG_NUMERIC], column[CSV_FLAG_TYPED]
        kinds.append("int" if is_int else "float" if is_float and numeric else "bool" if is_bool else "str")
        if kinds[-1] == "str" and typed:
            mixed.add(i)
    return kinds, mixed


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
                raise NotSimple(f"{path}: line {index}")
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
    line, ints of ``floats`` attributes as floats, in batches of :data:`BATCH`; a line the
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
                data, pos, index, number, float_keys, BATCH - len(out), csv, shapes, b"type", drop_null
            )
            if out:
                out.extend(got)
            else:
                out = got
            if status == SCAN_NOT_SIMPLE and not simple:
                raise NotSimple(f"{path}: line {index}")
            if status in (SCAN_PYTHON, SCAN_NOT_SIMPLE):
                event, known = on_row(number, index, data[pos:after])
                if event is not None:
                    out.append(event)
                if known and shape is not None and shapes is not None:
                    shapes[shape] = None
                pos, index = after, index + 1
            if len(out) >= BATCH:
                yield out
                out = []
            if status == SCAN_END:
                break
    if out:
        yield out

# ------------------------------------------------------------------ a file without a schema


def scanner() -> Any | None:
    """The C scanner (``acel.io._native_reader``) when ``ACEL_NATIVE`` wants it and it was
    built, else ``None`` (``acel.io.native_scan.reader``).  The switch's rule
    (:func:`acel.io.native_switch.wanted`) for its quiet answers, read where the scanner's
    loops are (the choice costs the walk of one event no module); a bad value, or ``1``
    without the scanner, the switch answers itself, with its one-line error."""
    chosen = native_switch.MODES.get(os.environ.get(native_switch.VARIABLE, "").strip().lower())
    if chosen == "off":
        return None
    try:
        module: Any = importlib.import_module("acel.io._native_reader")
    except ImportError:
        module = None
    if chosen is None or (module is None and chosen == "on"):
        return native_switch.reader()
    return module


def scanned_lines_stream(
    choose: Callable[[], Any | None], path: Path, options: SourceOptions, *, readable: bool = True, **how: Any
) -> EventStream | None:
    """:func:`native_lines_stream` when ``choose`` (:func:`scanner`, as
    ``acel.io.native_scan.reader``) gives the scanner and it can read the file
    (``readable``: not a JSON array), else ``None``: the reader's Python path then reads it."""
    native = choose()
    if native is None or not readable:
        return None
    return native_lines_stream(path, native, options, **how)


def scanned_csv_stream(
    choose: Callable[[], Any | None], path: Path, header: list[str], options: SourceOptions, *, one_line: bool,
    refuse: Callable[[Path, list[str], list[int]], None],
    rows: Callable[[Path, list[str], list[str]], Iterator[list[Row]]],
    recheck: Callable[..., Iterator[list[tuple[Any, Attrs]]]],
) -> EventStream | None:
    """A CSV file without a schema through the C scanner: its columns checked, each one's
    kind scanned (:func:`csv_kinds`; ``refuse`` raises a mixed column's error), then
    :func:`native_lines_stream`.  ``None`` when ``choose`` gives no scanner, ``NotSimple``
    when it cannot read the file (``one_line``: whether the header is one line): the
    reader's Python path (``rows``, ``recheck``) reads it then."""
    require_columns(str(path), header, options)
    native = choose()
    if native is None:
        return None
    if not one_line:
        raise NotSimple(str(path))  # a header over several lines
    kinds, mixed = csv_kinds(native, path, len(header))
    type_col = options.type_col
    if any(header[i] != type_col for i in mixed):
        refuse(path, header, [i for i in sorted(mixed) if header[i] != type_col])
    kinds = ["str" if name == type_col else kind for name, kind in zip(header, kinds)]
    return native_lines_stream(
        path, native, options, make_row=partial(csv_line_row, header=header, kinds=kinds),
        pure_rows=partial(rows, path, header, kinds), recheck=recheck, csv=csv_spec(header, kinds),
    )


CSV_KINDS = {"str": CSV_STR, "int": CSV_INT, "float": CSV_FLOAT, "bool": CSV_BOOL}
"""A column kind as the scanner's code."""


def csv_spec(header: Sequence[str], kinds: Sequence[str]) -> tuple[tuple[bytes, ...], bytes]:
    """The scanner's description of a CSV file's columns."""
    return tuple(h.encode() for h in header), "".join(CSV_KINDS[k] for k in kinds).encode()


def require_columns(source: str, header: Sequence[str], options: SourceOptions) -> None:
    """The type column, and the time column if one is named, in ``header``."""
    for column, what in ((options.type_col, "type"), (options.time_col, "time")):
        if column is not None and column not in header:
            raise DataError(
                f"{source}: the {what} column {column!r} is not in the header "
                f"(columns: {', '.join(header) or 'none'})"
                + ("; name it with --type-col" if what == "type" else "")
            )


def native_lines_stream(
    path: Path,
    native: Any,
    options: SourceOptions,
    *,
    make_row: Callable[[int, int, bytes], Row],
    pure_rows: Callable[[], Iterator[list[Row]]],
    recheck: Callable[..., Iterator[list[tuple[Any, Attrs]]]],
    csv: tuple[tuple[bytes, ...], bytes] | None = None,
) -> EventStream:
    """A file without a schema through the C scanner: the same two passes as
    :func:`acel.io.row_passes.rows_stream`, the lines it leaves made into records by
    ``make_row`` (``csv``: a CSV file's :func:`csv_spec`).  A stream
    whose values are not all plain, or whose type column is not ``type``, takes its
    second pass in Python: ``recheck`` (:func:`acel.io.row_passes.checked_pass`) over
    ``pure_rows``."""
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
            raise beyond_floats(str(path), row, floats) from None

    def columns(spec: Any) -> Iterator[Any] | None:
        if not facts.plain or type_col != "type" or sort:
            return None
        chunks = blocks(path, header=csv is not None)
        return column_blocks(native, chunks, path, spec.with_floats(floats), event, csv, BATCH)

    def pulled() -> Iterator[list[Attrs]]:
        if not facts.plain or type_col != "type":
            checked = recheck(source, pure_rows(), options, schema, True, facts.plain)
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


_KIND_NAMES = {str: "str", int: "int", float: "float", bool: "bool"}

def fits_int64(values: Any) -> bool:
    """Whether every int among a record's values fits 64 bits (Arrow's int64)."""
    low, high = -(2**63), 2**63 - 1
    return all(type(v) is not int or low <= v <= high for v in values.values())

