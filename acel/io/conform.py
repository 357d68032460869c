"""A record's values against a given schema (spec §9): the step of
:meth:`acel.io.record_pass.RecordChecker.check` a stream with a schema takes (given, or
inferred by a first pass; a live stream's schema learns the kinds it leaves open)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from acel.io.values import fits, kind_of
from acel.lang.events import OptValue


class Checking(Protocol):
    """What :func:`conform` reads of a record checker (``acel.io.record_pass.RecordChecker``)."""

    type_col: str
    time_col: str | None
    kinds: dict[str, str]
    """Attribute → kind, as declared (and learned, for attributes declared without one)."""
    learned: dict[str, Any]
    """Attributes whose kind the schema left open: the record that fixed it."""
    declared: dict[str, set[str]]
    """Type → the attributes it declares."""


def conform(
    checker: Checking,
    values: Mapping[str, OptValue],
    type_value: OptValue,
    errors: list[tuple[str | None, str]],
    row: Any,
) -> dict[str, Any]:
    """``values`` as the schema types them (ints of a float attribute become floats); an
    unknown type, an undeclared attribute or a value of another kind goes to ``errors``
    (``row``: the record, :class:`acel.io.record_pass.Row`)."""
    attrs: dict[str, Any] = {}
    declared = checker.declared
    if isinstance(type_value, str) and type_value not in declared:
        names = ", ".join(sorted(declared)) or "no types"
        errors.append(
            (checker.type_col, f"unknown event type {type_value!r} (the schema has {names})")
        )
    allowed = declared.get(type_value) if isinstance(type_value, str) else None
    kinds = checker.kinds
    time_col = checker.time_col
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
            checker.learned[column] = row
        else:
            fitted = fits(value, kind)
            if fitted is None:
                first = checker.learned.get(column)
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
