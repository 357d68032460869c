"""SELECT (spec §6.2) inside the runner: which complex events ending at one step are kept."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.partitions import Partition
from acel.acea.engine.windows import WindowRule

from acel.lang.ast import Query
from acel.lang.errors import AcelError
from acel.lang.events import ComplexEvent
from acel.lang.selection import positions, select_at_end


class Selection:
    """SELECT (spec §6.2) and AFTER MATCH SKIP inside the runner.

    The strategies choose among the complex events ending at one position that
    pass WITHIN (spec §6.2, amended): the enumerator's own window already gives
    those, so old starts are dropped as without a strategy.  STRICT is a filter on each
    complex event, on positions inside the sub-stream: when the runner sees global
    positions (PARTITION BY, positions given) each partition keeps the global
    positions of its recent events (:attr:`Partition.seen`; the last ``n`` under
    ``WITHIN n EVENTS``, all of them otherwise).  The skip walks each sub-stream's
    complex events in start order (spec §6.3): a complex event is held until no run
    with an earlier start can still complete (:class:`acel.acea.engine.skip_order.SkipOrder`).
    Under leading/trailing NOT, undecided complex events with an earlier start hold
    it too.  With SLIDE (a strategy or a skip per window) the runner replays the
    sub-stream at the end instead (:attr:`Runner.replay`).
    """

    __slots__ = ("select", "skip", "active", "within", "slide", "strict_local", "keep")

    def __init__(self, query: Query, starts: range | None, global_positions: bool) -> None:
        self.strict_local = query.select == "STRICT" and global_positions
        within = query.within
        self.keep = (
            int(within.size) + 1 if within is not None and within.attr is None else None
        )
        """How many recent positions a partition keeps for STRICT (``None``: all)."""
        self.select = query.select
        self.skip = query.skip
        self.active = query.select != "ALL" or query.skip is not None
        self.within = query.within
        self.slide = query.slide is not None
        if starts is not None and (query.skip is not None or query.select in ("NEXT", "LAST", "MAX")):
            raise AcelError(
                "SELECT NEXT/LAST/MAX and AFTER MATCH SKIP compare complex events with different "
                "starts: they cannot run on start-position slices"
            )

    def prune(self) -> str | None:
        """What the enumerator may prune for the strategy (``Enumerator._pruned``):
        STRICT and MAX always (MAX less under WITHIN); NEXT and LAST except per SLIDE
        window (the step's best run may lie outside a window that holds a worse one;
        under WITHIN they keep the best runs of each start, as the window may expire
        the best run)."""
        if self.select in ("STRICT", "MAX") or (self.select in ("NEXT", "LAST") and not self.slide):
            return self.select
        return None

    def enumeration_rule(self, rule: WindowRule) -> WindowRule:
        """The enumerator's window: the query's own (the strategy chooses inside it)."""
        return rule

    def see(self, part: Partition, position: int) -> None:
        """STRICT on global positions: note the partition's event at ``position``."""
        seen = part.seen
        seen.append(position)
        if self.keep is not None and len(seen) > 2 * self.keep:
            del seen[: len(seen) - self.keep]

    @staticmethod
    def strict(part: Partition, ce: ComplexEvent) -> bool:
        """STRICT in the partition's own numbering: ``C``'s events are all the partition's
        events from ``start(C)`` to ``end(C)`` (the event just read)."""
        d = positions(ce)
        if ce.start not in d or ce.end not in d:
            return False
        seen = part.seen
        i = bisect_left(seen, ce.start)
        return i < len(seen) and seen[i] == ce.start and len(d) == len(seen) - i

    def chosen(
        self, part: Partition, found: list[ComplexEvent], evaluator: Enumerator, coord: Any
    ) -> list[ComplexEvent]:
        """This step's complex events (all ending here and within WITHIN) after SELECT,
        in output order."""
        if not found:
            return found
        if self.strict_local:
            kept = [ce for ce in found if self.strict(part, ce)]
        else:
            kept = select_at_end(self.select, found)
        kept.sort(key=ComplexEvent.sort_key)
        return kept
