"""Reading event files into streams (spec §1, §9, §12).

JSON Lines (``.jsonl``, ``.ndjson``, ``.json``; a ``.json`` file may also hold
one JSON array of objects), CSV (``.csv``, header with the type column) and
Parquet (``.parquet``, ``.pq``) become a list of :class:`~acel.events.Event`
numbered ``0..n-1`` (spec §1: time = position) plus a :class:`Schema`, inferred
or checked against a given one.  Every bad row is collected and reported in a
single :class:`DataError` naming file, row, line and column; nothing is ever
dropped silently (spec §9).  The choices the spec leaves open are listed in
``papers/io.md``.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acel.errors import DataError
from acel.events import Event, OptValue, Value
from acel.schema import Schema

KINDS = ("int", "float", "str", "bool")
"""The value kinds of spec §1."""

MAX_SHOWN = 5
"""How many problems one :class:`DataError` lists (the count covers all)."""

FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
"""File extension → reader."""


# ----------------------------------------------------------------- rows, problems


@dataclass(frozen=True)
class Row:
    """One raw input record: 1-based data row, physical line (when known), values.

    ``values`` holds only the attributes the record mentions (a CSV empty cell
    or a Parquet NULL is not mentioned; a JSON ``null`` is), already converted
    to Python values (still unchecked).
    """

    number: int
    line: int | None
    values: Mapping[str, object]

    def where(self) -> str:
        return f"row {self.number}" + (f" (line {self.line})" if self.line is not None else "")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one row (``column`` is ``None`` for whole-row problems)."""

    row: int
    line: int | None
    column: str | None
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" + (f" (line {self.line})" if self.line is not None else "")
        if self.column is not None:
            where += f", column {self.column!r}"
        return f"{where}: {self.message}"


def _raise_problems(source: str, problems: Sequence[Problem]) -> None:
    """One DataError for all problems: the count of bad rows and the first few."""
    if not problems:
        return
    rows = len({p.row for p in problems})
    head = f"{source}: {rows} bad row{'s' if rows != 1 else ''}"
    if len(problems) > MAX_SHOWN:
        head += f" ({len(problems)} problems, the first {MAX_SHOWN} shown)"
    body = "\n".join(f"  {p}" for p in problems[:MAX_SHOWN])
    raise DataError(f"{head}:\n{body}")


# ----------------------------------------------------------------- values


class _BadValue(Exception):
    """A value that cannot be an event attribute (nested, bytes, ...)."""


def kind_of(value: Value) -> str:
    """The kind of a value: ``bool``, ``int``, ``float`` or ``str``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "str"


def _epoch(value: dt.datetime | dt.date) -> int | float:
    """Seconds since 1970-01-01 UTC (naive datetimes and dates read as UTC)."""
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    seconds = value.timestamp()
    return int(seconds) if seconds.is_integer() else seconds


def native(value: object) -> OptValue:
    """A Python, JSON, NumPy, pandas or Arrow scalar as an event value.

    NULL stays ``None``; NaN and pandas' NaT are NULL; datetimes become epoch
    seconds (so ``WITHIN d ON ts`` works on them); Decimals become floats.
    Nested objects, lists and bytes raise ``_BadValue``.
    """
    if value is None:
        return None
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, (dict, list, tuple, set, bytes, bytearray)):
        if isinstance(value, dict):
            what = "an object"
        elif isinstance(value, (bytes, bytearray)):
            what = "bytes"
        else:
            what = "a list"
        raise _BadValue(f"nested value ({what}) is not allowed; attributes hold int, float, str or bool")
    if isinstance(value, decimal.Decimal):
        return None if value.is_nan() else float(value)
    item = getattr(value, "item", None)  # NumPy scalars
    if callable(item) and type(value).__module__.startswith("numpy"):
        kind = type(value).__name__
        if kind.startswith("datetime64"):
            return native(_pandas_timestamp(value))
        return native(item())
    if type(value).__name__ in ("NaTType", "NAType"):
        return None
    if isinstance(value, (dt.datetime, dt.date)):
        return _epoch(value)
    raise _BadValue(f"unsupported value {value!r} of type {type(value).__name__}")


def _pandas_timestamp(value: object) -> object:
    import pandas as pd

    stamp = pd.Timestamp(value)  # type: ignore[call-overload]
    return None if pd.isna(stamp) else stamp.to_pydatetime()


_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_SPECIAL_FLOAT = re.compile(r"[+-]?(inf|infinity|nan)", re.IGNORECASE)
_BOOL = {"true": True, "false": False}


def parse_cell(text: str, kind: str) -> Value:
    """A CSV cell as a value of ``kind``; ``ValueError`` when it is not one."""
    cell = text.strip()
    if kind == "str":
        return text
    if kind == "int":
        if _INT.fullmatch(cell):
            return int(cell)
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


def infer_cell_kind(cells: Iterable[str]) -> str:
    """Kind of a CSV column: int if every cell is an int, else float, else bool, else str.

    Cells spelling ``nan``/``inf`` count as floats only beside at least one
    genuine number, so a column of names such as ``Nan`` stays ``str``.
    """
    is_int = is_float = is_bool = True
    numeric_seen = False
    for raw in cells:
        cell = raw.strip()
        if is_int and not _INT.fullmatch(cell):
            is_int = False
        if is_float:
            if _FLOAT.fullmatch(cell):
                numeric_seen = True
            elif not _SPECIAL_FLOAT.fullmatch(cell):
                is_float = False
        if is_bool and cell.lower() not in _BOOL:
            is_bool = False
        if not (is_int or is_float or is_bool):
            return "str"
    if is_int:
        return "int"
    if is_float and numeric_seen:
        return "float"
    if is_bool:
        return "bool"
    return "str"


def _fits(value: Value, kind: str) -> Value | None:
    """``value`` converted to ``kind`` when compatible, else ``None``.

    int goes into float; an integral float goes into int (pandas turns int
    columns with NULLs into floats); nothing else converts.
    """
    have = kind_of(value)
    if have == kind:
        return value
    if have == "int" and kind == "float":
        return float(value)
    if have == "float" and kind == "int" and math.isfinite(value) and float(value).is_integer():  # type: ignore[arg-type]
        return int(value)  # type: ignore[arg-type]
    return None


def time_key(value: OptValue) -> int | float:
    """The sort key of a time-column value: a number, a numeric string or an ISO date."""
    if value is None:
        raise ValueError("the time value is NULL")
    if isinstance(value, bool):
        raise ValueError(f"the time value {value!r} is a bool, not a number or a date")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("the time value is NaN")
        return value
    text = value.strip()
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    try:
        return _epoch(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        pass
    raise ValueError(f"cannot read time value {value!r} (a number or an ISO 8601 date is needed)")


# ----------------------------------------------------------------- building events


def events_from_rows(
    rows: Iterable[Row],
    *,
    source: str,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    problems: Sequence[Problem] = (),
) -> tuple[list[Event], Schema]:
    """Check raw rows, sort by ``time_col`` (stable), number ``0..n-1`` and infer a schema.

    Ints of an attribute whose kind is float become floats, so every value of
    an attribute has the attribute's kind (as in a columnar file).

    With ``schema``: an unknown type, an attribute its type does not declare
    (with a non-NULL value) or a value of a kind other than the schema's is a
    problem.  Without: every row is accepted (except a missing type or time, or
    a nested value) and the schema is inferred from the data.
    """
    found: list[Problem] = list(problems)
    good: list[tuple[int | float, dict[str, Value]]] = []
    kinds_given = dict(schema.kinds) if schema is not None else {}
    declared = (
        {t: set(schema.attributes(t)) for t in schema.type_names()} if schema is not None else {}
    )
    mentioned: dict[str, dict[str, None]] = {}  # type -> attributes, in order of appearance
    layouts: set[tuple[str, tuple[str, ...]]] = set()
    pytypes: dict[str, set[type]] = {}
    for row in rows:
        errors: list[tuple[str | None, str]] = []
        values: dict[str, OptValue] = {}
        for column, raw in row.values.items():
            kind_type = type(raw)
            if kind_type is str or kind_type is int or kind_type is bool or raw is None:
                values[column] = raw  # type: ignore[assignment]
            elif kind_type is float:
                values[column] = None if raw != raw else raw  # type: ignore[assignment]  # NaN
            else:
                try:
                    values[column] = native(raw)
                except _BadValue as error:
                    errors.append((column, str(error)))
        type_value = values.pop(type_col, None)
        if type_col != "type" and values.get("type") is not None:
            errors.append(("type", f"a 'type' column clashes with the type column {type_col!r}"))
        if type_value is None:
            errors.append((type_col, "missing event type" if type_col not in row.values else "event type is NULL"))
        elif type(type_value) is not str or not type_value:
            errors.append((type_col, f"event type must be a non-empty string, found {type_value!r}"))
        key: int | float = 0
        if time_col is not None:
            try:
                key = time_key(values.get(time_col))
            except ValueError as error:
                errors.append((time_col, str(error) if time_col in row.values else "missing time value"))
        if schema is None:
            attrs: dict[str, Value] = {c: v for c, v in values.items() if v is not None}
        else:
            attrs = _conform(values, type_value, declared, kinds_given, time_col, type_col, errors)
        if errors:
            found.extend(Problem(row.number, row.line, c, m) for c, m in errors)
            continue
        assert isinstance(type_value, str)
        if schema is None:
            layout = (type_value, tuple(values))
            if layout not in layouts:
                layouts.add(layout)
                mentioned.setdefault(type_value, {}).update(dict.fromkeys(values))
            for column, value in attrs.items():
                seen = pytypes.get(column)
                if seen is None:
                    pytypes[column] = {type(value)}
                else:
                    seen.add(type(value))
        attrs["type"] = type_value
        good.append((key, attrs))
    _raise_problems(source, sorted(found, key=lambda p: p.row))
    if time_col is not None:
        good.sort(key=lambda item: item[0])  # stable: ties keep input order
    if schema is not None:
        if time_col is not None:
            schema = _with_time_column(schema, time_col, good)
    else:
        schema = _inferred(mentioned, pytypes)
        floats = [a for a, k in schema.kinds if k == "float" and pytypes[a] != {float}]
        if floats:
            for _, attrs in good:
                for column in floats:
                    if type(attrs.get(column)) is int:
                        attrs[column] = float(attrs[column])
    events = [Event(position, tuple(sorted(attrs.items()))) for position, (_, attrs) in enumerate(good)]
    return events, schema


def _conform(
    values: Mapping[str, OptValue],
    type_value: OptValue,
    declared: Mapping[str, set[str]],
    kinds_given: Mapping[str, str],
    time_col: str | None,
    type_col: str,
    errors: list[tuple[str | None, str]],
) -> dict[str, Value]:
    """The non-NULL attributes of a row checked against a given schema (problems to ``errors``)."""
    attrs: dict[str, Value] = {}
    if isinstance(type_value, str) and type_value not in declared:
        names = ", ".join(sorted(declared)) or "no types"
        errors.append((type_col, f"unknown event type {type_value!r} (the schema has {names})"))
    allowed = declared.get(type_value) if isinstance(type_value, str) else None
    for column, value in values.items():
        if value is None:
            continue
        if allowed is not None and column not in allowed and column != time_col:
            errors.append((column, f"attribute {column!r} is not in the schema of type {type_value!r}"))
            continue
        kind = kinds_given.get(column)
        if kind is not None:
            fitted = _fits(value, kind)
            if fitted is None:
                errors.append((column, f"value {value!r} is {kind_of(value)}, but the schema says {kind}"))
                continue
            value = fitted
        attrs[column] = value
    return attrs


_KIND_OF_TYPE = {int: "int", float: "float", str: "str", bool: "bool"}


def _inferred(mentioned: Mapping[str, Mapping[str, None]], pytypes: Mapping[str, set[type]]) -> Schema:
    """The inferred schema: mentioned attributes per type; one kind per attribute.

    int and float mix into float; an attribute mixing other kinds gets no kind
    (unknown), so nothing about it is checked later.
    """
    kinds: dict[str, str] = {}
    for column, seen in pytypes.items():
        names = {_KIND_OF_TYPE[t] for t in seen}
        if len(names) == 1:
            kinds[column] = names.pop()
        elif names == {"int", "float"}:
            kinds[column] = "float"
    return Schema.of({t: list(a) for t, a in mentioned.items()}, kinds)


def _with_time_column(
    schema: Schema, time_col: str, good: Sequence[tuple[object, Mapping[str, Value]]]
) -> Schema:
    """The given schema plus the time column for every type that carries it.

    The time column stays an ordinary attribute (spec §1) even when the schema
    file does not list it, so engines that copy only schema attributes keep it.
    """
    carriers = {attrs["type"] for _, attrs in good if time_col in attrs}
    types = {t: list(schema.attributes(t)[1:]) for t in schema.type_names()}
    changed = False
    for type_name, attrs in types.items():
        if type_name in carriers and time_col not in attrs:
            attrs.append(time_col)
            changed = True
    if not changed:
        return schema
    kinds = dict(schema.kinds)
    if time_col not in kinds:
        seen = {kind_of(attrs[time_col]) for _, attrs in good if time_col in attrs}
        if len(seen) == 1 or seen == {"int", "float"}:
            kinds[time_col] = "float" if "float" in seen else seen.pop()
    return Schema.of(types, kinds)


def events_from_records(
    records: Iterable[Mapping[str, object]],
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    source: str = "<records>",
) -> tuple[list[Event], Schema]:
    """Events from in-memory dictionaries (native values), with every file check."""
    rows = (Row(n, None, dict(r)) for n, r in enumerate(records, start=1))
    return events_from_rows(rows, source=source, type_col=type_col, time_col=time_col, schema=schema)


def events_from_dataframe(
    frame: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    source: str = "<DataFrame>",
) -> tuple[list[Event], Schema]:
    """Events from a pandas DataFrame (NaN/NaT are NULL and left out)."""
    _require_columns(source, list(frame.columns), type_col, time_col)
    if schema is None:
        import pyarrow as pa

        try:
            table = pa.Table.from_pandas(frame, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
            table = None
        fast = events_from_arrow(table, type_col=type_col, time_col=time_col) if table is not None else None
        if fast is not None:
            return fast
    columns = [str(c) for c in frame.columns]
    rows = (
        Row(n, None, {c: v for c, v in zip(columns, values) if not _is_missing(v)})
        for n, values in enumerate(frame.itertuples(index=False, name=None), start=1)
    )
    return events_from_rows(rows, source=source, type_col=type_col, time_col=time_col, schema=schema)


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NaTType", "NAType")


def _require_columns(
    source: str, header: Sequence[str], type_col: str, time_col: str | None
) -> None:
    for column, what in ((type_col, "type"), (time_col, "time")):
        if column is not None and column not in header:
            raise DataError(
                f"{source}: the {what} column {column!r} is not in the header "
                f"(columns: {', '.join(header) or 'none'})"
                + ("; name it with --type-col" if what == "type" else "")
            )


# ----------------------------------------------------------------- file readers


def file_format(path: str | Path) -> str:
    """``jsonl``, ``csv`` or ``parquet`` from the extension; DataError otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise DataError(
            f"{path}: unknown event file format {suffix or '(no extension)'!r}; "
            "use .jsonl/.ndjson/.json, .csv or .parquet/.pq"
        )
    return FORMATS[suffix]


def read_events(
    path: str | Path,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
) -> tuple[list[Event], Schema]:
    """Read an event file (format by extension) into a numbered stream and its schema."""
    fmt = file_format(path)
    source = str(path)
    problems: list[Problem] = []
    if fmt == "jsonl":
        rows = _json_rows(path, source, problems)
    elif fmt == "csv":
        rows = _csv_rows(path, source, type_col, time_col, schema, problems)
    else:
        table = _read_parquet(path, source, type_col, time_col)
        fast = events_from_arrow(table, type_col=type_col, time_col=time_col) if schema is None else None
        if fast is not None:
            return fast
        rows = _arrow_rows(table)
    return events_from_rows(
        rows, source=source, type_col=type_col, time_col=time_col, schema=schema, problems=problems
    )


def _json_rows(path: str | Path, source: str, problems: list[Problem]) -> list[Row]:
    """JSON Lines (blank lines skipped), or one JSON array of objects.

    Unreadable lines go to ``problems`` (reported with the other bad rows).
    """
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise DataError(f"{source}: bad JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
        if not isinstance(data, list):
            raise DataError(f"{source}: a JSON file holds one object per line or one array of objects")
        pairs: Iterable[tuple[int | None, object]] = ((None, item) for item in data)
    else:
        pairs = list(_json_lines(text))
    rows: list[Row] = []
    for number, (line, item) in enumerate(pairs, start=1):
        if isinstance(item, _JsonFailure):
            problems.append(Problem(number, line, None, f"bad JSON: {item.message}"))
        elif not isinstance(item, dict):
            problems.append(Problem(number, line, None, f"expected a JSON object, found {type(item).__name__}"))
        else:
            rows.append(Row(number, line, item))
    return rows


@dataclass(frozen=True)
class _JsonFailure:
    message: str


def _json_lines(text: str) -> Iterator[tuple[int, object]]:
    for line_number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is data
        if not line.strip():
            continue
        try:
            yield line_number, json.loads(line)
        except json.JSONDecodeError as error:
            yield line_number, _JsonFailure(f"{error.msg} at column {error.colno}")


def _csv_rows(
    path: str | Path,
    source: str,
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    problems: list[Problem],
) -> list[Row]:
    """CSV cells converted by the schema's kinds, else by per-column inference; '' is NULL.

    The type column is always read as text.
    """
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            raise DataError(f"{source}: empty CSV file (a header with a {type_col!r} column is needed)")
        raw: list[tuple[int, int, list[str]]] = []
        for number, cells in enumerate(reader, start=1):
            if not cells:
                continue
            raw.append((number, reader.line_num, cells))
    header = [h.strip() for h in header]
    empty = [i + 1 for i, h in enumerate(header) if not h]
    if empty:
        raise DataError(f"{source}: line 1: empty column name in the header at position {empty[0]}")
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates:
        raise DataError(f"{source}: line 1: duplicate column name {duplicates[0]!r} in the header")
    _require_columns(source, header, type_col, time_col)
    ragged = {number for number, _, cells in raw if len(cells) != len(header)}
    for number, line, cells in raw:
        if number in ragged:
            problems.append(
                Problem(number, line, None, f"{len(cells)} fields, but the header has {len(header)}")
            )
    raw = [r for r in raw if r[0] not in ragged]
    kinds = dict(schema.kinds) if schema is not None else {}
    column_kind: list[str] = []
    for index, name in enumerate(header):
        if name == type_col:
            column_kind.append("str")
        elif name in kinds:
            column_kind.append(kinds[name])
        else:
            column_kind.append(infer_cell_kind(cells[index] for _, _, cells in raw if cells[index] != ""))
    rows: list[Row] = []
    for number, line, cells in raw:
        values: dict[str, object] = {}
        for name, kind, cell in zip(header, column_kind, cells):
            if cell == "":
                continue
            try:
                values[name] = parse_cell(cell, kind)
            except ValueError as error:
                problems.append(Problem(number, line, name, f"{error}, but the schema says {kind}"))
        rows.append(Row(number, line, values))
    return rows


def _read_parquet(path: str | Path, source: str, type_col: str, time_col: str | None) -> Any:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as error:
        raise DataError(f"{source}: cannot read Parquet: {error}") from None
    _require_columns(source, list(table.column_names), type_col, time_col)
    return table


def _arrow_rows(table: Any) -> list[Row]:
    """An Arrow table as rows, column by column; NULL cells are left out."""
    header = list(table.column_names)
    columns = [table.column(name).to_pylist() for name in header]
    rows: list[Row] = []
    for index, cells in enumerate(zip(*columns)):
        values = {name: v for name, v in zip(header, cells) if v is not None}
        rows.append(Row(index + 1, None, values))
    return rows


def events_from_arrow(
    table: Any, *, type_col: str = "type", time_col: str | None = None
) -> tuple[list[Event], Schema] | None:
    """The column-wise fast path for clean Arrow tables without a given schema.

    Handles integer, floating, string and boolean columns, a non-NULL string
    type column and a non-NULL numeric time column.  Returns ``None`` for
    anything else (timestamps, nested values, NULL types, ...), and the caller
    then takes the row-wise path, which reports problems precisely.  Gives the
    same events and schema as the row-wise path (tested), with the attributes
    of each type in column order.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    names = list(table.column_names)
    if len(set(names)) != len(names) or (type_col != "type" and "type" in names):
        return None
    if type_col not in names or (time_col is not None and time_col not in names):
        return None
    kinds: dict[str, str] = {}
    for name in names:
        arrow_type = table.schema.field(name).type
        if pa.types.is_boolean(arrow_type):
            kinds[name] = "bool"
        elif pa.types.is_integer(arrow_type):
            kinds[name] = "int"
        elif pa.types.is_floating(arrow_type):
            kinds[name] = "float"
        elif pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
            kinds[name] = "str"
        elif pa.types.is_null(arrow_type):
            kinds[name] = "null"
        else:
            return None
    type_column = table.column(type_col)
    if kinds[type_col] != "str" or type_column.null_count or pc.any(pc.equal(type_column, "")).as_py():
        return None
    if time_col is not None:
        time_column = table.column(time_col)
        if kinds[time_col] not in ("int", "float") or time_column.null_count:
            return None
        if kinds[time_col] == "float" and pc.any(pc.is_nan(time_column)).as_py():
            return None
    # NaN is NULL
    columns: dict[str, Any] = {}
    for name in names:
        column = table.column(name)
        if kinds[name] == "float" and pc.any(pc.is_nan(column)).as_py():
            column = pc.if_else(pc.is_nan(column), pa.scalar(None, column.type), column)
        columns[name] = column
    table = pa.table(columns)
    if time_col is not None:
        order = pc.sort_indices(table, sort_keys=[(time_col, "ascending")])  # stable
        table = table.take(order)
    # the schema: per type, the columns with a non-NULL value among its rows
    mentioned: dict[str, list[str]] = {}
    for type_name in pc.unique(table.column(type_col)).to_pylist():
        subset = table.filter(pc.equal(table.column(type_col), type_name))
        mentioned[type_name] = [
            n for n in names
            if n != type_col and kinds[n] != "null" and subset.column(n).null_count < subset.num_rows
        ]
    present = {n for attrs in mentioned.values() for n in attrs}
    schema = Schema.of(mentioned, {n: k for n, k in kinds.items() if n in present})
    ordered = sorted(names, key=lambda n: "type" if n == type_col else n)
    labels = ["type" if n == type_col else n for n in ordered]
    data = [table.column(n).to_pylist() for n in ordered]
    events = [
        Event(position, tuple((label, v) for label, v in zip(labels, cells) if v is not None))
        for position, cells in enumerate(zip(*data))
    ]
    return events, schema


def read_schema(path: str | Path) -> Schema:
    """A schema file: ``{"types": {T: [a, ...]}, "kinds": {a: kind}}`` or ``{T: [a, ...]}``."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as error:
        raise DataError(f"{path}: bad JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    if not isinstance(data, dict):
        raise DataError(f'{path}: a schema is {{"types": {{TYPE: [attribute, ...]}}, "kinds": {{...}}}}')
    types = data.get("types", data)
    if not isinstance(types, dict) or not all(
        isinstance(attrs, list) and all(isinstance(a, str) for a in attrs) for attrs in types.values()
    ):
        raise DataError(f"{path}: each type must map to a list of attribute names")
    try:
        schema = Schema.from_json(data)
    except ValueError as error:
        raise DataError(f"{path}: {error}") from None
    bad = {a: k for a, k in schema.kinds if k not in KINDS}
    if bad:
        attr, kind = next(iter(bad.items()))
        raise DataError(f"{path}: attribute {attr!r} has kind {kind!r}; kinds are {', '.join(KINDS)}")
    return schema


def write_schema(schema: Schema, path: str | Path) -> None:
    """Write a schema file that :func:`read_schema` reads back."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(schema.to_json(), handle, indent=2, sort_keys=True)
        handle.write("\n")
