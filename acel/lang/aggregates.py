"""Aggregate functions as commutative monoids with a lift and a finish (spec §4).

Every engine aggregates through this registry, so a function registered here
(``register``) is available to the parser's checker, the oracle, the compiler
and the optimized engine alike.  NULL inputs are skipped (the identity).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from acel.lang.errors import DataError
from acel.lang.events import OptValue


@dataclass(frozen=True)
class Aggregate:
    """A decomposable aggregate: ``finish(⊕ lift(x) for x in bag)``.

    ``combine`` must be associative and commutative with ``identity`` as unit.
    ``needs_attribute`` is false only for COUNT, which may be written ``COUNT(X)``.
    """

    name: str
    identity: Any
    lift: Callable[[Any], Any]
    combine: Callable[[Any, Any], Any]
    finish: Callable[[Any], OptValue]
    needs_attribute: bool = True

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
    total, count = acc
    if count == 0:
        return None
    return total / count


def _identity(x: Any) -> Any:
    return x


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


_sum_lift = _number("SUM")
_avg_lift = _number("AVG")

# MIN/MAX use None as the stand-in for ±∞ so that every value type is welcome.
SUM = Aggregate("SUM", 0, _sum_lift, lambda a, b: a + b, _identity)
COUNT = Aggregate("COUNT", 0, lambda _x: 1, lambda a, b: a + b, _identity, needs_attribute=False)
MIN = Aggregate("MIN", None, _identity, _min, _identity)
MAX = Aggregate("MAX", None, _identity, _max, _identity)
AVG = Aggregate(
    "AVG", (0, 0), lambda x: (_avg_lift(x), 1), lambda a, b: (a[0] + b[0], a[1] + b[1]), _avg_finish
)

_REGISTRY: dict[str, Aggregate] = {}


def register(aggregate: Aggregate) -> None:
    """Make a user-defined aggregate available under its (case-insensitive) name."""
    _REGISTRY[aggregate.name.upper()] = aggregate


def lookup(name: str) -> Aggregate | None:
    """The aggregate called ``name`` (any case), or ``None``."""
    return _REGISTRY.get(name.upper())


def names() -> list[str]:
    """The registered aggregate names, sorted."""
    return sorted(_REGISTRY)


for _agg in (SUM, COUNT, MIN, MAX, AVG):
    register(_agg)
