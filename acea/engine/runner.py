"""The incremental query runner: events in, final results out, state saved and restored.

:class:`Runner` evaluates one checked query (spec §6) over a stream fed in
order, one event at a time, and hands back each result as soon as it is
final:

* a complex event when the event that ends it is read (they all end at that
  position, so the output is end-major, spec §12, without any global sort);
  with a trailing negation (spec §3.1), when its window has closed with no
  ``ψ`` match after it (it is held until then, and so are the complex events
  ending after it, to keep the order);
* a RETURN row when its window has closed (SLIDE on a monotone axis), or at
  :meth:`Runner.finish` (no SLIDE: one row per partition key).

It routes each event to its PARTITION BY sub-stream, numbers it inside it,
and runs the partition's evaluator: an :class:`Enumerator` for complex events
(or RETURN rows that must be enumerated), a propagator for RETURN rows that
can be counted without building complex events; leading and trailing
negation run beside it (:mod:`acel.acea.engine.negation`).  The batch
:func:`acel.acea.engine.run` is a loop over this class; so are the command
line's streaming path and the Spark executors.

The window axis of ``WITHIN d ON attr`` must be known to be monotone (never
decreasing inside a partition) for expired work to be dropped.  Callers that
hold the whole stream say so exactly (``monotone=``); a live stream is
assumed monotone and an event that breaks it is a :class:`DataError` naming
its position (sort by the attribute first, ``--time-col``).  A live stream's
watermark on that attribute can be passed in with :meth:`Runner.advance`: it
releases what the axis alone makes final (SLIDE windows that have ended,
trailing-NOT results whose window has passed) in partitions that get no more
events; :meth:`Runner.next_deadline` says when that will next happen.

:meth:`Runner.save` and :meth:`Runner.restore` turn the whole state into
bytes and back (:mod:`acel.acea.engine.state`), for checkpoints and Spark's
state store.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Union

from acel.acea.engine.aggregate import Propagator, TumblingPropagator, propagator_for
from acel.acea.engine.closures import CompiledAutomaton, TrendItem
from acel.acea.engine.dag import Builder
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.held import Held as _Held
from acel.acea.engine.native_keyed import KeyedCores
from acel.acea.engine.native_trend import (
    NativePropagator,
    choose,
    column_names,
    native_module,
    python_evaluators,
    type_names,
)
from acel.acea.engine.negation import Detector, blocked
from acel.acea.engine.plan import (
    compiled_for,
    propagation_applies,
    trend_compiled,
    trend_items,
    unambiguous,
)
from acel.acea.engine.trend import Vec, identity_vector
from acel.acea.engine.windows import Row, WindowRule

from acel.lang.ast import Query, ReturnAgg, top_negation
from acel.lang.clauses import Key, Match, TrendAccumulator, TrendRow
from acel.lang.errors import AcelError, DataError
from acel.lang.events import ComplexEvent, Event
from acel.lang.schema import Schema
from acel.lang.selection import (
    Skipper,
    is_strict,
    positions,
    select,
    select_at_end,
    skip_filter,
    start_order_key,
)

Result = Union[Match, TrendRow]
Evaluator = Union[Enumerator, Propagator, TumblingPropagator]

MATCHES = "matches"
"""Mode: complex events out."""
PROPAGATE = "propagate"
"""Mode: RETURN rows by propagation along configurations (no complex event built)."""
COLLECT = "collect"
"""Mode: RETURN rows from enumerated complex events."""

NO_MATCH = -math.inf
"""``G`` before any leading ``ψ`` match: blocks nothing."""


def _least(a: Any, b: Any) -> Any:
    """The smaller of two coordinates, ``None`` being none."""
    return b if a is None or b < a else a


# ------------------------------------------------------------------ negation state


class _Negation:
    """One partition's leading/trailing negation (see :mod:`acel.acea.engine.negation`)."""

    __slots__ = ("leading", "trailing", "g", "g_from", "g_value", "held", "deadlines", "seq",
                 "coords", "found", "positions")

    def __init__(self, leading: list[Detector], trailing: list[Detector], exact: bool) -> None:
        self.leading = leading
        self.trailing = trailing
        self.g: Any = NO_MATCH
        """The latest start coordinate of a leading ψ match ending before the next event."""
        self.g_from: list[int] = []
        self.g_value: list[Any] = []
        """``G`` by global position: from ``g_from[n]`` on it is ``g_value[n]``."""
        self.held: deque[_Held] = deque()
        """Undecided results in the order of their end."""
        self.deadlines: list[tuple[Any, int, _Held]] = []
        self.seq = 0
        self.coords: dict[int, Any] | None = {} if exact else None
        """Exact mode (an axis that may decrease): coordinate per local position."""
        self.found: list[tuple[int, int, Any]] = []
        """Exact mode: ``(i, j, item)`` of every complex event, local positions."""
        self.positions: dict[int, int] | None = {} if exact else None
        """Exact mode: global → local position."""

    def g_at(self, position: int) -> Any:
        """``G(i)`` for a run starting at global position ``position``."""
        n = bisect_right(self.g_from, position)
        return self.g_value[n - 1] if n else NO_MATCH


class _LeadingRule(WindowRule):
    """A partition's window rule with start classes that remember ``G`` (leading NOT)."""

    def __init__(self, base: WindowRule, negation: _Negation, trailing: bool) -> None:
        super().__init__(base.within, base.slide, base.monotone)
        object.__setattr__(self, "negation", negation)
        object.__setattr__(self, "trailing", trailing)

    def single_class(self) -> bool:
        return False

    def class_of(self, coord: Any) -> Any:
        base = WindowRule.class_of(self, coord)
        return None if base is None else (base, self.negation.g)  # type: ignore[attr-defined]

    def class_alive(self, c: Any, coord: Any) -> bool:
        return WindowRule.class_alive(self, c[0], coord)

    def targets(self, c: Any, coord: Any) -> Sequence[Row]:
        if self.trailing:  # type: ignore[attr-defined]
            return (("held", c),)
        return self.kept_targets(c, coord)

    def kept_targets(self, c: Any, coord: Any) -> Sequence[Row]:
        """The rows a run of class ``c`` ending at ``coord`` counts in, leading NOT applied."""
        base, g = c
        rows = WindowRule.targets(self, base, coord)
        if g is NO_MATCH or self.within is None:
            return rows
        if self.slide is None:
            return rows if coord - g >= self.within.size else ()
        return [k for k in rows if k * self.slide.size > g]


# ------------------------------------------------------------------ partitions


class _Selection:
    """SELECT (spec §6.2) and AFTER MATCH SKIP inside the runner.

    The strategies choose among the complex events ending at one position that
    pass WITHIN (spec §6.2, amended): the enumerator's own window already gives
    those, so old starts are dropped as without a strategy.  STRICT is a filter on each
    complex event, on positions inside the sub-stream: when the runner sees global
    positions (PARTITION BY, positions given) each partition keeps the global
    positions of its recent events (:attr:`Partition.seen`; the last ``n`` under
    ``WITHIN n EVENTS``, all of them otherwise).  The skip walks each sub-stream's
    complex events in start order (spec §6.3): a complex event is held until no run
    with an earlier start can still complete (:meth:`Runner._skip_in_start_order`).
    Under leading/trailing NOT, undecided complex events with an earlier start hold
    it too.  With SLIDE (a strategy or a skip per window) the runner replays the
    sub-stream at the end instead (:attr:`Runner.replay`).
    """

    __slots__ = ("select", "skip", "active", "within", "strict_local", "keep")

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
        if starts is not None and (query.skip is not None or query.select in ("NEXT", "LAST", "MAX")):
            raise AcelError(
                "SELECT NEXT/LAST/MAX and AFTER MATCH SKIP compare complex events with different "
                "starts: they cannot run on start-position slices"
            )

    def prune(self) -> str | None:
        """What the enumerator may prune for the strategy (``Enumerator._pruned``):
        STRICT and MAX always (MAX less under WITHIN); NEXT and LAST without WITHIN (a
        window may expire the best run)."""
        if self.select in ("STRICT", "MAX") or (self.select in ("NEXT", "LAST") and self.within is None):
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


class Partition:
    """One PARTITION BY sub-stream: its evaluator, its open windows, its accumulators."""

    __slots__ = (
        "key", "evaluator", "local", "last", "open", "accs", "neg", "rule", "skipper", "seen",
        "pending", "pending_seq", "window_held",
    )

    def __init__(self, key: Key, evaluator: Evaluator, rule: WindowRule, neg: _Negation | None) -> None:
        self.skipper: Skipper | None = None
        """AFTER MATCH SKIP: the resume point of this sub-stream."""
        self.pending: list[tuple[Any, ...]] = []
        """AFTER MATCH SKIP: complex events held for start order, a heap of
        ``(start order key, seq, start coordinate, complex event)``."""
        self.pending_seq = 0
        self.window_held: list[tuple[Any, Any, ComplexEvent]] = []
        """SELECT or SKIP per SLIDE window: ``(start coordinate, end coordinate, C)`` of the
        complex events that a window still open may hold (:meth:`Runner._close`)."""
        self.seen: list[int] = []
        """SELECT STRICT on global positions: those of the partition's recent events."""
        self.key = key
        self.evaluator = evaluator
        self.rule = rule
        self.neg = neg
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
        build: Builder | None = None,
        watch: Callable[[int], None] | None = None,
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
        ``build``: what a complex event becomes in a result (complex-event mode
        only; by default a :class:`~acel.lang.events.ComplexEvent`; the command line
        builds its JSON text directly, :class:`acel.io.lines.LineBuilder`).
        ``watch``: called inside a step that enumerates many complex events
        (see :attr:`Enumerator.watch`), e.g. a memory guard that may raise.
        """
        self.query = query
        self.schema = schema
        self.options = {
            "monotone": monotone,
            "start_positions": start_positions,
            "trend_mode": trend_mode,
            "positions_given": positions_given,
        }
        """How the runner was made (saved with its state)."""
        within = query.within
        on_attr = within is not None and within.attr is not None
        self.check_monotone = on_attr and monotone is None
        self.rule = WindowRule(within, query.slide, True if monotone is None else monotone)
        self.starts = start_positions
        self.seeds = seeds
        self.positions_given = positions_given
        self.partition_by = tuple(query.partition_by)
        top = top_negation(query.formula)
        self.body = top.body
        self.negated = top.negated
        if self.negated and within is None:
            raise AcelError(
                "NOT at the start or the end of the pattern (leading/trailing negation) needs "
                "WITHIN: ψ is looked for inside each complex event's window (spec §3.1)"
            )
        self.exact_negation = self.negated and not self.rule.monotone
        self.leading = [compiled_for(psi, schema)[1] for psi in top.leading]
        self.trailing = [compiled_for(psi, schema)[1] for psi in top.trailing]
        automaton, ca = compiled_for(self.body, schema)
        self.selection = _Selection(
            query, start_positions, bool(query.partition_by) or positions_given
        )
        self.items: tuple[TrendItem, ...] = ()
        if query.returns is None:
            self.mode = MATCHES
        elif (
            trend_mode == "auto"
            and not self.exact_negation
            and not self.selection.active
            and propagation_applies(query, automaton)
        ):
            self.mode = PROPAGATE
            self.items = trend_items(query)
            ca = trend_compiled(self.body, schema, self.items)  # counters unfolded (issue 35)
        elif trend_mode in ("auto", "enumerate"):
            self.mode = COLLECT
        else:
            raise AcelError(f"unknown trend mode {trend_mode!r} (auto or enumerate)")
        self.ca: CompiledAutomaton = ca
        self.native = (
            choose(ca, self.items, self.rule, start_positions, bool(self.negated))
            if self.mode == PROPAGATE else None
        )
        """The native core's plan (issue 23), ``None``: the pure-Python propagator."""
        self.keyed = KeyedCores(self.partition_by) if self.native is not None and self.partition_by else None
        """PARTITION BY on native cores: the table the batch feeds route events with."""
        self.build = build if self.mode == MATCHES and not self.selection.active else None
        self.held_matches = (
            self.mode == COLLECT and query.skip is not None and self.negated and query.slide is None
        )
        """RETURN with a skip and leading/trailing NOT (no SLIDE): complex events are held
        and released in output order as in mode MATCHES (the skip needs that order),
        then counted."""
        self.per_window = self.selection.active and query.slide is not None
        """A strategy or a skip per SLIDE window (spec §6.2, §6.3): complex events wait in
        their partition until a window closes, which then chooses among its own."""
        self.replay = self.per_window and self.negated
        """The same under leading/trailing NOT: the events are kept and the query runs on
        them at the end (the naive runs of :mod:`acel.acea.engine.naive`, the same
        clauses as the oracle), so these rows are final only then."""
        self.replayed: list[tuple[dict[str, Any], int]] = []
        """In :attr:`replay` mode: every event pushed, with its global position."""
        self.watch = watch
        self.dedupe = not unambiguous(automaton)
        self.identity_coords = not self.partition_by and not on_attr and not positions_given
        self.partitions: dict[Key, Partition] = {}
        self.events = 0
        """Events pushed so far (including those no partition takes)."""
        self.emitted = 0
        """Results handed back so far."""
        self.finished = False
        self.order: deque[_Held] = deque()
        """Trailing negation, complex events: every held result in global end order."""
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
        if self.replay:
            self.events += 1
            self.replayed.append((attrs, position))
            return []
        entered = self._enter(attrs, position)
        if entered is None:
            return []
        part, local, coord = entered
        rule = self.rule
        neg = part.neg
        if neg is not None and neg.coords is not None:
            neg.coords[local] = coord
            assert neg.positions is not None
            neg.positions[position] = local
        evaluator = part.evaluator
        mode = self.mode
        selection = self.selection
        if selection.strict_local:
            selection.see(part, position)
        if mode == MATCHES:
            found = evaluator.step(attrs, position, coord)  # type: ignore[union-attr]
            if selection.active:
                found = selection.chosen(part, found, evaluator, coord)  # type: ignore[arg-type]
                if neg is None and selection.skip is not None:
                    found = self._skip_in_start_order(part, found, local, coord)
            if neg is None:
                if not found:
                    return []
                self.emitted += len(found)
                key = part.key
                return [Match(key, ce) for ce in found]
            return self._negated_matches(part, found, attrs, position, local, coord)
        if rule.slide is not None:
            for k in rule.windows_holding(coord):
                part.open[k] = None
        if mode == PROPAGATE:
            evaluator.step(attrs, position, coord)
            if neg is not None:
                self._hold_vectors(part, local, coord)
        else:
            found = evaluator.step(attrs, position, coord)  # type: ignore[union-attr]
            if self.per_window:
                self._hold_for_windows(part, found, coord)
                found = []
            elif selection.active:
                found = selection.chosen(part, found, evaluator, coord)  # type: ignore[arg-type]
                if self.held_matches:
                    self._fold_released(
                        self._negated_matches(part, found, attrs, position, local, coord, count=False)
                    )
                    return []
                if neg is None and selection.skip is not None:
                    found = self._skip_in_start_order(part, found, local, coord)
            if neg is None:
                for ce in found:
                    self._collect(part, ce, coord)
            else:
                self._negated_collect(part, found, local, coord)
        if neg is not None:
            self._detect(part, attrs, position, local, coord)
        if rule.slide is not None and rule.monotone:
            return self._close(part, rule.closed_before(self._horizon(coord)))
        return []

    def skip(self, attrs: dict[str, Any], position: int | None = None) -> list[Result]:
        """Count an event the automaton cannot use, without reading it (workloads).

        The caller knows that reading it would leave every configuration as it
        is and start no run (:func:`acel.acea.engine.workload.relevant_types`);
        the partition still numbers it, opens its SLIDE windows and closes the
        windows it passes, exactly as :meth:`push` would.  With leading or
        trailing negation every event is read (``ψ`` may match it).
        """
        if self.negated or self.replay:
            return self.push(attrs, position)
        if position is None:
            position = self.events
        entered = self._enter(attrs, position)
        if entered is None:
            return []
        part, local, coord = entered
        if self.selection.strict_local:
            self.selection.see(part, position)
        rule = self.rule
        if self.mode == MATCHES or rule.slide is None:
            return []
        for k in rule.windows_holding(coord):
            part.open[k] = None
        if not rule.monotone:
            return []
        return self._close(part, rule.closed_before(self._horizon(coord)))

    # ------------------------------------------------------------ skip in start order

    def _skip_in_start_order(
        self, part: Partition, found: list[ComplexEvent], local: int, coord: Any
    ) -> list[Any]:
        """AFTER MATCH SKIP (spec §6.3): hold this step's complex events, then release, in
        start order through the partition's skipper, those before which no run can still
        complete: no live run starts earlier (as Flink's NFA checks its partial matches),
        or WITHIN has closed every earlier start.

        Returns the kept ones (mode MATCHES) or folds them (mode COLLECT).
        """
        evaluator = part.evaluator
        for ce in found:
            self._hold_for_skip(part, ce)
        first = evaluator.first_live_start()  # type: ignore[union-attr]
        if first is None:
            return self._release_held(part, everything=True)
        bound: Any = None
        within = self.rule.within
        if within is not None and self.rule.monotone:
            if within.attr is None:
                # starts at local index <= local + 1 - w can no longer begin a complex event
                bound = local + 2 - within.size
            else:
                bound = coord - within.size  # coordinates never decrease: earlier starts too
        return self._release_held(part, bound, first)

    def _hold_for_skip(self, part: Partition, ce: ComplexEvent) -> None:
        part.pending_seq += 1
        start = part.evaluator.coord_of(ce.start)  # type: ignore[union-attr]
        heapq.heappush(part.pending, (start_order_key(ce), part.pending_seq, start, ce))

    def _release_held(
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
        if self.mode == MATCHES:
            return kept
        for ce in kept:
            self._fold(part, ce, [None])
        return []

    def _replay(self) -> list[Result]:
        """:attr:`replay` mode at the end: the query on every event pushed (global
        positions restored), through the naive runs and the clauses of spec §6."""
        from acel.acea.engine.naive import run as naive_run

        events = [Event.make(k, attrs) for k, (attrs, _) in enumerate(self.replayed)]
        where = [position for _, position in self.replayed]
        self.replayed = []
        out: list[Result] = []
        for result in naive_run(self.query, events, self.schema):
            if isinstance(result, Match):
                out.append(Match(result.key, result.event.relabel(where)))
            else:
                out.append(result)
        if self.query.returns is None:
            self.emitted += len(out)
        return out

    def _enter(self, attrs: dict[str, Any], position: int) -> tuple[Partition, int, Any] | None:
        """Count the event and number it in its partition: (partition, local index,
        coordinate), or None when it lacks a PARTITION BY attribute (spec §6: it
        joins no partition)."""
        self.events += 1
        if self.partition_by:
            values = tuple(attrs.get(a) for a in self.partition_by)
            if None in values:
                return None
            key: Key = tuple(zip(self.partition_by, values))  # type: ignore[arg-type]
        else:
            key = ()
        part = self.partitions.get(key)
        if part is None:
            part = self.partitions[key] = self._partition(key)
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
        return part, local, coord

    def push_many(self, events: Iterable[dict[str, Any]]) -> list[Result]:
        """:meth:`push` each event in turn; all the results now final, in order."""
        out: list[Result] = []
        for attrs in events:
            found = self.push(attrs)
            if found:
                out.extend(found)
        return out

    def push_batch(self, events: list[dict[str, Any]]) -> list[Result]:
        """:meth:`push_many` on a list, the native core reading runs of events in one call
        when it can (no SLIDE; one partition, or PARTITION BY with one core a key;
        ``papers/engine.md``, "Native core" and "Columns into the core")."""
        fast = self._native_batches()
        if fast is None:
            if self._native_keyed() is not None:
                return self._push_keyed(events)
            return self.push_many(events)
        part, evaluator, attr = fast
        return self._feed_in_runs(
            part, len(events),
            lambda k: evaluator.feed(events, k, attr, self.check_monotone, part.last, part.local),
            events.__getitem__)

    def column_spec(self) -> Any:
        """The typed columns :meth:`push_columns` reads (``acel.io.columns.ColumnSpec``), or
        ``None`` when this query takes attribute maps only (no native core, SLIDE, a core
        that reads the type as a value or a string attribute, a string key)."""
        if self.native is None or self.rule.slide is not None or self.finished:
            return None
        names = column_names(self.native)
        if names is None:
            return None
        within = self.rule.within
        extra = ((within.attr,) if within is not None and within.attr is not None else ()) + self.partition_by
        if "type" in extra:
            return None
        wanted = tuple(dict.fromkeys(names + extra))
        kinds = dict(self.schema.kinds)
        if any(kinds.get(name) == "str" for name in wanted[1:]):
            return None
        from acel.io.columns import ColumnSpec

        return ColumnSpec(wanted, type_names(self.native))

    def push_columns(self, block: Any) -> list[Result]:
        """:meth:`push_batch` on a block of typed columns (``acel.io.columns.ColumnBlock`` of
        :meth:`column_spec`), read by the core in C; an event the core leaves is pushed as
        its attribute map, in its place."""
        names = block.spec.names
        within = self.rule.within
        coord = -1 if within is None or within.attr is None else names.index(within.attr)
        if self._native_keyed() is not None:
            return self._push_keyed(block, coord)
        fast = self._native_batches()
        if fast is None:
            return self.push_many(block.rows())
        part, evaluator, _attr = fast
        return self._feed_in_runs(
            part, len(block),
            lambda k: evaluator.feed_columns(block, k, coord, self.check_monotone, part.last, part.local),
            block.row)

    def _feed_in_runs(self, part: Any, n: int, feed: Callable[[int], tuple[int, Any]],
                      row: Callable[[int], dict[str, Any]]) -> list[Result]:
        """Events ``0..n`` of one partition: ``feed(k)`` lets the core read a run from ``k``
        (how many, the last coordinate); an event it leaves to Python (an error, or the
        hand-over before an overflow) is pushed as its attribute map ``row(k)``, in its place."""
        out: list[Result] = []
        k = 0
        while k < n:
            read, last = feed(k)
            if read:
                self.events += read
                part.local += read
                part.last = last
                k += read
            if k < n:
                out.extend(self.push(row(k)))
                k += 1
        return out

    def _native_keyed(self) -> KeyedCores | None:
        if self.keyed is None or self.native is None or self.rule.slide is not None or self.finished:
            return None
        return self.keyed

    def _push_keyed(self, events: Any, coord: int | None = None) -> list[Result]:
        """PARTITION BY: runs of events into their partitions' cores, one C call each
        (``events``: attribute maps, or a column block with ``coord`` its coordinate column)."""
        keyed = self.keyed
        assert keyed is not None
        core = native_module()
        within = self.rule.within
        attr = None if within is None else within.attr
        columnar = not isinstance(events, list)
        if columnar:
            names = events.spec.names
            key_cols = tuple(names.index(a) for a in self.partition_by)
        out: list[Result] = []
        k, n = 0, len(events)
        while k < n:
            if columnar:
                read, touched = core.feed_keyed_columns(
                    keyed.table, keyed.cores, events.kinds, events.vals, events.cap, k, n, key_cols,
                    coord, self.check_monotone,
                )
            else:
                read, touched = core.feed_keyed(
                    keyed.table, keyed.cores, events, k, self.partition_by, attr, self.check_monotone
                )
            self.events += read
            keyed.sync(touched)
            k += read
            if k < n:  # a new partition, one in Python, or an event the core leaves
                attrs = events.row(k) if columnar else events[k]
                out.extend(self.push(attrs))
                values = tuple(attrs.get(a) for a in self.partition_by)
                if None not in values:
                    keyed.note(self.partitions.get(tuple(zip(self.partition_by, values))))
                k += 1
        return out

    def _native_batches(self) -> tuple[Partition, NativePropagator, str | None] | None:
        if self.native is None or self.partition_by or self.rule.slide is not None or self.finished:
            return None
        part = self.partitions.get(())
        if part is None:
            part = self.partitions[()] = self._partition(())
        evaluator = part.evaluator
        if not isinstance(evaluator, NativePropagator) or evaluator.python is not None:
            return None
        within = self.rule.within
        return part, evaluator, None if within is None else within.attr

    def exhausted(self) -> bool:
        """With ``start_positions``: no run is alive and none may start any more."""
        return self.starts is not None and not self.negated and all(
            p.evaluator.exhausted() for p in self.partitions.values()
        )

    def advance(self, coord: Any) -> list[Result]:
        """The ``ON`` axis has reached ``coord``: no event pushed from now on has a smaller
        coordinate, in any partition (a live stream's event-time watermark).

        Returns the results this makes final, in order: the rows of SLIDE windows
        ending at or before ``coord``, and results held for a trailing NOT whose
        window has passed.  A partition that receives no more events would
        otherwise hold them until :meth:`finish`.  Nothing happens without
        ``WITHIN … ON attr`` on a monotone axis (``EVENTS`` windows move only with
        each partition's own events).
        """
        rule = self.rule
        if self.finished or rule.within is None or rule.within.attr is None or not rule.monotone:
            return []
        out: list[Result] = []
        for part in self.partitions.values():
            neg = part.neg
            if neg is not None and neg.coords is None:
                deadlines = neg.deadlines
                while deadlines and deadlines[0][0] <= coord:
                    entry = heapq.heappop(deadlines)[2]
                    if entry.status is None:
                        self._keep(part, entry)
                while neg.held and neg.held[0].status is not None:
                    neg.held.popleft()
            if self.mode != MATCHES and rule.slide is not None:
                out.extend(self._close(part, rule.closed_before(coord)))
        threshold = rule.threshold(coord)
        if self.mode == MATCHES:
            out.extend(self._release(threshold=threshold))
        elif self.held_matches:
            self._fold_released(self._release(count=False, threshold=threshold))
        return out

    def next_deadline(self) -> Any:
        """The least coordinate at which :meth:`advance` may make a result final
        (``None``: no result waits for the axis)."""
        rule = self.rule
        if self.finished or rule.within is None or rule.within.attr is None or not rule.monotone:
            return None
        best: Any = None
        for part in self.partitions.values():
            if part.neg is not None and part.neg.deadlines:
                best = _least(best, part.neg.deadlines[0][0])
            if self.mode != MATCHES and rule.slide is not None and part.open:
                best = _least(best, min(rule.bounds(k)[1] for k in part.open))
        return best

    def finish(self) -> list[Result]:
        """The stream has ended: every result still held, in order."""
        if self.finished:
            return []
        self.finished = True
        if self.replay:
            return self._replay()
        if not self.partition_by and () not in self.partitions:
            # the whole stream is one partition, even when it is empty (spec §6)
            self.partitions[()] = self._partition(())
        if self.query.skip is not None and not self.negated:
            held: list[Result] = [
                Match(part.key, ce)
                for part in self.partitions.values()
                for ce in self._release_held(part, everything=True)
            ]
            if self.mode == MATCHES:
                self.emitted += len(held)
                return held
        if self.mode == MATCHES:
            return self._finish_matches()
        out: list[Result] = []
        if self.held_matches:
            for part in self.partitions.values():
                if part.neg is not None:
                    self._settle_all(part)
            self._fold_released(self._release(count=False, final=True))
        for part in self.partitions.values():
            if part.neg is not None:
                self._settle_all(part)
            if self.rule.slide is None:
                out.append(self._row(part, None))
            else:
                out.extend(self._close(part, None))
        return out

    # ------------------------------------------------------------------ state

    def save(self) -> bytes:
        """The whole state as bytes: :meth:`restore` continues from exactly here."""
        from acel.acea.engine.state import save

        python_evaluators(self.partitions.values())  # the state format is the Python one
        if self.keyed is not None:  # those partitions continue in Python: off the table
            self.keyed = KeyedCores(self.partition_by)
        return save(self)

    @classmethod
    def restore(cls, query: Query, schema: Schema, blob: bytes) -> Runner:
        """A runner of ``query`` continuing from a state :meth:`save` wrote.

        Raises :class:`acel.acea.engine.state.StateMismatch` for a state of another
        query, schema or engine version, or bytes that are not a data-only state
        (nothing in ``blob`` is ever run: :mod:`acel.acea.engine.codec`).
        """
        from acel.acea.engine.state import decode, options_of, restore

        state = decode(blob, query)
        runner = cls(query, schema, **options_of(state))
        runner.native = None  # restored partitions continue in Python (papers/engine.md)
        restore(runner, state)
        return runner

    def _horizon(self, coord: Any) -> Any:
        """The smallest coordinate a later event of the partition can have (monotone
        axis): the next position for ``EVENTS``, the same value for ``ON attr`` (ties).
        Whatever needs only coordinates below it is final now."""
        within = self.rule.within
        return coord + 1 if within is not None and within.attr is None else coord

    # ------------------------------------------------------------------ set-up

    def _partition(self, key: Key) -> Partition:
        neg = None
        rule = self.rule
        if self.negated:
            assert rule.within is not None
            size = rule.within.size
            exact = self.exact_negation
            neg = _Negation(
                [Detector(ca, size, exact) for ca in self.leading],
                [Detector(ca, size, exact) for ca in self.trailing],
                exact,
            )
            if self.mode == PROPAGATE:
                rule = _LeadingRule(rule, neg, bool(self.trailing))
        part = Partition(key, self._evaluator(rule), rule, neg)
        if self.query.skip is not None:
            part.skipper = Skipper(self.query.skip)
        return part

    def _evaluator(self, rule: WindowRule) -> Evaluator:
        if self.mode == PROPAGATE:
            if self.native is not None:
                return NativePropagator(self.native, self.ca, self.items, rule, self.starts)
            return propagator_for(self.ca, self.items, rule, starts=self.starts, seeds=self.seeds)
        return Enumerator(
            self.ca,
            self.selection.enumeration_rule(rule),
            dedupe=self.dedupe,
            identity_coords=self.identity_coords,
            starts=self.starts,
            build=self.build,
            watch=self.watch,
            prune=self.selection.prune(),
        )

    # ------------------------------------------------------------------ RETURN rows

    def _windows_of(self, part: Partition, start: Any, coord: Any) -> list[Row]:
        """The rows a complex event from coordinate ``start`` to ``coord`` counts in."""
        rule = self.rule
        if rule.slide is None:
            return [None]
        lo, hi = min(start, coord), max(start, coord)
        return list(range(rule.kmin(hi), rule.kmax(lo) + 1))

    def _collect(self, part: Partition, ce: ComplexEvent, coord: Any) -> None:
        """Mode COLLECT: fold one complex event into the rows it counts in."""
        start = part.evaluator.coord_of(ce.start)  # type: ignore[union-attr]
        self._fold(part, ce, self._windows_of(part, start, coord))

    def _fold(self, part: Partition, ce: ComplexEvent, rows: Iterable[Row]) -> None:
        assert self.query.returns is not None
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
            if part.neg is not None:
                self._settle_window(part, k)
            if self.per_window:
                self._choose_in_window(part, k)
            del part.open[k]
            out.append(self._row(part, k))
        return out

    def _hold_for_windows(self, part: Partition, found: list[ComplexEvent], coord: Any) -> None:
        """SELECT or SKIP per SLIDE window: keep this step's complex events (STRICT, a
        test on each one, right away) until the windows holding them close."""
        selection = self.selection
        evaluator = part.evaluator
        for ce in found:
            if selection.select == "STRICT" and not (
                selection.strict(part, ce) if selection.strict_local else is_strict(ce)
            ):
                continue
            start = evaluator.coord_of(ce.start)  # type: ignore[union-attr]
            part.window_held.append((start, coord, ce))

    def _choose_in_window(self, part: Partition, k: Row) -> None:
        """Window ``k`` closes: the strategy chooses among its complex events (those with
        both ends in it), the skip walks them in start order, the kept ones count."""
        lo, hi = self.rule.bounds(k)
        inside = [ce for s, e, ce in part.window_held if lo <= s and e < hi]
        strategy = self.selection.select
        chosen = select("ALL" if strategy == "STRICT" else strategy, inside)
        for ce in skip_filter(self.query.skip, chosen):
            self._fold(part, ce, [k])
        after = (k + 1) * self.rule.slide.size  # type: ignore[union-attr]
        part.window_held = [entry for entry in part.window_held if entry[0] >= after]

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

    # ------------------------------------------------------------------ negation

    def _detect(self, part: Partition, attrs: dict[str, Any], position: int, local: int,
                coord: Any) -> None:
        """Run the ψ detectors on this event: update ``G``, settle held results."""
        neg = part.neg
        assert neg is not None
        size = self.rule.within.size  # type: ignore[union-attr]
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
                    self._kill(part, entry, coord)
        # results whose window has passed are kept (no ψ match can come in time)
        deadlines = neg.deadlines
        horizon = self._horizon(coord)
        while deadlines and deadlines[0][0] <= horizon:
            entry = heapq.heappop(deadlines)[2]
            if entry.status is None:
                self._keep(part, entry)
        while neg.held and neg.held[0].status is not None:
            neg.held.popleft()
        if len(neg.g_from) > 64 and self.rule.monotone:
            cut = bisect_right(neg.g_value, coord - size) - 1
            if cut > 0:
                del neg.g_from[:cut]
                del neg.g_value[:cut]

    def _hold(self, part: Partition, local: int, end: int, deadline: Any, item: Any,
              windows: list[Any]) -> _Held:
        neg = part.neg
        assert neg is not None
        entry = _Held(end, local, deadline, item, windows)
        neg.held.append(entry)
        neg.seq += 1
        heapq.heappush(neg.deadlines, (deadline, neg.seq, entry))
        return entry

    def _kill(self, part: Partition, entry: _Held, coord: Any) -> None:
        """A trailing ψ match ends at ``coord``, after the entry's end: it blocks the entry
        in every window that holds it (spec §3.1); windows ending at or before ``coord``
        keep it (their rows may not have been closed yet at this step)."""
        slide = self.rule.slide
        if slide is None or self.mode == MATCHES or self.held_matches:
            if coord < entry.deadline:
                entry.status = False
                entry.windows = []
            else:
                self._keep(part, entry)
            return
        kept = [k for k in entry.windows if self.rule.bounds(k)[1] <= coord]
        if kept:
            self._credit(part, entry, kept)
        entry.status = False
        entry.windows = []

    def _keep(self, part: Partition, entry: _Held) -> None:
        entry.status = True
        if self.mode == MATCHES or self.held_matches:
            return
        self._credit(part, entry, entry.windows)
        entry.windows = []

    def _credit(self, part: Partition, entry: _Held, windows: Iterable[Row]) -> None:
        if self.mode == COLLECT:
            self._fold(part, entry.item, windows)
            return
        evaluator = part.evaluator
        merge = evaluator.merge  # type: ignore[union-attr]
        rows = evaluator.rows  # type: ignore[union-attr]
        for row in windows:
            old = rows.get(row)
            rows[row] = entry.item if old is None else merge(old, entry.item)

    def _settle_window(self, part: Partition, k: Row) -> None:
        """Window ``k`` closes: held contributions to it were not blocked in time."""
        neg = part.neg
        assert neg is not None
        if neg.coords is not None:
            return
        for entry in neg.held:
            if entry.status is None and k in entry.windows:
                self._credit(part, entry, [k])
                entry.windows.remove(k)

    def _settle_all(self, part: Partition) -> None:
        """The stream ended: every undecided entry is kept (exact mode: decided now)."""
        neg = part.neg
        assert neg is not None
        if neg.coords is not None:
            self._settle_exact(part)
            return
        for entry in neg.held:
            if entry.status is None:
                self._keep(part, entry)
        neg.held.clear()
        neg.deadlines.clear()

    def _settle_exact(self, part: Partition) -> None:
        """Exact mode (the axis may decrease): spec §3.1 on every complex event, now."""
        neg = part.neg
        assert neg is not None and neg.coords is not None
        coords = neg.coords
        within = self.rule.within.size  # type: ignore[union-attr]
        leading = [span for d in neg.leading for span in (d.spans or [])]
        trailing = [span for d in neg.trailing for span in (d.spans or [])]
        for i, j, item in neg.found:
            start, end = coords[i], coords[j]
            if self.mode == MATCHES or self.held_matches:
                if not blocked(start, end, i, j, leading, trailing, coords, within):
                    item.status = True
                else:
                    item.status = False
                continue
            windows = self._windows_of(part, start, end)
            if self.rule.slide is None:
                kept = [] if blocked(start, end, i, j, leading, trailing, coords, within) else windows
            else:
                kept = [
                    k for k in windows
                    if not blocked(start, end, i, j, leading, trailing, coords, within,
                                   self.rule.bounds(k))
                ]
            self._fold(part, item, kept)
        neg.found.clear()

    def _negated_matches(self, part: Partition, found: list[ComplexEvent],
                         attrs: dict[str, Any], position: int, local: int,
                         coord: Any, count: bool = True) -> list[Result]:
        """Complex events under leading/trailing negation: filtered, held, released in order."""
        neg = part.neg
        assert neg is not None
        size = self.rule.within.size  # type: ignore[union-attr]
        key = part.key
        evaluator = part.evaluator
        for ce in found:
            match = Match(key, ce)
            if neg.coords is not None:
                entry = _Held(position, local, None, match, [])
                neg.found.append((neg.positions[ce.start], local, entry))  # type: ignore[index]
                self.order.append(entry)
                continue
            if neg.leading and coord - neg.g_at(ce.start) < size:
                continue
            if not neg.trailing:
                entry = _Held(position, local, None, match, [])
                entry.status = True
                self.order.append(entry)
                continue
            start = evaluator.coord_of(ce.start)  # type: ignore[union-attr]
            self.order.append(self._hold(part, local, position, start + size, match, [None]))
        self._detect(part, attrs, position, local, coord)
        return self._release(count)

    def _release(self, count: bool = True, final: bool = False, threshold: Any = None) -> list[Result]:
        """Held complex events whose verdict is in, up to the first undecided one
        (``count``: they are results handed back).  With AFTER MATCH SKIP the kept ones
        wait for start order (:meth:`_release_skipped`; ``final``: the stream ended;
        ``threshold``: runs whose every start is at most it are dead)."""
        out: list[Result] = []
        order = self.order
        skip = self.query.skip is not None
        while order and order[0].status is not None:
            entry = order.popleft()
            if entry.status:
                if skip:
                    self._hold_for_skip(self.partitions[entry.item.key], entry.item.event)
                else:
                    out.append(entry.item)
        if skip:
            out.extend(self._release_skipped(final, threshold))
        if count:
            self.emitted += len(out)
        return out

    def _release_skipped(self, final: bool, threshold: Any) -> list[Result]:
        """Under leading/trailing NOT: per partition, the held kept complex events before
        which no live run and no undecided complex event starts, in start order."""
        undecided: dict[Key, int] = {}
        for entry in self.order:
            if entry.status is None:
                match = entry.item
                old = undecided.get(match.key)
                if old is None or match.event.start < old:
                    undecided[match.key] = match.event.start
        out: list[Result] = []
        for part in self.partitions.values():
            if not part.pending:
                continue
            first: int | None = None
            if not final:
                first = part.evaluator.first_live_start(threshold)  # type: ignore[union-attr]
                waiting = undecided.get(part.key)
                if waiting is not None and (first is None or waiting < first):
                    first = waiting
            kept = self._release_held(part, first=first, everything=first is None)
            out.extend(Match(part.key, ce) for ce in kept)
        return out

    def _fold_released(self, released: list[Result]) -> None:
        """Mode COLLECT with :attr:`held_matches`: count the released complex events."""
        for match in released:
            assert isinstance(match, Match)
            self._fold(self.partitions[match.key], match.event, [None])

    def _finish_matches(self) -> list[Result]:
        for part in self.partitions.values():
            if part.neg is not None:
                self._settle_all(part)
        out = self._release(final=True)
        if self.order:
            raise AssertionError("held complex events left undecided at the end")
        return out

    def _negated_collect(self, part: Partition, found: list[ComplexEvent], local: int,
                         coord: Any) -> None:
        """Mode COLLECT under leading/trailing negation."""
        neg = part.neg
        assert neg is not None
        size = self.rule.within.size  # type: ignore[union-attr]
        slide = self.rule.slide
        evaluator = part.evaluator
        for ce in found:
            start = evaluator.coord_of(ce.start)  # type: ignore[union-attr]
            if neg.coords is not None:
                neg.found.append((neg.positions[ce.start], local, ce))  # type: ignore[index]
                continue
            windows = self._windows_of(part, start, coord)
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
                self._fold(part, ce, windows)
                continue
            deadline = start + size if slide is None else max(self.rule.bounds(k)[1] for k in windows)
            self._hold(part, local, 0, deadline, ce, windows)

    def _hold_vectors(self, part: Partition, local: int, coord: Any) -> None:
        """Mode PROPAGATE with trailing negation: this step's final vectors are held."""
        neg = part.neg
        assert neg is not None
        if not neg.trailing:
            return
        rule = part.rule
        assert isinstance(rule, _LeadingRule)
        rows = part.evaluator.rows  # type: ignore[union-attr]
        held = [row for row in rows if isinstance(row, tuple) and row and row[0] == "held"]
        size = self.rule.within.size  # type: ignore[union-attr]
        slide = self.rule.slide
        for row in held:
            vec = rows.pop(row)
            c = row[1]
            windows = list(rule.kept_targets(c, coord))
            if not windows:
                continue
            if slide is None:
                deadline = c[0] + size
            else:
                deadline = max(self.rule.bounds(k)[1] for k in windows)
            self._hold(part, local, 0, deadline, vec, windows)
