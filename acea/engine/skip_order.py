"""AFTER MATCH SKIP in the runner (spec §6.3): complex events released in start order.

A complex event is held in its partition until no run with an earlier start can
still complete and be kept, then walked through the partition's skipper; the kept
ones go out in the order of spec §12 (:mod:`acel.acea.engine.output_order`).
"""

from __future__ import annotations

import heapq
from typing import Any

from acel.acea.engine.partitions import Partition
from acel.acea.engine.run_context import MATCHES, Result, RunContext

from acel.lang.clauses import Match
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
        partition's skipper, those before which no run can still complete and be kept:
        no live run starts earlier at or after the resume point (as Flink's NFA prunes
        and checks its partial matches), or WITHIN has closed every earlier start.

        Returns the kept ones (mode MATCHES) or folds them (mode COLLECT).
        """
        for ce in found:
            self.hold(part, ce)
        if not part.pending:
            return []
        bound: Any = None
        rule = self.run.rule
        within = rule.within
        if within is not None and rule.monotone:
            if within.attr is None:
                # starts at local index <= local + 1 - w can no longer begin a complex event
                bound = local + 2 - within.size
            else:
                bound = coord - within.size  # coordinates never decrease: earlier starts too
        return self.release_held(part, bound, live=True)

    def hold(self, part: Partition, ce: ComplexEvent) -> None:
        """Hold ``ce`` in its partition's start-order heap."""
        part.pending_seq += 1
        start = part.evaluator.coord_of(ce.start)  # type: ignore[union-attr]
        heapq.heappush(part.pending, (start_order_key(ce), part.pending_seq, start, ce))
        self.run.released.hold(ce.end)

    def release_held(
        self, part: Partition, bound: Any = None, first: int | None = None, everything: bool = False,
        live: bool = False, threshold: Any = None,
    ) -> list[Any]:
        """Held complex events, in start order through the skipper, while the next one
        starts at or before position ``first`` (the first run or undecided complex event
        that may still come before it; ``live``: also the least start of a live run at
        or after the skipper's resume point, above ``threshold``, which moves as
        complex events are kept) or at a coordinate at most ``bound`` (``everything``:
        all of them); the kept ones (mode MATCHES), else folded into the partition's row."""
        pending = part.pending
        skipper = part.skipper
        assert skipper is not None
        released = self.run.released
        evaluator = part.evaluator
        kept: list[ComplexEvent] = []
        limit = first
        resume = None
        while pending:
            if live and skipper.resume != resume:
                resume = skipper.resume
                limit = _least(first, evaluator.first_live_start(  # type: ignore[union-attr]
                    threshold, resume))
                if limit is None and first is None:
                    everything = True
            if not (
                everything
                or (limit is not None and pending[0][3].start <= limit)
                or (bound is not None and pending[0][2] <= bound)
            ):
                break
            ce = heapq.heappop(pending)[3]
            released.unhold(ce.end)
            if skipper.keeps(ce):
                kept.append(ce)
        if self.run.mode == MATCHES:
            return kept
        for ce in kept:
            self.run.fold(part, ce, [None])
        return []

    def deadline(self, part: Partition) -> Any:
        """The least axis coordinate at which :meth:`Runner.advance` may release one of the
        partition's held complex events (``None``: the axis alone releases none).

        ``advance(c)`` releases the first held one, starting at ``s``, once every live run
        that starts before ``s`` (at or after the skipper's resume point) lies at or below
        ``threshold(c)`` (:meth:`release_held` with ``threshold``): the largest start
        coordinate among those runs, plus the window.  The first one may still wait for an
        undecided complex event (a leading/trailing NOT, whose own deadline the runner
        also reports) or for §12 order behind another: then this is early, a wasted
        wake-up, never late."""
        pending = part.pending
        if not pending:
            return None
        skipper = part.skipper
        assert skipper is not None
        last = part.evaluator.last_blocking_start(  # type: ignore[union-attr]
            pending[0][3].start, skipper.resume)
        return None if last is None else self.run.rule.reaching(last)

    def in_output_order(self, matches: list[Match]) -> list[Result]:
        """Kept complex events, handed on once none that ends before them can still come
        out (spec §12): one held for start order, or for a trailing NOT's verdict."""
        released = self.run.released
        if matches:
            released.add(matches)
        if not released.ready:
            return []
        bound = released.least_held_end()
        order = self.run.order
        if order and (bound is None or order[0].end < bound):
            bound = order[0].end
        return list(released.due(bound))

    def finish(self) -> list[Result]:
        """The stream has ended: every held complex event, through the skippers, in §12 order."""
        matches: list[Match] = []
        for part in self.run.partitions.values():
            key = part.key
            matches.extend(Match(key, ce) for ce in self.release_held(part, everything=True))
        return self.in_output_order(matches)


def _least(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a < b else b
