"""Raw input records, their problems, the per-record check and schema inference.

A reader (:mod:`acel.io.formats`) turns a file into :class:`Row` records (defined
there, beside the line readers that make one per record); a
:class:`RecordChecker` turns each into an event's attribute map or into
:class:`Problem` entries (spec §9: a bad row is reported with its row and
line, never dropped silently); an :class:`Inference` collects what a stream
says about its schema.  Everything works one record at a time, so files of
any size stream through.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from acel.io.formats import Row
from acel.io.options import SourceOptions
from acel.io.values import (
    MAX_ATTRIBUTES,
    BadValue,
    fits,
    kind_of,
    lone_surrogate,
    native,
    surrogate_message,
    time_key,
    too_many_attributes,
)
from acel.lang.errors import DataError
from acel.lang.events import OptValue, Value
from acel.lang.schema import Schema

MAX_SHOWN = 5
"""How many problems one :class:`DataError` lists (the count covers all)."""


def memory_row(number: int, values: dict[str, object]) -> Row:
    """A record given in memory (a dict, a DataFrame row): a text value with a lone
    surrogate fails the row at once (files cannot hold one: their readers refuse it), as
    does a record of more than :data:`~acel.io.values.MAX_ATTRIBUTES` attributes."""
    if len(values) > MAX_ATTRIBUTES + 1:
        return Row(number, None, {}, too_many_attributes(len(values) - 1))
    for column, value in values.items():
        if type(value) is str and lone_surrogate(value):
            return Row(number, None, {}, surrogate_message(column), column)
    return Row(number, None, values)


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


@dataclass
class Problems:
    """The problems of one source: the first few kept, all counted."""

    source: str
    shown: list[Problem] = field(default_factory=list)
    count: int = 0
    rows: set[int] = field(default_factory=set)

    def add(self, problem: Problem) -> None:
        self.count += 1
        self.rows.add(problem.row)
        if len(self.shown) < 1000:
            self.shown.append(problem)

    def __bool__(self) -> bool:
        return self.count > 0

    def error(self) -> DataError:
        """One DataError for all problems: the count of bad rows and the first few."""
        shown = sorted(self.shown, key=lambda p: p.row)[:MAX_SHOWN]
        rows = len(self.rows)
        head = f"{self.source}: {rows} bad row{'s' if rows != 1 else ''}"
        if self.count > MAX_SHOWN:
            head += f" ({self.count} problems, the first {MAX_SHOWN} shown)"
        body = "\n".join(f"  {p}" for p in shown)
        return DataError(f"{head}:\n{body}")

    def raise_if_any(self) -> None:
        if self.count:
            raise self.error()


_SIMPLE = (str, int, bool)
_INFINITIES = (math.inf, -math.inf)


def infinity_message(value: float) -> str:
    """Why ±infinity is refused (the same words for every reader and for Spark)."""
    sign = "-" if value < 0 else "+"
    return (
        f"value {sign}infinity is not a finite number: attributes hold finite numbers "
        "(JSON, the results' format, has no infinity); use NULL or a large finite value"
    )


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
            attrs = self._conform(values, type_value, errors, row)
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

    def _conform(
        self,
        values: Mapping[str, OptValue],
        type_value: OptValue,
        errors: list[tuple[str | None, str]],
        row: Row,
    ) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        declared = self.declared
        if isinstance(type_value, str) and type_value not in declared:
            names = ", ".join(sorted(declared)) or "no types"
            errors.append(
                (self.type_col, f"unknown event type {type_value!r} (the schema has {names})")
            )
        allowed = declared.get(type_value) if isinstance(type_value, str) else None
        kinds = self.kinds
        time_col = self.time_col
        for column, value in values.items():
            if value is None:
                continue
            if allowed is not None and column not in allowed and column != time_col:
                errors.append(
                    (column, f"attribute {column!r} is not in the schema of type {type_value!r}")
                )
                continue
            kind = kinds.get(column)
            if kind is None:
                # A schema without this attribute's kind (read once: a live stream):
                # its first value fixes the kind, as a column's type would.
                kinds[column] = kind_of(value)
                self.learned[column] = row
            else:
                fitted = fits(value, kind)
                if fitted is None:
                    first = self.learned.get(column)
                    where = (
                        f"{column!r} is {kind} in {first.where()}: an attribute holds one kind "
                        "of value"
                        if first is not None
                        else f"the schema says {kind}"
                    )
                    errors.append((column, f"value {value!r} is {kind_of(value)}, but {where}"))
                    continue
                value = fitted
            attrs[column] = value
        return attrs


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

    def add_kind(self, column: str, kind: str, row: Row) -> None:
        """Note that ``column`` holds a value of ``kind`` at ``row`` (columnar readers)."""
        self.first_of_kind.setdefault(column, {}).setdefault(kind, row)

    def final_schema(self, problems: Problems) -> Schema:
        """:meth:`schema`, every problem logged so far raised (the end of a first pass)."""
        schema = self.schema(problems)
        problems.raise_if_any()
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


def with_time_column(schema: Schema, time_col: str, carriers: Iterable[str], kinds: Iterable[str]) -> Schema:
    """The given schema plus the time column for every type that carries it.

    The time column stays an ordinary attribute (spec §1) even when the schema
    file does not list it, so engines that copy only schema attributes keep it.
    """
    carrier_set = set(carriers)
    types = {t: list(schema.attributes(t)[1:]) for t in schema.type_names()}
    changed = False
    for type_name, attrs in types.items():
        if type_name in carrier_set and time_col not in attrs:
            attrs.append(time_col)
            changed = True
    if not changed:
        return schema
    all_kinds = dict(schema.kinds)
    if time_col not in all_kinds:
        seen = set(kinds)
        if len(seen) == 1 or seen == {"int", "float"}:
            all_kinds[time_col] = "float" if "float" in seen else seen.pop()
    return Schema.of(types, all_kinds)


def is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


__all__ = [
    "MAX_SHOWN",
    "Inference",
    "Problem",
    "Problems",
    "RecordChecker",
    "Row",
    "Value",
    "infinity_message",
    "with_time_column",
]
