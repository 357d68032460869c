"""Unary predicates of ACEL (:mod:`acel.lang.ast`) as register predicates.

``FILTER X[P]`` checks ``P`` on the event ``ρ(τ')`` a renaming emits: an
attribute ``a`` of that event is the register ``ρ(a)``, or NULL when ``ρ``
does not write ``a`` (Appendix C's "renamed predicate").  The translation is
one-to-one, so the three-valued logic of :mod:`acel.lang.predicates` carries over
to :mod:`acel.acea.model.expressions` unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch

from acel.acea.model.expressions import (
    Arith,
    Cmp,
    Const,
    In,
    Negate,
    PAnd,
    PNot,
    POr,
    RExpr,
    RPred,
)

from acel.lang import ast as A
from acel.lang.chains import chain_operands
from acel.lang.errors import UnsupportedQuery
from acel.lang.passes import declare

AttrLookup = Callable[[str], RExpr]


@singledispatch
def translate_expr(expr: A.Expr, attr: AttrLookup) -> RExpr:
    """An arithmetic expression with each attribute replaced by ``attr(name)``."""
    raise TypeError(f"not an expression: {expr!r}")


@translate_expr.register(A.Attr)
def _translate_attr(expr: A.Attr, attr: AttrLookup) -> RExpr:
    return attr(expr.name)


@translate_expr.register(A.Lit)
def _translate_lit(expr: A.Lit, attr: AttrLookup) -> RExpr:
    return Const(expr.value)


@translate_expr.register(A.Neg)
def _translate_neg(expr: A.Neg, attr: AttrLookup) -> RExpr:
    return Negate(translate_expr(expr.operand, attr))


@translate_expr.register(A.BinOp)
def _translate_binop(expr: A.BinOp, attr: AttrLookup) -> RExpr:
    return Arith(expr.op, translate_expr(expr.left, attr), translate_expr(expr.right, attr))


@translate_expr.register(A.VarAttr)
@translate_expr.register(A.BagAgg)
@translate_expr.register(A.FirstLast)
@translate_expr.register(A.Prev)
@translate_expr.register(A.Running)
def _translate_relating(expr: A.Relating, attr: AttrLookup) -> RExpr:
    raise UnsupportedQuery(
        f"a term relating events ({type(expr).__name__}) reached the unary translation: "
        "compile it through acel.compiler.relate (spec §5.1)"
    )


@singledispatch
def translate_pred(pred: A.Pred, attr: AttrLookup) -> RPred:
    """A unary predicate with each attribute replaced by ``attr(name)``."""
    raise TypeError(f"not a predicate: {pred!r}")


@translate_pred.register(A.Compare)
def _translate_compare(pred: A.Compare, attr: AttrLookup) -> RPred:
    return Cmp(pred.op, translate_expr(pred.left, attr), translate_expr(pred.right, attr))


@translate_pred.register(A.InList)
def _translate_in(pred: A.InList, attr: AttrLookup) -> RPred:
    return In(translate_expr(pred.expr, attr), tuple(pred.values), pred.negated)


@translate_pred.register(A.PredNot)
def _translate_not(pred: A.PredNot, attr: AttrLookup) -> RPred:
    return PNot(translate_pred(pred.operand, attr))


@translate_pred.register(A.PredAnd)
def _translate_and(pred: A.PredAnd, attr: AttrLookup) -> RPred:
    return PAnd(tuple(translate_pred(p, attr) for p in _operands(pred, A.PredAnd)))


@translate_pred.register(A.PredOr)
def _translate_or(pred: A.PredOr, attr: AttrLookup) -> RPred:
    return POr(tuple(translate_pred(p, attr) for p in _operands(pred, A.PredOr)))


def _operands(pred: A.Pred, kind: type[A.PredAnd] | type[A.PredOr]) -> list[A.Pred]:
    """The operands of a chain ``p1 AND p2 AND ...`` (or OR), left to right.

    Three-valued AND and OR are associative, so a chain becomes one n-ary
    ``PAnd``/``POr``: the register predicate, and the code the optimized engine
    generates from it, stay one level deep however long the chain is.
    """
    return chain_operands(pred, kind)


declare("translate.expression", "expression", translate_expr)
declare("translate.predicate", "predicate", translate_pred)
