"""Plain CEL automata (CEA) and their translation to ACEA (seed 004 Thm 6.1).

A CEA ``(Q, Δ, q0, F)`` has transitions ``(p, P, L, q)``: reading ``e_k``
with ``e_k ⊨ P`` it moves from ``p`` to ``q`` and marks position ``k`` in every
variable of ``L``.  An accepting run from ``i`` to ``j`` defines the complex
event ``(i, j, X ↦ {{e_k : X ∈ L_k}})`` (positions become events, Theorem 3.1).

Theorem 6.1: the ACEA with the same states whose transitions copy every
schema attribute ``a`` into ``a#`` (the paper's ``id``), check ``P`` renamed
onto the copies, and emit the copy into each variable of ``L`` defines the
same complex events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acel.acea.model.automaton import ACEA, Renaming, Transition
from acel.acea.model.expressions import Const, Reg, TrueP
from acel.compiler.translate import translate_pred

from acel.lang.ast import Pred
from acel.lang.events import ComplexEvent, Event
from acel.lang.predicates import event_holds
from acel.lang.schema import Schema


@dataclass(frozen=True)
class CEATransition:
    """``(source, P, L, target)``; ``predicate`` ``None`` is TRUE."""

    source: int
    predicate: Pred | None
    variables: frozenset[str]
    target: int


@dataclass(frozen=True)
class CEA:
    """A complex event automaton with states ``0 .. num_states - 1``."""

    num_states: int
    initial: int
    finals: frozenset[int]
    transitions: tuple[CEATransition, ...]


def evaluate_cea(cea: CEA, stream: Sequence[Event]) -> set[ComplexEvent]:
    """``⟦A⟧(S)`` of a CEA, by enumerating runs from every start (definition of §6)."""
    events = [e if e.time == k else e.at(k) for k, e in enumerate(stream)]
    out: set[ComplexEvent] = set()
    for i in range(len(events)):
        configs: set[tuple[int, tuple[tuple[str, int], ...]]] = {(cea.initial, ())}
        for j in range(i, len(events)):
            following: set[tuple[int, tuple[tuple[str, int], ...]]] = set()
            for state, marks in configs:
                for t in cea.transitions:
                    if t.source != state:
                        continue
                    if t.predicate is not None and not event_holds(t.predicate, events[j]):
                        continue
                    new = tuple(sorted(marks + tuple((v, j) for v in t.variables)))
                    following.add((t.target, new))
            for state, marks in following:
                if state in cea.finals:
                    mu: dict[str, list[Event]] = {}
                    for var, k in marks:
                        mu.setdefault(var, []).append(events[k])
                    out.add(ComplexEvent.make(i, j, mu))
            configs = following
    return out


def cea_to_acea(cea: CEA, schema: Schema) -> ACEA:
    """Theorem 6.1: the equivalent ACEA over streams of ``schema``."""
    attrs = schema.all_attributes()
    copies = {a: f"{a}#" for a in attrs}
    assignment = {reg: Reg(a) for a, reg in copies.items()}
    identity = Renaming.of(copies)
    transitions = tuple(
        Transition.make(
            t.source,
            assignment,
            TrueP()
            if t.predicate is None
            else translate_pred(t.predicate, lambda a: Reg(copies[a]) if a in copies else Const(None)),
            {var: [identity] for var in t.variables},
            t.target,
        )
        for t in cea.transitions
    )
    return ACEA(cea.num_states, cea.initial, cea.finals, transitions)
