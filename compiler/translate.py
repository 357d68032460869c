"""Unary predicates of ACEL (:mod:`acel.lang.ast`) as register predicates.

``FILTER X[P]`` checks ``P`` on the event ``ρ(τ')`` a renaming emits: an
attribute ``a`` of that event is the register ``ρ(a)``, or NULL when ``ρ``
does not write ``a`` (Appendix C's "renamed predicate").  The translation is
one-to-one, so the three-valued logic of :mod:`acel.lang.predicates` carries over
to :mod:`acel.acea.model.expressions` unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

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

from acel.lang.ast import (
    Attr,
    BinOp,
    Compare,
    Expr,
    InList,
    Lit,
    Neg,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
)

AttrLookup = Callable[[str], RExpr]


def translate_expr(expr: Expr, attr: AttrLookup) -> RExpr:
    """An arithmetic expression with each attribute replaced by ``attr(name)``."""
    if isinstance(expr, Attr):
        return attr(expr.name)
    if isinstance(expr, Lit):
        return Const(expr.value)
    if isinstance(expr, Neg):
        return Negate(translate_expr(expr.operand, attr))
    if isinstance(expr, BinOp):
        return Arith(expr.op, translate_expr(expr.left, attr), translate_expr(expr.right, attr))
    raise TypeError(f"not an expression: {expr!r}")


def translate_pred(pred: Pred, attr: AttrLookup) -> RPred:
    """A unary predicate with each attribute replaced by ``attr(name)``."""
    if isinstance(pred, Compare):
        return Cmp(pred.op, translate_expr(pred.left, attr), translate_expr(pred.right, attr))
    if isinstance(pred, InList):
        return In(translate_expr(pred.expr, attr), tuple(pred.values), pred.negated)
    if isinstance(pred, PredNot):
        return PNot(translate_pred(pred.operand, attr))
    if isinstance(pred, PredAnd):
        return PAnd(tuple(translate_pred(p, attr) for p in _operands(pred, PredAnd)))
    if isinstance(pred, PredOr):
        return POr(tuple(translate_pred(p, attr) for p in _operands(pred, PredOr)))
    raise TypeError(f"not a predicate: {pred!r}")


def _operands(pred: Pred, kind: type[PredAnd] | type[PredOr]) -> list[Pred]:
    """The operands of a chain ``p1 AND p2 AND ...`` (or OR), left to right.

    Three-valued AND and OR are associative, so a chain becomes one n-ary
    ``PAnd``/``POr``: the register predicate, and the code the optimized engine
    generates from it, stay one level deep however long the chain is.
    """
    out: list[Pred] = []
    stack: list[Pred] = [pred]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            stack.extend((node.right, node.left))
        else:
            out.append(node)
    return out
