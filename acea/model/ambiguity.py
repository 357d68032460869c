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


def _compatible(t1: Transition, t2: Transition) -> bool:
    if _signature(t1) != _signature(t2):
        return False
    a, b = required_types(t1), required_types(t2)
    return a is None or b is None or bool(a & b)


def is_unambiguous(automaton: ACEA) -> bool:
    """Whether no two accepting runs can give the same complex event (sound test)."""
    useful = coreachable_states(automaton)
    trans = [t for t in automaton.transitions if t.source in useful and t.target in useful]
    out: dict[int, list[tuple[int, Transition]]] = {}
    for i, t in enumerate(trans):
        out.setdefault(t.source, []).append((i, t))
    start = (automaton.initial, automaton.initial)
    # forward reachability in the product, recording the product edges
    edges: list[tuple[tuple[int, int], tuple[int, int], bool]] = []
    seen = {start}
    todo = deque([start])
    while todo:
        p1, p2 = todo.popleft()
        for i1, t1 in out.get(p1, ()):
            for i2, t2 in out.get(p2, ()):
                if i1 != i2 and not _compatible(t1, t2):
                    continue
                q = (t1.target, t2.target)
                edges.append(((p1, p2), q, i1 == i2))
                if q not in seen:
                    seen.add(q)
                    todo.append(q)
    # backward reachability from F × F inside the reachable product
    back: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for src, dst, _ in edges:
        back.setdefault(dst, []).append(src)
    good = {(f1, f2) for f1 in automaton.finals for f2 in automaton.finals} & seen
    stack = list(good)
    while stack:
        q = stack.pop()
        for p in back.get(q, ()):
            if p not in good:
                good.add(p)
                stack.append(p)
    return all(diagonal for src, dst, diagonal in edges if dst in good and src in good)
