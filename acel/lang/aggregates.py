"""Aggregate functions as commutative monoids with a lift and a finish (spec §4).

Every engine aggregates through this registry, so a function registered here
(``register``) is available to the parser's checker, the oracle, the compiler
and the optimized engine alike.  NULL inputs are skipped (the identity).

An :class:`Aggregate` is the one place an aggregate is declared: besides its
monoid it says what the checker needs (numeric inputs, the result's value
kind) and which fast paths may use it (the trend engine's ``c^n``, the shared
plans, Spark's merge of partial states).  A new aggregate touches this file
only (``docs/architecture.md``); ``STDDEV`` is the example.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from acel.lang.errors import DataError
from acel.lang.events import OptValue

Power = Literal["additive", "idempotent"]
"""How a trend vector raises a contribution ``c`` to the ``n``-th power (GRETA, seed 000).

``additive``: ``combine`` is ``+`` (component by component on tuples) with
identity 0 (or a tuple of zeros), so ``c^n = n·c``; counting runs is counting
complex events only on unambiguous automata.  ``idempotent``:
``combine(c, c) = c``, so ``c^n = c`` and the number of runs does not matter.
"""


def _any_kind(_source: str | None) -> str | None:
    return "mixed"


@dataclass(frozen=True)
class Aggregate:
    """A decomposable aggregate: ``finish(⊕ lift(x) for x in bag)``.

    ``combine`` must be associative and commutative with ``identity`` as unit.
    ``needs_attribute`` is false only for COUNT, which may be written ``COUNT(X)``.
    The other fields default to what a user-registered aggregate gets: any
    input, a ``mixed`` result, no fast path (the engines enumerate).
    """

    name: str
    identity: Any
    lift: Callable[[Any], Any]
    combine: Callable[[Any, Any], Any]
    finish: Callable[[Any], OptValue]
    needs_attribute: bool = True
    numeric: bool = False
    """Its inputs are numbers: the checker refuses a ``str``/``bool`` attribute."""
    result_kind: Callable[[str | None], str | None] = _any_kind
    """The value kind of the result from the input's (``None``: unknown; ``papers/semantics.md``)."""
    selects: bool = False
    """The result is one of the inputs (MIN/MAX): an ``int`` result fits the input's column."""
    power: Power | None = None
    """``c^n`` for the trend engine and shared plans; ``None``: no fast path."""
    prefer: Literal["<", ">"] | None = None
    """An idempotent ``combine`` that keeps the operand comparing ``prefer`` to the
    other (``None`` the identity): the trend vector code inlines the comparison."""
    mergeable: bool = False
    """Spark merges per-slice partial states from the engine's RETURN rows, which
    carry the state as the finished value of :func:`state_twin` (pickled)."""

    @property
    def width(self) -> int | None:
        """Components of an additive state that is a tuple (``None``: a scalar)."""
        return len(self.identity) if isinstance(self.identity, tuple) else None

    @property
    def needs_unambiguity(self) -> bool:
        """Propagation counts runs: exact for additive aggregates on unambiguous automata only."""
        return self.power == "additive"

    def fold(self, values: Iterable[OptValue]) -> Any:
        """The monoid element of a bag of values, NULLs skipped."""
        acc = self.identity
        for value in values:
            if value is not None:
                acc = self.combine(acc, self.lift(value))
        return acc

    def apply(self, values: Iterable[OptValue]) -> OptValue:
        """The aggregate of a bag of values (the empty bag gives ``finish(1)``)."""
        return self.finish(self.fold(values))


def _min(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return b if b < a else a


def _max(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return b if b > a else a


def _avg_finish(acc: tuple[Any, int]) -> OptValue:
    """``total / count``: the float nearest the exact mean; beyond the float range (a mean
    of integers past 1.8e308), the exact mean rounded to an integer (papers/semantics.md)."""
    total, count = acc
    if count == 0:
        return None
    try:
        mean = total / count
        return float(mean) if type(mean) is not float else mean
    except OverflowError:
        from fractions import Fraction  # here: only for means beyond the float range

        return round(Fraction(total) / count)


def _exact_sum(a: Any, b: Any) -> Any:
    """``a + b`` when one of them is an integer too large for a float: exact (a
    ``Fraction``), or the other when it is ±inf or NaN (what a float sum would give)."""
    from fractions import Fraction

    for x in (a, b):
        if isinstance(x, float) and not math.isfinite(x):
            return x
    return Fraction(a) + Fraction(b)


def _identity(x: Any) -> Any:
    return x


def _add(a: Any, b: Any) -> Any:
    return a + b


def _add_pairs(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    try:
        return (a[0] + b[0], a[1] + b[1])
    except OverflowError:  # a float and an integer beyond the float range (issue 36 D9)
        return (_exact_sum(a[0], b[0]), a[1] + b[1])


def _add_triples(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def _number(function: str) -> Callable[[Any], Any]:
    """The lift of SUM/AVG: a number, or a DataError (never ``"AMZN" + "INTL"``).

    The checker rejects SUM/AVG of an attribute whose kind is known to be
    text or bool; this guards the runs where the kind is not known (a schema
    without kinds on a live stream), so that every engine stops with the same
    error instead of concatenating strings or failing with a TypeError.
    """

    def lift(x: Any) -> Any:
        t = type(x)
        if t is int or t is float or (isinstance(x, (int, float)) and not isinstance(x, bool)):
            return x
        kind = "bool" if isinstance(x, bool) else "str" if isinstance(x, str) else t.__name__
        raise DataError(
            f"{function} adds numbers, but an event holds the {kind} value {x!r} "
            "(give the attribute a numeric kind in the schema)"
        )

    return lift


def _sum_kind(source: str | None) -> str | None:
    return "int" if source is None else source if source in ("int", "float") else "mixed"


def _same_kind(source: str | None) -> str | None:
    return source


def _int_kind(_source: str | None) -> str | None:
    return "int"


def _float_kind(_source: str | None) -> str | None:
    return "float"


_sum_lift = _number("SUM")
_avg_lift = _number("AVG")
_stddev_number = _number("STDDEV")


def _stddev_lift(x: Any) -> tuple[int, Any, Any]:
    """``(1, x, x²)``, exact: a finite float becomes its exact ``Fraction``."""
    x = _stddev_number(x)
    if isinstance(x, float) and math.isfinite(x):
        from fractions import Fraction  # here: its import (and regex) only for STDDEV of floats

        x = Fraction(x)
    return (1, x, x * x)


def _stddev_finish(acc: tuple[int, Any, Any]) -> OptValue:
    """The sample standard deviation ``√((n·Σx² − (Σx)²) / (n(n−1)))``; NULL below 2 values."""
    n, total, squares = acc
    if n < 2:
        return None
    spread = n * squares - total * total
    if not spread > 0:  # all equal (or NaN: left as it is)
        return math.sqrt(spread) if spread != spread else 0.0
    try:
        return math.sqrt(spread / (n * (n - 1)))
    except OverflowError:
        raise DataError("STDDEV: the values are too large for a float result") from None


# MIN/MAX use None as the stand-in for ±∞ so that every value type is welcome.
SUM = Aggregate(
    "SUM", 0, _sum_lift, _add, _identity,
    numeric=True, result_kind=_sum_kind, power="additive", mergeable=True,
)
COUNT = Aggregate(
    "COUNT", 0, lambda _x: 1, _add, _identity,
    needs_attribute=False, result_kind=_int_kind, power="additive", mergeable=True,
)
MIN = Aggregate(
    "MIN", None, _identity, _min, _identity,
    result_kind=_same_kind, selects=True, power="idempotent", prefer="<", mergeable=True,
)
MAX = Aggregate(
    "MAX", None, _identity, _max, _identity,
    result_kind=_same_kind, selects=True, power="idempotent", prefer=">", mergeable=True,
)
AVG = Aggregate(
    "AVG", (0, 0), lambda x: (_avg_lift(x), 1), _add_pairs, _avg_finish,
    numeric=True, result_kind=_float_kind, power="additive", mergeable=True,
)
STDDEV = Aggregate(
    "STDDEV", (0, 0, 0), _stddev_lift, _add_triples, _stddev_finish,
    numeric=True, result_kind=_float_kind, power="additive", mergeable=True,
)
"""The sample standard deviation (SQL's ``STDDEV``/``STDDEV_SAMP``; ``papers/semantics.md``)."""

_REGISTRY: dict[str, Aggregate] = {}

STATE_SUFFIX = ".STATE"
"""Suffix of a state twin's name (no query can spell it: not an identifier)."""

_TWINS: dict[str, Aggregate] = {}


def register(aggregate: Aggregate) -> None:
    """Make a user-defined aggregate available under its (case-insensitive) name."""
    _REGISTRY[aggregate.name.upper()] = aggregate
    _TWINS.pop(aggregate.name.upper() + STATE_SUFFIX, None)


def state_twin(aggregate: Aggregate) -> Aggregate:
    """The aggregate with the same monoid whose finished value is the monoid state.

    Spark's partial RETURN runs the engine with these twins so that its rows
    carry states to merge across slices (``mergeable``); ``lookup`` finds a
    registered aggregate's twin by ``name + STATE_SUFFIX``.
    """
    return replace(aggregate, name=aggregate.name.upper() + STATE_SUFFIX, finish=_identity,
                   result_kind=_any_kind)


def lookup(name: str) -> Aggregate | None:
    """The aggregate called ``name`` (any case), or ``None``; ``F.STATE`` is F's state twin."""
    key = name.upper()
    found = _REGISTRY.get(key)
    if found is None and key.endswith(STATE_SUFFIX):
        found = _TWINS.get(key)
        if found is None:
            base = _REGISTRY.get(key[: -len(STATE_SUFFIX)])
            if base is None:
                return None
            found = _TWINS[key] = state_twin(base)
    return found


def names() -> list[str]:
    """The registered aggregate names, sorted."""
    return sorted(_REGISTRY)


for _agg in (SUM, COUNT, MIN, MAX, AVG, STDDEV):
    register(_agg)
