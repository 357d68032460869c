"""Terms of spec §5.1 inside a relating filter, as register expressions.

The constructions of :mod:`acel.compiler.relate` and :mod:`acel.compiler.relate_single`
translate a conjunct by substituting X's own attributes and every other term (``Y.a``,
``F(Y.a)``, ``FIRST``/``LAST``, ``PREV``, ``RUNNING``) with register expressions of their
own choosing; this module does the substitution and names a refusal.
"""

from __future__ import annotations

from collections.abc import Callable

from acel.acea.model.expressions import Cmp, RExpr, RPred
from acel.compiler.translate import translate_pred

from acel.lang.ast import (
    RELATING_TYPES,
    Attr,
    BinOp,
    CmpOp,
    Compare,
    Expr,
    InList,
    Lit,
    Neg,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
    VarAttr,
)
from acel.lang.errors import UnsupportedQuery
from acel.lang.printer import format_pred

FLIP: dict[str, CmpOp] = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}
NEGATE: dict[str, CmpOp] = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "!=", "!=": "="}
PLACEHOLDER = "\x00term"
FEW_EVENTS = (
    "it compiles when its variables hold few events: at most 5 each in every run (no + "
    "around them), or WITHIN n EVENTS with n <= 5 (then at most 25 choices of one event per "
    "variable)"
)
"""What to write instead, for a conjunct the slots of ``relate_single`` would compile."""
TIES = (
    "one step emits several distinct events into the variable (ties in time: their order "
    "is the canonical order of spec §2, known only from the data); give an AGG's created "
    "events a variable of their own, not one they share with the events beside them "
    "(AS over the AGG, or two nested AGGs with one name)"
)
"""The refusal of FIRST/LAST/PREV/RUNNING over a variable one step fills with several events."""


def refuse(term: str, conjunct: Pred, var: str, why: str) -> UnsupportedQuery:
    return UnsupportedQuery(
        f"the automaton engines do not compile {term} in {var}[{format_pred(conjunct)}]: "
        f"{why} (spec §5.1, papers/compiler.md; --engine oracle runs it, and --engine sase "
        "when the formula is a sequence)"
    )




def is_own(term: Expr, var: str) -> bool:
    return isinstance(term, VarAttr) and term.var == var


def subst_expr(expr: Expr, table: dict[Expr, str], var: str) -> Expr:
    """``expr`` with X's ``X.a`` as ``a`` and every other term of §5.1 as a placeholder."""
    if isinstance(expr, VarAttr) and expr.var == var:
        return Attr(expr.attr)
    if isinstance(expr, RELATING_TYPES):
        name = table.setdefault(expr, f"{PLACEHOLDER}{len(table)}")
        return Attr(name)
    if isinstance(expr, BinOp):
        return BinOp(expr.op, subst_expr(expr.left, table, var), subst_expr(expr.right, table, var))
    if isinstance(expr, Neg):
        return Neg(subst_expr(expr.operand, table, var))
    return expr


def subst(pred: Pred, table: dict[Expr, str], var: str) -> Pred:
    if isinstance(pred, Compare):
        return Compare(pred.op, subst_expr(pred.left, table, var), subst_expr(pred.right, table, var))
    if isinstance(pred, InList):
        return InList(subst_expr(pred.expr, table, var), pred.values, pred.negated)
    if isinstance(pred, PredNot):
        return PredNot(subst(pred.operand, table, var))
    if isinstance(pred, PredAnd):
        return PredAnd(subst(pred.left, table, var), subst(pred.right, table, var))
    if isinstance(pred, PredOr):
        return PredOr(subst(pred.left, table, var), subst(pred.right, table, var))
    raise TypeError(f"not a predicate: {pred!r}")


def translate_terms(
    pred: Pred, var: str, own: Callable[[str], RExpr], terms: Callable[[Expr], RExpr]
) -> RPred:
    """``pred`` as a register predicate: own attributes through ``own``, terms through ``terms``."""
    table: dict[Expr, str] = {}
    plain = subst(pred, table, var)
    by_name = {name: term for term, name in table.items()}
    return translate_pred(plain, lambda a: terms(by_name[a]) if a in by_name else own(a))


def translate_expr_terms(
    expr: Expr, var: str, own: Callable[[str], RExpr], terms: Callable[[Expr], RExpr]
) -> RExpr:
    pred = translate_terms(Compare("=", expr, Lit(0)), var, own, terms)
    assert isinstance(pred, Cmp)
    return pred.left

