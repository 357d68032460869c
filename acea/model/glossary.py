"""What the compiler's own registers and guard conjuncts stand for, in the query's words.

A relating filter (spec §5.1) and a counted repetition (spec §3.2) compile to registers
that no variable emits (``rel_n#5``, ``count#9``) and to guards over them; read back
from the registers alone they would print as ``rel_n = 0 OR (...)``.  The compiler
notes here the source text each one serves, and the pictures and the step-through
page print that text instead (:mod:`acel.acea.model.words`).  Engines never read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from acel.acea.model.expressions import RPred


@dataclass(frozen=True)
class Term:
    """A term of spec §5.1 a register holds: its text, and the aggregate whose monoid
    element the register holds (``None``: the value itself)."""

    text: str
    func: str | None = None


@dataclass(eq=False)  # shared, compared by identity: never part of an automaton's equality
class Glossary:
    """The query's words for compiler-made guards and registers (empty: none known)."""

    guards: dict[RPred, str] = field(default_factory=dict)
    """A guard conjunct -> the query's words (``up[price > 1.05 * first.price]``)."""
    registers: dict[str, str] = field(default_factory=dict)
    """A register kept for a guard -> the words of that guard."""
    counters: dict[str, str] = field(default_factory=dict)
    """A repetition's counter register -> the repeated formula (``SELL AS up``)."""
    firsts: dict[RPred, str] = field(default_factory=dict)
    """The guard of a step that sets ``FIRST(Y.a)`` (or keeps it) -> its words."""
    terms: dict[str, Term] = field(default_factory=dict)
    """A register holding a term's value as the guard compares it (``PREV(dep_delay)``)."""
    carried: dict[str, Term] = field(default_factory=dict)
    """A register holding a term's value for the next event of the variable (what a run
    carries: the step-through page shows it)."""

    def guard(self, conjunct: RPred) -> str | None:
        """The words of a guard conjunct, ``None`` when the compiler noted none."""
        try:
            return self.guards.get(conjunct) or self.firsts.get(conjunct)
        except TypeError:  # an unhashable constant: never a noted guard
            return None

    def __bool__(self) -> bool:
        return bool(self.guards or self.registers or self.counters or self.firsts or self.terms)


NO_WORDS = Glossary()
"""The glossary of an automaton the compiler did not annotate (read only)."""
