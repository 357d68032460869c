"""What the runner's parts share: the query's set-up and the stream's progress.

:class:`RunContext` is the public face of a :class:`~acel.acea.engine.runner.Runner`
to the modules that work on its state without importing it: the strategies of
each mode, negation settlement, the skip's start order, and the state codec
(:mod:`acel.acea.engine.state`, :mod:`acel.acea.engine.state_check`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any, Protocol, Union

from acel.acea.engine.closures import CompiledAutomaton, TrendItem
from acel.acea.engine.held import Held
from acel.acea.engine.output_order import OutputOrder
from acel.acea.engine.partitions import Partition
from acel.acea.engine.run_selection import Selection
from acel.acea.engine.trend import Vec
from acel.acea.engine.windows import Row, WindowRule

from acel.lang.ast import Query
from acel.lang.clauses import Key, Match, TrendAccumulator, TrendRow
from acel.lang.events import ComplexEvent
from acel.lang.schema import Schema

Result = Union[Match, TrendRow]

MATCHES = "matches"
"""Mode: complex events out."""
PROPAGATE = "propagate"
"""Mode: RETURN rows by propagation along configurations (no complex event built)."""
COLLECT = "collect"
"""Mode: RETURN rows from enumerated complex events."""


class RunContext:
    """The runner's set-up and progress, as its parts and its saved state see them."""

    query: Query
    schema: Schema
    options: dict[str, Any]
    """How the runner was made (saved with its state)."""
    rule: WindowRule
    mode: str
    """:data:`MATCHES`, :data:`PROPAGATE` or :data:`COLLECT`."""
    ca: CompiledAutomaton
    leading: list[CompiledAutomaton]
    trailing: list[CompiledAutomaton]
    negated: bool
    exact_negation: bool
    partition_by: tuple[str, ...]
    selection: Selection
    items: tuple[TrendItem, ...]
    empty_vector: Vec
    """Mode PROPAGATE: the identity trend vector (a row no run counted in)."""
    held_matches: bool
    per_window: bool
    partitions: dict[Key, Partition]
    events: int
    emitted: int
    finished: bool
    order: deque[Held]
    released: OutputOrder
    """AFTER MATCH SKIP, complex events out: kept ones waiting for §12 order."""
    replayed: list[tuple[dict[str, Any], int]]

    def new_partition(self, key: Key) -> Partition:
        """A fresh partition of this query (its evaluator and negation state empty)."""
        raise NotImplementedError

    def fold(self, part: Partition, ce: ComplexEvent, rows: Iterable[Row]) -> None:
        """Mode COLLECT: count one complex event in the RETURN accumulators of ``rows``."""
        assert self.query.returns is not None
        for row in rows:
            acc = part.accs.get(row)
            if acc is None:
                acc = part.accs[row] = TrendAccumulator(self.query.returns)
            acc.add(ce)

    def windows_of(self, start: Any, coord: Any) -> list[Row]:
        """The rows a complex event from coordinate ``start`` to ``coord`` counts in."""
        rule = self.rule
        if rule.slide is None:
            return [None]
        lo, hi = min(start, coord), max(start, coord)
        return list(range(rule.kmin(hi), rule.kmax(lo) + 1))

    def horizon(self, coord: Any) -> Any:
        """The smallest coordinate a later event of the partition can have (monotone
        axis): the next position for ``EVENTS``, the same value for ``ON attr`` (ties).
        Whatever needs only coordinates below it is final now."""
        within = self.rule.within
        return coord + 1 if within is not None and within.attr is None else coord


class ModeStrategy(Protocol):
    """How one mode reads an event its partition router has numbered (spec §6)."""

    def step(self, part: Partition, attrs: dict[str, Any], position: int, local: int,
             coord: Any) -> list[Result]:
        """Read the event at ``position`` (``local`` in ``part``, at ``coord``); the
        results now final."""
        ...
