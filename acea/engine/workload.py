"""A workload of queries over one stream in one pass (spec §6.1).

:class:`WorkloadRunner` reads each event once, numbers it once and hands it
only to the parts of the workload that can use it:

* **shared trend plans** (:mod:`acel.acea.engine.shared`): the RETURN queries
  of the HAMLET/A-Seq fragment, one plan per (PARTITION BY, SLIDE) group,
  their Kleene sub-patterns and prefixes propagated once per burst;
* **prefix groups** (:class:`PrefixRunner`): per-match queries with the same
  PARTITION BY and WITHIN run on one automaton in which their common prefixes
  are merged (A-Seq's Chop-Connect for complex events): one DAG of run pasts,
  each query's complex events read from its own final state;
* **lone runners**: every other query on its own
  :class:`acel.acea.engine.Runner`, fed only the event types its automaton
  reads (:func:`relevant_types`); the others are counted (:meth:`Runner.skip`)
  so positions, partitions and windows stay those of the query alone.

Every part gives the results of its queries run alone; :meth:`push` returns
``(query name, result)`` pairs final at this event, :meth:`finish` the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acel.acea.engine.closures import CompiledAutomaton, compile_automaton, is_skip_loop
from acel.acea.engine.dag import enumerate_within
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.plan import compiled_for, events_bound, unambiguous
from acel.acea.engine.runner import Result, Runner
from acel.acea.engine.shared import SharedPlan, SharedRunner, group_key, unshared_reason
from acel.acea.engine.windows import WindowRule
from acel.acea.model.automaton import ACEA, Transition

from acel.lang.ast import Query, top_negation
from acel.lang.clauses import Key, Match
from acel.lang.errors import AcelError, DataError
from acel.lang.events import ComplexEvent, Event
from acel.lang.schema import Schema

Tagged = tuple[str, Result]
"""A result with the name of its query."""


# ------------------------------------------------------------------ routing


def relevant_types(ca: CompiledAutomaton) -> frozenset[str] | None:
    """The event types whose reading can change the automaton's configurations.

    An event of another type starts no run (the initial state has no
    transition for it) and keeps every configuration as it is (each other
    state reads it only through its one skip loop).  ``None``: every event
    matters (some state has no skip loop, or tests no type).
    """
    automaton = ca.automaton
    initial = automaton.initial
    types: set[str] = set()
    for state, outgoing in automaton.by_source.items():
        untyped = ca.any_type[state]
        if state == initial:
            if untyped:
                return None
        elif not (len(untyped) == 1 and is_skip_loop(untyped[0].transition, ca.live)):
            return None
        for ty in ca.by_type[state]:
            if ty is None:
                return None
            types.add(ty)
        del outgoing
    return frozenset(types)


# ------------------------------------------------------------------ prefix groups


def prefix_key(query: Query) -> tuple[Any, ...] | None:
    """Per-match queries with equal keys can share one merged automaton."""
    if query.returns is not None or top_negation(query.formula).negated:
        return None
    if query.select != "ALL" or query.skip is not None:
        return None  # the merged automaton's runs know no strategy
    return tuple(query.partition_by), query.within


@dataclass(frozen=True)
class Merged:
    """Several automata with their common prefixes merged.

    ``automaton`` has no final state: a run of query ``i`` is complete when it
    reaches ``finals[i]`` (a sink of its own), so each query's complex events
    are read apart.
    """

    automaton: ACEA
    finals: tuple[int, ...]
    sizes: tuple[int, int]
    """States before (sum over the queries) and after merging."""


def merge_prefixes(automata: Sequence[ACEA], limit: int = 4) -> Merged | None:
    """The automata's union with equal transition sequences from the start merged.

    A state of the union is the set of ``(query, state)`` pairs reached by one
    sequence of equal transitions (same assignment, predicate and output;
    among equal transitions of one state, the ``k``-th matches the ``k``-th),
    so it holds each query at most once and every run of the union that
    reaches a query's final state is exactly one run of that query.  ``None``
    when a final state is not a sink or the union grows past ``limit`` times
    the sum of the sizes (merging would not pay).
    """
    for a in automata:
        if any(t.source in a.finals for t in a.transitions):
            return None
    total = sum(a.num_states for a in automata)
    start = frozenset((i, a.initial) for i, a in enumerate(automata))
    finals = tuple(range(len(automata)))  # each query's final sink: states 0 .. n-1
    ids: dict[frozenset[tuple[int, int]], int] = {start: len(automata)}
    todo = [start]
    transitions: list[Transition] = []
    while todo:
        node = todo.pop()
        source = ids[node]
        groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
        for i, state in sorted(node):
            seen: dict[tuple[Any, ...], int] = {}
            for t in automata[i].by_source.get(state, ()):
                label = (t.assignment, t.predicate, t.output)
                branch = seen.get(label, 0)
                seen[label] = branch + 1
                groups.setdefault((*label, branch), []).append((i, t.target))
        for (assignment, predicate, output, _), targets in groups.items():
            rest = frozenset((i, q) for i, q in targets if q not in automata[i].finals)
            for i, q in targets:
                if q in automata[i].finals:
                    transitions.append(Transition(source, assignment, predicate, output, finals[i]))
            if rest:
                target = ids.get(rest)
                if target is None:
                    target = ids[rest] = len(automata) + len(ids)
                    if len(ids) > limit * total:
                        return None
                    todo.append(rest)
                transitions.append(Transition(source, assignment, predicate, output, target))
    count = len(automata) + len(ids)
    # states are numbered finals first, then in discovery order (ids are unique)
    merged = ACEA(count, ids[start], frozenset(), tuple(transitions))
    return Merged(merged, finals, (total, count))


class PrefixRunner:
    """Per-match queries sharing PARTITION BY and WITHIN on one merged automaton."""

    def __init__(
        self,
        queries: Sequence[tuple[str, Query]],
        schema: Schema,
        merged: Merged,
        *,
        monotone: bool | None = None,
        positions_given: bool = False,
    ) -> None:
        self.names = [name for name, _ in queries]
        first = queries[0][1]
        self.partition_by = tuple(first.partition_by)
        within = first.within
        on_attr = within is not None and within.attr is not None
        self.check_monotone = on_attr and monotone is None
        self.rule = WindowRule(within, None, True if monotone is None else monotone)
        self.merged = merged
        self.ca = compile_automaton(merged.automaton)
        self.relevant = relevant_types(self.ca)
        self.dedupe = [
            not unambiguous(compiled_for(q.formula, schema, events=events_bound(q))[0])
            for _, q in queries
        ]
        self.identity_coords = not self.partition_by and not on_attr and not positions_given
        self.partitions: dict[Key, list[Any]] = {}
        """Per key: ``[enumerator, local count, last coordinate]``."""

    def push(self, attrs: dict[str, Any], position: int) -> list[Tagged]:
        if self.partition_by:
            values = tuple(attrs.get(a) for a in self.partition_by)
            if None in values:
                return []
            key: Key = tuple(zip(self.partition_by, values))  # type: ignore[arg-type]
        else:
            key = ()
        part = self.partitions.get(key)
        if part is None:
            fresh = Enumerator(self.ca, self.rule, identity_coords=self.identity_coords)
            part = self.partitions[key] = [fresh, 0, None]
        local = part[1]
        part[1] = local + 1
        rule = self.rule
        coord = rule.coordinate(attrs, local, position)
        if self.check_monotone and part[2] is not None and coord < part[2]:
            raise DataError(
                f"event at position {position}: {rule.within.attr} = {coord!r} comes after "  # type: ignore[union-attr]
                f"{part[2]!r}; WITHIN … ON {rule.within.attr} needs it non-decreasing "  # type: ignore[union-attr]
                "(sort by it: --time-col)"
            )
        part[2] = coord
        relevant = self.relevant
        if relevant is not None and attrs.get("type") not in relevant:
            return []
        enumerator: Enumerator = part[0]
        enumerator.step(attrs, position, coord)
        active = enumerator.active
        out: list[Tagged] = []
        threshold = rule.threshold(coord) if rule.windowed else None
        for i, final in enumerate(self.merged.finals):
            node = active.get((final, ()))
            if node is None:
                continue
            found = enumerate_within(node, position, threshold, enumerator.coords)
            name = self.names[i]
            if self.dedupe[i]:
                seen: set[ComplexEvent] = set()
                for ce in found:
                    if ce not in seen:
                        seen.add(ce)
                        out.append((name, Match(key, ce)))
            else:
                out.extend((name, Match(key, ce)) for ce in found)
        return out


# ------------------------------------------------------------------ the workload

_PLANS: dict[tuple[Any, ...], SharedPlan] = {}
PLAN_CACHE = 32


def shared_plan(members: Sequence[tuple[str, Query]], schema: Schema) -> SharedPlan:
    """The shared plan of a group, built once per (queries, schema): its generated code
    and cached burst powers serve every runner (Spark units, repeated runs)."""
    key = (tuple(members), schema)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= PLAN_CACHE:
            _PLANS.clear()
        plan = _PLANS[key] = SharedPlan(members, schema)
    return plan



@dataclass
class _Lone:
    name: str
    runner: Runner
    skip: bool
    """Whether events it cannot use must still be counted (RETURN rows, windows)."""


class WorkloadRunner:
    """Several named queries over one stream, one event at a time (see the module doc).

    ``monotone`` maps a query name to what its ``WITHIN … ON attr`` axis is
    known to be (see :class:`Runner`); ``share=False`` runs every query on
    its own runner (still one read of the stream); ``positions_given``: the
    caller passes each event's global position, which may skip numbers (a
    Spark unit), else events are numbered 0, 1, ….
    """

    def __init__(
        self,
        queries: Sequence[tuple[str, Query]],
        schema: Schema,
        *,
        monotone: Mapping[str, bool | None] | None = None,
        share: bool = True,
        positions_given: bool = False,
    ) -> None:
        names = [name for name, _ in queries]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise AcelError(f"a workload names each query once; twice: {', '.join(twice)}")
        if not queries:
            raise AcelError("a workload needs at least one query")
        self.names = names
        self.schema = schema
        hints = dict(monotone or {})
        self.notes: dict[str, str] = {}
        """How each query runs (for ``acel compile`` and the benchmarks)."""
        groups: dict[Any, list[tuple[str, Query]]] = {}
        prefix: dict[Any, list[tuple[str, Query]]] = {}
        lone: list[tuple[str, Query]] = []
        for name, query in queries:
            if share:
                reason = unshared_reason(query, schema)
                if reason is None:
                    groups.setdefault(group_key(query), []).append((name, query))
                    continue
                key = prefix_key(query)
                if key is not None and hints.get(name, True) is not False:
                    prefix.setdefault(key, []).append((name, query))
                    continue
            else:
                reason = "sharing turned off"
            self.notes[name] = f"alone: {reason}"
            lone.append((name, query))
        self.plans: list[SharedPlan] = []
        self.shared: list[SharedRunner] = []
        for members in groups.values():
            plan = shared_plan(members, schema)
            self.plans.append(plan)
            self.shared.append(SharedRunner(plan))
            for name, _ in members:
                self.notes[name] = f"shared trend plan {len(self.plans)}"
        self.prefixes: list[PrefixRunner] = []
        for members in prefix.values():
            merged = None
            if len(members) > 1:
                merged = merge_prefixes(
                    [compiled_for(q.formula, schema, events=events_bound(q))[0] for _, q in members]
                )
            if merged is None or merged.sizes[1] >= merged.sizes[0]:
                for name, query in members:
                    self.notes[name] = (
                        "alone: per-match, no other with its PARTITION BY and WITHIN"
                        if len(members) == 1 else "alone: per-match, merging would not pay"
                    )
                    lone.append((name, query))
                continue
            hint = hints.get(members[0][0])
            self.prefixes.append(
                PrefixRunner(members, schema, merged, monotone=hint, positions_given=positions_given)
            )
            for name, _ in members:
                self.notes[name] = (
                    f"prefix group {len(self.prefixes)} ({merged.sizes[0]} states merged "
                    f"into {merged.sizes[1]})"
                )
        self.lone: list[_Lone] = []
        self.relevant: list[frozenset[str] | None] = []
        for name, query in lone:
            runner = Runner(
                query, schema, monotone=hints.get(name), positions_given=positions_given
            )
            needs = query.returns is not None or query.within is not None
            self.lone.append(_Lone(name, runner, needs))
            negated = top_negation(query.formula).negated
            # a strategy or a skip reads the events between (STRICT: any event breaks the
            # contiguity), so such a query sees every event, as alone (Hypothesis found it)
            chooses = query.select != "ALL" or query.skip is not None
            self.relevant.append(None if negated or chooses else relevant_types(runner.ca))
        self._routes: dict[Any, tuple[list[_Lone], list[_Lone]]] = {}
        self.events = 0
        self.finished = False

    # ------------------------------------------------------------ feeding

    def push(self, attrs: dict[str, Any], position: int | None = None) -> list[Tagged]:
        """Read one event; the results of every query that became final, tagged."""
        if self.finished:
            raise AcelError("the workload has finished: push no more events")
        if position is None:
            position = self.events
        self.events += 1
        out: list[Tagged] = []
        for shared in self.shared:
            found = shared.push(attrs, position)
            if found:
                out.extend(found)
        for group in self.prefixes:
            found = group.push(attrs, position)
            if found:
                out.extend(found)
        if self.lone:
            ty = attrs.get("type")
            route = self._routes.get(ty)
            if route is None:
                route = self._route(ty)
            pushed, skipped = route
            for lone in pushed:
                results = lone.runner.push(attrs, position)
                if results:
                    name = lone.name
                    out.extend((name, r) for r in results)
            for lone in skipped:
                results = lone.runner.skip(attrs, position)
                if results:
                    name = lone.name
                    out.extend((name, r) for r in results)
        return out

    def _route(self, ty: Any) -> tuple[list[_Lone], list[_Lone]]:
        pushed: list[_Lone] = []
        skipped: list[_Lone] = []
        for lone, relevant in zip(self.lone, self.relevant):
            if relevant is None or not isinstance(ty, str) or ty in relevant:
                pushed.append(lone)
            elif lone.skip:
                skipped.append(lone)
        if isinstance(ty, str) or ty is None:
            self._routes[ty] = (pushed, skipped)
        return pushed, skipped

    def finish(self) -> list[Tagged]:
        """The stream has ended: every result still held (RETURN rows), tagged."""
        if self.finished:
            return []
        self.finished = True
        out: list[Tagged] = []
        for shared in self.shared:
            out.extend(shared.finish())
        for lone in self.lone:
            name = lone.name
            out.extend((name, r) for r in lone.runner.finish())
        return out

    # ------------------------------------------------------------ description

    def describe(self) -> list[str]:
        """One line per part of the plan, then how each query runs."""
        lines = [plan.describe() for plan in self.plans]
        for n, group in enumerate(self.prefixes, start=1):
            before, after = group.merged.sizes
            lines.append(
                f"prefix group {n}: {len(group.names)} per-match queries ({', '.join(group.names)}) "
                f"on one automaton: {before} states merged into {after}"
            )
        if self.lone:
            n = len(self.lone)
            lines.append(
                f"{n} {'query' if n == 1 else 'queries'} on {'its' if n == 1 else 'their'} own "
                "runner, fed only the event types it reads"
            )
        lines.extend(f"  {name}: {self.notes[name]}" for name in self.names)
        return lines


def run_workload(
    queries: Sequence[tuple[str, Query]],
    stream: Sequence[Any],
    schema: Schema,
    *,
    share: bool = True,
) -> dict[str, list[Result]]:
    """Every query's results on a stream held in memory, in spec §12 order.

    ``stream``: :class:`~acel.lang.events.Event` objects or attribute maps, event
    ``k`` at position ``k``.
    """
    from acel.acea.engine import _monotone, _partitions, paused_gc, sort_matches

    from acel.lang.clauses import TrendRow

    events = [
        Event.make(k, e) if isinstance(e, Mapping) else e for k, e in enumerate(stream)
    ] if any(isinstance(e, Mapping) for e in stream[:1]) else stream
    monotone: dict[str, bool | None] = {}
    for name, query in queries:
        if query.within is not None and query.within.attr is not None:
            monotone[name] = _monotone(query.within, _partitions(events, query.partition_by))
    runner = WorkloadRunner(queries, schema, monotone=monotone, share=share)
    found: dict[str, list[Any]] = {name: [] for name, _ in queries}
    with paused_gc():
        for k, event in enumerate(stream):
            attrs = dict(event) if isinstance(event, Mapping) else dict(event.attrs)
            for name, result in runner.push(attrs, k):
                found[name].append(result)
        for name, result in runner.finish():
            found[name].append(result)
    out: dict[str, list[Result]] = {}
    for name, query in queries:
        results = found[name]
        if query.returns is None:
            out[name] = sort_matches(results)
        else:
            out[name] = sorted(results, key=TrendRow.sort_key)
    return out


__all__ = [
    "Merged",
    "PrefixRunner",
    "Tagged",
    "WorkloadRunner",
    "merge_prefixes",
    "prefix_key",
    "relevant_types",
    "run_workload",
]
