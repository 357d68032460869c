"""The Aggregation Complex Event Automaton (seed 004 §6, spec §7).

``A = (Q, Δ, q0, F)`` with transitions ``(p, α, P, m, q)``.  Reading event
``e`` in configuration ``(p, τ)``: ``τ ◁ e`` (the event's attributes and time
overwrite), then the assignment ``α`` (only assigned registers survive), then
the predicate ``P`` must hold on the new registers ``τ'``; for each variable
``X`` the transition emits ``ρ(τ')`` for every renaming ``ρ`` in the bag ``m(X)``.

Registers are names containing ``#`` (see :mod:`acea.expressions`), so that
``τ ◁ e`` never overwrites one.  Register valuations are sorted tuples of
``(register, value)`` with NULL registers left out, so equal valuations are
equal tuples: configurations can be hashed and merged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any

from acel.acea.model.expressions import (
    TIME,
    Cmp,
    Configuration,
    Const,
    In,
    Lookup,
    PAnd,
    Reg,
    Registers,
    TrueP,
    eval_rexpr,
    eval_rpred,
    is_register,
    names_in_expr,
    names_in_pred,
)
from acel.acea.model.glossary import NO_WORDS, Glossary
from acel.acea.model.transitions import Output as Output
from acel.acea.model.transitions import Renaming as Renaming
from acel.acea.model.transitions import Transition
from acel.acea.model.transitions import make_output as make_output

from acel.lang.events import Event

EMPTY: Registers = ()


class AutomatonError(ValueError):
    """An ill-formed automaton (unknown register, inconsistent renaming, ...)."""


def lookup_in(tau: Registers, event: Event) -> dict[str, Any]:
    """``τ ◁ e`` as a dictionary: registers, then the event's attributes and time."""
    values: dict[str, Any] = dict(tau)
    values.update(event.attrs)
    values[TIME] = event.time
    return values


def fire(transition: Transition, tau: Registers, event: Event) -> Registers | None:
    """The registers ``τ'`` after ``transition`` reads ``event``, or ``None``
    when its predicate fails."""
    before = lookup_in(tau, event)
    after = {reg: eval_rexpr(expr, before.get) for reg, expr in transition.assignment}
    new_tau: Registers = tuple(sorted((r, v) for r, v in after.items() if v is not None))
    after_lookup = dict(new_tau)
    if not isinstance(transition.predicate, TrueP) and not eval_rpred(
        transition.predicate, after_lookup.get
    ):
        return None
    return new_tau


def fire_lookup(transition: Transition, tau: Registers, event: Lookup) -> Registers | None:
    """:func:`fire` where ``event`` reads the event's attributes and ``@time`` by name.

    Used to step a negated formula's automaton inside a gap register: its
    registers come from ``tau`` only, the event from the outer lookup.
    """
    registers = dict(tau)

    def before(name: str) -> Any:
        return registers.get(name) if is_register(name) else event(name)

    after = {reg: eval_rexpr(expr, before) for reg, expr in transition.assignment}
    new_tau: Registers = tuple(sorted((r, v) for r, v in after.items() if v is not None))
    if not isinstance(transition.predicate, TrueP) and not eval_rpred(
        transition.predicate, dict(new_tau).get
    ):
        return None
    return new_tau


def emitted(transition: Transition, tau: Registers, time: int) -> dict[str, list[Event]]:
    """The events a transition emits per variable, given its ``τ'``."""
    values = dict(tau)
    return {
        var: [renaming.apply(time, values) for renaming in renamings]
        for var, renamings in transition.output
    }


@dataclass(frozen=True)
class ACEA:
    """``(Q, Δ, q0, F)`` with states numbered ``0 .. num_states - 1``."""

    num_states: int
    initial: int
    finals: frozenset[int]
    transitions: tuple[Transition, ...]
    words: Glossary = field(default=NO_WORDS, compare=False, repr=False)
    """The query's words for the compiler's own registers and guards (pictures only)."""

    def __post_init__(self) -> None:
        validate(self)

    def states(self) -> range:
        return range(self.num_states)

    def outgoing(self, state: int) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.source == state)

    def registers(self) -> set[str]:
        out: set[str] = set()
        for t in self.transitions:
            out |= t.assigned()
        return out

    @cached_property
    def by_source(self) -> dict[int, tuple[Transition, ...]]:
        """The transitions leaving each state, in order."""
        out: dict[int, list[Transition]] = {}
        for t in self.transitions:
            out.setdefault(t.source, []).append(t)
        return {q: tuple(ts) for q, ts in out.items()}

    @cached_property
    def live(self) -> dict[int, frozenset[str]]:
        """``live(q)``: the registers the transitions leaving ``q`` read; the others
        cannot change any future of a run in ``q``."""
        out: dict[int, set[str]] = {q: set() for q in self.states()}
        for t in self.transitions:
            for _, expr in t.assignment:
                out[t.source] |= {n for n in names_in_expr(expr) if is_register(n)}
        return {q: frozenset(regs) for q, regs in out.items()}

    @cached_property
    def event_names(self) -> frozenset[str]:
        """The attribute names (and ``@time``) the automaton reads from events."""
        names: set[str] = set()
        for t in self.transitions:
            for _, expr in t.assignment:
                names |= {n for n in names_in_expr(expr) if not is_register(n)}
        return frozenset(names)

    def step_configurations(
        self, configurations: Iterable[Configuration] | None, event: Lookup
    ) -> frozenset[Configuration]:
        """One step of every run in ``configurations`` and of a run starting now.

        The gap register's semantics (spec §3.1, :class:`acea.expressions.GapStep`):
        the configurations reached by reading the event (``event`` looks up its
        attributes and ``@time``) from each given configuration and from
        ``(q0, ∅)``, each projected on the registers live at its state, so that
        runs with the same future are one element of the set.
        """
        reached: set[Configuration] = set()
        start: Configuration = (self.initial, EMPTY)
        for state, tau in chain(configurations or (), (start,)):
            for t in self.by_source.get(state, ()):
                new_tau = fire_lookup(t, tau, event)
                if new_tau is None:
                    continue
                keep = self.live[t.target]
                reached.add((t.target, tuple((r, v) for r, v in new_tau if r in keep)))
        return frozenset(reached)

    def accepting(self, configurations: Iterable[Configuration] | None) -> bool:
        """Whether some configuration is in a final state (a run has just accepted)."""
        return any(state in self.finals for state, _ in configurations or ())

    def _repr_svg_(self) -> str | None:
        """Jupyter display: the automaton drawn by Graphviz (:mod:`acel.acea.model.render`).

        ``None`` without Graphviz's ``dot``: the notebook then shows
        :meth:`_repr_pretty_`, a plain-text summary saying how to get pictures.
        """
        from acel.acea.model.render import svg_or_none

        return svg_or_none(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's text display: states, transitions and their labels."""
        from acel.acea.model.render import summary

        printer.text(summary(self))

    def size(self) -> dict[str, int]:
        """States, transitions and registers: the measures of ``papers/compiler.md``."""
        return {
            "states": self.num_states,
            "transitions": len(self.transitions),
            "registers": len(self.registers()),
        }


def validate(automaton: ACEA) -> None:
    """Check states, registers read before assigned, and renaming consistency.

    A transition may read a register only if every transition into its source
    assigns it (the initial state starts with no registers); its renamings may
    read only registers its own assignment writes (seed 004 §6).
    """
    n = automaton.num_states
    if not 0 <= automaton.initial < n:
        raise AutomatonError(f"initial state {automaton.initial} out of range 0..{n - 1}")
    for f in automaton.finals:
        if not 0 <= f < n:
            raise AutomatonError(f"final state {f} out of range 0..{n - 1}")
    live: dict[int, set[str] | None] = {q: None for q in range(n)}
    live[automaton.initial] = set()
    for t in automaton.transitions:
        if not (0 <= t.source < n and 0 <= t.target < n):
            raise AutomatonError(f"transition {t.source} -> {t.target} leaves the states")
        assigned = t.assigned()
        known = live[t.target]
        live[t.target] = set(assigned) if known is None else known & assigned
    for t in automaton.transitions:
        available = live[t.source] or set()
        reads: set[str] = set()
        for _, expr in t.assignment:
            reads |= names_in_expr(expr)
        for reg in reads:
            if is_register(reg) and reg not in available:
                raise AutomatonError(
                    f"transition {t.source} -> {t.target} reads register {reg!r}, "
                    f"which is not assigned on every way into state {t.source}"
                )
        for reg in names_in_pred(t.predicate):
            if reg not in t.assigned():
                raise AutomatonError(
                    f"transition {t.source} -> {t.target}: predicate reads {reg!r}, "
                    "which its assignment does not write (predicates see only τ')"
                )
        for var, renamings in t.output:
            for renaming in renamings:
                missing = renaming.registers() - t.assigned()
                if missing:
                    raise AutomatonError(
                        f"transition {t.source} -> {t.target}: renaming for {var!r} reads "
                        f"{sorted(missing)}, which its assignment does not write"
                    )


def required_types(transition: Transition) -> frozenset[str] | None:
    """The event types a transition can read, ``None`` when it reads any type.

    Recognises conjuncts ``r = 'T'`` or ``r IN ('T', ...)`` where ``r := type``.
    """
    copies = {reg for reg, expr in transition.assignment if expr == Reg("type")}
    pred = transition.predicate
    conjuncts = pred.operands if isinstance(pred, PAnd) else (pred,)
    allowed: frozenset[str] | None = None
    for c in conjuncts:
        found: frozenset[str] | None = None
        if isinstance(c, Cmp) and c.op == "=":
            for a, b in ((c.left, c.right), (c.right, c.left)):
                if (
                    isinstance(a, Reg)
                    and a.name in copies
                    and isinstance(b, Const)
                    and isinstance(b.value, str)
                ):
                    found = frozenset([b.value])
        elif isinstance(c, In) and not c.negated:
            if isinstance(c.operand, Reg) and c.operand.name in copies:
                found = frozenset(v for v in c.values if isinstance(v, str))
        if found is not None:
            allowed = found if allowed is None else allowed & found
    return allowed
