"""The runner's strategy for RETURN rows from enumerated complex events (spec §6.1).

Used when propagation does not apply (an ambiguous pattern, SELECT or SKIP,
an axis that may decrease under NOT, or ``trend_mode="enumerate"``): each
step's complex events are chosen as in mode MATCHES, then folded into the
accumulators of the rows they count in.
"""

from __future__ import annotations

from typing import Any

from acel.acea.engine.negation_settlement import Settlement
from acel.acea.engine.partitions import Partition
from acel.acea.engine.run_context import Result, RunContext
from acel.acea.engine.skip_order import SkipOrder
from acel.acea.engine.window_rows import WindowRows


class CollectMode:
    """Mode COLLECT: RETURN rows from the complex events of each step."""

    __slots__ = ("run", "skips", "settlement", "rows")

    def __init__(self, run: RunContext, skips: SkipOrder, settlement: Settlement,
                 rows: WindowRows) -> None:
        self.run = run
        self.skips = skips
        self.settlement = settlement
        self.rows = rows

    def step(self, part: Partition, attrs: dict[str, Any], position: int, local: int,
             coord: Any) -> list[Result]:
        run = self.run
        rows = self.rows
        rows.open_windows(part, coord)
        evaluator = part.evaluator
        neg = part.neg
        selection = run.selection
        found = evaluator.step(attrs, position, coord)  # type: ignore[union-attr]
        if run.per_window:
            rows.hold_for_windows(part, found, coord)
            found = []
        elif selection.active:
            found = selection.chosen(part, found, evaluator, coord)  # type: ignore[arg-type]
            if run.held_matches:
                settlement = self.settlement
                settlement.fold_released(
                    settlement.negated_matches(part, found, attrs, position, local, coord, count=False)
                )
                return []
            if neg is None and selection.skip is not None:
                found = self.skips.in_start_order(part, found, local, coord)
        if neg is None:
            for ce in found:
                rows.collect(part, ce, coord)
        else:
            self.settlement.negated_collect(part, found, local, coord)
        return rows.after_step(part, attrs, position, local, coord)
