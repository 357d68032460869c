"""WITHIN and SLIDE on a partition's window axis, one event at a time (spec §6).

Both engine modes see a window through the *coordinate* of an event: its
position inside the partition for ``EVENTS``, the attribute's value for
``ON attr``.  The axis is *monotone* when coordinates never decrease along the
partition (always for ``EVENTS``; for ``ON attr`` when the data says so, see
:class:`acel.acea.engine.runner.Runner`): then a start that is out of the
window for the current event is out of it for every later event, so its
work can be dropped for good, and a SLIDE window is final as soon as the
axis passes its end (memory follows the window, not the stream).

Trend mode groups run starts into *classes* that every later end treats
alike, and a class is always a coordinate-derived value, so no per-event
table is kept: one class (0) without WITHIN; the start's coordinate itself
with WITHIN only (or with a non-monotone axis); the SLIDE index
``⌊coord/s⌋`` with monotone sliding windows (a run of class ``c`` ending at
coordinate ``v`` counts in windows ``kmin(v) … c``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acel.lang.ast import Window
from acel.lang.errors import DataError

Row = Any
"""A trend output row id: ``None`` (one row per key) or a window index ``k``."""


@dataclass(frozen=True)
class WindowRule:
    """The WITHIN/SLIDE clauses of a query and whether its axis is monotone."""

    within: Window | None
    slide: Window | None
    monotone: bool = True

    # ------------------------------------------------------------ coordinates

    def coordinate(self, attrs: Mapping[str, Any], local: int, position: int) -> Any:
        """The coordinate of an event: its partition index, or its ``ON`` attribute."""
        within = self.within
        if within is None or within.attr is None:
            return local
        value = attrs.get(within.attr)
        if type(value) is int or type(value) is float:
            if value == value:  # NaN is no coordinate
                return value
        raise DataError(
            f"event at position {position} has no numeric {within.attr!r}, "
            f"which WITHIN/SLIDE ... ON {within.attr} needs (found {value!r})"
        )

    @property
    def windowed(self) -> bool:
        return self.within is not None

    def threshold(self, coord: Any) -> Any:
        """Starts with coordinate ``> threshold(coord)`` are in the window of an end there."""
        assert self.within is not None
        return coord - self.within.size

    def reaching(self, start: Any) -> Any:
        """The least coordinate ``c`` with ``threshold(c) >= start``: from there on, a
        start at ``start`` (and every earlier one) is out of the window.

        ``start + size``, except that on floats the sum may round up past the least such
        ``c`` (the threshold subtracts, it does not add): then the float just below it is
        taken while it still reaches ``start``, so a deadline is never an ulp late."""
        assert self.within is not None
        size = self.within.size
        c = start + size
        if type(c) is float and math.isfinite(c):
            below = math.nextafter(c, -math.inf)
            while below - size >= start:
                c, below = below, math.nextafter(below, -math.inf)
        return c

    # ------------------------------------------------------------ trend mode

    def single_class(self) -> bool:
        """Whether at most one start class is alive at any step (no WITHIN, or
        monotone windows that do not overlap: ``SLIDE s ≥ WITHIN w``).

        Then trend vectors need no per-class maps: all work is reset when the
        axis enters another window (GRETA's tumbling windows).
        """
        if self.within is None:
            return self.slide is None
        return self.slide is not None and self.monotone and self.slide.size >= self.within.size

    def window_of(self, coord: Any) -> Any:
        """In single-class mode: the one window holding ``coord`` (or ``None``)."""
        if self.within is None:
            return 0
        assert self.slide is not None
        c = math.floor(coord / self.slide.size)
        return c if coord - c * self.slide.size < self.within.size else None

    def class_of(self, coord: Any) -> Any:
        """The start class of a run starting at ``coord`` (``None``: it counts nowhere)."""
        if self.within is None:
            return 0
        if self.slide is None or not self.monotone:
            return coord
        return math.floor(coord / self.slide.size)

    def kmin(self, coord: Any) -> int:
        """The first window index whose window still holds ``coord`` (negative too, spec §6)."""
        assert self.within is not None and self.slide is not None
        return math.floor((coord - self.within.size) / self.slide.size) + 1

    def kmax(self, coord: Any) -> int:
        """The last window index whose window holds ``coord``."""
        assert self.slide is not None
        return math.floor(coord / self.slide.size)

    def class_alive(self, c: Any, coord: Any) -> bool:
        """Whether runs of class ``c`` can still count for an end at ``coord`` or later."""
        if self.within is None or not self.monotone:
            return True
        if self.slide is None:
            return bool(c > coord - self.within.size)
        return bool(c >= self.kmin(coord))

    def targets(self, c: Any, coord: Any) -> Sequence[Row]:
        """The rows a run of class ``c`` ending at ``coord`` counts in."""
        if self.within is None:
            return (None,)
        if self.slide is None:
            return (None,) if coord - c < self.within.size else ()
        if self.monotone:
            return range(self.kmin(coord), c + 1)
        lo, hi = min(c, coord), max(c, coord)
        return range(self.kmin(hi), math.floor(lo / self.slide.size) + 1)

    def windows_holding(self, coord: Any) -> range:
        """The SLIDE windows ``[k·s, k·s + w)`` that hold an event at ``coord``."""
        return range(self.kmin(coord), self.kmax(coord) + 1)

    def closed_before(self, coord: Any) -> int:
        """With a monotone axis at ``coord``: every window below this index is final."""
        return self.kmin(coord)

    def bounds(self, k: int) -> tuple[int | float, int | float]:
        """``[lo, hi)`` of window ``k``."""
        assert self.within is not None and self.slide is not None
        lo = k * self.slide.size
        return (lo, lo + self.within.size)
