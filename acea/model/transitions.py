"""The transitions of an ACEA (seed 004 §6, spec §7): ``(p, α, P, m, q)`` and the
renamings ``ρ`` its output bags hold.

Their own module, below :mod:`acel.acea.model.automaton`, so that the pictures and
words of an automaton (:mod:`~acel.acea.model.render`, :mod:`~acel.acea.model.words`)
name them without importing the automaton, which draws itself through them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from acel.acea.model.expressions import RExpr, RPred

from acel.lang.events import Event

__all__ = ["Output", "Renaming", "Transition", "make_output"]


@dataclass(frozen=True)
class Renaming:
    """``ρ``: builds an event whose attribute ``attr`` is register ``reg``."""

    items: tuple[tuple[str, str], ...]
    """``(attribute, register)`` pairs, sorted by attribute."""

    @staticmethod
    def of(mapping: Mapping[str, str]) -> Renaming:
        return Renaming(tuple(sorted(mapping.items())))

    def registers(self) -> set[str]:
        return {reg for _, reg in self.items}

    def apply(self, time: int, tau: Mapping[str, Any]) -> Event:
        """``ρ(τ')``: the emitted event, at the time of the event just read."""
        return Event.make(time, {attr: tau.get(reg) for attr, reg in self.items})


Output = tuple[tuple[str, tuple[Renaming, ...]], ...]
"""``m``: variable ↦ bag of renamings, sorted by variable, no empty bags."""


def make_output(mapping: Mapping[str, Sequence[Renaming]]) -> Output:
    """A canonical ``m`` from any variable → renamings mapping."""
    return tuple(
        (var, tuple(sorted(renamings, key=lambda r: r.items)))
        for var, renamings in sorted(mapping.items())
        if renamings
    )


@dataclass(frozen=True)
class Transition:
    """``(source, α, P, m, target)``."""

    source: int
    assignment: tuple[tuple[str, RExpr], ...]
    """``register := expression``, sorted by register."""
    predicate: RPred
    output: Output
    target: int

    @staticmethod
    def make(
        source: int,
        assignment: Mapping[str, RExpr],
        predicate: RPred,
        output: Mapping[str, Sequence[Renaming]],
        target: int,
    ) -> Transition:
        return Transition(
            source, tuple(sorted(assignment.items())), predicate, make_output(output), target
        )

    def assigned(self) -> set[str]:
        return {reg for reg, _ in self.assignment}

    def emits(self) -> bool:
        return bool(self.output)
