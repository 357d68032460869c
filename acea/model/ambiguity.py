"""Deciding when counting runs equals counting complex events.

Trend aggregation (spec §6) propagates, per configuration, the number of
partial runs and the sums of what they emitted.  ``COUNT(*)``, ``COUNT(X)``,
``SUM`` and ``AVG`` are then exact only when no two accepting runs produce the
same complex event (the automaton is *unambiguous*).  ``MIN`` and ``MAX`` are
idempotent and never need this.

The test is the classic self-product criterion (an NFA is unambiguous iff its
trimmed self-product uses only diagonal transitions), made sound for ACEA by
over-approximating when two transitions "read the same letter":

* they may fire on the same event unless their tested types are disjoint;
* they may emit the same events only if they emit the same number of events
  into each variable (a complex event fixes, for every step, the bag of
  ``(variable, event)`` pairs emitted there, because emitted events carry the
  step's time).

Two runs of one complex event start and end at the same positions, so they
are synchronous paths of the self-product from ``(q0, q0)`` to ``F × F``.  If
every product transition on such a path pairs a transition with itself, the
runs are equal: the automaton is unambiguous.  Any other product transition
that is reachable and co-reachable makes the test answer "maybe ambiguous",
and the engine falls back to enumerating complex events (never a wrong
number).  Predicates are ignored (over-approximation), so ``A FILTER a[x > 5]
OR A FILTER a[x <= 5]`` is (conservatively) treated as ambiguous.
"""

from __future__ import annotations

from collections import Counter, deque

from acel.acea.model.automaton import ACEA, Transition, required_types


def coreachable_states(automaton: ACEA) -> set[int]:
    """States from which a final state can be reached."""
    back: dict[int, set[int]] = {}
    for t in automaton.transitions:
        back.setdefault(t.target, set()).add(t.source)
    seen = set(automaton.finals)
    todo = list(seen)
    while todo:
        q = todo.pop()
        for p in back.get(q, ()):
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def _signature(t: Transition) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter({var: len(rs) for var, rs in t.output}).items()))


def _compatible(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    """Whether two transitions' tested types may meet (``None``: any type)."""
    return a is None or b is None or not a.isdisjoint(b)


Out = dict[tuple[tuple[str, int], ...], list[tuple[int, int, frozenset[str] | None]]]
"""Per state: its useful transitions grouped by emission signature, as
``(index, target, required types)``: only transitions of one signature may pair."""


def _outgoing(automaton: ACEA, useful: set[int]) -> dict[int, Out]:
    out: dict[int, Out] = {}
    for i, t in enumerate(automaton.transitions):
        if t.source in useful and t.target in useful:
            by_sig = out.setdefault(t.source, {})
            by_sig.setdefault(_signature(t), []).append((i, t.target, required_types(t)))
    return out


def is_unambiguous(automaton: ACEA) -> bool:
    """Whether no two accepting runs can give the same complex event (sound test).

    Each transition's signature and types are computed once, and only transitions
    of the same signature are paired: an ``AND`` of ``AND``s compiles to a thousand
    transitions, whose pairs per product state were once all compared (issue 24 §9).
    """
    useful = coreachable_states(automaton)
    out = _outgoing(automaton, useful)
    start = (automaton.initial, automaton.initial)
    # forward reachability in the product, recording the product edges (once each)
    edges: dict[tuple[tuple[int, int], tuple[int, int]], bool] = {}
    seen = {start}
    todo = deque([start])
    while todo:
        p = p1, p2 = todo.popleft()
        first, second = out.get(p1, {}), out.get(p2, {})
        for sig, group1 in first.items():
            group2 = second.get(sig)
            if group2 is None:
                continue
            for i1, q1, types1 in group1:
                for i2, q2, types2 in group2:
                    if i1 != i2 and not _compatible(types1, types2):
                        continue
                    q = (q1, q2)
                    edges[p, q] = edges.get((p, q), True) and i1 == i2
                    if q not in seen:
                        seen.add(q)
                        todo.append(q)
    # backward reachability from F × F inside the reachable product
    back: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for src, dst in edges:
        back.setdefault(dst, []).append(src)
    good = {(f1, f2) for f1 in automaton.finals for f2 in automaton.finals} & seen
    stack = list(good)
    while stack:
        q = stack.pop()
        for p in back.get(q, ()):
            if p not in good:
                good.add(p)
                stack.append(p)
    return all(diagonal for (src, dst), diagonal in edges.items() if dst in good and src in good)
