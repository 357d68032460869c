"""Graph views of an ACEA with networkx: trimming, sizes, iterations (SCCs).

``trim`` keeps the states that are reachable from ``q0`` and co-reachable to
``F`` (the initial state is always kept, so an automaton with no accepting
run becomes a single state without transitions) and renumbers them in
breadth-first order from ``q0``.  It never changes ``⟦A⟧``: a transition
touching a removed state belongs to no accepting run.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from acel.acea.model.automaton import ACEA, Transition

if TYPE_CHECKING:
    import networkx as nx


def to_networkx(automaton: ACEA) -> nx.MultiDiGraph:
    """States as nodes (``initial``/``final`` flags), one edge per transition
    (attribute ``transition`` holds the :class:`Transition`).

    networkx is imported here, not with the module: the engine and the compiler
    use this module's trimming, and importing networkx costs more than a run
    of a small query."""
    import networkx as nx

    graph = nx.MultiDiGraph()
    for q in automaton.states():
        graph.add_node(q, initial=q == automaton.initial, final=q in automaton.finals)
    for index, t in enumerate(automaton.transitions):
        graph.add_edge(t.source, t.target, key=index, transition=t)
    return graph


def trim_parts(
    num_states: int, initial: int, finals: Iterable[int], transitions: Iterable[Transition]
) -> tuple[int, int, frozenset[int], tuple[Transition, ...]]:
    """``(Q, q0, F, Δ)`` restricted to useful states, renumbered from ``q0 = 0``."""
    final_set = frozenset(finals)
    edges = tuple(transitions)
    forward: dict[int, list[int]] = {}
    backward: dict[int, list[int]] = {}
    for t in edges:
        forward.setdefault(t.source, []).append(t.target)
        backward.setdefault(t.target, []).append(t.source)
    order = _bfs([initial], forward)
    coreachable = set(_bfs(sorted(final_set), backward))
    useful = [q for q in order if q in coreachable]
    if initial not in useful:
        useful = [initial] + [q for q in useful if q != initial]
    number = {q: i for i, q in enumerate(useful)}
    kept = tuple(
        Transition(number[t.source], t.assignment, t.predicate, t.output, number[t.target])
        for t in edges
        if t.source in number and t.target in number
    )
    if initial not in coreachable:
        kept = ()
    return (
        len(useful),
        number[initial],
        frozenset(number[f] for f in final_set if f in number and f in coreachable),
        kept,
    )


def _bfs(starts: list[int], succ: dict[int, list[int]]) -> list[int]:
    seen: dict[int, None] = dict.fromkeys(starts)
    queue = deque(starts)
    while queue:
        q = queue.popleft()
        for r in succ.get(q, ()):
            if r not in seen:
                seen[r] = None
                queue.append(r)
    return list(seen)


def trim(automaton: ACEA) -> ACEA:
    """The automaton without useless states (same complex events)."""
    n, q0, finals, transitions = trim_parts(
        automaton.num_states, automaton.initial, automaton.finals, automaton.transitions
    )
    return ACEA(n, q0, finals, transitions)


def sizes(automaton: ACEA) -> dict[str, int]:
    """States, transitions, registers, and the number of non-trivial SCCs."""
    out = dict(automaton.size())
    out["loops"] = len(iterations(automaton))
    return out


def strongly_connected_components(automaton: ACEA) -> list[frozenset[int]]:
    """All SCCs (as state sets), largest first, ties by smallest state."""
    import networkx as nx

    comps = nx.strongly_connected_components(to_networkx(automaton))
    return sorted((frozenset(c) for c in comps), key=lambda c: (-len(c), min(c)))


def iterations(automaton: ACEA) -> list[frozenset[int]]:
    """The SCCs that hold a cycle (``+``/``:+`` iterations and ``;`` skip loops)."""
    self_loops = {t.source for t in automaton.transitions if t.source == t.target}
    return [
        c for c in strongly_connected_components(automaton) if len(c) > 1 or set(c) & self_loops
    ]
