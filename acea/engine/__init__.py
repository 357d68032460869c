"""The optimized engine: one pass over each partition, shared runs (issue 6).

``run(query, stream, schema)`` gives the same results as the oracle
(``acel.clauses.run_query`` around ``acel.reference.oracle``), in two modes:

* **complex events** (no RETURN): the set of configurations ``(state, τ)``
  is kept per step, runs reaching the same configuration are merged, and
  their pasts live in a shared DAG (:mod:`acea.dag`) from which the complex
  events ending at each event are enumerated, deduplicated by a hash set per
  end position;
* **trend aggregation** (RETURN): counts and sums are propagated along the
  configurations without building any complex event (:mod:`acea.trend`),
  with a Fenwick index for configurations that differ only in a compared
  register (:mod:`acea.fenwick`), when :mod:`acea.ambiguity` proves that
  runs and complex events correspond one to one; otherwise it enumerates.

Runs start at every position (``start_positions`` restricts the starts, for
the Spark backend's time slices).  WITHIN drops expired work when the window
is monotone, so memory follows the window, not the stream.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from acel.acea.ambiguity import coreachable_states, is_unambiguous
from acel.acea.engine.closures import (
    CompiledAutomaton,
    CompiledTransition,
    TrendItem,
    compile_automaton,
)
from acel.acea.engine.dag import Edge, Node, compact, enumerate_within, make_node
from acel.acea.engine.indexed import Classes, Group, plan_indexes
from acel.acea.engine.trend import (
    identity_vector,
    needs_unambiguity,
    supported,
    vector_ops,
)
from acel.acea.engine.windows import Row, WindowPlan
from acel.acea.model import ACEA

from acel.ast import CountStar, Formula, Next, Query, ReturnAgg, Window
from acel.clauses import (
    Match,
    Partition,
    TrendAccumulator,
    TrendRow,
    check_window_attribute,
    key_sort_key,
    split_partitions,
    trend_rows,
    window_bounds,
    windows_of,
)
from acel.events import ComplexEvent, Event
from acel.schema import Schema

# ------------------------------------------------------------------ set-up


def _contains_next(formula: Any) -> bool:
    if isinstance(formula, Next):
        return True
    for value in getattr(formula, "__dict__", {}).values():
        if isinstance(value, tuple):
            if any(_contains_next(v) for v in value):
                return True
        elif _contains_next(value):
            return True
    return False


def prepare_formula(formula: Formula, schema: Schema) -> Formula:
    """Expand NEXT with the schema's types (spec §3, Appendix D.1)."""
    if not _contains_next(formula):
        return formula
    from acel.macros import expand_next

    return expand_next(formula, schema.type_names())


def compile_for_engine(formula: Formula, schema: Schema) -> ACEA:
    """The ACEA of a (NEXT-free) formula, from the project's compiler."""
    from acel.compiler import compile_formula

    return compile_formula(formula, schema)


@lru_cache(maxsize=64)
def compiled_for(
    formula: Formula, schema: Schema, items: tuple[TrendItem, ...] | None = None
) -> tuple[ACEA, CompiledAutomaton]:
    """The trimmed ACEA of a query's formula and its compiled closures, cached.

    Compilation (and code generation) happens once per formula, schema and
    RETURN items, however many partitions, slices or calls evaluate it.
    """
    automaton = trim(compile_for_engine(prepare_formula(formula, schema), schema))
    return automaton, compile_automaton(automaton, items)


def trim(automaton: ACEA) -> ACEA:
    """Drop transitions into states that cannot reach a final state (no run dies there)."""
    useful = coreachable_states(automaton)
    kept = tuple(t for t in automaton.transitions if t.target in useful and t.source in useful)
    if len(kept) == len(automaton.transitions):
        return automaton
    return ACEA(automaton.num_states, automaton.initial, automaton.finals, kept)


# ------------------------------------------------------- enumeration mode


def enumerate_partition(
    ca: CompiledAutomaton,
    events: Sequence[Event],
    plan: WindowPlan,
    starts: range | None = None,
    dedupe: bool = True,
) -> Iterator[ComplexEvent]:
    """Every complex event (local positions) of ``ca`` on ``events`` within the window.

    Each end position's complex events are deduplicated with one hash set
    (cost: one hash of each run's complex event, memory: that end's outputs).
    ``dedupe=False`` skips it: only for automata proven unambiguous
    (:func:`acea.ambiguity.is_unambiguous`), whose runs give distinct complex events.
    """
    initial = ca.automaton.initial
    finals = ca.automaton.finals
    ready = ca.ready
    coords = plan.coords
    windowed = plan.within is not None
    size = plan.within.size if plan.within is not None else 0
    monotone = plan.monotone and windowed

    def coord(i: int) -> Any:
        return coords[i]

    active: dict[tuple[int, tuple[Any, ...]], Node] = {}
    empty: tuple[Any, ...] = ()
    since_compaction = 0
    period = 64
    for k, event in enumerate(events):
        if starts is not None and k >= starts.stop and not active:
            break
        attrs = dict(event.attrs)
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        pending: dict[tuple[int, tuple[Any, ...]], list[Edge]] = {}
        for config, node in active.items():
            state = config[0]
            transitions = cache.get(state)
            if transitions is None:
                transitions = ready(state, attrs, k, cache)
            for ct in transitions:
                if ct.identity:
                    # a skip loop: same configuration, nothing emitted
                    edges = pending.get(config)
                    if edges is None:
                        pending[config] = [(node, None)]
                    else:
                        edges.append((node, None))
                    continue
                res = ct.fire(config[1], attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0])
                edges = pending.get(key)
                if edges is None:
                    pending[key] = [(node, res[1])]
                else:
                    edges.append((node, res[1]))
        if starts is None or k in starts:
            for ct in ready(initial, attrs, k, cache):
                res = ct.fire(empty, attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0])
                edges = pending.get(key)
                if edges is None:
                    pending[key] = [(k, res[1])]
                else:
                    edges.append((k, res[1]))
        threshold = coords[k] - size if windowed else None
        new_active: dict[tuple[int, tuple[Any, ...]], Node] = {}
        ends: list[Node] = []
        for key, edges in pending.items():
            if len(edges) == 1:
                # make_node inlined for the common single edge
                pred, emission = edges[0]
                if isinstance(pred, Node):
                    node = pred if emission is None else Node(edges, pred.best)
                else:
                    node = Node(edges, coords[pred])
            else:
                node = make_node(_dedupe(edges), coord)
            if monotone and node.best <= threshold:
                continue
            new_active[key] = node
            if key[0] in finals:
                ends.append(node)
        active = new_active
        if ends:
            if dedupe:
                seen: set[ComplexEvent] = set()
                for node in ends:
                    for ce in enumerate_within(node, k, threshold, coords):
                        if ce not in seen:
                            seen.add(ce)
                            yield ce
            else:
                for node in ends:
                    yield from enumerate_within(node, k, threshold, coords)
        if monotone:
            since_compaction += 1
            if since_compaction >= period:
                live = compact(list(active.values()), _above(threshold), coord)
                period = max(64, live // max(1, len(active)))
                since_compaction = 0


def _above(threshold: Any) -> Callable[[Any], bool]:
    return lambda best: bool(best > threshold)


def _dedupe(edges: list[Edge]) -> list[Edge]:
    """Identical edges (same predecessor, same emission) stand for one run."""
    if len(edges) < 2:
        return edges
    seen: set[tuple[int, Any]] = set()
    out: list[Edge] = []
    for pred, emission in edges:
        marker = (id(pred) if isinstance(pred, Node) else -1 - pred, emission)
        if marker not in seen:
            seen.add(marker)
            out.append((pred, emission))
    return out


def evaluate(
    automaton: ACEA, stream: Sequence[Event], within: Window | None = None
) -> set[ComplexEvent]:
    """``⟦A⟧(S)`` with the optimized evaluator (and WITHIN ``within`` if given)."""
    ca = compile_automaton(trim(automaton))
    return set(enumerate_partition(ca, stream, WindowPlan.build(stream, within)))


# ------------------------------------------------------------- trend mode


def trend_items(query: Query) -> tuple[TrendItem, ...]:
    """The distinct aggregates of the RETURN list (COUNT(*) and attributes excluded)."""
    assert query.returns is not None
    out: dict[TrendItem, None] = {}
    for item in query.returns:
        if isinstance(item, ReturnAgg):
            out[TrendItem(item.func.upper(), item.var, item.attr)] = None
    return tuple(out)


def aggregate_partition(
    ca: CompiledAutomaton,
    items: Sequence[TrendItem],
    events: Sequence[Event],
    plan: WindowPlan,
    starts: range | None = None,
    use_index: bool = True,
) -> dict[Row, tuple[Any, ...]]:
    """Per row (window), the vector ``[count, acc...]`` over all accepting runs.

    Configurations of indexed states (:mod:`acea.indexed`) persist in
    per-group Fenwick indexes; all others are rebuilt at every step.
    """
    merge, extend = vector_ops(items)
    unit = identity_vector(items, 1)
    initial = ca.automaton.initial
    finals = ca.automaton.finals
    ready = ca.ready
    rows: dict[Row, tuple[Any, ...]] = {}
    active: dict[tuple[int, tuple[Any, ...]], dict[Any, tuple[Any, ...]]] = {}
    empty: tuple[Any, ...] = ()
    prune = plan.within is not None and plan.monotone
    class_alive = plan.class_alive

    def merge_classes(a: Classes, b: Classes) -> Classes:
        out = dict(a)
        for c, v in b.items():
            old = out.get(c)
            out[c] = v if old is None else merge(old, v)
        return out

    plans = plan_indexes(ca, items) if use_index else {}
    all_attrs = [dict(e.attrs) for e in events] if plans else []
    universes = {q: p.universe_values(all_attrs) for q, p in plans.items()}
    groups: dict[int, dict[tuple[Any, ...], Group]] = {q: {} for q in plans}
    max_class: Any = None

    for k, event in enumerate(events):
        if starts is not None and k >= starts.stop and not active and not any(
            g for g in groups.values()
        ):
            break
        attrs = all_attrs[k] if plans else dict(event.attrs)
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        new: dict[tuple[int, tuple[Any, ...]], Classes] = {}
        sources: list[tuple[int, tuple[Any, ...], Classes]] = []
        for (state, tau), classes in active.items():
            if prune:
                classes = {c: v for c, v in classes.items() if class_alive(c, k)}
                if not classes:
                    continue
            sources.append((state, tau, classes))
        if starts is None or k in starts:
            c0 = plan.class_of(k)
            if c0 is not None:
                sources.append((initial, empty, {c0: unit}))
                if max_class is None or c0 > max_class:
                    max_class = c0
        # indexed states: range transitions query the index, others scan the group
        for q, by_rest in groups.items():
            if not by_rest:
                continue
            if prune and max_class is not None and not class_alive(max_class, k):
                by_rest.clear()
                continue
            iplan = plans[q]
            pos = iplan.position
            for rest, group in by_rest.items():
                if prune and group.inserted > group.rebuilt_size + 64:
                    group.rebuild(lambda c, _k=k: class_alive(c, _k))
                probe = rest[:pos] + (None,) + rest[pos:]
                for ct in ready(q, attrs, k, cache):
                    if ct.index in iplan.identity:
                        continue
                    rt = iplan.ranged.get(ct.index)
                    if rt is not None:
                        res = rt.parts(probe, attrs, k)
                        if res is None:
                            continue
                        found = group.query(rt.op, res[2], res[3], res[4], res[5])
                        if found is None:
                            continue
                        if prune:
                            found = {c: v for c, v in found.items() if class_alive(c, k)}
                        sources_here = [(res[0], res[1], found)]
                    else:
                        sources_here = []
                        for value, classes in group.entries.items():
                            tau = rest[:pos] + (value,) + rest[pos:]
                            fired = ct.fire(tau, attrs, k)
                            if fired is not None:
                                if prune:
                                    classes = {
                                        c: v for c, v in classes.items() if class_alive(c, k)
                                    }
                                sources_here.append((fired[0], fired[1], classes))
                    for ntau, contrib, classes in sources_here:
                        key = (ct.target, ntau)
                        target = new.get(key)
                        if target is None:
                            target = new[key] = {}
                        for c, vec in classes.items():
                            v = vec if contrib is None else extend(vec, contrib)
                            old = target.get(c)
                            target[c] = v if old is None else merge(old, v)
        for state, tau, classes in sources:
            for ct in ready(state, attrs, k, cache):
                res = ct.fire(tau, attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0])
                contrib = res[1]
                target = new.get(key)
                if target is None:
                    target = new[key] = {}
                for c, vec in classes.items():
                    v = vec if contrib is None else extend(vec, contrib)
                    old = target.get(c)
                    target[c] = v if old is None else merge(old, v)
        active = {}
        for key, classes in new.items():
            state = key[0]
            if state in finals:
                for c, vec in classes.items():
                    for row in plan.targets(c, k):
                        old = rows.get(row)
                        rows[row] = vec if old is None else merge(old, vec)
            iplan = plans.get(state)
            if iplan is None:
                active[key] = classes
                continue
            tau = key[1]
            pos = iplan.position
            rest = tau[:pos] + tau[pos + 1 :]
            group = groups[state].get(rest)
            if group is None:
                group = groups[state][rest] = Group(universes[state], merge_classes)
            group.add(tau[pos], classes)
    return rows


def aggregate_single(
    ca: CompiledAutomaton,
    items: Sequence[TrendItem],
    events: Sequence[Event],
    plan: WindowPlan,
    starts: range | None = None,
    use_index: bool = True,
) -> dict[Row, tuple[Any, ...]]:
    """:func:`aggregate_partition` when one start class at most is alive at a time.

    Same propagation with plain vectors instead of class maps; everything is
    dropped when the position enters another window (:meth:`WindowPlan.window_of`).
    """
    merge, extend = vector_ops(items)
    unit = identity_vector(items, 1)
    initial = ca.automaton.initial
    finals = ca.automaton.finals
    ready = ca.ready
    rows: dict[Row, tuple[Any, ...]] = {}
    active: dict[tuple[int, tuple[Any, ...]], tuple[Any, ...]] = {}
    empty: tuple[Any, ...] = ()
    windowed = plan.within is not None
    plans = plan_indexes(ca, items) if use_index else {}
    all_attrs = [dict(e.attrs) for e in events] if plans else []
    universes = {q: p.universe_values(all_attrs) for q, p in plans.items()}
    groups: dict[int, dict[tuple[Any, ...], Group]] = {q: {} for q in plans}
    current: Any = 0

    def has_work() -> bool:
        return bool(active) or any(bool(g) for g in groups.values())

    for k, event in enumerate(events):
        if starts is not None and k >= starts.stop and not has_work():
            break
        if windowed:
            window = plan.window_of(k)
            if window != current:
                current = window
                active = {}
                for by_rest in groups.values():
                    by_rest.clear()
        if current is None:
            continue
        attrs = all_attrs[k] if plans else dict(event.attrs)
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        new: dict[tuple[int, tuple[Any, ...]], tuple[Any, ...]] = {}
        for q, by_rest in groups.items():
            iplan = plans[q]
            pos = iplan.position
            for rest, group in by_rest.items():
                probe = rest[:pos] + (None,) + rest[pos:]
                answers: dict[tuple[Any, ...], Any] = {}
                for ct in ready(q, attrs, k, cache):
                    if ct.index in iplan.identity:
                        continue
                    rt = iplan.ranged.get(ct.index)
                    if rt is not None:
                        res = rt.parts(probe, attrs, k)
                        if res is None:
                            continue
                        question = (rt.op, res[2], res[3], res[4], res[5])
                        if question in answers:
                            found = answers[question]
                        else:
                            found = answers[question] = group.query(*question)
                        if found is None:
                            continue
                        key = (ct.target, res[0])
                        v = found if res[1] is None else extend(found, res[1])
                        old = new.get(key)
                        new[key] = v if old is None else merge(old, v)
                        continue
                    for value, vec in group.entries.items():
                        tau = rest[:pos] + (value,) + rest[pos:]
                        fired = ct.fire(tau, attrs, k)
                        if fired is None:
                            continue
                        key = (ct.target, fired[0])
                        v = vec if fired[1] is None else extend(vec, fired[1])
                        old = new.get(key)
                        new[key] = v if old is None else merge(old, v)
        sources = list(active.items())
        if starts is None or k in starts:
            sources.append(((initial, empty), unit))
        for (state, tau), vec in sources:
            for ct in ready(state, attrs, k, cache):
                res = ct.fire(tau, attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0])
                v = vec if res[1] is None else extend(vec, res[1])
                old = new.get(key)
                new[key] = v if old is None else merge(old, v)
        active = {}
        row = current if windowed else None
        for key, vec in new.items():
            state = key[0]
            if state in finals:
                old = rows.get(row)
                rows[row] = vec if old is None else merge(old, vec)
            iplan = plans.get(state)
            if iplan is None:
                active[key] = vec
                continue
            tau = key[1]
            pos = iplan.position
            rest = tau[:pos] + tau[pos + 1 :]
            group = groups[state].get(rest)
            if group is None:
                group = groups[state][rest] = Group(universes[state], merge)
            group.add(tau[pos], vec)
    return rows


def _rows_from_vectors(
    query: Query,
    partition: Partition,
    items: Sequence[TrendItem],
    vectors: dict[Row, tuple[Any, ...]],
) -> list[TrendRow]:
    """TrendRows of one partition from the per-row vectors (spec §6, §12)."""
    assert query.returns is not None
    index = {item: n for n, item in enumerate(items, start=1)}
    empty = identity_vector(items, 0)
    if query.slide is None:
        ids: list[Row] = [None]
    else:
        assert query.within is not None
        ids = list(windows_of(query.within, query.slide, partition.events))
    out = []
    for row_id in ids:
        vec = vectors.get(row_id, empty)
        acc = TrendAccumulator(query.returns)
        acc.count = vec[0]
        for n, item in enumerate(query.returns):
            if isinstance(item, ReturnAgg):
                value = vec[index[TrendItem(item.func.upper(), item.var, item.attr)]]
                if value is None:
                    value = acc.accs[n]
                acc.accs[n] = value
        window = (
            None
            if row_id is None or query.within is None or query.slide is None
            else window_bounds(query.within, query.slide, row_id)
        )
        out.append(acc.row(partition.key, window))
    return out


# ------------------------------------------------------------------- run


def run(
    query: Query,
    stream: Sequence[Event],
    schema: Schema,
    *,
    start_positions: range | None = None,
    trend_mode: str = "auto",
    progress: Progress | None = None,
) -> list[Match] | list[TrendRow]:
    """Evaluate a checked query (spec §6) with the optimized engine.

    ``start_positions`` (local positions inside each partition) keeps only
    the complex events, or trend contributions, whose start lies in it.
    ``trend_mode`` (RETURN queries): ``"auto"`` propagates when that is exact
    (:func:`propagation_applies`) and enumerates otherwise; ``"enumerate"``
    always enumerates (for tests and measurements).
    ``progress(events_done, results_so_far)`` is called after each partition
    and every few thousand complex events, for long runs on the command line.
    """
    with _gc_paused():
        return _run(query, stream, schema, start_positions, trend_mode, progress or _silent)


Progress = Callable[[int, int], None]
"""A progress callback: events of finished partitions, results found so far."""

PROGRESS_EVERY = 4096
"""Complex events between two progress calls inside one partition."""


def _silent(_events: int, _found: int) -> None:
    """The default progress callback: say nothing."""


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector during one evaluation, as ``timeit`` does.

    The engine's structures (DAG nodes point only to earlier nodes, tuples,
    generators) hold no reference cycles, so reference counting frees them
    as they expire; the collector would only re-walk the whole stream and
    every output already built, again and again (about 30 % of Example 5.1's
    time on 100,000 events).  It is re-enabled afterwards, even on errors,
    and left alone if the caller had disabled it.
    """
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _run(
    query: Query,
    stream: Sequence[Event],
    schema: Schema,
    start_positions: range | None,
    trend_mode: str,
    progress: Progress,
) -> list[Match] | list[TrendRow]:
    partitions = split_partitions(stream, query.partition_by)
    for partition in partitions:
        check_window_attribute(query.within, partition.events)
    if query.returns is None:
        automaton, ca = compiled_for(query.formula, schema)
        dedupe = not _unambiguous(automaton)
        matches: list[Match] = []
        done = 0
        for partition in partitions:
            plan = WindowPlan.of(query, partition.events)
            positions = partition.positions
            identity = not positions or positions[-1] == len(positions) - 1
            memo: dict[int, tuple[Event, Event]] = {}
            for ce in enumerate_partition(
                ca, partition.events, plan, start_positions, dedupe
            ):
                if not identity:
                    ce = _relabel(ce, positions, memo)
                matches.append(Match(partition.key, ce))
                if len(matches) % PROGRESS_EVERY == 0:
                    progress(done, len(matches))
            done += len(partition.events)
            progress(done, len(matches))
        return sort_matches(matches)
    return sorted(
        _trend(query, schema, partitions, start_positions, trend_mode == "auto", progress),
        key=TrendRow.sort_key,
    )


def _relabel(
    ce: ComplexEvent, positions: Sequence[int], memo: dict[int, tuple[Event, Event]]
) -> ComplexEvent:
    """``ce.relabel(positions)``, relabelling each shared emitted event once.

    The memo keeps the original event alive, so its ``id`` cannot be reused.
    """
    bags = []
    for name, bag in ce.vars:
        out = []
        for e in bag:
            entry = memo.get(id(e))
            if entry is None or entry[0] is not e:
                entry = memo[id(e)] = (e, e.at(positions[e.time]))
            out.append(entry[1])
        bags.append((name, tuple(out)))
    return ComplexEvent(positions[ce.start], positions[ce.end], tuple(bags))


def sort_matches(matches: list[Match]) -> list[Match]:
    """``sorted(matches, key=Match.sort_key)`` computing full keys only for ties.

    The output order (spec §12) starts with ``(end, start)``; the expensive
    key over the bags is needed only inside groups that share both.
    """
    matches.sort(key=lambda m: (m.event.end, m.event.start))
    memo: dict[int, Any] = {}
    out: list[Match] = []
    n = len(matches)
    i = 0
    while i < n:
        j = i + 1
        head = matches[i].event
        while j < n and matches[j].event.end == head.end and matches[j].event.start == head.start:
            j += 1
        if j - i == 1:
            out.append(matches[i])
        else:
            out.extend(sorted(matches[i:j], key=lambda m: _match_key(m, memo)))
        i = j
    return out


def _match_key(match: Match, memo: dict[int, Any]) -> tuple[Any, ...]:
    """``Match.sort_key`` with each (shared) event's key computed once."""
    ce = match.event
    bags = []
    for name, bag in ce.vars:
        keys = []
        for e in bag:
            k = memo.get(id(e))
            if k is None:
                k = memo[id(e)] = e.sort_key()
            keys.append(k)
        bags.append((name, tuple(keys)))
    return ((ce.end, ce.start, tuple(bags)), key_sort_key(match.key))


_unambiguous = lru_cache(maxsize=64)(is_unambiguous)


def propagation_applies(query: Query, automaton: ACEA) -> bool:
    """Whether RETURN can be computed by propagation (else: enumerate, then aggregate)."""
    assert query.returns is not None
    items = trend_items(query)
    if not supported(items):
        return False
    count_star = any(isinstance(item, CountStar) for item in query.returns)
    return not needs_unambiguity(items, count_star) or _unambiguous(automaton)


def _trend(
    query: Query,
    schema: Schema,
    partitions: Sequence[Partition],
    start_positions: range | None,
    allow_propagation: bool = True,
    progress: Progress = _silent,
) -> list[TrendRow]:
    rows: list[TrendRow] = []
    done = 0
    automaton, ca = compiled_for(query.formula, schema)
    if allow_propagation and propagation_applies(query, automaton):
        items = trend_items(query)
        _, ca = compiled_for(query.formula, schema, items)
        for partition in partitions:
            plan = WindowPlan.of(query, partition.events)
            aggregate = aggregate_single if plan.single_class() else aggregate_partition
            vectors = aggregate(ca, items, partition.events, plan, start_positions)
            rows.extend(_rows_from_vectors(query, partition, items, vectors))
            done += len(partition.events)
            progress(done, len(rows))
        return rows
    for partition in partitions:
        plan = WindowPlan.of(query, partition.events)
        kept = list(enumerate_partition(ca, partition.events, plan, start_positions))
        rows.extend(trend_rows(query, partition, kept))
        done += len(partition.events)
        progress(done, len(rows))
    return rows
