"""Small AST builders and stream makers for the oracle's tests.

The oracle's tests build formulas directly as ASTs so that they check the
semantics independently of the parser; each example also keeps its ACEL text,
and a separate test checks that the parser reads that text as the same AST.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce

from acel.lang.ast import (
    Agg,
    AggOutput,
    As,
    Atom,
    Attr,
    BagKind,
    BagPred,
    CmpOp,
    Compare,
    Filter,
    FilterAnd,
    FilterOr,
    Formula,
    Lit,
    Pred,
    PredAnd,
    Seq,
    VarPred,
)
from acel.lang.events import ComplexEvent, Event, OptValue, Value


def atom(type_name: str) -> Atom:
    return Atom(type_name)


def as_(formula: Formula | str, var: str) -> As:
    return As(atom(formula) if isinstance(formula, str) else formula, var)


def seq(*parts: Formula) -> Formula:
    """``p1 ; p2 ; ...`` left-associative, as the parser builds it."""
    return reduce(Seq, parts)


def cmp(attr: str, op: CmpOp, value: Value) -> Compare:
    return Compare(op, Attr(attr), Lit(value))


def pand(*preds: Pred) -> Pred:
    return reduce(PredAnd, preds)


def on(var: str, pred: Pred) -> VarPred:
    return VarPred(var, pred)


def bag(var: str, kind: BagKind, attr: str) -> BagPred:
    return BagPred(var, kind, attr)


def fand(*filters: Filter) -> Filter:
    return reduce(FilterAnd, filters)


def f_or(*filters: Filter) -> Filter:
    return reduce(FilterOr, filters)


def agg(var: str, outputs: Sequence[tuple[str, str, str, str | None]], formula: Formula) -> Agg:
    """``AGG var[name := FUNC(X.a), ...](formula)`` from ``(name, FUNC, X, a)`` tuples."""
    return Agg(var, tuple(AggOutput(*o) for o in outputs), formula)


def stream(*rows: Mapping[str, OptValue]) -> list[Event]:
    """A stream from attribute maps, event ``k`` at time ``k``."""
    return [Event.make(k, row) for k, row in enumerate(rows)]


def ev(type_name: str, **attrs: OptValue) -> dict[str, OptValue]:
    return {"type": type_name, **attrs}


def times(ce: ComplexEvent, var: str) -> tuple[int, ...]:
    """The times of ``μ(var)``, with multiplicity."""
    return tuple(e.time for e in ce.bag(var))


def shape(ce: ComplexEvent, var: str) -> tuple[int, int, tuple[int, ...]]:
    """``(start, end, times of μ(var))``: a compact description for assertions."""
    return (ce.start, ce.end, times(ce, var))
