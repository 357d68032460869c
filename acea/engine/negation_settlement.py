"""Negation settlement in the runner: results held for leading/trailing NOT (spec §3.1).

Leading ``ψ`` matches (the detectors of :mod:`acel.acea.engine.negation`) raise
each partition's ``G``, which drops complex events that start too soon after
one; results of a query with a trailing ``ψ`` are held until a ``ψ`` match
blocks them or their window passes, and released in end order.  Under an axis
that may decrease (exact mode) every verdict is taken at the end of the stream.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterable
from typing import Any

from acel.acea.engine.held import Held
from acel.acea.engine.negation import blocked
from acel.acea.engine.partitions import NO_MATCH, LeadingRule, Partition
from acel.acea.engine.run_context import COLLECT, MATCHES, Result, RunContext
from acel.acea.engine.skip_order import SkipOrder
from acel.acea.engine.windows import Row

from acel.lang.clauses import Key, Match
from acel.lang.events import ComplexEvent


class Settlement:
    """Leading and trailing negation over the partitions of one runner."""

    __slots__ = ("run", "skips")

    def __init__(self, run: RunContext, skips: SkipOrder) -> None:
        self.run = run
        self.skips = skips

    # ------------------------------------------------------------------ detection

    def detect(self, part: Partition, attrs: dict[str, Any], position: int, local: int,
               coord: Any) -> None:
        """Run the ψ detectors on this event: update ``G``, settle held results."""
        neg = part.neg
        assert neg is not None
        rule = self.run.rule
        size = rule.within.size  # type: ignore[union-attr]
        for detector in neg.leading:
            best = detector.step(attrs, position, local, coord)
            if best is not None and neg.coords is None and best[1] > neg.g:
                neg.g = best[1]
                neg.g_from.append(position + 1)
                neg.g_value.append(best[1])
        first = None
        for detector in neg.trailing:
            best = detector.step(attrs, position, local, coord)
            if best is not None and (first is None or best[0] > first):
                first = best[0]
        if neg.coords is not None:
            return
        if first is not None:
            # a ψ match ending here, starting at local ``first``: held results ending
            # before it are blocked where it lies inside their window
            held = neg.held
            while held and held[0].local < first:
                entry = held.popleft()
                if entry.status is None:
                    self.kill(part, entry, coord)
        # results whose window has passed are kept (no ψ match can come in time)
        self.pass_deadlines(part, self.run.horizon(coord))
        if len(neg.g_from) > 64 and rule.monotone:
            cut = bisect_right(neg.g_value, coord - size) - 1
            if cut > 0:
                del neg.g_from[:cut]
                del neg.g_value[:cut]

    def pass_deadlines(self, part: Partition, coord: Any) -> None:
        """The axis has reached ``coord``: held results whose deadline it is are kept."""
        neg = part.neg
        assert neg is not None
        deadlines = neg.deadlines
        while deadlines and deadlines[0][0] <= coord:
            entry = heapq.heappop(deadlines)[2]
            if entry.status is None:
                self.keep(part, entry)
        while neg.held and neg.held[0].status is not None:
            neg.held.popleft()

    # ------------------------------------------------------------------ verdicts

    def hold(self, part: Partition, local: int, end: int, deadline: Any, item: Any,
             windows: list[Any]) -> Held:
        neg = part.neg
        assert neg is not None
        entry = Held(end, local, deadline, item, windows)
        neg.held.append(entry)
        neg.seq += 1
        heapq.heappush(neg.deadlines, (deadline, neg.seq, entry))
        return entry

    def kill(self, part: Partition, entry: Held, coord: Any) -> None:
        """A trailing ψ match ends at ``coord``, after the entry's end: it blocks the entry
        in every window that holds it (spec §3.1); windows ending at or before ``coord``
        keep it (their rows may not have been closed yet at this step)."""
        run = self.run
        slide = run.rule.slide
        if slide is None or run.mode == MATCHES or run.held_matches:
            if coord < entry.deadline:
                entry.status = False
                entry.windows = []
            else:
                self.keep(part, entry)
            return
        kept = [k for k in entry.windows if run.rule.bounds(k)[1] <= coord]
        if kept:
            self.credit(part, entry, kept)
        entry.status = False
        entry.windows = []

    def keep(self, part: Partition, entry: Held) -> None:
        entry.status = True
        if self.run.mode == MATCHES or self.run.held_matches:
            return
        self.credit(part, entry, entry.windows)
        entry.windows = []

    def credit(self, part: Partition, entry: Held, windows: Iterable[Row]) -> None:
        if self.run.mode == COLLECT:
            self.run.fold(part, entry.item, windows)
            return
        evaluator = part.evaluator
        merge = evaluator.merge  # type: ignore[union-attr]
        rows = evaluator.rows  # type: ignore[union-attr]
        for row in windows:
            old = rows.get(row)
            rows[row] = entry.item if old is None else merge(old, entry.item)

    def settle_window(self, part: Partition, k: Row) -> None:
        """Window ``k`` closes: held contributions to it were not blocked in time."""
        neg = part.neg
        assert neg is not None
        if neg.coords is not None:
            return
        for entry in neg.held:
            if entry.status is None and k in entry.windows:
                self.credit(part, entry, [k])
                entry.windows.remove(k)

    def settle_all(self, part: Partition) -> None:
        """The stream ended: every undecided entry is kept (exact mode: decided now)."""
        neg = part.neg
        assert neg is not None
        if neg.coords is not None:
            self.settle_exact(part)
            return
        for entry in neg.held:
            if entry.status is None:
                self.keep(part, entry)
        neg.held.clear()
        neg.deadlines.clear()

    def settle_exact(self, part: Partition) -> None:
        """Exact mode (the axis may decrease): spec §3.1 on every complex event, now."""
        run = self.run
        rule = run.rule
        neg = part.neg
        assert neg is not None and neg.coords is not None
        coords = neg.coords
        within = rule.within.size  # type: ignore[union-attr]
        leading = [span for d in neg.leading for span in (d.spans or [])]
        trailing = [span for d in neg.trailing for span in (d.spans or [])]
        for i, j, item in neg.found:
            start, end = coords[i], coords[j]
            if run.mode == MATCHES or run.held_matches:
                if not blocked(start, end, i, j, leading, trailing, coords, within):
                    item.status = True
                else:
                    item.status = False
                continue
            windows = run.windows_of(start, end)
            if rule.slide is None:
                kept = [] if blocked(start, end, i, j, leading, trailing, coords, within) else windows
            else:
                kept = [
                    k for k in windows
                    if not blocked(start, end, i, j, leading, trailing, coords, within,
                                   rule.bounds(k))
                ]
            run.fold(part, item, kept)
        neg.found.clear()

    # ------------------------------------------------------------------ complex events

    def negated_matches(self, part: Partition, found: list[ComplexEvent],
                        attrs: dict[str, Any], position: int, local: int,
                        coord: Any, count: bool = True) -> list[Result]:
        """Complex events under leading/trailing negation: filtered, held, released in order."""
        run = self.run
        neg = part.neg
        assert neg is not None
        size = run.rule.within.size  # type: ignore[union-attr]
        key = part.key
        evaluator = part.evaluator
        for ce in found:
            match = Match(key, ce)
            if neg.coords is not None:
                entry = Held(position, local, None, match, [])
                neg.found.append((neg.positions[ce.start], local, entry))  # type: ignore[index]
                run.order.append(entry)
                continue
            if neg.leading and coord - neg.g_at(ce.start) < size:
                continue
            if not neg.trailing:
                entry = Held(position, local, None, match, [])
                entry.status = True
                run.order.append(entry)
                continue
            start = evaluator.coord_of(ce.start)  # type: ignore[union-attr]
            run.order.append(self.hold(part, local, position, start + size, match, [None]))
        self.detect(part, attrs, position, local, coord)
        return self.release(count)

    def release(self, count: bool = True, final: bool = False, threshold: Any = None) -> list[Result]:
        """Held complex events whose verdict is in, up to the first undecided one
        (``count``: they are results handed back).  With AFTER MATCH SKIP the kept ones
        wait for start order (:meth:`release_skipped`; ``final``: the stream ended;
        ``threshold``: runs whose every start is at most it are dead)."""
        run = self.run
        out: list[Result] = []
        order = run.order
        skip = run.query.skip is not None
        while order and order[0].status is not None:
            entry = order.popleft()
            if entry.status:
                if skip:
                    self.skips.hold(run.partitions[entry.item.key], entry.item.event)
                else:
                    out.append(entry.item)
        if skip:
            released = self.release_skipped(final, threshold)
            out.extend(self.skips.in_output_order(released) if count else released)
        if count:
            run.emitted += len(out)
        return out

    def release_skipped(self, final: bool, threshold: Any) -> list[Result]:
        """Under leading/trailing NOT: per partition, the held kept complex events before
        which no live run and no undecided complex event starts, in start order."""
        undecided: dict[Key, int] = {}
        for entry in self.run.order:
            if entry.status is None:
                match = entry.item
                old = undecided.get(match.key)
                if old is None or match.event.start < old:
                    undecided[match.key] = match.event.start
        out: list[Result] = []
        for part in self.run.partitions.values():
            if not part.pending:
                continue
            kept = self.skips.release_held(
                part, first=undecided.get(part.key), everything=final, live=not final,
                threshold=threshold,
            )
            out.extend(Match(part.key, ce) for ce in kept)
        return out

    def fold_released(self, released: list[Result]) -> None:
        """Mode COLLECT with :attr:`RunContext.held_matches`: count the released complex events."""
        for match in released:
            assert isinstance(match, Match)
            self.run.fold(self.run.partitions[match.key], match.event, [None])

    def finish_matches(self) -> list[Result]:
        """The stream ended (mode MATCHES): every held complex event, decided, in order."""
        for part in self.run.partitions.values():
            if part.neg is not None:
                self.settle_all(part)
        out = self.release(final=True)
        if self.run.order:
            raise AssertionError("held complex events left undecided at the end")
        return out

    # ------------------------------------------------------------------ RETURN rows

    def negated_collect(self, part: Partition, found: list[ComplexEvent], local: int,
                        coord: Any) -> None:
        """Mode COLLECT under leading/trailing negation."""
        run = self.run
        neg = part.neg
        assert neg is not None
        size = run.rule.within.size  # type: ignore[union-attr]
        slide = run.rule.slide
        evaluator = part.evaluator
        for ce in found:
            start = evaluator.coord_of(ce.start)  # type: ignore[union-attr]
            if neg.coords is not None:
                neg.found.append((neg.positions[ce.start], local, ce))  # type: ignore[index]
                continue
            windows = run.windows_of(start, coord)
            if neg.leading:
                g = neg.g_at(ce.start)
                if g is not NO_MATCH:
                    if slide is None:
                        windows = [] if coord - g < size else windows
                    else:
                        windows = [k for k in windows if k * slide.size > g]
            if not windows:
                continue
            if not neg.trailing:
                run.fold(part, ce, windows)
                continue
            deadline = start + size if slide is None else max(run.rule.bounds(k)[1] for k in windows)
            self.hold(part, local, 0, deadline, ce, windows)

    def hold_vectors(self, part: Partition, local: int, coord: Any) -> None:
        """Mode PROPAGATE with trailing negation: this step's final vectors are held."""
        neg = part.neg
        assert neg is not None
        if not neg.trailing:
            return
        rule = part.rule
        assert isinstance(rule, LeadingRule)
        rows = part.evaluator.rows  # type: ignore[union-attr]
        held = [row for row in rows if isinstance(row, tuple) and row and row[0] == "held"]
        size = self.run.rule.within.size  # type: ignore[union-attr]
        slide = self.run.rule.slide
        for row in held:
            vec = rows.pop(row)
            c = row[1]
            windows = list(rule.kept_targets(c, coord))
            if not windows:
                continue
            if slide is None:
                deadline = c[0] + size
            else:
                deadline = max(self.run.rule.bounds(k)[1] for k in windows)
            self.hold(part, local, 0, deadline, vec, windows)
