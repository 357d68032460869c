"""Where a run's start may still count: the WITHIN/SLIDE plan of one partition.

Both engine modes see a window through the *coordinate* of a position (the
position itself for ``EVENTS``, the attribute value for ``ON attr``) and a
*monotone* flag: when coordinates never decrease along the partition (always
for ``EVENTS``; checked on the data for ``ON attr``), a start that is out of
the window for the current event is out of it for every later event, so its
work can be dropped for good (spec §6, memory bounded by the window).

Trend mode groups run starts into *classes* that every later end treats
alike: one class without WITHIN, the start itself with WITHIN only, and the
SLIDE index ``⌊coord/s⌋`` with monotone sliding windows (a run with start
class ``c`` ending at ``j`` counts in windows ``k`` with
``kmin(j) ≤ k ≤ c``).  Non-monotone ``ON`` windows fall back to one class per
start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acel.ast import Query, Window
from acel.clauses import window_value
from acel.events import Event

Row = Any
"""A trend output row id: ``None`` (one row per key) or a window index ``k``."""


@dataclass(frozen=True)
class WindowPlan:
    """Coordinates of a partition and the WITHIN/SLIDE rules on them."""

    coords: Sequence[Any]
    """Coordinate per position: a ``range`` for EVENTS (no per-event memory)."""
    within: Window | None
    slide: Window | None
    monotone: bool

    @staticmethod
    def of(query: Query, events: Sequence[Event]) -> WindowPlan:
        return WindowPlan.build(events, query.within, query.slide)

    @staticmethod
    def build(
        events: Sequence[Event], within: Window | None = None, slide: Window | None = None
    ) -> WindowPlan:
        if within is None or within.attr is None:
            coords: Sequence[Any] = range(len(events))
            monotone = True
        else:
            coords = tuple(window_value(within, events, k) for k in range(len(events)))
            monotone = all(a <= b for a, b in zip(coords, coords[1:]))
        return WindowPlan(coords, within, slide, monotone)

    # ------------------------------------------------------ enumeration mode

    def threshold(self, k: int) -> Any:
        """Starts with coordinate ``> threshold(k)`` are within the window of an end at ``k``."""
        if self.within is None:
            return None
        return self.coords[k] - self.within.size

    # ------------------------------------------------------------ trend mode

    def single_class(self) -> bool:
        """Whether at most one start class is alive at any step (no WITHIN, or
        monotone windows that do not overlap: ``SLIDE s ≥ WITHIN w``).

        Then trend vectors need no per-class maps: all work is simply reset
        when the current position enters another window (GRETA's tumbling
        windows).
        """
        if self.within is None:
            return self.slide is None
        return self.slide is not None and self.monotone and self.slide.size >= self.within.size

    def window_of(self, k: int) -> Any:
        """In single-class mode: the one window holding position ``k`` (or ``None``)."""
        if self.within is None:
            return 0
        assert self.slide is not None
        v = self.coords[k]
        if v < 0:
            return None
        c = math.floor(v / self.slide.size)
        return c if v - c * self.slide.size < self.within.size else None

    def class_of(self, i: int) -> Any:
        """The start class of a run starting at ``i`` (``None``: it counts nowhere)."""
        if self.within is None:
            return 0
        if self.slide is None or not self.monotone:
            return i
        v = self.coords[i]
        if v < 0:
            return None
        return math.floor(v / self.slide.size)

    def kmin(self, v: Any) -> int:
        """The first window index whose window still holds coordinate ``v``."""
        assert self.within is not None and self.slide is not None
        return max(0, math.floor((v - self.within.size) / self.slide.size) + 1)

    def class_alive(self, c: Any, k: int) -> bool:
        """Whether runs of class ``c`` can still count for an end at ``k`` or later."""
        if self.within is None or not self.monotone:
            return True
        if self.slide is None:
            return bool(self.coords[c] > self.coords[k] - self.within.size)
        return bool(c >= self.kmin(self.coords[k]))

    def targets(self, c: Any, j: int) -> Sequence[Row]:
        """The rows a run of class ``c`` ending at ``j`` counts in."""
        if self.within is None:
            return (None,)
        vj = self.coords[j]
        if self.slide is None:
            return (None,) if vj - self.coords[c] < self.within.size else ()
        if self.monotone:
            return range(self.kmin(vj), c + 1)
        vi = self.coords[c]
        lo, hi = min(vi, vj), max(vi, vj)
        if lo < 0:
            return ()
        return range(self.kmin(hi), math.floor(lo / self.slide.size) + 1)
