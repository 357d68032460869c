"""One construction per distinct subformula: a copy of it, renumbered, for the others.

A quantifier's options repeat their operand (``φ{1,40}`` holds 820 copies of
``φ``), and ``NEXT(R)`` is a macro of five operators: compiling each copy from
scratch made ``((NEXT(BUY)):{2,4}){1,40}`` run for minutes (issue 36).  A
subformula's construction draws its fresh registers (:meth:`Context.fresh`) as
one contiguous run of the context's counter, and depends only on the formula
and on those registers' known values, so building it again would give the same
automaton with every register number shifted by the distance between the two
counters: that is what :func:`renumbered` returns, without building anything.
Automata holding a negation's inner automaton (``GapStep``/``GapClear``) are
built again instead.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from acel.acea.model.automaton import Renaming, Transition
from acel.acea.model.expressions import (
    Arith,
    Cmp,
    Combine,
    Const,
    Finish,
    Identity,
    In,
    IsNull,
    Lift,
    Negate,
    PAnd,
    PNot,
    POr,
    Reg,
    SameValue,
    TrueP,
)
from acel.compiler.automaton import Auto
from acel.compiler.context import Context

_NODES = (Arith, Cmp, Combine, Const, Finish, Identity, In, IsNull, Lift, Negate, PAnd, PNot,
          POr, SameValue, TrueP)
"""The expression and predicate nodes a copy renumbers (any other: built again)."""


class _Foreign(Exception):
    """An expression node this module does not renumber."""


@dataclass(frozen=True)
class Built:
    """A subformula's automaton and the counter values around its construction."""

    auto: Auto
    before: int
    after: int
    constants: tuple[tuple[str, Any], ...]
    """The known values of its own registers."""


def remember(ctx: Context, auto: Auto, before: int) -> Built | None:
    """What :func:`renumbered` needs to copy ``auto`` (built from counter ``before``), or
    None when it holds nodes a copy cannot renumber."""
    try:
        for t in auto.transitions:
            _check(t)
    except _Foreign:
        return None
    own = tuple((reg, value) for reg, value in ctx.constants.items()
                if before < _number(reg) <= ctx.counter)
    return Built(auto, before, ctx.counter, own)


def renumbered(ctx: Context, built: Built) -> Auto:
    """``built``'s automaton as if built again now: its registers renumbered past the
    context's counter, which moves on as the construction would have moved it."""
    shift = ctx.counter - built.before
    ctx.counter += built.after - built.before
    if shift == 0:
        return built.auto

    def name(reg: str) -> str:
        number = _number(reg)
        if built.before < number <= built.after:
            return f"{reg.rpartition('#')[0]}#{number + shift}"
        return reg

    for reg, value in built.constants:
        ctx.constants[name(reg)] = value
    return built.auto.with_transitions(_transition(t, name) for t in built.auto.transitions)


def _number(reg: str) -> int:
    stem, sep, tail = reg.rpartition("#")
    return int(tail) if sep and tail.isdigit() else -1


def _check(t: Transition) -> None:
    for _, expr in t.assignment:
        _walk(expr, None)
    _walk(t.predicate, None)


def _transition(t: Transition, name: Any) -> Transition:
    return Transition(
        t.source,
        tuple(sorted((name(reg), _walk(expr, name)) for reg, expr in t.assignment)),
        _walk(t.predicate, name),
        tuple((var, tuple(sorted((Renaming(tuple((attr, name(reg)) for attr, reg in r.items))
                                  for r in renamings), key=lambda r: r.items)))
              for var, renamings in t.output),
        t.target,
    )


def _walk(node: Any, name: Any) -> Any:
    """``node`` with its registers renamed by ``name`` (None: only check it can be)."""
    if type(node) is Reg:
        return node if name is None else Reg(name(node.name))
    if type(node) not in _NODES:
        raise _Foreign
    changes: dict[str, Any] = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if type(value) is Reg or type(value) in _NODES:
            changes[f.name] = _walk(value, name)
        elif type(value) is tuple and f.name == "operands":
            changes[f.name] = tuple(_walk(v, name) for v in value)
    return node if name is None else replace(node, **changes)
