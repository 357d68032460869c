"""The skip's kept complex events put back in the output order of spec §12.

AFTER MATCH SKIP releases complex events in start order (spec §6.3), as each one
becomes final; the output is in end order (§12).  A kept complex event is handed
on once none that ends before it can still come out: no complex event held for
start order (in any partition, or for a trailing NOT's verdict) ends before it.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from typing import Any

from acel.lang.clauses import Match


class OutputOrder:
    """Kept complex events waiting for the ones that end before them, and the ends of
    those still held for start order (their least end bounds what may go out)."""

    __slots__ = ("ready", "seq", "held", "ends")

    def __init__(self) -> None:
        self.ready: list[tuple[int, int, Any, int, Match]] = []
        """A heap of ``(end, start, §12 key, seq, match)``: kept, waiting for §12 order."""
        self.seq = 0
        self.held: Counter[int] = Counter()
        """End position → how many complex events held for start order end there."""
        self.ends: list[int] = []
        """A heap of the ends in :attr:`held` (stale entries dropped lazily)."""

    def hold(self, end: int) -> None:
        """A complex event ending at ``end`` is now held for start order."""
        held = self.held
        if not held[end]:
            heapq.heappush(self.ends, end)
        held[end] += 1

    def unhold(self, end: int) -> None:
        """A complex event ending at ``end`` has left the start-order hold."""
        held = self.held
        held[end] -= 1
        if not held[end]:
            del held[end]

    def least_held_end(self) -> int | None:
        """The least end of a complex event held for start order (``None``: none is)."""
        ends = self.ends
        held = self.held
        while ends and ends[0] not in held:
            heapq.heappop(ends)
        return ends[0] if ends else None

    def add(self, matches: Iterable[Match]) -> None:
        """Kept complex events, to go out in §12 order."""
        for match in matches:
            ce = match.event
            self.seq += 1
            heapq.heappush(self.ready, (ce.end, ce.start, ce.sort_key(), self.seq, match))

    def due(self, bound: int | None) -> list[Match]:
        """The kept complex events ending before ``bound`` (``None``: all), in §12 order
        (by end and start; the writer orders ties by their line)."""
        ready = self.ready
        out: list[Match] = []
        while ready and (bound is None or ready[0][0] < bound):
            out.append(heapq.heappop(ready)[4])
        return out

    def waiting(self) -> list[Match]:
        """The kept complex events not handed on yet (a saved state keeps them)."""
        return [entry[4] for entry in sorted(self.ready)]

    @classmethod
    def restored(cls, waiting: Iterable[Match], held_ends: Iterable[int]) -> OutputOrder:
        """The buffer of a saved state: its waiting complex events, and the ends of those
        the partitions hold for start order."""
        order = cls()
        order.add(waiting)
        for end in held_ends:
            order.hold(end)
        return order
