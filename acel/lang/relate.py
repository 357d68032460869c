"""Predicates that relate events (spec §5.1), read exactly as the spec writes them.

Inside ``X[P]``, ``P`` may use ``Y.a``, ``F(Y.a)``, ``COUNT(Y)``, ``FIRST``/``LAST(Y.a)``,
``PREV(a)`` and ``RUNNING F(a)``.  :func:`bag_holds_relating` is the definition every engine
is checked against (the oracle calls it); the helpers that say which terms a predicate uses
(:func:`others`, :func:`reads_history`) are shared with the checker and the compiler.

* **Universal reading, conjunct by conjunct**: ``P`` is split into its top-level ``AND``
  conjuncts; a conjunct that names other variables ``Y1..Yk`` (through ``Yi.a``) must hold
  for every event ``e`` of ``C(X)`` with every choice of one event from each ``C(Yi)``,
  and holds outright when one of those bags is empty.
* **First events**: a conjunct that reads ``PREV`` or ``RUNNING`` is not required of an
  ``e`` without an earlier event in ``C(X)``.
* Whole-bag terms (``F(Y.a)``, ``COUNT(Y)``, ``FIRST``, ``LAST``) have one value per
  complex event; NULLs follow spec §4 and §5.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import product

from acel.lang import aggregates
from acel.lang.ast import (
    RELATING_TYPES,
    BagAgg,
    BinOp,
    Compare,
    Expr,
    FirstLast,
    InList,
    Neg,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
    Prev,
    Running,
    VarAttr,
)
from acel.lang.chains import chain_operands
from acel.lang.events import Event, OptValue
from acel.lang.predicates import holds

Bags = Callable[[str], Sequence[Event]]
"""A complex event's bags: variable → its events in canonical order (spec §2)."""


def conjuncts(pred: Pred) -> list[Pred]:
    """The top-level ``AND`` conjuncts of ``pred``, left to right."""
    return chain_operands(pred, PredAnd)


def expressions(pred: Pred) -> Iterator[Expr]:
    """Every expression node of ``pred`` (sub-expressions included)."""
    stack: list[Pred | Expr] = [pred]
    while stack:
        node = stack.pop()
        if isinstance(node, (PredAnd, PredOr)):
            stack.extend((node.right, node.left))
        elif isinstance(node, PredNot):
            stack.append(node.operand)
        elif isinstance(node, Compare):
            stack.extend((node.right, node.left))
        elif isinstance(node, InList):
            stack.append(node.expr)
        elif isinstance(node, BinOp):
            yield node
            stack.extend((node.right, node.left))
        elif isinstance(node, Neg):
            yield node
            stack.append(node.operand)
        else:
            yield node


def relating_terms(pred: Pred) -> list[Expr]:
    """The terms of spec §5.1 in ``pred``."""
    return [e for e in expressions(pred) if isinstance(e, RELATING_TYPES)]


def is_relating(pred: Pred) -> bool:
    """Whether ``pred`` uses a term of spec §5.1 (else it is a plain unary predicate)."""
    return bool(relating_terms(pred))


def others(pred: Pred, var: str) -> tuple[str, ...]:
    """The variables other than ``var`` that ``pred`` reads universally (``Y.a``), sorted."""
    return tuple(
        sorted({t.var for t in relating_terms(pred) if isinstance(t, VarAttr) and t.var != var})
    )


def reads_history(pred: Pred) -> bool:
    """Whether ``pred`` reads ``PREV`` or ``RUNNING`` (the first-event rule applies)."""
    return any(isinstance(t, (Prev, Running)) for t in relating_terms(pred))


def bag_aggregate(func: str, attr: str | None, bag: Sequence[Event]) -> OptValue:
    """``F`` over ``{{ e(a) : e ∈ bag }}`` (``COUNT(Y)``: one per event), spec §4."""
    agg = aggregates.lookup(func)
    if agg is None:
        raise ValueError(f"unknown aggregate function {func!r}")
    values: list[OptValue] = [1 for _ in bag] if attr is None else [e.get(attr) for e in bag]
    return agg.apply(values)


def edge_value(which: str, attr: str, bag: Sequence[Event]) -> OptValue:
    """``FIRST``/``LAST``: ``a`` of the least / greatest event in canonical order (time
    first, spec §2); NULL for an empty bag."""
    if not bag:
        return None
    ordered = sorted(bag, key=Event.sort_key)
    return (ordered[0] if which == "FIRST" else ordered[-1]).get(attr)


def earlier(bag: Sequence[Event], event: Event) -> list[Event]:
    """The events of ``bag`` whose time is below ``time(event)``, in canonical order."""
    return sorted((e for e in bag if e.time < event.time), key=Event.sort_key)


def term_value(
    term: Expr, event: Event, var: str, chosen: dict[str, Event], bags: Bags
) -> OptValue:
    """The value of one term of spec §5.1 for ``event`` of ``C(var)``; ``chosen`` holds the
    event picked from each other variable's bag."""
    if isinstance(term, VarAttr):
        source = event if term.var == var else chosen[term.var]
        return source.get(term.attr)
    if isinstance(term, BagAgg):
        return bag_aggregate(term.func, term.attr, bags(term.var))
    if isinstance(term, FirstLast):
        return edge_value(term.which, term.attr, bags(term.var))
    before = earlier(bags(var), event)
    if isinstance(term, Prev):
        return before[-1].get(term.attr) if before else None
    if isinstance(term, Running):
        return bag_aggregate(term.func, term.attr, before)
    raise TypeError(f"not a relating term: {term!r}")


def holds_for(conjunct: Pred, var: str, event: Event, bags: Bags) -> bool:
    """One conjunct for one ``event`` of ``C(var)``: with every choice of one event from
    each other variable it names (none to choose: it holds), first-event rule included."""
    if reads_history(conjunct) and not earlier(bags(var), event):
        return True
    names = others(conjunct, var)
    choices = [sorted(set(bags(y)), key=Event.sort_key) for y in names]
    for picked in product(*choices):
        chosen = dict(zip(names, picked))

        def terms(term: Expr, chosen: dict[str, Event] = chosen) -> OptValue:
            return term_value(term, event, var, chosen, bags)

        if not holds(conjunct, event.get, terms):
            return False
    return True


def conjunct_holds(conjunct: Pred, var: str, bags: Bags) -> bool:
    """One conjunct over every event of ``C(var)`` (universal reading, first-event rule)."""
    return all(
        holds_for(conjunct, var, event, bags)
        for event in sorted(set(bags(var)), key=Event.sort_key)
    )


def bag_holds_relating(pred: Pred, var: str, bags: Bags) -> bool:
    """``X[P]`` on a complex event with bags ``bags``: every conjunct holds (spec §5.1)."""
    return all(conjunct_holds(c, var, bags) for c in conjuncts(pred))
