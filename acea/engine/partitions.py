"""The runner's partition router: each event to its PARTITION BY sub-stream, numbered.

A :class:`Partition` is one sub-stream's state (its evaluator, its open SLIDE
windows, its RETURN accumulators, its negation state); the
:class:`PartitionRouter` finds or makes the partition of each event, numbers
the event inside it and computes its window coordinate (spec §6).  Kept apart
from the runner so that the runner's strategies and the state codec share
these records without importing the runner.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Union

from acel.acea.engine.aggregate import Propagator, TumblingPropagator
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.held import Held
from acel.acea.engine.negation import Detector
from acel.acea.engine.windows import Row, WindowRule

from acel.lang.clauses import Key, TrendAccumulator
from acel.lang.errors import DataError
from acel.lang.events import ComplexEvent
from acel.lang.selection import Skipper

Evaluator = Union[Enumerator, Propagator, TumblingPropagator]

NO_MATCH = -math.inf
"""``G`` before any leading ``ψ`` match: blocks nothing."""


class NegationState:
    """One partition's leading/trailing negation (see :mod:`acel.acea.engine.negation`)."""

    __slots__ = ("leading", "trailing", "g", "g_from", "g_value", "held", "deadlines", "seq",
                 "coords", "found", "positions")

    def __init__(self, leading: list[Detector], trailing: list[Detector], exact: bool) -> None:
        self.leading = leading
        self.trailing = trailing
        self.g: Any = NO_MATCH
        """The latest start coordinate of a leading ψ match ending before the next event."""
        self.g_from: list[int] = []
        self.g_value: list[Any] = []
        """``G`` by global position: from ``g_from[n]`` on it is ``g_value[n]``."""
        self.held: deque[Held] = deque()
        """Undecided results in the order of their end."""
        self.deadlines: list[tuple[Any, int, Held]] = []
        self.seq = 0
        self.coords: dict[int, Any] | None = {} if exact else None
        """Exact mode (an axis that may decrease): coordinate per local position."""
        self.found: list[tuple[int, int, Any]] = []
        """Exact mode: ``(i, j, item)`` of every complex event, local positions."""
        self.positions: dict[int, int] | None = {} if exact else None
        """Exact mode: global → local position."""

    def g_at(self, position: int) -> Any:
        """``G(i)`` for a run starting at global position ``position``."""
        n = bisect_right(self.g_from, position)
        return self.g_value[n - 1] if n else NO_MATCH


class LeadingRule(WindowRule):
    """A partition's window rule with start classes that remember ``G`` (leading NOT)."""

    def __init__(self, base: WindowRule, negation: NegationState, trailing: bool) -> None:
        super().__init__(base.within, base.slide, base.monotone)
        object.__setattr__(self, "negation", negation)
        object.__setattr__(self, "trailing", trailing)

    def single_class(self) -> bool:
        return False

    def class_of(self, coord: Any) -> Any:
        base = WindowRule.class_of(self, coord)
        return None if base is None else (base, self.negation.g)  # type: ignore[attr-defined]

    def class_alive(self, c: Any, coord: Any) -> bool:
        return WindowRule.class_alive(self, c[0], coord)

    def targets(self, c: Any, coord: Any) -> Sequence[Row]:
        if self.trailing:  # type: ignore[attr-defined]
            return (("held", c),)
        return self.kept_targets(c, coord)

    def kept_targets(self, c: Any, coord: Any) -> Sequence[Row]:
        """The rows a run of class ``c`` ending at ``coord`` counts in, leading NOT applied."""
        base, g = c
        rows = WindowRule.targets(self, base, coord)
        if g is NO_MATCH or self.within is None:
            return rows
        if self.slide is None:
            return rows if coord - g >= self.within.size else ()
        return [k for k in rows if k * self.slide.size > g]


class Partition:
    """One PARTITION BY sub-stream: its evaluator, its open windows, its accumulators."""

    __slots__ = (
        "key", "evaluator", "local", "last", "open", "accs", "neg", "rule", "skipper", "seen",
        "pending", "pending_seq", "window_held",
    )

    def __init__(self, key: Key, evaluator: Evaluator, rule: WindowRule,
                 neg: NegationState | None) -> None:
        self.skipper: Skipper | None = None
        """AFTER MATCH SKIP: the resume point of this sub-stream."""
        self.pending: list[tuple[Any, ...]] = []
        """AFTER MATCH SKIP: complex events held for start order, a heap of
        ``(start order key, seq, start coordinate, complex event)``."""
        self.pending_seq = 0
        self.window_held: list[tuple[Any, Any, ComplexEvent]] = []
        """SELECT or SKIP per SLIDE window: ``(start coordinate, end coordinate, C)`` of the
        complex events that a window still open may hold (:meth:`WindowRows.close`)."""
        self.seen: list[int] = []
        """SELECT STRICT on global positions: those of the partition's recent events."""
        self.key = key
        self.evaluator = evaluator
        self.rule = rule
        self.neg = neg
        self.local = 0
        """Events read so far (the next event's index inside the partition)."""
        self.last: Any = None
        """The window coordinate of the last event (to check monotonicity)."""
        self.open: dict[Row, None] = {}
        """Windows that hold an event of this partition and are not final yet."""
        self.accs: dict[Row, TrendAccumulator] = {}
        """Mode COLLECT: per window, the RETURN accumulator."""


class PartitionRouter:
    """Routes each event to its partition (made on first use by ``make``), numbers it
    inside it and computes its window coordinate."""

    __slots__ = ("partition_by", "rule", "check_monotone", "make")

    def __init__(self, partition_by: tuple[str, ...], rule: WindowRule, check_monotone: bool,
                 make: Callable[[Key], Partition]) -> None:
        self.partition_by = partition_by
        self.rule = rule
        self.check_monotone = check_monotone
        """A live stream's ``ON attr`` axis: refuse an event that goes back."""
        self.make = make

    def key_of(self, attrs: dict[str, Any]) -> Key | None:
        """The event's PARTITION BY key, ``None`` when it lacks one of the attributes
        (spec §6: it joins no partition)."""
        if not self.partition_by:
            return ()
        values = tuple(attrs.get(a) for a in self.partition_by)
        if None in values:
            return None
        return tuple(zip(self.partition_by, values))  # type: ignore[arg-type]

    def route(self, partitions: dict[Key, Partition], attrs: dict[str, Any],
              position: int) -> tuple[Partition, int, Any] | None:
        """Number the event in its partition: (partition, local index, coordinate), or
        ``None`` when it joins none."""
        partition_by = self.partition_by
        if partition_by:  # key_of, inlined: this runs once per event
            values = tuple(attrs.get(a) for a in partition_by)
            if None in values:
                return None
            key: Key = tuple(zip(partition_by, values))  # type: ignore[arg-type]
        else:
            key = ()
        part = partitions.get(key)
        if part is None:
            part = partitions[key] = self.make(key)
        local = part.local
        part.local = local + 1
        rule = self.rule
        coord = rule.coordinate(attrs, local, position)
        if self.check_monotone and part.last is not None and coord < part.last:
            raise DataError(
                f"event at position {position}: {rule.within.attr} = {coord!r} comes after "  # type: ignore[union-attr]
                f"{part.last!r}; WITHIN … ON {rule.within.attr} on a stream read in one pass "  # type: ignore[union-attr]
                "needs it non-decreasing (sort by it: --time-col)"
            )
        part.last = coord
        return part, local, coord
