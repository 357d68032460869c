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
negation run beside it (:mod:`acel.acea.engine.negation`).  The work is split:
the partition router (:mod:`acel.acea.engine.partitions`), one strategy per mode
(:mod:`~acel.acea.engine.mode_matches`, :mod:`~acel.acea.engine.mode_collect`,
:mod:`~acel.acea.engine.mode_propagate`, sharing :mod:`~acel.acea.engine.window_rows`
and :mod:`~acel.acea.engine.skip_order`) and negation settlement
(:mod:`acel.acea.engine.negation_settlement`), all reading the runner as a
:class:`~acel.acea.engine.run_context.RunContext`.  The batch
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

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from acel.acea.engine.aggregate import propagator_for
from acel.acea.engine.dag import Builder
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.held import Held
from acel.acea.engine.mode_collect import CollectMode
from acel.acea.engine.mode_matches import MatchesMode
from acel.acea.engine.mode_propagate import PropagateMode
from acel.acea.engine.native_keyed import KeyedCores
from acel.acea.engine.native_trend import (
    NativePropagator,
    choose,
    column_names,
    native_module,
    python_views,
    type_names,
    with_starts,
)
from acel.acea.engine.negation import Detector
from acel.acea.engine.negation_settlement import Settlement
from acel.acea.engine.output_order import OutputOrder
from acel.acea.engine.partitions import (
    NO_MATCH,
    Evaluator,
    LeadingRule,
    NegationState,
    Partition,
    PartitionRouter,
)
from acel.acea.engine.plan import (
    compiled_for,
    events_bound,
    propagation_applies,
    trend_compiled,
    trend_items,
    unambiguous,
)
from acel.acea.engine.run_context import (
    COLLECT,
    MATCHES,
    PROPAGATE,
    ModeStrategy,
    Result,
    RunContext,
)
from acel.acea.engine.run_selection import Selection
from acel.acea.engine.skip_order import SkipOrder
from acel.acea.engine.trend import identity_vector
from acel.acea.engine.window_rows import WindowRows
from acel.acea.engine.windows import WindowRule
from acel.acea.model.automaton import ACEA

from acel.lang.ast import Query, top_negation
from acel.lang.clauses import Key, Match
from acel.lang.errors import AcelError, DataError
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.lang.selection import Skipper

__all__ = [
    "COLLECT", "MATCHES", "NO_MATCH", "PROPAGATE", "Evaluator", "Partition", "Result", "Runner",
]


def _least(a: Any, b: Any) -> Any:
    """The smaller of two coordinates, ``None`` being none."""
    return b if a is None or b < a else a


def _mode(query: Query, automaton: ACEA, trend_mode: str, exact_negation: bool,
          selection: Selection) -> str:
    """The runner's mode: :data:`MATCHES` without RETURN, else :data:`PROPAGATE` when
    runs and complex events correspond one to one, else :data:`COLLECT`."""
    if query.returns is None:
        return MATCHES
    if (
        trend_mode == "auto"
        and not exact_negation
        and not selection.active
        and propagation_applies(query, automaton)
    ):
        return PROPAGATE
    if trend_mode in ("auto", "enumerate"):
        return COLLECT
    raise AcelError(f"unknown trend mode {trend_mode!r} (auto or enumerate)")


class Runner(RunContext):
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
        starts_of: Callable[[Key], range] | None = None,
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
        ``starts_of``: each PARTITION BY key's own ``start_positions`` (indices in its
        sub-stream; Spark's keyed time slices), given ``start_positions`` too.
        """
        self.query = query
        self.schema = schema
        self.options = {
            "monotone": monotone,
            "start_positions": start_positions,
            "trend_mode": trend_mode,
            "positions_given": positions_given,
        }
        within = query.within
        on_attr = within is not None and within.attr is not None
        self.check_monotone = on_attr and monotone is None
        self.rule = WindowRule(within, query.slide, True if monotone is None else monotone)
        self.starts = start_positions
        self.starts_of = starts_of if start_positions is not None else None
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
        events = events_bound(query)  # a relating filter may need the window's bound
        automaton, ca = compiled_for(self.body, schema, events=events)
        self.selection = Selection(
            query, start_positions, bool(query.partition_by) or positions_given
        )
        self.mode = _mode(query, automaton, trend_mode, self.exact_negation, self.selection)
        self.items = ()
        if self.mode == PROPAGATE:
            self.items = trend_items(query)
            ca = trend_compiled(self.body, schema, self.items, events)  # counters unfolded (issue 35)
        self.ca = ca
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
        self.router = PartitionRouter(self.partition_by, self.rule, self.check_monotone,
                                      self.new_partition)
        """Each event to its PARTITION BY sub-stream (:mod:`acel.acea.engine.partitions`)."""
        self.events = 0
        """Events pushed so far (including those no partition takes)."""
        self.emitted = 0
        """Results handed back so far."""
        self.finished = False
        self.order: deque[Held] = deque()
        """Trailing negation, complex events: every held result in global end order."""
        self.released = OutputOrder()
        """AFTER MATCH SKIP, complex events out: kept ones waiting for §12 order."""
        self.empty_vector = identity_vector(self.items, 0) if self.mode == PROPAGATE else ()
        self.skips = SkipOrder(self)
        self.settlement = Settlement(self, self.skips)
        self.rows = WindowRows(self, self.settlement)
        self.strategy: ModeStrategy = (
            MatchesMode(self, self.skips, self.settlement) if self.mode == MATCHES
            else PropagateMode(self.settlement, self.rows, self.rule.slide is not None)
            if self.mode == PROPAGATE
            else CollectMode(self, self.skips, self.settlement, self.rows)
        )
        """How this query's mode reads each event (:mod:`acel.acea.engine.mode_matches`,
        :mod:`~acel.acea.engine.mode_propagate`, :mod:`~acel.acea.engine.mode_collect`)."""
        self.step = self.strategy.step
        """The strategy's step, bound once (it runs for every event)."""

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
        self.events += 1
        entered = self.router.route(self.partitions, attrs, position)
        if entered is None:
            return []
        part, local, coord = entered
        neg = part.neg
        if neg is not None and neg.coords is not None:
            neg.coords[local] = coord
            assert neg.positions is not None
            neg.positions[position] = local
        if self.selection.strict_local:
            self.selection.see(part, position)
        try:
            return self.step(part, attrs, position, local, coord)
        except TypeError as error:  # the engines compare and add values of one kind (spec §9)
            raise mixed_kinds(position, error) from None

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
        return self.rows.close(part, rule.closed_before(self.horizon(coord)))

    def _enter(self, attrs: dict[str, Any], position: int) -> tuple[Partition, int, Any] | None:
        """Count the event and number it in its partition: (partition, local index,
        coordinate), or None when it lacks a PARTITION BY attribute (spec §6: it
        joins no partition)."""
        self.events += 1
        return self.router.route(self.partitions, attrs, position)

    def push_many(self, events: Iterable[dict[str, Any]]) -> list[Result]:
        """:meth:`push` each event in turn; all the results now final, in order."""
        out: list[Result] = []
        for attrs in events:
            found = self.push(attrs)
            if found:
                out.extend(found)
        return out

    def push_batch(self, events: list[dict[str, Any]],
                   positions: Sequence[int] | None = None) -> list[Result]:
        """:meth:`push_many` on a list, the native core reading runs of events in one call
        when it can (no SLIDE; one partition, or PARTITION BY with one core a key;
        ``papers/engine.md``, "Native core" and "Columns into the core").

        ``positions``: each event's global position (as :meth:`push` takes one; a runner
        made with ``positions_given``, e.g. a Spark stream's key).  The core reads no
        position (a native query's results name none); an event it leaves to Python is
        pushed with its own."""
        if positions is not None and len(positions) != len(events):
            raise AcelError("push_batch: one position per event")
        fast = self._native_batches()
        if fast is None:
            if self._native_keyed() is not None:
                return self._push_keyed(events, positions=positions)
            if positions is None:
                return self.push_many(events)
            out: list[Result] = []
            for attrs, position in zip(events, positions):
                out.extend(self.push(attrs, position))
            return out
        part, evaluator, attr = fast
        return self._feed_in_runs(
            part, len(events),
            lambda k: evaluator.feed(events, k, attr, self.check_monotone, part.last, part.local),
            events.__getitem__, positions)

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
                      row: Callable[[int], dict[str, Any]],
                      positions: Sequence[int] | None = None) -> list[Result]:
        """Events ``0..n`` of one partition: ``feed(k)`` lets the core read a run from ``k``
        (how many, the last coordinate); an event it leaves to Python (an error, or the
        hand-over before an overflow) is pushed as its attribute map ``row(k)``, in its place
        (at ``positions[k]`` when given)."""
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
                out.extend(self.push(row(k), None if positions is None else positions[k]))
                k += 1
        return out

    def _native_keyed(self) -> KeyedCores | None:
        if self.keyed is None or self.native is None or self.rule.slide is not None or self.finished:
            return None
        return self.keyed

    def _push_keyed(self, events: Any, coord: int | None = None,
                    positions: Sequence[int] | None = None) -> list[Result]:
        """PARTITION BY: runs of events into their partitions' cores, one C call each
        (``events``: attribute maps, or a column block with ``coord`` its coordinate column;
        ``positions``: see :meth:`push_batch`)."""
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
                out.extend(self.push(attrs, None if positions is None else positions[k]))
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
            part = self.partitions[()] = self.new_partition(())
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
                self.settlement.pass_deadlines(part, coord)
            if self.mode != MATCHES and rule.slide is not None:
                out.extend(self.rows.close(part, rule.closed_before(coord)))
        threshold = rule.threshold(coord)
        if self.mode == MATCHES:
            out.extend(self.settlement.release(threshold=threshold))
        elif self.held_matches:
            self.settlement.fold_released(self.settlement.release(count=False, threshold=threshold))
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
            if self.mode == MATCHES and part.pending:
                # held for AFTER MATCH SKIP's start order: advance's threshold kills the
                # runs that start earlier (a RETURN mode counts them, out at finish only)
                best = _least(best, self.skips.deadline(part))
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
            self.partitions[()] = self.new_partition(())
        if self.query.skip is not None and not self.negated:
            held = self.skips.finish()
            if self.mode == MATCHES:
                self.emitted += len(held)
                return held
        if self.mode == MATCHES:
            return self.settlement.finish_matches()
        return self._finish_rows()

    def _finish_rows(self) -> list[Result]:
        """:meth:`finish` in a RETURN mode: every row still open."""
        settlement = self.settlement
        out: list[Result] = []
        if self.held_matches:
            for part in self.partitions.values():
                if part.neg is not None:
                    settlement.settle_all(part)
            settlement.fold_released(settlement.release(count=False, final=True))
        for part in self.partitions.values():
            if part.neg is not None:
                settlement.settle_all(part)
            if self.rule.slide is None:
                out.append(self.rows.row(part, None))
            else:
                out.extend(self.rows.close(part, None))
        return out

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

    # ------------------------------------------------------------------ state

    def save(self) -> bytes:
        """The whole state as bytes: :meth:`restore` continues from exactly here.

        The format is the pure-Python evaluators' (a native core's state is written as its
        Python twin's, :func:`~acel.acea.engine.native_trend.to_python`); the cores
        themselves are left as they are, so this runner goes on natively."""
        from acel.acea.engine.state import save

        swapped = python_views(self.partitions.values())
        try:
            return save(self)
        finally:
            for part, evaluator in swapped:
                part.evaluator = evaluator

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
        native, runner.native = runner.native, None  # the saved state is the Python evaluators'
        restore(runner, state)
        if native is not None:
            runner.native = native
            runner._reload_native()
        return runner

    def _reload_native(self) -> None:
        """After :meth:`restore`, on a query the native core plans: each restored partition's
        Python propagator loaded into a core (``papers/engine.md``, "State"); one holding a
        value a core does not hold exactly (an int beyond int64...) stays in Python."""
        assert self.native is not None
        keyed = self.keyed = KeyedCores(self.partition_by) if self.partition_by else None
        for part in self.partitions.values():
            starts = self.starts if self.starts_of is None else self.starts_of(part.key)
            loaded = NativePropagator.restored(with_starts(self.native, starts), self.ca, self.items,
                                               part.rule, starts, part.evaluator, part.last)
            if loaded is not None:
                part.evaluator = loaded
            if keyed is not None:
                keyed.note(part)

    # ------------------------------------------------------------------ set-up

    def new_partition(self, key: Key) -> Partition:
        """A fresh partition: its evaluator, its negation detectors, its skipper."""
        neg = None
        rule = self.rule
        if self.negated:
            assert rule.within is not None
            size = rule.within.size
            exact = self.exact_negation
            neg = NegationState(
                [Detector(ca, size, exact) for ca in self.leading],
                [Detector(ca, size, exact) for ca in self.trailing],
                exact,
            )
            if self.mode == PROPAGATE:
                rule = LeadingRule(rule, neg, bool(self.trailing))
        starts = self.starts if self.starts_of is None else self.starts_of(key)
        part = Partition(key, self._evaluator(rule, starts), rule, neg)
        if self.query.skip is not None:
            part.skipper = Skipper(self.query.skip)
        return part

    def _evaluator(self, rule: WindowRule, starts: range | None) -> Evaluator:
        if self.mode == PROPAGATE:
            if self.native is not None:
                return NativePropagator(with_starts(self.native, starts), self.ca, self.items, rule, starts)
            return propagator_for(self.ca, self.items, rule, starts=starts, seeds=self.seeds)
        return Enumerator(
            self.ca,
            self.selection.enumeration_rule(rule),
            dedupe=self.dedupe,
            identity_coords=self.identity_coords,
            starts=starts,
            build=self.build,
            watch=self.watch,
            prune=self.selection.prune(),
        )


def mixed_kinds(position: int, error: TypeError) -> DataError:
    """Event ``position`` brought a value of another kind than an earlier one where the two
    meet (MIN/MAX, SUM): a file is checked for this as it is read, events pushed by hand
    are not, so the run stops here in one line rather than a traceback."""
    return DataError(
        f"event {position}: values of different kinds met ({error}): an attribute holds one "
        "kind of value (int and float mix as float)"
    )
