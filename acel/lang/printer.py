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
from functools import singledispatch

from acel.lang import ast as A
from acel.lang.events import Value
from acel.lang.numbers import int_to_digits
from acel.lang.parser import KEYWORDS
from acel.lang.passes import declare

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


@singledispatch
def _expr(expr: A.Expr, need: int) -> str:
    raise TypeError(f"not an expression: {expr!r}")


@_expr.register(A.Attr)
def _expr_attr(expr: A.Attr, need: int) -> str:
    return format_name(expr.name)


@_expr.register(A.Lit)
def _expr_lit(expr: A.Lit, need: int) -> str:
    text = format_literal(expr.value)
    # A negative number is a unary minus in the grammar (level 2).
    return f"({text})" if text.startswith("-") and need > 2 else text


@_expr.register(A.Neg)
def _expr_neg(expr: A.Neg, need: int) -> str:
    inner = _expr(expr.operand, 2)
    if inner.startswith("-"):  # never write "--": it starts a comment
        inner = f"({inner})"
    return _wrap(f"-{inner}", 2, need)


@_expr.register(A.BinOp)
def _expr_binop(expr: A.BinOp, need: int) -> str:
    level = 0 if expr.op in ("+", "-") else 1
    text = f"{_expr(expr.left, level)} {expr.op} {_expr(expr.right, level + 1)}"
    return _wrap(text, level, need)


@_expr.register(A.VarAttr)
@_expr.register(A.BagAgg)
@_expr.register(A.FirstLast)
@_expr.register(A.Prev)
@_expr.register(A.Running)
def _expr_relating(expr: A.Relating, need: int) -> str:
    return format_relating(expr)


def format_relating(term: A.Relating) -> str:
    """``Y.a``, ``F(Y.a)``, ``COUNT(Y)``, ``FIRST(Y.a)``, ``PREV(a)``, ``RUNNING F(a)`` (§5.1)."""
    if isinstance(term, A.VarAttr):
        return f"{format_name(term.var)}.{format_name(term.attr)}"
    if isinstance(term, A.BagAgg):
        target = format_name(term.var)
        if term.attr is not None:
            target += f".{format_name(term.attr)}"
        return f"{format_name(term.func).upper()}({target})"
    if isinstance(term, A.FirstLast):
        return f"{term.which}({format_name(term.var)}.{format_name(term.attr)})"
    if isinstance(term, A.Prev):
        return f"PREV({format_name(term.attr)})"
    if isinstance(term, A.Running):
        return f"RUNNING {format_name(term.func).upper()}({format_name(term.attr)})"
    raise TypeError(f"not a relating term: {term!r}")


def _wrap(text: str, level: int, need: int) -> str:
    return f"({text})" if level < need else text


def format_expr(expr: A.Expr) -> str:
    """An arithmetic expression."""
    return _expr(expr, 0)


# --------------------------------------------------------------- predicates
# Levels: 0 = OR, 1 = AND, 2 = NOT, 3 = comparison / IN.


@singledispatch
def _pred(pred: A.Pred, need: int) -> str:
    raise TypeError(f"not a predicate: {pred!r}")


@_pred.register(A.Compare)
def _pred_compare(pred: A.Compare, need: int) -> str:
    return f"{_expr(pred.left, 0)} {pred.op} {_expr(pred.right, 0)}"


@_pred.register(A.InList)
def _pred_in(pred: A.InList, need: int) -> str:
    values = ", ".join(format_literal(v) for v in pred.values)
    op = "NOT IN" if pred.negated else "IN"
    return f"{_expr(pred.expr, 0)} {op} ({values})"


@_pred.register(A.PredNot)
def _pred_not(pred: A.PredNot, need: int) -> str:
    return _wrap(f"NOT {_pred(pred.operand, 2)}", 2, need)


@_pred.register(A.PredAnd)
def _pred_and(pred: A.PredAnd, need: int) -> str:
    return _wrap(f"{_pred(pred.left, 1)} AND {_pred(pred.right, 2)}", 1, need)


@_pred.register(A.PredOr)
def _pred_or(pred: A.PredOr, need: int) -> str:
    return _wrap(f"{_pred(pred.left, 0)} OR {_pred(pred.right, 1)}", 0, need)


def format_pred(pred: A.Pred) -> str:
    """A unary predicate (the text inside ``X[...]``)."""
    return _pred(pred, 0)


# ------------------------------------------------------------------ filters
# Levels: 0 = OR, 1 = AND, 2 = atoms.


@singledispatch
def _filter(flt: A.Filter, need: int) -> str:
    raise TypeError(f"not a filter: {flt!r}")


@_filter.register(A.VarPred)
def _filter_var(flt: A.VarPred, need: int) -> str:
    return f"{format_name(flt.var)}[{format_pred(flt.pred)}]"


@_filter.register(A.BagPred)
def _filter_bag(flt: A.BagPred, need: int) -> str:
    return f"{format_name(flt.var)}[{flt.kind}({format_name(flt.attr)})]"


@_filter.register(A.FilterAnd)
def _filter_and(flt: A.FilterAnd, need: int) -> str:
    return _wrap(f"{_filter(flt.left, 1)} AND {_filter(flt.right, 2)}", 1, need)


@_filter.register(A.FilterOr)
def _filter_or(flt: A.FilterOr, need: int) -> str:
    return _wrap(f"{_filter(flt.left, 0)} OR {_filter(flt.right, 1)}", 0, need)


def format_filter(flt: A.Filter) -> str:
    """A filter (the text after FILTER)."""
    return _filter(flt, 0)


# ----------------------------------------------------------------- formulas
# Levels: acel.lang.ast.Level (FILTER, OR, AND, SEQUENCE: ; and : with NOT elements,
# POSTFIX, PRIMARY); each node declares its symbol and level.


def _agg_output(out: A.AggOutput) -> str:
    target = (
        format_name(out.var)
        if out.attr is None
        else f"{format_name(out.var)}.{format_name(out.attr)}"
    )
    return f"{format_name(out.name)} := {out.func.upper()}({target})"


@singledispatch
def _formula(f: A.Formula | A.Infix | A.Postfix, need: int) -> str:
    raise TypeError(f"not a formula: {f!r}")


@_formula.register(A.Atom)
def _formula_atom(f: A.Atom, need: int) -> str:
    return format_name(f.type)


@_formula.register(A.Next)
def _formula_next(f: A.Next, need: int) -> str:
    return f"{f.symbol}({format_name(f.type)})"


@_formula.register(A.ProjectVars)
def _formula_project_vars(f: A.ProjectVars, need: int) -> str:
    names = ", ".join(format_name(v) for v in f.vars)
    return f"{f.symbol}[{names}]({_formula(f.formula, 0)})"


@_formula.register(A.ProjectAttrs)
def _formula_project_attrs(f: A.ProjectAttrs, need: int) -> str:
    names = ", ".join(format_name(a) for a in f.attrs)
    return f"{f.symbol} {format_name(f.var)}[{names}]({_formula(f.formula, 0)})"


@_formula.register(A.Agg)
def _formula_agg(f: A.Agg, need: int) -> str:
    outs = ", ".join(_agg_output(o) for o in f.outputs)
    return f"{f.symbol} {format_name(f.var)}[{outs}]({_formula(f.formula, 0)})"


@_formula.register(A.Postfix)
def _formula_postfix(f: A.Postfix, need: int) -> str:
    """``φ+``, ``φ:+`` and any operator built on :class:`acel.lang.ast.Postfix`."""
    # (R AS x)+ reads better than the equivalent R AS x+.
    inner = _formula(f.formula, A.Level.PRIMARY if isinstance(f.formula, A.As) else f.level)
    return _wrap(f"{inner}{f.symbol}", f.level, need)


@_formula.register(A.As)
def _formula_as(f: A.As, need: int) -> str:
    return _wrap(f"{_formula(f.formula, f.level)} {f.symbol} {format_name(f.var)}", f.level, need)


@_formula.register(A.Infix)
def _formula_infix(f: A.Infix, need: int) -> str:
    """``φ1 OR φ2``, ``φ1 AND φ2``, ``φ1 ; φ2``, ``φ1 : φ2`` and any operator built on
    :class:`acel.lang.ast.Infix`: left-associative, so the right operand is one level tighter."""
    left = _seq_left(f.left) if f.level == A.Level.SEQUENCE else _formula(f.left, f.level)
    return _wrap(f"{left} {f.symbol} {_formula(f.right, f.level + 1)}", f.level, need)


@_formula.register(A.SeqNot)
def _formula_seq_not(f: A.SeqNot, need: int) -> str:
    parts = [_seq_left(f.left), *_nots(f.excluded), _formula(f.right, A.Level.POSTFIX)]
    return _wrap(" ; ".join(parts), f.level, need)


@_formula.register(A.LeadingNot)
def _formula_leading_not(f: A.LeadingNot, need: int) -> str:
    body = _formula(f.formula, A.Level.SEQUENCE)
    if isinstance(f.formula, A.LeadingNot):
        body = f"({body})"  # else its NOTs would join this run
    return _wrap(" ; ".join([*_nots(f.excluded), body]), f.level, need)


@_formula.register(A.TrailingNot)
def _formula_trailing_not(f: A.TrailingNot, need: int) -> str:
    return _wrap(" ; ".join([_seq_left(f.formula), *_nots(f.excluded)]), f.level, need)


@_formula.register(A.FilterF)
def _formula_filter(f: A.FilterF, need: int) -> str:
    return _wrap(f"{_formula(f.formula, f.level)} {f.symbol} {format_filter(f.filter)}", f.level, need)


@_formula.register(A.Repeat)
@_formula.register(A.Opt)
def _formula_quantified(f: A.Repeat | A.Opt, need: int) -> str:
    """``φ{n}``, ``φ:{n,m}``, ``φ{n,}``, ``ψ?``, ``ψ*`` (spec §3.2); ``(R AS x){2}`` as for ``+``."""
    inner = _formula(f.formula, A.Level.PRIMARY if isinstance(f.formula, A.As) else f.level)
    if isinstance(f, A.Opt):
        return _wrap(f"{inner}{'*' if f.star else '?'}", f.level, need)
    colon = ":" if f.contiguous else ""
    if f.high == f.low:
        return _wrap(f"{inner}{colon}{{{f.low}}}", f.level, need)
    high = "" if f.high is None else str(f.high)
    return _wrap(f"{inner}{colon}{{{f.low},{high}}}", f.level, need)


def _seq_left(f: A.Formula) -> str:
    """The left operand of a sequence: level 3, but a leading or trailing
    negation is parenthesised (unwrapped, its NOTs would join the outer run)."""
    text = _formula(f, A.Level.SEQUENCE)
    return f"({text})" if isinstance(f, (A.LeadingNot, A.TrailingNot)) else text


def _nots(excluded: tuple[A.Formula, ...]) -> list[str]:
    """``NOT ψ`` elements; ψ is a postfix formula (spec §11)."""
    return [f"NOT {_formula(x, A.Level.POSTFIX)}" for x in excluded]


def format_formula(f: A.Formula) -> str:
    """The canonical one-line text of a formula."""
    return _formula(f, 0)


# ------------------------------------------------------------------ queries


def format_return_item(item: A.ReturnItem) -> str:
    """``COUNT(*)``, ``COUNT(X)``, ``SUM(X.a)`` or a partition attribute."""
    if isinstance(item, A.CountStar):
        return "COUNT(*)"
    if isinstance(item, A.ReturnAttr):
        return format_name(item.name)
    if isinstance(item, A.ReturnAgg):
        target = format_name(item.var)
        if item.attr is not None:
            target += f".{format_name(item.attr)}"
        return f"{format_name(item.func).upper()}({target})"
    raise TypeError(f"not a RETURN item: {item!r}")


def format_window(window: A.Window) -> str:
    """``n EVENTS`` or ``d ON attr``."""
    size = format_literal(window.size)
    if window.attr is None:
        return f"{size} EVENTS"
    return f"{size} ON {format_name(window.attr)}"


def format_query(q: A.Query) -> str:
    """The canonical text of a query: one clause per line."""
    lines: list[str] = []
    formula = format_formula(q.formula)
    select = "" if q.select == "ALL" else f"SELECT {q.select}\n"
    if q.returns is not None:
        if not q.returns:
            raise ValueError("a RETURN clause needs at least one item")
        items = ", ".join(format_return_item(i) for i in q.returns)
        lines.append(f"RETURN {items}")
        lines.append(f"{select}PATTERN {formula}")
    else:
        lines.append(f"{select}{formula}")
    if q.partition_by:
        lines.append("PARTITION BY " + ", ".join(format_name(a) for a in q.partition_by))
    if q.within is not None:
        lines.append(f"WITHIN {format_window(q.within)}")
    if q.slide is not None:
        lines.append(f"SLIDE {format_window(q.slide)}")
    if q.skip is not None:
        lines.append(f"AFTER MATCH SKIP {format_skip(q.skip)}")
    return "\n".join(lines)


def format_skip(skip: A.Skip) -> str:
    """``TO NEXT ROW``, ``PAST LAST ROW``, ``TO FIRST X`` or ``TO LAST X``."""
    if skip.kind == "TO_NEXT_ROW":
        return "TO NEXT ROW"
    if skip.kind == "PAST_LAST_ROW":
        return "PAST LAST ROW"
    if skip.var is None:
        raise ValueError(f"AFTER MATCH SKIP {skip.kind} needs a variable")
    word = "FIRST" if skip.kind == "TO_FIRST" else "LAST"
    return f"TO {word} {format_name(skip.var)}"


declare("printer.expression", "expression", _expr)
declare("printer.predicate", "predicate", _pred)
declare("printer.filter", "filter", _filter)
declare("printer.formula", "formula", _formula)
