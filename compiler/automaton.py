"""The compiler's working form of an automaton and its two invariants.

Every construction of :mod:`acel.compiler.construct` takes and returns an
:class:`Auto`, the tuple ``(Q, Δ, q0, F)`` of :class:`acel.acea.model.ACEA`
without validation, so that intermediate results may hold dead states (the
compiler trims once at the end).  Two invariants hold for every ``Auto`` the
constructions build, and the constructions rely on them
(``papers/compiler.md``, "normal form"):

* **N1** the initial state has no incoming transition, so the transitions
  leaving it are exactly the *first steps* of runs;
* **N2** final states have no outgoing transition (they are sinks), so the
  transitions entering them are exactly the *last steps* of accepting runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from acel.acea.model.automaton import ACEA, Renaming, Transition
from acel.acea.model.expressions import RExpr, RPred

Outputs = dict[str, list[Renaming]]
"""``m`` as a dictionary: variable ↦ renamings, repeated by multiplicity."""


@dataclass(frozen=True)
class Auto:
    """``(Q, Δ, q0, F)`` with states ``0 .. num_states - 1``, not yet validated."""

    num_states: int
    initial: int
    finals: frozenset[int]
    transitions: tuple[Transition, ...]

    def is_first(self, t: Transition) -> bool:
        """Whether ``t`` is a first step of a run (N1: it leaves ``q0``)."""
        return t.source == self.initial

    def is_last(self, t: Transition) -> bool:
        """Whether ``t`` ends an accepting run (N2: it enters ``F``)."""
        return t.target in self.finals

    def shifted(self, offset: int) -> Auto:
        """The same automaton with every state number raised by ``offset``."""
        return Auto(
            self.num_states,
            self.initial + offset,
            frozenset(f + offset for f in self.finals),
            tuple(
                replace(t, source=t.source + offset, target=t.target + offset)
                for t in self.transitions
            ),
        )

    def with_transitions(self, transitions: Iterable[Transition]) -> Auto:
        return Auto(self.num_states, self.initial, self.finals, tuple(transitions))

    def to_acea(self) -> ACEA:
        """The validated model (raises :class:`acel.acea.model.AutomatonError`)."""
        return ACEA(self.num_states, self.initial, self.finals, self.transitions)

    @staticmethod
    def of(automaton: ACEA) -> Auto:
        return Auto(
            automaton.num_states, automaton.initial, automaton.finals, automaton.transitions
        )


def assignment_of(t: Transition) -> dict[str, RExpr]:
    """``α`` as a dictionary (register ↦ expression over ``τ ◁ e``)."""
    return dict(t.assignment)


def outputs_of(t: Transition) -> Outputs:
    """``m`` as a dictionary (variable ↦ renamings with multiplicity)."""
    return {var: list(renamings) for var, renamings in t.output}


def rebuild(
    t: Transition,
    *,
    assignment: dict[str, RExpr] | None = None,
    predicate: RPred | None = None,
    output: Outputs | None = None,
    source: int | None = None,
    target: int | None = None,
) -> Transition:
    """A copy of ``t`` with some parts replaced (canonical order kept)."""
    return Transition.make(
        t.source if source is None else source,
        assignment_of(t) if assignment is None else assignment,
        t.predicate if predicate is None else predicate,
        outputs_of(t) if output is None else output,
        t.target if target is None else target,
    )


def distinct_renamings(outputs: Outputs, variables: Iterable[str] | None = None) -> list[Renaming]:
    """The distinct renamings of ``m`` (of some variables), in first-seen order."""
    seen: dict[Renaming, None] = {}
    for var, renamings in outputs.items():
        if variables is None or var in variables:
            for renaming in renamings:
                seen.setdefault(renaming, None)
    return list(seen)
