"""Naive runs of an ACEA: every run from every start position (spec §7).

This is the automaton-side oracle: it follows the definition literally.  A
run from ``i`` starts in ``(q0, empty registers)`` and reads ``e_i, e_{i+1},
...``; each step fires a transition (:func:`acel.acea.model.fire`) and adds
what it emits; whenever a step enters ``F`` at position ``j`` the complex
event ``(i, j, X ↦ ⊎ emitted)`` is collected.  Configurations that agree on
state, registers *and* everything emitted so far are merged (the result is
a set), which keeps the enumeration finite and small on short streams; it is
still exponential in general, by design.
"""

from __future__ import annotations

from collections.abc import Sequence

from acel.acea.model.automaton import ACEA, Registers, Transition, emitted, fire
from acel.compiler import compile_query

from acel.lang.ast import Formula, Query, top_negation
from acel.lang.clauses import Match, TrendRow, run_query
from acel.lang.events import Bag, ComplexEvent, Event, canonical_bag
from acel.lang.schema import Schema

Emitted = tuple[tuple[str, Bag], ...]
"""Events emitted so far per variable, canonical (sorted, no empty bags)."""

Config = tuple[int, Registers, Emitted]


def _add(so_far: Emitted, new: dict[str, list[Event]]) -> Emitted:
    if not any(new.values()):
        return so_far
    bags = dict(so_far)
    for var, events in new.items():
        if events:
            bags[var] = canonical_bag([*bags.get(var, ()), *events])
    return tuple(sorted(bags.items()))


def _step(
    automaton: ACEA, by_source: dict[int, list[Transition]], config: Config, event: Event
) -> list[Config]:
    state, tau, so_far = config
    out: list[Config] = []
    for t in by_source.get(state, ()):
        new_tau = fire(t, tau, event)
        if new_tau is None:
            continue
        out.append((t.target, new_tau, _add(so_far, emitted(t, new_tau, event.time))))
    return out


def evaluate(automaton: ACEA, stream: Sequence[Event]) -> set[ComplexEvent]:
    """``⟦A⟧(S)``: the complex events of all accepting runs, canonical.

    Event ``k`` of ``stream`` is read at time ``k`` (spec §1).
    """
    events = [e if e.time == k else e.at(k) for k, e in enumerate(stream)]
    by_source: dict[int, list[Transition]] = {}
    for t in automaton.transitions:
        by_source.setdefault(t.source, []).append(t)
    results: set[ComplexEvent] = set()
    for i in range(len(events)):
        configs: set[Config] = {(automaton.initial, (), ())}
        for j in range(i, len(events)):
            following: set[Config] = set()
            for config in configs:
                following.update(_step(automaton, by_source, config, events[j]))
            for state, _tau, so_far in following:
                if state in automaton.finals:
                    results.add(ComplexEvent(i, j, so_far))
            configs = following
            if not configs:
                break
    return results


def run(query: Query, stream: Sequence[Event], schema: Schema) -> list[Match] | list[TrendRow]:
    """A whole query on naive automaton runs (same contract as the other engines).

    The query's formula and WITHIN are compiled (:func:`acel.compiler.compile_query`);
    ``acel.lang.clauses.run_query`` splits partitions, renumbers, and applies
    WITHIN (again, harmlessly) and RETURN/SLIDE.  A leading or trailing
    negation's ``ψ`` runs on its own automaton (no WITHIN: its matches are
    placed in the window by ``run_query``, spec §3.1).
    """
    compiled = compile_query(query, schema)
    top = top_negation(query.formula)
    negated = dict(zip(top.leading + top.trailing, compiled.leading + compiled.trailing))
    # NEXT, LAST and MAX choose among all complex events ending together, before WITHIN (§6.2)
    body = compiled.formula_automaton if query.select in ("NEXT", "LAST", "MAX") else compiled.automaton

    def on_substream(formula: Formula, events: Sequence[Event]) -> set[ComplexEvent]:
        automaton = negated.get(formula, body)
        return evaluate(automaton, events)

    return run_query(query, stream, on_substream)
