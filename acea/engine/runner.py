"""The incremental query runner: events in, final results out, state saved and restored.

:class:`Runner` evaluates one checked query (spec §6) over a stream fed in
order, one event (or batch) at a time, and hands back each result as soon as
it is final:

* a complex event when the event that ends it is read (they all end at that
  position, so the output is end-major, spec §12, without any global sort);
* a RETURN row when its window has closed (SLIDE on a monotone axis), or at
  :meth:`Runner.finish` (no SLIDE: one row per partition key).

It routes each event to its PARTITION BY sub-stream, numbers it inside it,
and runs the partition's evaluator: an :class:`Enumerator` for complex events
(or RETURN rows that must be enumerated), a propagator for RETURN rows that
can be counted without building complex events.  The batch
:func:`acel.acea.engine.run` is a loop over this class; so are the command
line's streaming path and the Spark executors.

The window axis of ``WITHIN d ON attr`` must be known to be monotone (never
decreasing inside a partition) for expired work to be dropped.  Callers that
hold the whole stream say so exactly (``monotone=``); a live stream is
assumed monotone and an event that breaks it is a :class:`DataError` naming
its position (sort by the attribute first, ``--time-col``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from acel.acea.engine.aggregate import Propagator, TumblingPropagator, propagator_for
from acel.acea.engine.closures import CompiledAutomaton, TrendItem
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.plan import compiled_for, propagation_applies, trend_items, unambiguous
from acel.acea.engine.trend import Vec, identity_vector
from acel.acea.engine.windows import Row, WindowRule

from acel.ast import Query, ReturnAgg
from acel.clauses import Key, Match, TrendAccumulator, TrendRow
from acel.errors import AcelError, DataError
from acel.events import ComplexEvent
from acel.schema import Schema

Result = Union[Match, TrendRow]
Evaluator = Union[Enumerator, Propagator, TumblingPropagator]

MATCHES = "matches"
"""Mode: complex events out."""
PROPAGATE = "propagate"
"""Mode: RETURN rows by propagation along configurations (no complex event built)."""
COLLECT = "collect"
"""Mode: RETURN rows from enumerated complex events."""


class Partition:
    """One PARTITION BY sub-stream: its evaluator, its open windows, its accumulators."""

    __slots__ = ("key", "evaluator", "local", "last", "open", "accs")

    def __init__(self, key: Key, evaluator: Evaluator) -> None:
        self.key = key
        self.evaluator = evaluator
        self.local = 0
        """Events read so far (the next event's index inside the partition)."""
        self.last: Any = None
        """The window coordinate of the last event (to check monotonicity)."""
        self.open: dict[Row, None] = {}
        """Windows that hold an event of this partition and are not final yet."""
        self.accs: dict[Row, TrendAccumulator] = {}
        """Mode COLLECT: per window, the RETURN accumulator."""


class Runner:
    """One query over one stream, fed incrementally (see the module doc)."""

    def __init__(
        self,
        query: Query,
        schema: Schema,
        *,
        monotone: bool | None = None,
        start_positions: range | None = None,
        trend_mode: str = "auto",
        seeds: Mapping[int, Sequence[Any]] | None = None,
        positions_given: bool = False,
    ) -> None:
        """Prepare a checked query.

        ``monotone``: whether a ``WITHIN … ON attr`` axis never decreases inside
        each partition (``None``: assume it and check every event).
        ``start_positions``: only runs starting at these indices inside each
        partition count (the Spark backend's time slices).
        ``trend_mode`` ``"enumerate"`` forces enumeration for RETURN queries.
        ``seeds``: values the indexed registers take (a stream held in memory),
        so their indexes are built once instead of grown.
        ``positions_given``: callers pass each event's global position (else the
        runner numbers events 0, 1, …).
        """
        self.query = query
        self.schema = schema
        within = query.within
        on_attr = within is not None and within.attr is not None
        self.check_monotone = on_attr and monotone is None
        self.rule = WindowRule(within, query.slide, True if monotone is None else monotone)
        self.starts = start_positions
        self.seeds = seeds
        self.positions_given = positions_given
        self.partition_by = tuple(query.partition_by)
        automaton, ca = compiled_for(query.formula, schema)
        self.items: tuple[TrendItem, ...] = ()
        if query.returns is None:
            self.mode = MATCHES
        elif trend_mode == "auto" and propagation_applies(query, automaton):
            self.mode = PROPAGATE
            self.items = trend_items(query)
            _, ca = compiled_for(query.formula, schema, self.items)
        elif trend_mode in ("auto", "enumerate"):
            self.mode = COLLECT
        else:
            raise AcelError(f"unknown trend mode {trend_mode!r} (auto or enumerate)")
        self.ca: CompiledAutomaton = ca
        self.dedupe = not unambiguous(automaton)
        self.identity_coords = not self.partition_by and not on_attr and not positions_given
        self.partitions: dict[Key, Partition] = {}
        self.events = 0
        """Events pushed so far (including those no partition takes)."""
        self.emitted = 0
        """Results handed back so far."""
        self.finished = False
        self._empty = identity_vector(self.items, 0) if self.mode == PROPAGATE else ()
        self._index = {item: n for n, item in enumerate(self.items, start=1)}

    # ------------------------------------------------------------------ feeding

    def push(self, attrs: dict[str, Any], position: int | None = None) -> list[Result]:
        """Read one event (its attribute map, ``type`` included); the results now final.

        ``position`` is the event's global stream position (spec §1); by default
        the number of events pushed before it.
        """
        if self.finished:
            raise AcelError("the runner has finished: push no more events")
        if position is None:
            position = self.events
        self.events += 1
        if self.partition_by:
            values = tuple(attrs.get(a) for a in self.partition_by)
            if None in values:
                return []  # spec §6: events lacking a partition attribute join no partition
            key: Key = tuple(zip(self.partition_by, values))  # type: ignore[arg-type]
        else:
            key = ()
        part = self.partitions.get(key)
        if part is None:
            part = self.partitions[key] = Partition(key, self._evaluator())
        local = part.local
        part.local = local + 1
        rule = self.rule
        coord = rule.coordinate(attrs, local, position)
        if self.check_monotone and part.last is not None and coord < part.last:
            raise DataError(
                f"event at position {position}: {rule.within.attr} = {coord!r} comes after "  # type: ignore[union-attr]
                f"{part.last!r}; WITHIN … ON {rule.within.attr} on a stream read in one pass "  # type: ignore[union-attr]
                "needs it non-decreasing (sort by it: --time-col)"
            )
        part.last = coord
        evaluator = part.evaluator
        if self.mode == MATCHES:
            found = evaluator.step(attrs, position, coord)  # type: ignore[union-attr]
            if not found:
                return []
            self.emitted += len(found)
            return [Match(key, ce) for ce in found]
        if rule.slide is not None:
            for k in rule.windows_holding(coord):
                part.open[k] = None
        if self.mode == PROPAGATE:
            evaluator.step(attrs, position, coord)
        else:
            for ce in evaluator.step(attrs, position, coord):  # type: ignore[union-attr]
                self._collect(part, ce, coord)
        if rule.slide is not None and rule.monotone:
            return self._close(part, rule.closed_before(coord))
        return []

    def skip(self, attrs: dict[str, Any], position: int | None = None) -> list[Result]:
        """Count an event the automaton cannot use, without reading it (workloads).

        The caller knows that reading it would leave every configuration as it
        is and start no run (:func:`acel.acea.engine.workload.relevant_types`);
        the partition still numbers it, opens its SLIDE windows and closes the
        windows it passes, exactly as :meth:`push` would.
        """
        if position is None:
            position = self.events
        self.events += 1
        if self.partition_by:
            values = tuple(attrs.get(a) for a in self.partition_by)
            if None in values:
                return []
            key: Key = tuple(zip(self.partition_by, values))  # type: ignore[arg-type]
        else:
            key = ()
        part = self.partitions.get(key)
        if part is None:
            part = self.partitions[key] = Partition(key, self._evaluator())
        local = part.local
        part.local = local + 1
        rule = self.rule
        coord = rule.coordinate(attrs, local, position)
        if self.check_monotone and part.last is not None and coord < part.last:
            raise DataError(
                f"event at position {position}: {rule.within.attr} = {coord!r} comes after "  # type: ignore[union-attr]
                f"{part.last!r}; WITHIN … ON {rule.within.attr} needs it non-decreasing "  # type: ignore[union-attr]
                "(sort by it: --time-col)"
            )
        part.last = coord
        if self.mode == MATCHES or rule.slide is None:
            return []
        for k in rule.windows_holding(coord):
            part.open[k] = None
        return self._close(part, rule.closed_before(coord)) if rule.monotone else []

    def push_many(self, events: Iterable[dict[str, Any]]) -> list[Result]:
        """:meth:`push` each event in turn; all the results now final, in order."""
        out: list[Result] = []
        for attrs in events:
            found = self.push(attrs)
            if found:
                out.extend(found)
        return out

    def exhausted(self) -> bool:
        """With ``start_positions``: no run is alive and none may start any more."""
        return self.starts is not None and all(
            p.evaluator.exhausted() for p in self.partitions.values()
        )

    def finish(self) -> list[Result]:
        """The stream has ended: every result still held (RETURN rows), in order."""
        if self.finished:
            return []
        self.finished = True
        if self.mode == MATCHES:
            return []
        if not self.partition_by and () not in self.partitions:
            # the whole stream is one partition, even when it is empty (spec §6)
            self.partitions[()] = Partition((), self._evaluator())
        out: list[Result] = []
        for part in self.partitions.values():
            if self.rule.slide is None:
                out.append(self._row(part, None))
            else:
                out.extend(self._close(part, None))
        return out

    # ------------------------------------------------------------------ helpers

    def _evaluator(self) -> Evaluator:
        if self.mode == PROPAGATE:
            return propagator_for(
                self.ca, self.items, self.rule, starts=self.starts, seeds=self.seeds
            )
        return Enumerator(
            self.ca,
            self.rule,
            dedupe=self.dedupe,
            identity_coords=self.identity_coords,
            starts=self.starts,
        )

    def _collect(self, part: Partition, ce: ComplexEvent, coord: Any) -> None:
        """Mode COLLECT: fold one complex event into the rows it counts in."""
        assert self.query.returns is not None
        rule = self.rule
        if rule.slide is None:
            rows: Iterable[Row] = (None,)
        else:
            start = part.evaluator.coord_of(ce.start)  # type: ignore[union-attr]
            lo, hi = min(start, coord), max(start, coord)
            rows = range(rule.kmin(hi), rule.kmax(lo) + 1) if lo >= 0 else ()
        for row in rows:
            acc = part.accs.get(row)
            if acc is None:
                acc = part.accs[row] = TrendAccumulator(self.query.returns)
            acc.add(ce)

    def _close(self, part: Partition, below: int | None) -> list[Result]:
        """The rows of windows ``< below`` (all with ``None``), removed from the partition."""
        out: list[Result] = []
        closing = [k for k in part.open if below is None or k < below]
        for k in sorted(closing):
            del part.open[k]
            out.append(self._row(part, k))
        return out

    def _row(self, part: Partition, row: Row) -> TrendRow:
        """The finished RETURN row of one window (``None``: the partition's only row)."""
        query = self.query
        assert query.returns is not None
        window = None if row is None else self.rule.bounds(row)
        self.emitted += 1
        if self.mode == COLLECT:
            acc = part.accs.pop(row, None) or TrendAccumulator(query.returns)
            return acc.row(part.key, window)
        vec: Vec = part.evaluator.rows.pop(row, self._empty)  # type: ignore[union-attr]
        acc = TrendAccumulator(query.returns)
        acc.count = vec[0]
        for n, item in enumerate(query.returns):
            if isinstance(item, ReturnAgg):
                value = vec[self._index[TrendItem(item.func.upper(), item.var, item.attr)]]
                if value is not None:
                    acc.accs[n] = value
        return acc.row(part.key, window)
