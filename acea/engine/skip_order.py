"""AFTER MATCH SKIP in the runner (spec §6.3): complex events released in start order.

A complex event is held in its partition until no run with an earlier start can
still complete, then walked through the partition's skipper.
"""

from __future__ import annotations

import heapq
from typing import Any

from acel.acea.engine.partitions import Partition
from acel.acea.engine.run_context import MATCHES, RunContext

from acel.lang.events import ComplexEvent
from acel.lang.selection import start_order_key


class SkipOrder:
    """The skip's start order over the partitions of one runner."""

    __slots__ = ("run",)

    def __init__(self, run: RunContext) -> None:
        self.run = run

    def in_start_order(
        self, part: Partition, found: list[ComplexEvent], local: int, coord: Any
    ) -> list[Any]:
        """Hold this step's complex events, then release, in start order through the
        partition's skipper, those before which no run can still complete: no live run
        starts earlier (as Flink's NFA checks its partial matches), or WITHIN has closed
        every earlier start.

        Returns the kept ones (mode MATCHES) or folds them (mode COLLECT).
        """
        evaluator = part.evaluator
        for ce in found:
            self.hold(part, ce)
        first = evaluator.first_live_start()  # type: ignore[union-attr]
        if first is None:
            return self.release_held(part, everything=True)
        bound: Any = None
        rule = self.run.rule
        within = rule.within
        if within is not None and rule.monotone:
            if within.attr is None:
                # starts at local index <= local + 1 - w can no longer begin a complex event
                bound = local + 2 - within.size
            else:
                bound = coord - within.size  # coordinates never decrease: earlier starts too
        return self.release_held(part, bound, first)

    @staticmethod
    def hold(part: Partition, ce: ComplexEvent) -> None:
        """Hold ``ce`` in its partition's start-order heap."""
        part.pending_seq += 1
        start = part.evaluator.coord_of(ce.start)  # type: ignore[union-attr]
        heapq.heappush(part.pending, (start_order_key(ce), part.pending_seq, start, ce))

    def release_held(
        self, part: Partition, bound: Any = None, first: int | None = None, everything: bool = False
    ) -> list[Any]:
        """Held complex events, in start order through the skipper, while the next one
        starts at or before position ``first`` (the first run or undecided complex event
        that may still come before it) or at a coordinate at most ``bound``
        (``everything``: all of them); the kept ones (mode MATCHES), else folded into
        the partition's row."""
        pending = part.pending
        skipper = part.skipper
        assert skipper is not None
        kept: list[ComplexEvent] = []
        while pending and (
            everything
            or (first is not None and pending[0][3].start <= first)
            or (bound is not None and pending[0][2] <= bound)
        ):
            ce = heapq.heappop(pending)[3]
            if skipper.keeps(ce):
                kept.append(ce)
        if self.run.mode == MATCHES:
            return kept
        for ce in kept:
            self.run.fold(part, ce, [None])
        return []

