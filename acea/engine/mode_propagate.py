"""The runner's strategy for RETURN rows by propagation (no complex event built).

The partition's propagator (pure Python, :mod:`acel.acea.engine.aggregate`, or the
native core, :mod:`acel.acea.engine.native_trend`) carries trend vectors along the
configurations; under a trailing NOT each step's final vectors are held for
their verdict (:meth:`Settlement.hold_vectors`).
"""

from __future__ import annotations

from typing import Any

from acel.acea.engine.negation_settlement import Settlement
from acel.acea.engine.partitions import Partition
from acel.acea.engine.run_context import Result
from acel.acea.engine.window_rows import WindowRows


class PropagateMode:
    """Mode PROPAGATE: RETURN rows from trend vectors."""

    __slots__ = ("settlement", "rows", "windowed")

    def __init__(self, settlement: Settlement, rows: WindowRows, windowed: bool) -> None:
        self.settlement = settlement
        self.rows = rows
        self.windowed = windowed
        """SLIDE: each event opens windows and may close some."""

    def step(self, part: Partition, attrs: dict[str, Any], position: int, local: int,
             coord: Any) -> list[Result]:
        # the per-event path of the fastest mode: the window work is skipped when there is none
        windowed = self.windowed
        if windowed:
            self.rows.open_windows(part, coord)
        part.evaluator.step(attrs, position, coord)
        if part.neg is not None:
            self.settlement.hold_vectors(part, local, coord)
        elif not windowed:
            return []
        return self.rows.after_step(part, attrs, position, local, coord)
