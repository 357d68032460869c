"""Canonical text of ACEL ASTs (spec §11).

The printer puts parentheses exactly where the precedence and left
associativity of the grammar need them, so ``parse(print(ast)) == ast`` and
``print(parse(text))`` is a fixed point.  Keywords are written upper-case,
aggregate function names upper-case, floats with ``repr`` (exact round trip),
strings single-quoted with ``''`` for a quote.
"""

from __future__ import annotations

import math
import re

from acel.lang.ast import (
    Agg,
    AggOutput,
    And,
    As,
    Atom,
    Attr,
    BagPred,
    BinOp,
    Compare,
    Contig,
    ContigPlus,
    CountStar,
    Expr,
    Filter,
    FilterAnd,
    FilterF,
    FilterOr,
    Formula,
    InList,
    LeadingNot,
    Lit,
    Neg,
    Next,
    Or,
    Plus,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
    ProjectAttrs,
    ProjectVars,
    Query,
    ReturnAgg,
    ReturnAttr,
    ReturnItem,
    Seq,
    SeqNot,
    TrailingNot,
    VarPred,
    Window,
)
from acel.lang.events import Value
from acel.lang.numbers import int_to_digits
from acel.lang.parser import KEYWORDS

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def format_name(name: str) -> str:
    """A type, variable or attribute name; raise ValueError if it cannot be written."""
    if not _IDENT.match(name) or name.upper() in KEYWORDS:
        raise ValueError(f"{name!r} is not a valid ACEL identifier (or is a reserved word)")
    return name


def format_literal(value: Value) -> str:
    """A literal as ACEL text (``TRUE``, ``-3``, ``2.5``, ``'it''s'``)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return int_to_digits(value)  # also beyond Python's int/str digit limit
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"the float {value!r} has no ACEL literal")
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"not a literal value: {value!r}")


# -------------------------------------------------------------- expressions
# Levels: 0 = + -, 1 = * / %, 2 = unary minus, 3 = atoms.


def _expr(expr: Expr, need: int) -> str:
    if isinstance(expr, Attr):
        return format_name(expr.name)
    if isinstance(expr, Lit):
        text = format_literal(expr.value)
        # A negative number is a unary minus in the grammar (level 2).
        return f"({text})" if text.startswith("-") and need > 2 else text
    if isinstance(expr, Neg):
        inner = _expr(expr.operand, 2)
        if inner.startswith("-"):  # never write "--": it starts a comment
            inner = f"({inner})"
        return _wrap(f"-{inner}", 2, need)
    if isinstance(expr, BinOp):
        level = 0 if expr.op in ("+", "-") else 1
        text = f"{_expr(expr.left, level)} {expr.op} {_expr(expr.right, level + 1)}"
        return _wrap(text, level, need)
    raise TypeError(f"not an expression: {expr!r}")


def _wrap(text: str, level: int, need: int) -> str:
    return f"({text})" if level < need else text


def format_expr(expr: Expr) -> str:
    """An arithmetic expression."""
    return _expr(expr, 0)


# --------------------------------------------------------------- predicates
# Levels: 0 = OR, 1 = AND, 2 = NOT, 3 = comparison / IN.


def _pred(pred: Pred, need: int) -> str:
    if isinstance(pred, Compare):
        return f"{_expr(pred.left, 0)} {pred.op} {_expr(pred.right, 0)}"
    if isinstance(pred, InList):
        values = ", ".join(format_literal(v) for v in pred.values)
        op = "NOT IN" if pred.negated else "IN"
        return f"{_expr(pred.expr, 0)} {op} ({values})"
    if isinstance(pred, PredNot):
        return _wrap(f"NOT {_pred(pred.operand, 2)}", 2, need)
    if isinstance(pred, PredAnd):
        return _wrap(f"{_pred(pred.left, 1)} AND {_pred(pred.right, 2)}", 1, need)
    if isinstance(pred, PredOr):
        return _wrap(f"{_pred(pred.left, 0)} OR {_pred(pred.right, 1)}", 0, need)
    raise TypeError(f"not a predicate: {pred!r}")


def format_pred(pred: Pred) -> str:
    """A unary predicate (the text inside ``X[...]``)."""
    return _pred(pred, 0)


# ------------------------------------------------------------------ filters
# Levels: 0 = OR, 1 = AND, 2 = atoms.


def _filter(flt: Filter, need: int) -> str:
    if isinstance(flt, VarPred):
        return f"{format_name(flt.var)}[{format_pred(flt.pred)}]"
    if isinstance(flt, BagPred):
        return f"{format_name(flt.var)}[{flt.kind}({format_name(flt.attr)})]"
    if isinstance(flt, FilterAnd):
        return _wrap(f"{_filter(flt.left, 1)} AND {_filter(flt.right, 2)}", 1, need)
    if isinstance(flt, FilterOr):
        return _wrap(f"{_filter(flt.left, 0)} OR {_filter(flt.right, 1)}", 0, need)
    raise TypeError(f"not a filter: {flt!r}")


def format_filter(flt: Filter) -> str:
    """A filter (the text after FILTER)."""
    return _filter(flt, 0)


# ----------------------------------------------------------------- formulas
# Levels: 0 = FILTER, 1 = OR, 2 = AND, 3 = ; and : (with NOT elements), 4 = postfix,
# 5 = primaries.


def _agg_output(out: AggOutput) -> str:
    target = (
        format_name(out.var)
        if out.attr is None
        else f"{format_name(out.var)}.{format_name(out.attr)}"
    )
    return f"{format_name(out.name)} := {out.func.upper()}({target})"


def _formula(f: Formula, need: int) -> str:
    if isinstance(f, Atom):
        return format_name(f.type)
    if isinstance(f, Next):
        return f"NEXT({format_name(f.type)})"
    if isinstance(f, ProjectVars):
        names = ", ".join(format_name(v) for v in f.vars)
        return f"PROJECT[{names}]({_formula(f.formula, 0)})"
    if isinstance(f, ProjectAttrs):
        names = ", ".join(format_name(a) for a in f.attrs)
        return f"PROJECT {format_name(f.var)}[{names}]({_formula(f.formula, 0)})"
    if isinstance(f, Agg):
        outs = ", ".join(_agg_output(o) for o in f.outputs)
        return f"AGG {format_name(f.var)}[{outs}]({_formula(f.formula, 0)})"
    if isinstance(f, (Plus, ContigPlus)):
        op = "+" if isinstance(f, Plus) else ":+"
        # (R AS x)+ reads better than the equivalent R AS x+.
        inner = _formula(f.formula, 5 if isinstance(f.formula, As) else 4)
        return _wrap(f"{inner}{op}", 4, need)
    if isinstance(f, As):
        return _wrap(f"{_formula(f.formula, 4)} AS {format_name(f.var)}", 4, need)
    if isinstance(f, (Seq, Contig)):
        op = ";" if isinstance(f, Seq) else ":"
        return _wrap(f"{_seq_left(f.left)} {op} {_formula(f.right, 4)}", 3, need)
    if isinstance(f, SeqNot):
        parts = [_seq_left(f.left), *_nots(f.excluded), _formula(f.right, 4)]
        return _wrap(" ; ".join(parts), 3, need)
    if isinstance(f, LeadingNot):
        body = _formula(f.formula, 3)
        if isinstance(f.formula, LeadingNot):
            body = f"({body})"  # else its NOTs would join this run
        return _wrap(" ; ".join([*_nots(f.excluded), body]), 3, need)
    if isinstance(f, TrailingNot):
        return _wrap(" ; ".join([_seq_left(f.formula), *_nots(f.excluded)]), 3, need)
    if isinstance(f, And):
        return _wrap(f"{_formula(f.left, 2)} AND {_formula(f.right, 3)}", 2, need)
    if isinstance(f, Or):
        return _wrap(f"{_formula(f.left, 1)} OR {_formula(f.right, 2)}", 1, need)
    if isinstance(f, FilterF):
        return _wrap(f"{_formula(f.formula, 0)} FILTER {format_filter(f.filter)}", 0, need)
    raise TypeError(f"not a formula: {f!r}")


def _seq_left(f: Formula) -> str:
    """The left operand of a sequence: level 3, but a leading or trailing
    negation is parenthesised (unwrapped, its NOTs would join the outer run)."""
    text = _formula(f, 3)
    return f"({text})" if isinstance(f, (LeadingNot, TrailingNot)) else text


def _nots(excluded: tuple[Formula, ...]) -> list[str]:
    """``NOT ψ`` elements; ψ is a postfix formula (spec §11)."""
    return [f"NOT {_formula(x, 4)}" for x in excluded]


def format_formula(f: Formula) -> str:
    """The canonical one-line text of a formula."""
    return _formula(f, 0)


# ------------------------------------------------------------------ queries


def format_return_item(item: ReturnItem) -> str:
    """``COUNT(*)``, ``COUNT(X)``, ``SUM(X.a)`` or a partition attribute."""
    if isinstance(item, CountStar):
        return "COUNT(*)"
    if isinstance(item, ReturnAttr):
        return format_name(item.name)
    if isinstance(item, ReturnAgg):
        target = format_name(item.var)
        if item.attr is not None:
            target += f".{format_name(item.attr)}"
        return f"{format_name(item.func).upper()}({target})"
    raise TypeError(f"not a RETURN item: {item!r}")


def format_window(window: Window) -> str:
    """``n EVENTS`` or ``d ON attr``."""
    size = format_literal(window.size)
    if window.attr is None:
        return f"{size} EVENTS"
    return f"{size} ON {format_name(window.attr)}"


def format_query(q: Query) -> str:
    """The canonical text of a query: one clause per line."""
    lines: list[str] = []
    formula = format_formula(q.formula)
    if q.returns is not None:
        if not q.returns:
            raise ValueError("a RETURN clause needs at least one item")
        items = ", ".join(format_return_item(i) for i in q.returns)
        lines.append(f"RETURN {items}")
        lines.append(f"PATTERN {formula}")
    else:
        lines.append(formula)
    if q.partition_by:
        lines.append("PARTITION BY " + ", ".join(format_name(a) for a in q.partition_by))
    if q.within is not None:
        lines.append(f"WITHIN {format_window(q.within)}")
    if q.slide is not None:
        lines.append(f"SLIDE {format_window(q.slide)}")
    return "\n".join(lines)
