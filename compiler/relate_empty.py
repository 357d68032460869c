"""Relating conjuncts that an event of the bag they compare with always fails (spec §5.1).

``X[a != MAX(X.a)]``, ``X[a != LAST(X.a)]`` (also ``MIN``, ``FIRST``, ``NOT a = …``, a
factor ``1 *``): under the universal reading the event that gives the whole-bag value
(the greatest, the last, …) compares its own ``a`` with itself, and ``v != v`` is false
(so is a NULL ``v``, §5); when every ``a`` is NULL the term is NULL and every event
fails.  So the conjunct holds iff ``C(X)`` is empty, whatever the stream.  The same holds
when the term's variable ``Y`` is contained in X (every step emitting an event into Y
emits it into X too): an empty Y makes the term NULL.  ``X[a != Y.a]`` with Y contained
in X holds iff ``C(Y)`` is empty (choose ``e`` in Y).  These are the ``!=`` conjuncts
with no register summary that are decided without one (``papers/compiler.md``).
"""

from __future__ import annotations

from acel.compiler.automaton import Auto, distinct_renamings, outputs_of
from acel.compiler.construct import _finish
from acel.compiler.context import Context

from acel.lang.ast import Attr, BagAgg, BinOp, Compare, Expr, FirstLast, Lit, Pred, PredNot, VarAttr

EXTREMES = ("MIN", "MAX")
"""Whole-bag aggregates whose value is the attribute of one event of the bag."""


def empty_variable(auto: Auto, conjunct: Pred, var: str) -> str | None:
    """The variable that must be empty for ``conjunct`` of ``X[…]`` to hold (module doc),
    or None when the conjunct is not of that shape."""
    pred, negated = (conjunct.operand, True) if isinstance(conjunct, PredNot) else (conjunct, False)
    if not isinstance(pred, Compare) or (pred.op == "!=") == negated or pred.op not in ("!=", "="):
        return None
    for own, other in ((pred.left, pred.right), (pred.right, pred.left)):
        attr = _own_attr(own, var)
        term = _unit(other)
        if attr is None or term is None or not contained(auto, _term_var(term), var):
            continue
        if isinstance(term, VarAttr) and term.attr == attr and term.var != var:
            return term.var
        if isinstance(term, FirstLast) and term.attr == attr:
            return var
        if isinstance(term, BagAgg) and term.func in EXTREMES and term.attr == attr:
            return var
    return None


def _own_attr(expr: Expr, var: str) -> str | None:
    if isinstance(expr, Attr):
        return expr.name
    if isinstance(expr, VarAttr) and expr.var == var:
        return expr.attr
    return None


def _unit(expr: Expr) -> Expr | None:
    """``expr`` without factors ``1 *``, ``* 1``, ``/ 1`` (integer 1: a number times 1 is
    itself, anything else times 1 is NULL); None when it is not a term of §5.1."""
    while isinstance(expr, BinOp) and expr.op in ("*", "/"):
        if _one(expr.right):
            expr = expr.left
        elif expr.op == "*" and _one(expr.left):
            expr = expr.right
        else:
            return None
    return expr if isinstance(expr, (VarAttr, FirstLast, BagAgg)) else None


def _one(expr: Expr) -> bool:
    return isinstance(expr, Lit) and type(expr.value) is int and expr.value == 1


def _term_var(term: Expr) -> str:
    assert isinstance(term, (VarAttr, FirstLast, BagAgg))
    return term.var


def contained(auto: Auto, inner: str, outer: str) -> bool:
    """Whether every event of ``inner`` is one of ``outer`` in every run: each step emits
    into ``outer`` every renaming it emits into ``inner``."""
    if inner == outer:
        return True
    for t in auto.transitions:
        outputs = outputs_of(t)
        if not set(distinct_renamings(outputs, [inner])) <= set(distinct_renamings(outputs, [outer])):
            return False
    return True


def filter_empty(ctx: Context, auto: Auto, var: str) -> Auto:
    """The runs in which ``var`` receives no event: every step emitting into it is dropped."""
    return _finish(ctx, auto, [t for t in auto.transitions if not outputs_of(t).get(var)])
