"""Aggregate functions as commutative monoids with a lift and a finish (spec §4).

Every engine aggregates through this registry, so a function registered here
(``register``) is available to the parser's checker, the oracle, the compiler
and the optimized engine alike.  NULL inputs are skipped (the identity).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from acel.events import OptValue


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


# MIN/MAX use None as the stand-in for ±∞ so that every value type is welcome.
SUM = Aggregate("SUM", 0, _identity, lambda a, b: a + b, _identity)
COUNT = Aggregate("COUNT", 0, lambda _x: 1, lambda a, b: a + b, _identity, needs_attribute=False)
MIN = Aggregate("MIN", None, _identity, _min, _identity)
MAX = Aggregate("MAX", None, _identity, _max, _identity)
AVG = Aggregate(
    "AVG", (0, 0), lambda x: (x, 1), lambda a, b: (a[0] + b[0], a[1] + b[1]), _avg_finish
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
