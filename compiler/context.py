"""Compilation context: fresh register names and registers of known value.

Appendix C of seed 004 assumes the sub-automata of a formula use disjoint
registers; :meth:`Context.fresh` gives every construction its own names
(``price#3``: attribute ``price`` copied by the third atom).  The ``type``
copy of an atom for ``R`` is only ever read on copies of that atom's
transition, whose predicate demands ``type = R``: :attr:`Context.constants`
records that value so that event comparisons between renamings can be
decided at compile time (:mod:`acel.compiler.equality`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from acel.acea.model.glossary import Glossary

from acel.lang.events import Value
from acel.lang.schema import Schema


@dataclass
class Context:
    """Mutable state of one compilation (never shared between compilations)."""

    schema: Schema
    counter: int = 0
    constants: dict[str, Value] = field(default_factory=dict)
    words: Glossary = field(default_factory=Glossary)
    """The query's words for the registers and guards the constructions add (pictures)."""
    built: dict[object, object] = field(default_factory=dict)
    """Subformulas built so far (:mod:`acel.compiler.memo`): a copy for the next one."""
    events: int | None = None
    """``n`` of the query's ``WITHIN n EVENTS`` when only complex events inside it are
    kept (:func:`acel.compiler.compile.events_bound`): a run that matters reads at most
    ``n`` events, so a variable holds at most ``n`` (the slots of relating filters)."""

    def fresh(self, stem: str) -> str:
        """A register name never used before in this compilation."""
        self.counter += 1
        return f"{stem}#{self.counter}"

    def fresh_group(self, stems: list[str]) -> dict[str, str]:
        """Registers sharing one number (``price#3``, ``type#3``): one atom's copies."""
        self.counter += 1
        return {stem: f"{stem}#{self.counter}" for stem in stems}
