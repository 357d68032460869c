"""Number literals of ACEL text: their limits and exact int/str conversion.

ACEL integers are Python ints and floats are Python floats, so two kinds of
literal have no value a query could use:

* a float literal beyond ±1.8e308 (``1e400``) would be infinite, and an
  infinity has no ACEL literal to print it back;
* an integer literal of more than :data:`MAX_INT_DIGITS` digits.  Python
  refuses to convert such digit strings by default (its int/str digit limit,
  ``sys.set_int_max_str_digits``), and a query holding one could not be
  printed, shown in an error message or turned into generated code.

The parser rejects both with a query error naming line and column
(:func:`literal_problem`).  It converts digit strings with
:func:`int_from_digits` and the printer writes ints with :func:`int_to_digits`:
both work in chunks shorter than the smallest limit Python allows, so they do
not depend on the process-wide setting, which library code leaves alone.
"""

from __future__ import annotations

import math

MAX_INT_DIGITS = 4300
"""The most digits an integer literal may have (CPython's default int/str limit)."""

MAX_REPEAT = 1_000_000
"""The largest bound of a repetition ``φ{n,m}`` (spec §3.2; ``papers/language.md``).

The compiler counts large repetitions (its automaton does not grow with the bound),
but a run of ``φ{n}`` still reads ``n`` events and the checker refuses larger bounds
with one located line rather than letting a mistyped bound run."""

_CHUNK = 600
"""Digits converted at a time: below 640, the smallest limit CPython accepts."""


def int_from_digits(digits: str) -> int:
    """The int of a string of decimal digits, whatever its length and the process limit."""
    if len(digits) <= _CHUNK:
        return int(digits)
    value = 0
    for start in range(0, len(digits), _CHUNK):
        chunk = digits[start : start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def int_to_digits(value: int) -> str:
    """The decimal text of an int (sign included), whatever the process limit."""
    if -(10**_CHUNK) < value < 10**_CHUNK:
        return str(value)
    sign, rest = ("-", -value) if value < 0 else ("", value)
    chunks: list[int] = []
    base = 10**_CHUNK
    while rest:
        rest, low = divmod(rest, base)
        chunks.append(low)
    head, *tail = reversed(chunks)
    return sign + str(head) + "".join(str(c).zfill(_CHUNK) for c in tail)


def repeat_problem(digits: str) -> str | None:
    """Why the digit string ``digits`` cannot bound a repetition, or None (no
    conversion of a long string: ``A{<4,301 digits>}`` is refused at once)."""
    significant = digits.lstrip("0")
    if len(significant) <= len(str(MAX_REPEAT)) and int(significant or "0") <= MAX_REPEAT:
        return None
    shown = f"{int(significant):,}" if len(significant) <= 20 else f"a number of {len(significant):,} digits"
    return f"a repetition bound is at most {MAX_REPEAT:,}, not {shown} (spec §3.2)"


def literal_problem(kind: str, text: str) -> str | None:
    """Why the number token ``text`` (``INT`` or ``FLOAT``) has no ACEL value, or None."""
    digits = len(text.lstrip("0"))
    if kind == "INT" and digits > MAX_INT_DIGITS:
        return f"the integer has {digits:,} digits; ACEL integers have at most {MAX_INT_DIGITS:,}"
    if kind == "FLOAT" and math.isinf(float(text)):
        shown = text if len(text) <= 20 else text[:17] + "..."
        return (
            f"the number {shown} is too large: it would be infinite "
            "(floats go up to about 1.8e308)"
        )
    return None
