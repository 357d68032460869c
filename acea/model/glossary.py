"""What the compiler's own registers and guard conjuncts stand for, in the query's words.

A relating filter (spec §5.1) and a counted repetition (spec §3.2) compile to registers
that no variable emits (``rel_n#5``, ``count#9``) and to guards over them; read back
from the registers alone they would print as ``rel_n = 0 OR (...)``.  The compiler
notes here the source text each one serves, and the pictures and the step-through
page print that text instead (:mod:`acel.acea.model.words`).  Engines never read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from acel.acea.model.expressions import RPred, is_register

_NUMBER = re.compile(r"#\d+")


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

    _index: dict[str, tuple[int, dict[str, set[Any]]]] = field(default_factory=dict, repr=False)

    def guard(self, conjunct: RPred) -> str | None:
        """The words of a guard conjunct, ``None`` when the compiler noted none.

        A copy of a glossed subformula with its registers renumbered (a repeated
        subformula built once and copied) has the same guards but for the numbers: it
        gets their words when they are the same for every guard of that shape."""
        try:
            found = self.guards.get(conjunct) or self.firsts.get(conjunct)
        except TypeError:  # an unhashable constant: never a noted guard
            return None
        if found is not None or not (self.guards or self.firsts):
            return found
        return self._unique("guards", {**self.guards, **self.firsts}, _shape(conjunct))

    def register(self, reg: str) -> str | None:
        """The words of the filter a register is kept for (a renumbered copy: the
        words of every register of that stem)."""
        found = self.registers.get(reg)
        if found is not None or not self.registers or not is_register(reg):
            return found
        texts = self._index_of("registers", self.registers).get(_shape(reg), set())
        return " and ".join(sorted(texts)) or None

    def counter(self, reg: str) -> str | None:
        """The formula a counter register counts the repetitions of."""
        found = self.counters.get(reg)
        if found is not None or not self.counters or not is_register(reg):
            return found
        return self._unique("counters", self.counters, _shape(reg))

    def term(self, reg: str) -> Term | None:
        """The term whose value a register holds as the guard compares it."""
        found = self.terms.get(reg)
        if found is not None or not self.terms or not is_register(reg):
            return found
        return self._unique("terms", self.terms, _shape(reg))

    def carried_term(self, reg: str) -> Term | None:
        """The term whose value a register carries to the variable's next event."""
        found = self.carried.get(reg)
        if found is not None or not self.carried or not is_register(reg):
            return found
        return self._unique("carried", self.carried, _shape(reg))

    def _index_of(self, name: str, table: dict[Any, Any]) -> dict[str, set[Any]]:
        cached = self._index.get(name)
        if cached is None or cached[0] != len(table):
            index: dict[str, set[Any]] = {}
            for key, value in table.items():
                index.setdefault(_shape(key), set()).add(value)
            cached = self._index[name] = (len(table), index)
        return cached[1]

    def _unique(self, name: str, table: dict[Any, Any], shape: str) -> Any:
        values = self._index_of(name, table).get(shape, set())
        return next(iter(values)) if len(values) == 1 else None

    def __bool__(self) -> bool:
        return bool(self.guards or self.registers or self.counters or self.firsts or self.terms)


def _shape(key: object) -> str:
    """A register or guard with its register numbers left out (``rel_n#``)."""
    return _NUMBER.sub("#", key if isinstance(key, str) else repr(key))


NO_WORDS = Glossary()
"""The glossary of an automaton the compiler did not annotate (read only)."""
