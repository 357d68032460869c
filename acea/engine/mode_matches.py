"""The runner's strategy for complex events out (no RETURN; spec §6, §12).

Each event's complex events are enumerated, chosen by SELECT, walked in start
order by AFTER MATCH SKIP, and handed back at once, or held for a
leading/trailing NOT (:mod:`acel.acea.engine.negation_settlement`).
"""

from __future__ import annotations

from typing import Any

from acel.acea.engine.negation_settlement import Settlement
from acel.acea.engine.partitions import Partition
from acel.acea.engine.run_context import Result, RunContext
from acel.acea.engine.skip_order import SkipOrder

from acel.lang.clauses import Match


class MatchesMode:
    """Mode MATCHES: complex events out, as soon as they are final."""

    __slots__ = ("run", "skips", "settlement")

    def __init__(self, run: RunContext, skips: SkipOrder, settlement: Settlement) -> None:
        self.run = run
        self.skips = skips
        self.settlement = settlement

    def step(self, part: Partition, attrs: dict[str, Any], position: int, local: int,
             coord: Any) -> list[Result]:
        evaluator = part.evaluator
        neg = part.neg
        selection = self.run.selection
        found = evaluator.step(attrs, position, coord)  # type: ignore[union-attr]
        if selection.active:
            found = selection.chosen(part, found, evaluator, coord)  # type: ignore[arg-type]
            if neg is None and selection.skip is not None:
                kept = self.skips.in_start_order(part, found, local, coord)
                key = part.key
                out = self.skips.in_output_order([Match(key, ce) for ce in kept])
                self.run.emitted += len(out)
                return out
        if neg is None:
            if not found:
                return []
            self.run.emitted += len(found)
            key = part.key
            return [Match(key, ce) for ce in found]
        return self.settlement.negated_matches(part, found, attrs, position, local, coord)
