"""How a query's stream is cut into independent units of work (pure planning).

Three strategies (papers/spark.md proves each exact):

* ``partition``: PARTITION BY a, ... — one unit per key; the formula runs on
  each key's sub-stream exactly as the single-process engines do.
* ``slice``: WITHIN without PARTITION BY, or ``WITHIN d ON a`` with it (keyed
  slices: the whole stream is cut by time, every slice runs all its keys, a hot
  key is spread over every slice) — the window axis (positions for
  ``EVENTS``, attribute values for ``ON attr``) is cut into slices of length
  ``L``; slice ``k`` *owns* axis values ``[kL, (k+1)L)`` and receives the events
  with values in ``[kL - P, (k+1)L + U)``.  It reports only complex events
  whose start it owns.  ``U`` is the reach of a window (``w - 1`` positions,
  or ``w`` attribute units) and ``P`` the prefix that keeps SLIDE windows of
  the ``EVENTS`` axis aligned, or a window's reach before the slice when the
  query has a leading NOT (whose ``ψ`` may start up to a window before the
  complex event), 0 otherwise.  A trailing NOT's ``ψ`` ends inside the
  complex event's window, so the overlap ``U`` already holds it.
* ``single``: neither — one ordered unit; the query cannot be parallelised.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from acel.lang import aggregates
from acel.lang.ast import Query, ReturnAgg, top_negation

Kind = Literal["partition", "slice", "single"]


@dataclass(frozen=True)
class Strategy:
    """The chosen strategy and, for the user, why."""

    kind: Kind
    reason: str


def choose(query: Query, *, attr_monotone: bool | None = None) -> Strategy:
    """The strategy of a query.

    ``attr_monotone`` says whether the ``WITHIN d ON attr`` attribute is
    non-decreasing along stream positions (checked on the data by the
    caller); slicing by attribute values is exact only then.
    """
    if query.partition_by:
        if keyed_slices(query) and attr_monotone:
            return Strategy("slice", "time slices holding every PARTITION BY key, each with one "
                            "window of overlap")
        return Strategy("partition", "one unit per PARTITION BY key")
    if query.within is None:
        return Strategy(
            "single",
            "the query has neither PARTITION BY nor WITHIN, so it cannot be "
            "parallelised: it runs as one ordered partition",
        )
    if query.skip is not None or query.select in ("NEXT", "LAST", "MAX"):
        return Strategy(
            "single",
            "SELECT NEXT/LAST/MAX and AFTER MATCH SKIP compare complex events that start in "
            "different time slices (the choice is made among those ending at one position, the "
            "skip walks them in start order), so the stream cannot be sliced: it runs as one "
            "ordered partition",
        )
    if query.within.attr is not None and not attr_monotone:
        return Strategy(
            "single",
            f"WITHIN ... ON {query.within.attr}: the attribute does not grow with the stream "
            "position, so a complex event may reach arbitrarily far and the stream cannot be "
            "sliced: it runs as one ordered partition",
        )
    return Strategy("slice", "time slices, each with one window of overlap")


def keyed_slices(query: Query) -> bool:
    """Whether a PARTITION BY query may be cut into time slices of the whole stream
    (papers/spark.md, Strategy 2, "Keyed slices"), its ``ON`` axis being non-decreasing:
    ``WITHIN d ON a`` (``n EVENTS`` counts inside each key), no SLIDE, no SELECT
    NEXT/LAST/MAX nor AFTER MATCH SKIP, and RETURN aggregates whose states merge."""
    within = query.within
    if within is None or within.attr is None or query.slide is not None:
        return False
    if query.skip is not None or query.select in ("NEXT", "LAST", "MAX"):
        return False
    for item in query.returns or ():
        if isinstance(item, ReturnAgg):
            agg = aggregates.lookup(item.func)
            if agg is None or not agg.mergeable:
                return False
    return True


@dataclass(frozen=True)
class Slicing:
    """Slice geometry on the window axis (see the module docstring)."""

    length: int | float
    before: int | float
    after: int | float

    def __post_init__(self) -> None:
        if not self.length > 0:
            raise ValueError(f"slice length must be positive, got {self.length!r}")

    def owner(self, value: int | float) -> int:
        """The slice that owns an axis value: ``floor(v / L)``."""
        return math.floor(value / self.length)

    def slices_of(self, value: int | float) -> range:
        """Every slice whose data holds ``value``: ``kL - P <= v < (k+1)L + U``."""
        first = math.floor((value - self.after) / self.length)
        last = math.floor((value + self.before) / self.length)
        return range(first, last + 1)

    def data_bounds(self, k: int) -> tuple[int | float, int | float]:
        """``[lo, hi)``: the axis values slice ``k`` receives."""
        return (k * self.length - self.before, (k + 1) * self.length + self.after)


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def slicing_for(
    query: Query,
    *,
    count: int,
    span: tuple[int | float, int | float] | None,
    slices: int,
    slice_size: int | float | None = None,
) -> Slicing:
    """The slice geometry of a ``slice`` query.

    ``count`` is the number of events, ``span`` the (min, max) of the axis
    attribute for ``ON attr`` windows, ``slices`` the wanted number of slices.
    A slice is never shorter than one window (so an event lands in at most
    two or three slices) unless ``slice_size`` says otherwise; with SLIDE on
    the ``EVENTS`` axis, ``L`` and ``P`` are multiples of the slide so that
    every slice's first position starts a window (local window ``k - b/s``).
    """
    within = query.within
    assert within is not None
    w = within.size
    # a leading NOT looks back one window before the first start a slice owns (spec §3.1)
    looks_back = bool(top_negation(query.formula).leading)
    if within.attr is None:
        reach = max(int(math.ceil(w)) - 1, 0)
        if slice_size is not None:
            length = max(1, int(math.ceil(slice_size)))
        else:
            length = max(int(math.ceil(w)), -(-count // max(slices, 1)), 1)
        before = reach if looks_back else 0
        if query.slide is not None:
            s = query.slide.size
            if not (isinstance(s, int) or float(s).is_integer()) or s <= 0:
                raise ValueError(f"SLIDE {s} EVENTS must be a positive integer")
            step = int(s)
            length = _round_up(length, step)
            before = _round_up(reach, step)
        return Slicing(length, before, reach)
    if slice_size is not None:
        length_v: int | float = slice_size
    else:
        lo, hi = span if span is not None else (0, 0)
        width = (hi - lo) / max(slices, 1)
        length_v = max(w, width)
        if isinstance(w, int) and isinstance(lo, int) and isinstance(hi, int):
            length_v = int(math.ceil(length_v))
    if length_v <= 0:
        length_v = 1
    return Slicing(length_v, w if looks_back else 0, w)


def balance(sizes: Sequence[int], bins: int) -> list[int]:
    """A bin for each item so that bins hold similar totals (LPT: largest first).

    Used for PARTITION BY keys: ``sizes`` are the keys' event counts, a bin is
    one Spark task.  Every bin total is at most 4/3 of the best possible
    maximum (Graham's bound); hashing gives no such bound for a few keys.
    """
    if bins < 1:
        raise ValueError(f"need at least one bin, got {bins}")
    out = [0] * len(sizes)
    heap = [(0, b) for b in range(bins)]
    for index in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        total, b = heapq.heappop(heap)
        out[index] = b
        heapq.heappush(heap, (total + sizes[index], b))
    return out
