"""The optimized engine: one pass, shared runs, results as soon as they are final.

``Runner(query, schema)`` (:mod:`acel.acea.engine.runner`) is the incremental
interface: events in, in stream order; final results out; state that can be
saved and restored.  ``run(query, stream, schema)`` is the batch form, a loop
over a runner, with the same results as the oracle
(``acel.lang.clauses.run_query`` around ``acel.reference.oracle``) in the order of
spec §12.  Two modes:

* **complex events** (no RETURN): the set of configurations ``(state, τ)``
  is kept per step, runs reaching the same configuration are merged, and
  their pasts live in a shared DAG (:mod:`acel.acea.engine.dag`) from which
  the complex events ending at each event are enumerated
  (:mod:`acel.acea.engine.enumerate`);
* **trend aggregation** (RETURN): counts and sums are propagated along the
  configurations without building any complex event
  (:mod:`acel.acea.engine.aggregate`), when :mod:`acel.acea.model.ambiguity` proves
  that runs and complex events correspond one to one; otherwise complex
  events are enumerated and aggregated.

WITHIN drops expired work when the window axis is monotone, so memory follows
the window, not the stream.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from acel.acea.engine.closures import compile_automaton
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.plan import compiled_for, propagation_applies, trend_items
from acel.acea.engine.runner import COLLECT, MATCHES, PROPAGATE, Result, Runner
from acel.acea.engine.windows import WindowRule
from acel.acea.model.automaton import ACEA
from acel.acea.model.graph import trim

from acel.lang.ast import Query, Window
from acel.lang.clauses import Match, TrendRow, key_sort_key
from acel.lang.events import ComplexEvent, Event
from acel.lang.schema import Schema

__all__ = [
    "COLLECT",
    "MATCHES",
    "PROPAGATE",
    "Progress",
    "Result",
    "Runner",
    "compiled_for",
    "evaluate",
    "paused_gc",
    "propagation_applies",
    "run",
    "sort_matches",
    "trend_items",
]

Progress = Callable[[int, int], None]
"""A progress callback: events read so far, results found so far."""

PROGRESS_EVERY = 8192
"""Events between two progress calls."""


def _silent(_events: int, _found: int) -> None:
    """The default progress callback: say nothing."""


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector during one evaluation, as ``timeit`` does.

    The engine's structures (DAG nodes point only to earlier nodes, tuples)
    hold no reference cycles, so reference counting frees them as they
    expire; the collector would only re-walk the whole stream and every
    output already built, again and again (about 30 % of Example 5.1's time
    on 100,000 events).  It is re-enabled afterwards, even on errors, and left
    alone if the caller had disabled it.
    """
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def evaluate(
    automaton: ACEA, stream: Sequence[Event], within: Window | None = None
) -> set[ComplexEvent]:
    """``⟦A⟧(S)`` with the optimized evaluator (and WITHIN ``within`` if given)."""
    ca = compile_automaton(trim(automaton))
    rule = WindowRule(within, None, _monotone(within, [stream]))
    enumerator = Enumerator(ca, rule, identity_coords=True)
    out: set[ComplexEvent] = set()
    with paused_gc():
        for k, event in enumerate(stream):
            attrs = dict(event.attrs)
            out.update(enumerator.step(attrs, k, rule.coordinate(attrs, k, k)))
    return out


def _monotone(within: Window | None, partitions: Sequence[Sequence[Event]]) -> bool:
    """Whether the ``ON`` attribute of ``within`` never decreases inside any partition.

    A value that is missing or not a number is left for the runner to report.
    """
    if within is None or within.attr is None:
        return True
    for events in partitions:
        last: Any = None
        for event in events:
            value = event.get(within.attr)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            if last is not None and value < last:
                return False
            last = value
    return True


def _partitions(stream: Sequence[Event], attrs: Sequence[str]) -> list[list[Event]]:
    if not attrs:
        return [list(stream)]
    groups: dict[tuple[Any, ...], list[Event]] = {}
    for event in stream:
        groups.setdefault(tuple(event.get(a) for a in attrs), []).append(event)
    return list(groups.values())


def run(
    query: Query,
    stream: Sequence[Event],
    schema: Schema,
    *,
    start_positions: range | None = None,
    trend_mode: str = "auto",
    progress: Progress | None = None,
) -> list[Match] | list[TrendRow]:
    """Evaluate a checked query (spec §6) on a stream held in memory.

    Event ``k`` of ``stream`` is at position ``k``.  ``start_positions``
    (indices inside each partition) keeps only the complex events, or trend
    contributions, whose start lies in it.  ``trend_mode`` (RETURN queries):
    ``"auto"`` propagates when that is exact and enumerates otherwise;
    ``"enumerate"`` always enumerates (for tests and measurements).
    ``progress(events_read, results_so_far)`` is called every few thousand
    events, for long runs on the command line.
    """
    report = progress or _silent
    partitions = _partitions(stream, query.partition_by)
    runner = Runner(
        query,
        schema,
        monotone=_monotone(query.within, partitions),
        start_positions=start_positions,
        trend_mode=trend_mode,
    )
    results: list[Any] = []
    with paused_gc():
        if runner.native is not None and start_positions is None:  # the native core (issue 23)
            events = [dict(event.attrs) for event in stream]
            for lo in range(0, len(events), PROGRESS_EVERY):
                results.extend(runner.push_batch(events[lo : lo + PROGRESS_EVERY]))
                report(min(lo + PROGRESS_EVERY, len(events)), len(results))
        for k, event in enumerate(() if runner.native is not None and start_positions is None else stream):
            found = runner.push(dict(event.attrs), k)
            if found:
                results.extend(found)
            if k % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                report(k + 1, len(results))
                if start_positions is not None and runner.exhausted():
                    break
        results.extend(runner.finish())
    report(len(stream), len(results))
    if query.returns is None:
        return sort_matches(results)
    return sorted(results, key=TrendRow.sort_key)


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
