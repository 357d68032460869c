"""Evaluation of expressions, unary predicates and bag predicates (spec §5).

Three-valued logic: a comparison that reads NULL is *unknown*; NOT unknown is
unknown; AND/OR follow SQL; a predicate holds only when it is *true*.  The
functions take a ``lookup`` from attribute name to value so that the oracle
(stream events) and the automata (register events) share one definition.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from functools import singledispatch
from typing import Any, Optional

from acel.lang import ast as A
from acel.lang.events import Event, OptValue
from acel.lang.passes import declare

Lookup = Callable[[str], OptValue]
Terms = Optional[Callable[[A.Expr], OptValue]]
"""The value of a term that relates events (spec §5.1, ``acel.lang.relate``); ``None``
where there are none (a unary predicate)."""
Truth = Optional[bool]
"""Three-valued truth: True, False or None (unknown)."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@singledispatch
def eval_expr(expr: A.Expr, lookup: Lookup, terms: Terms = None) -> OptValue:
    """The value of an arithmetic expression, NULL when it cannot be computed.

    Arithmetic is defined on numbers only (bools and strings give NULL, except
    ``+`` on two strings, which concatenates); ``/`` is true division and
    ``/`` or ``%`` by zero gives NULL.
    """
    raise TypeError(f"not an expression: {expr!r}")


@eval_expr.register(A.Attr)
def _eval_attr(expr: A.Attr, lookup: Lookup, terms: Terms = None) -> OptValue:
    return lookup(expr.name)


@eval_expr.register(A.Lit)
def _eval_lit(expr: A.Lit, lookup: Lookup, terms: Terms = None) -> OptValue:
    return expr.value


@eval_expr.register(A.Neg)
def _eval_neg(expr: A.Neg, lookup: Lookup, terms: Terms = None) -> OptValue:
    value = eval_expr(expr.operand, lookup, terms)
    return -value if _is_number(value) else None  # type: ignore[operator]


@eval_expr.register(A.BinOp)
def _eval_binop(expr: A.BinOp, lookup: Lookup, terms: Terms = None) -> OptValue:
    left = eval_expr(expr.left, lookup, terms)
    right = eval_expr(expr.right, lookup, terms)
    return arith(expr.op, left, right)


@eval_expr.register(A.VarAttr)
@eval_expr.register(A.BagAgg)
@eval_expr.register(A.FirstLast)
@eval_expr.register(A.Prev)
@eval_expr.register(A.Running)
def _eval_relating(expr: A.Relating, lookup: Lookup, terms: Terms = None) -> OptValue:
    """A term of spec §5.1, read through ``terms`` (``acel.lang.relate``)."""
    if terms is None:
        raise TypeError(f"{type(expr).__name__} relates events: evaluate it with terms")
    return terms(expr)


def arith(op: str, left: OptValue, right: OptValue) -> OptValue:
    """``left op right`` with the NULL rules of :func:`eval_expr`."""
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    if not (_is_number(left) and _is_number(right)):
        return None
    assert isinstance(left, (int, float)) and isinstance(right, (int, float))
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        return None
    if op == "/":
        return left / right
    if op == "%":
        return left % right
    raise ValueError(f"unknown arithmetic operator {op!r}")


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
"""The comparison operators of spec §5 on two non-NULL values of one kind."""


def compare(op: str, left: OptValue, right: OptValue) -> Truth:
    """``left op right``: unknown when a side is NULL or the types do not compare.

    Numbers compare with numbers, strings with strings, bools with bools; any
    other mix is unknown (so ``price = 'x'`` is never true, nor is its NOT).
    """
    if left is None or right is None:
        return None
    if _is_number(left) and _is_number(right):
        return bool(OPERATORS[op](left, right))
    if type(left) is type(right) and isinstance(left, (str, bool)):
        return bool(OPERATORS[op](left, right))
    return None


def _in(value: OptValue, options: Iterable[OptValue]) -> Truth:
    if value is None:
        return None
    return any(compare("=", value, option) for option in options)


@singledispatch
def eval_pred3(pred: A.Pred, lookup: Lookup, terms: Terms = None) -> Truth:
    """Three-valued truth of a unary predicate."""
    raise TypeError(f"not a predicate: {pred!r}")


@eval_pred3.register(A.Compare)
def _truth_compare(pred: A.Compare, lookup: Lookup, terms: Terms = None) -> Truth:
    return compare(pred.op, eval_expr(pred.left, lookup, terms), eval_expr(pred.right, lookup, terms))


@eval_pred3.register(A.InList)
def _truth_in(pred: A.InList, lookup: Lookup, terms: Terms = None) -> Truth:
    found = _in(eval_expr(pred.expr, lookup, terms), pred.values)
    if found is None:
        return None
    return (not found) if pred.negated else found


@eval_pred3.register(A.PredNot)
def _truth_not(pred: A.PredNot, lookup: Lookup, terms: Terms = None) -> Truth:
    inner = eval_pred3(pred.operand, lookup, terms)
    return None if inner is None else not inner


@eval_pred3.register(A.PredAnd)
def _truth_and(pred: A.PredAnd, lookup: Lookup, terms: Terms = None) -> Truth:
    left = eval_pred3(pred.left, lookup, terms)
    if left is False:
        return False
    right = eval_pred3(pred.right, lookup, terms)
    if right is False:
        return False
    return None if left is None or right is None else True


@eval_pred3.register(A.PredOr)
def _truth_or(pred: A.PredOr, lookup: Lookup, terms: Terms = None) -> Truth:
    left = eval_pred3(pred.left, lookup, terms)
    if left is True:
        return True
    right = eval_pred3(pred.right, lookup, terms)
    if right is True:
        return True
    return None if left is None or right is None else False


def holds(pred: A.Pred, lookup: Lookup, terms: Terms = None) -> bool:
    """Whether a unary predicate is *true* (unknown counts as false)."""
    return eval_pred3(pred, lookup, terms) is True


def event_holds(pred: A.Pred, event: Event) -> bool:
    """Whether a stream or created event satisfies a unary predicate."""
    return holds(pred, event.get)


def bag_holds(kind: A.BagKind, attr: str, bag: Iterable[Event]) -> bool:
    """SAME/INC/DEC over a bag ordered by time (spec §5, seed 004 App. D.1).

    ``SAME(a)``: every two occurrences are equal on ``a``.  ``INC(a)`` /
    ``DEC(a)``: every event is strictly below / above each of its successors,
    the events of the next larger time.  Bags of at most one event pass; a
    NULL value fails any comparison it takes part in.
    """
    events = sorted(bag, key=lambda e: e.time)
    if len(events) <= 1:
        return True
    values = [e.get(attr) for e in events]
    if kind == "SAME":
        return all(compare("=", values[0], v) is True for v in values)
    op = "<" if kind == "INC" else ">"
    groups: list[list[OptValue]] = []
    last_time: int | None = None
    for event, value in zip(events, values):
        if event.time != last_time:
            groups.append([])
            last_time = event.time
        groups[-1].append(value)
    for before, after in zip(groups, groups[1:]):
        for a in before:
            for b in after:
                if compare(op, a, b) is not True:
                    return False
    return True


declare("predicates.eval_expr", "expression", eval_expr)
declare("predicates.eval_pred3", "predicate", eval_pred3)
