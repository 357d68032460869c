"""RETURN rows in the runner: windows opened by events, closed when final, turned into rows.

Shared by the two RETURN strategies (:mod:`acel.acea.engine.mode_collect`,
:mod:`acel.acea.engine.mode_propagate`): a SLIDE window's row is final when the
partition's axis has passed its end (or at :meth:`Runner.advance`/:meth:`Runner.finish`);
without SLIDE the partition has one row, handed back at the end.
"""

from __future__ import annotations

from typing import Any

from acel.acea.engine.closures import TrendItem
from acel.acea.engine.negation_settlement import Settlement
from acel.acea.engine.partitions import Partition
from acel.acea.engine.run_context import COLLECT, Result, RunContext
from acel.acea.engine.trend import Vec
from acel.acea.engine.windows import Row

from acel.lang.ast import ReturnAgg
from acel.lang.clauses import TrendAccumulator, TrendRow
from acel.lang.events import ComplexEvent
from acel.lang.selection import is_strict, select, skip_filter


class WindowRows:
    """The RETURN rows of one runner's partitions."""

    __slots__ = ("run", "settlement", "index")

    def __init__(self, run: RunContext, settlement: Settlement) -> None:
        self.run = run
        self.settlement = settlement
        self.index = {item: n for n, item in enumerate(run.items, start=1)}
        """Mode PROPAGATE: where each trend item sits in a vector."""

    def open_windows(self, part: Partition, coord: Any) -> None:
        """SLIDE: the windows that hold an event at ``coord`` are open in the partition."""
        rule = self.run.rule
        if rule.slide is not None:
            for k in rule.windows_holding(coord):
                part.open[k] = None

    def after_step(self, part: Partition, attrs: dict[str, Any], position: int, local: int,
                   coord: Any) -> list[Result]:
        """The end of a step: the negation detectors read the event, then the rows now
        final (SLIDE on a monotone axis) are handed back."""
        if part.neg is not None:
            self.settlement.detect(part, attrs, position, local, coord)
        rule = self.run.rule
        if rule.slide is not None and rule.monotone:
            return self.close(part, rule.closed_before(self.run.horizon(coord)))
        return []

    def collect(self, part: Partition, ce: ComplexEvent, coord: Any) -> None:
        """Mode COLLECT: fold one complex event into the rows it counts in."""
        start = part.evaluator.coord_of(ce.start)  # type: ignore[union-attr]
        self.run.fold(part, ce, self.run.windows_of(start, coord))

    def close(self, part: Partition, below: int | None) -> list[Result]:
        """The rows of windows ``< below`` (all with ``None``), removed from the partition."""
        out: list[Result] = []
        closing = [k for k in part.open if below is None or k < below]
        for k in sorted(closing):
            if part.neg is not None:
                self.settlement.settle_window(part, k)
            if self.run.per_window:
                self.choose_in_window(part, k)
            del part.open[k]
            out.append(self.row(part, k))
        return out

    def hold_for_windows(self, part: Partition, found: list[ComplexEvent], coord: Any) -> None:
        """SELECT or SKIP per SLIDE window: keep this step's complex events (STRICT, a
        test on each one, right away) until the windows holding them close."""
        selection = self.run.selection
        evaluator = part.evaluator
        for ce in found:
            if selection.select == "STRICT" and not (
                selection.strict(part, ce) if selection.strict_local else is_strict(ce)
            ):
                continue
            start = evaluator.coord_of(ce.start)  # type: ignore[union-attr]
            part.window_held.append((start, coord, ce))

    def choose_in_window(self, part: Partition, k: Row) -> None:
        """Window ``k`` closes: the strategy chooses among its complex events (those with
        both ends in it), the skip walks them in start order, the kept ones count."""
        run = self.run
        lo, hi = run.rule.bounds(k)
        # both ends in the window (spec §6, SLIDE): on an axis that decreases somewhere
        # the end may lie below the start, so each end is tested on both sides
        inside = [ce for s, e, ce in part.window_held if lo <= s < hi and lo <= e < hi]
        strategy = run.selection.select
        chosen = select("ALL" if strategy == "STRICT" else strategy, inside)
        for ce in skip_filter(run.query.skip, chosen):
            run.fold(part, ce, [k])
        after = (k + 1) * run.rule.slide.size  # type: ignore[union-attr]
        part.window_held = [entry for entry in part.window_held if entry[0] >= after]

    def row(self, part: Partition, row: Row) -> TrendRow:
        """The finished RETURN row of one window (``None``: the partition's only row)."""
        run = self.run
        query = run.query
        assert query.returns is not None
        window = None if row is None else run.rule.bounds(row)
        run.emitted += 1
        if run.mode == COLLECT:
            acc = part.accs.pop(row, None) or TrendAccumulator(query.returns)
            return acc.row(part.key, window)
        vec: Vec = part.evaluator.rows.pop(row, run.empty_vector)  # type: ignore[union-attr]
        acc = TrendAccumulator(query.returns)
        acc.count = vec[0]
        for n, item in enumerate(query.returns):
            if isinstance(item, ReturnAgg):
                value = vec[self.index[TrendItem(item.func.upper(), item.var, item.attr)]]
                if value is not None:
                    acc.accs[n] = value
        return acc.row(part.key, window)
