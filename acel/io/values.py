"""Values of event attributes: kinds, conversions from every input format (spec §1).

Attributes hold int, float, str or bool; NULL (``None``) means missing.  This
module turns what JSON, CSV, Parquet, pandas and NumPy give into those, and
knows how to sort by a time column.  The choices are listed in ``papers/io.md``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Iterable

from acel.lang.events import OptValue, Value

KINDS = ("int", "float", "str", "bool")
"""The value kinds of spec §1."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone UTF-16 surrogate (JSON's ``"\\ud800"``): no UTF-8
    encodes it, so no output format could write it (issue 24 §4)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def surrogate_message(column: object) -> str:
    """Why a value with a lone surrogate is refused (one line, naming the column)."""
    return (f"the value of {column!r} holds a lone surrogate (such as \\ud800), which is not "
            "text: no UTF-8 output could write it")


MAX_ATTRIBUTES = 10_000
"""The most attributes an event (a record, a CSV header, a schema) may have: the
automaton copies each into a register in generated code, so one JSON line with
10^5 keys once cost a minute and a gigabyte (issue 24 §6)."""


def too_many_attributes(count: int, what: str = "a record") -> str:
    """Why a record or schema wider than :data:`MAX_ATTRIBUTES` is refused (one line)."""
    return (f"{what} has {count:,} attributes; events may have at most {MAX_ATTRIBUTES:,} "
            "(keep the columns the queries use)")


def first_duplicate(names: Iterable[str]) -> str | None:
    """The least name that appears twice, or None: one pass (a header of 10^5 columns
    was checked in quadratic time, issue 24 §5)."""
    seen: set[str] = set()
    twice: set[str] = set()
    for name in names:
        if name in seen:
            twice.add(name)
        seen.add(name)
    return min(twice) if twice else None


class BadValue(Exception):
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
    Nested objects, lists and bytes raise ``BadValue``.
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
        raise BadValue(f"nested value ({what}) is not allowed; attributes hold int, float, str or bool")
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
    raise BadValue(f"unsupported value {value!r} of type {type(value).__name__}")


def _pandas_timestamp(value: object) -> object:
    import pandas as pd

    stamp = pd.Timestamp(value)  # type: ignore[call-overload]
    return None if pd.isna(stamp) else stamp.to_pydatetime()


_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_SPECIAL_FLOAT = re.compile(r"[+-]?(inf|infinity|nan)", re.IGNORECASE)
_BOOL = {"true": True, "false": False}


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


def fits(value: Value, kind: str) -> Value | None:
    """``value`` converted to ``kind`` when compatible, else ``None``.

    int goes into float; an integral float goes into int (pandas turns int
    columns with NULLs into floats); nothing else converts.
    """
    have = kind_of(value)
    if have == kind:
        return value
    if have == "int" and kind == "float":
        try:
            return float(value)
        except OverflowError:  # an integer no float holds
            return None
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
        return int_from_digits(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    try:
        return _epoch(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        pass
    raise ValueError(f"cannot read time value {value!r} (a number or an ISO 8601 date is needed)")


_SAFE_BITS = 13_000
"""Integers below 2**13000 (3,913 digits) convert to and from text natively."""


def int_from_digits(text: str) -> int:
    """``int(text)`` for a decimal literal of any length.

    Python refuses to convert more than 4,300 digits (a guard against slow
    quadratic conversions); event data and counts may legitimately be longer,
    so long literals are split and recombined without the process-wide limit.
    """
    if len(text) <= 4000:
        return int(text)
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-")
    return sign * _digits_value(digits)


def _digits_value(digits: str) -> int:
    if len(digits) <= 4000:
        return int(digits)
    low = len(digits) // 2
    return _digits_value(digits[:-low]) * 10**low + _digits_value(digits[-low:])


def int_text(value: int) -> str:
    """``str(value)`` for an integer of any size (see :func:`int_from_digits`)."""
    if value.bit_length() < _SAFE_BITS:
        return str(value)
    if value < 0:
        return "-" + int_text(-value)
    return _int_text(value, 0)


def _int_text(value: int, width: int) -> str:
    """Decimal digits of ``value``, zero-padded to ``width``."""
    if value.bit_length() < _SAFE_BITS:
        text = str(value)
        return text.rjust(width, "0") if width else text
    digits = int(value.bit_length() * 0.30103) + 1
    low = digits // 2
    high, rest = divmod(value, 10**low)
    return _int_text(high, max(0, width - low)) + _int_text(rest, low)
