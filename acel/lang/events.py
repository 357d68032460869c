"""Events, complex events and their canonical form (spec §1, §2).

An event is its time plus an immutable, sorted attribute map.  A missing
attribute reads as NULL, so attributes whose value is ``None`` are never
stored: an event that lacks ``price`` and one with ``price = NULL`` are equal.
Complex events are kept in the canonical form of spec §2, so Python equality
and hashing of :class:`ComplexEvent` *are* the equality the spec defines.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

Value = Union[int, float, str, bool]
"""A data value; ``None`` stands for NULL wherever a value may be missing."""

OptValue = Union[Value, None]


def value_sort_key(value: OptValue) -> tuple[int, object]:
    """A total order on values of mixed types: NULL < bool < numbers < str."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, (int, float)):
        return (2, value)
    return (3, value)


@dataclass(frozen=True)
class Event:
    """An event: a time and a sorted tuple of ``(attribute, value)`` items."""

    time: int
    attrs: tuple[tuple[str, Value], ...]

    @staticmethod
    def make(time: int, attributes: Mapping[str, OptValue]) -> Event:
        """Build an event from a mapping, dropping NULL attributes."""
        items = tuple(sorted((k, v) for k, v in attributes.items() if v is not None))
        return Event(time, items)

    def get(self, attribute: str) -> OptValue:
        """The value of ``attribute`` or ``None`` (NULL) when it is missing."""
        for key, value in self.attrs:
            if key == attribute:
                return value
        return None

    @property
    def type(self) -> str | None:
        """The event type, or ``None`` for an untyped event."""
        value = self.get("type")
        return value if isinstance(value, str) else None

    def as_dict(self) -> dict[str, Value]:
        """The attribute map as a plain dictionary."""
        return dict(self.attrs)

    def at(self, time: int) -> Event:
        """The same attributes at another time (used to relabel positions)."""
        return Event(time, self.attrs)

    def sort_key(self) -> tuple[int, tuple[tuple[str, tuple[int, object]], ...]]:
        """The order of spec §12: by time, then attributes."""
        return (self.time, tuple((k, value_sort_key(v)) for k, v in self.attrs))

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.attrs)
        return f"Event({self.time}: {body})"


Bag = tuple[Event, ...]
"""A bag of events in canonical order (sorted, repeated by multiplicity)."""


def canonical_bag(events: Iterable[Event]) -> Bag:
    """Sort a bag of events into canonical order, keeping multiplicities."""
    return tuple(sorted(events, key=Event.sort_key))


def bag_from_counter(counter: Mapping[Event, int]) -> Bag:
    """A canonical bag from an event → multiplicity mapping."""
    return canonical_bag(e for e, n in counter.items() for _ in range(n))


@dataclass(frozen=True)
class ComplexEvent:
    """A complex event ``(start, end, μ)`` in canonical form (spec §2).

    ``vars`` holds ``(variable, bag)`` pairs sorted by variable name, with
    empty bags left out and each bag in canonical order.
    """

    start: int
    end: int
    vars: tuple[tuple[str, Bag], ...]

    @staticmethod
    def make(start: int, end: int, mu: Mapping[str, Iterable[Event]]) -> ComplexEvent:
        """Canonicalise a complex event from any variable → events mapping."""
        if start > end:
            raise ValueError(f"complex event with start {start} > end {end}")
        items = []
        for var in sorted(mu):
            bag = canonical_bag(mu[var])
            if bag:
                items.append((var, bag))
        return ComplexEvent(start, end, tuple(items))

    def bag(self, var: str) -> Bag:
        """``μ(var)``: the bag of a variable, empty when unset."""
        for name, bag in self.vars:
            if name == var:
                return bag
        return ()

    def counter(self, var: str) -> Counter[Event]:
        """``μ(var)`` as a multiset."""
        return Counter(self.bag(var))

    def variables(self) -> tuple[str, ...]:
        """The variables with a non-empty bag."""
        return tuple(name for name, _ in self.vars)

    def mapping(self) -> dict[str, Bag]:
        """``μ`` as a dictionary of variable → bag."""
        return dict(self.vars)

    def union(self, other: ComplexEvent) -> ComplexEvent:
        """``C1 ∪ C2`` of spec §2: hull of the intervals, bag sum per variable."""
        mu: dict[str, list[Event]] = {}
        for name, bag in self.vars + other.vars:
            mu.setdefault(name, []).extend(bag)
        return ComplexEvent.make(min(self.start, other.start), max(self.end, other.end), mu)

    def project(self, keep: Iterable[str]) -> ComplexEvent:
        """``π_L(C)`` of spec §2: keep the interval, drop other variables."""
        wanted = set(keep)
        return ComplexEvent(self.start, self.end, tuple(p for p in self.vars if p[0] in wanted))

    def with_bag(self, var: str, bag: Iterable[Event]) -> ComplexEvent:
        """The same complex event with ``μ(var)`` replaced by ``bag``."""
        mu: dict[str, Iterable[Event]] = dict(self.vars)
        mu[var] = tuple(bag)
        return ComplexEvent.make(self.start, self.end, mu)

    def relabel(self, position: Mapping[int, int] | Sequence[int]) -> ComplexEvent:
        """Map local positions to global ones (``position[local] = global``)."""
        return ComplexEvent(
            position[self.start],
            position[self.end],
            tuple((name, tuple(e.at(position[e.time]) for e in bag)) for name, bag in self.vars),
        )

    def sort_key(self) -> tuple[object, ...]:
        """The output order of spec §12: end, start, then the variables."""
        return (
            self.end,
            self.start,
            tuple((name, tuple(e.sort_key() for e in bag)) for name, bag in self.vars),
        )

    def __repr__(self) -> str:
        body = "; ".join(f"{name}={list(bag)}" for name, bag in self.vars)
        return f"CE[{self.start},{self.end}]({body})"


def sorted_complex_events(events: Iterable[ComplexEvent]) -> list[ComplexEvent]:
    """Complex events in the output order of spec §12."""
    return sorted(events, key=ComplexEvent.sort_key)
