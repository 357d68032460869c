"""Queries whose filters come from the whole of spec §5.1 (:func:`relating_queries`)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from acel.lang import ast
from acel.lang.checker import formula_env
from acel.lang.schema import Schema
from acel.testing.strategies.formulas import _data_attrs, _preds, formulas_with_env
from acel.testing.strategies.schema_streams import (
    AGG_VARS,
    TEST_SCHEMA,
    Env,
    _aggregate_call,
    aggregate_funcs,
)

# ------------------------------------- every term of spec §5.1 (not only the compiled)


@st.composite
def _any_relating_term(draw: Any, env: Env, var: str) -> ast.Expr:
    """Any term of spec §5.1 over the variables of ``env`` (``var`` is X)."""
    attrs = _data_attrs(env, var)
    other = draw(st.sampled_from(sorted(env)))
    other_attrs = _data_attrs(env, other)
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return ast.Prev(draw(st.sampled_from(attrs)))
    if choice == 1:
        return ast.Running(draw(aggregate_funcs()), draw(st.sampled_from(attrs)))
    if choice == 2 and other_attrs:
        return ast.VarAttr(other, draw(st.sampled_from(other_attrs)))
    if choice == 3 and other_attrs:
        which = draw(st.sampled_from(["FIRST", "LAST"]))
        return ast.FirstLast(which, other, draw(st.sampled_from(other_attrs)))
    func, attr = draw(_aggregate_call(other_attrs))
    return ast.BagAgg(func, other, attr)


@st.composite
def _any_relating_side(draw: Any, env: Env, var: str) -> ast.Expr:
    """A term, a term plus another (two other variables: ``a.v + b.v``), or ``c * term``."""
    term = draw(_any_relating_term(env, var))
    shape = draw(st.integers(0, 4))
    if shape == 3:
        return ast.BinOp("+", term, draw(_any_relating_term(env, var)))
    if shape == 4:
        return ast.BinOp("*", ast.Lit(draw(st.integers(1, 2))), term)
    return term


@st.composite
def _any_relating_pred(draw: Any, env: Env, var: str, types: tuple[str, ...], depth: int = 1
                       ) -> ast.Pred:
    """Comparisons (``!=`` included) of X's attributes with any side of spec §5.1,
    under AND, OR and NOT, beside plain predicates now and then."""
    attrs = _data_attrs(env, var)
    choice = draw(st.integers(0, 7 if depth > 0 else 4))
    if choice <= 3:
        own: ast.Expr = ast.Attr(draw(st.sampled_from(attrs)))
        side = draw(_any_relating_side(env, var))
        op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
        return ast.Compare(op, own, side) if draw(st.booleans()) else ast.Compare(op, side, own)
    if choice == 4:
        return draw(_preds(attrs, types, "type" in env[var], 0))
    if choice == 5:
        return ast.PredNot(draw(_any_relating_pred(env, var, types, depth - 1)))
    left = draw(_any_relating_pred(env, var, types, depth - 1))
    right = draw(_any_relating_pred(env, var, types, depth - 1))
    return ast.PredAnd(left, right) if choice == 6 else ast.PredOr(left, right)


RELATING_OPERATORS = frozenset(
    {"AS", "FILTER", "SEQ", "PLUS", "OR", "AGG", "REPEAT", "RELATE", "WITHIN", "PARTITION_BY"}
)
"""The operators :func:`relating_queries` draws its formulas from."""


@st.composite
def relating_queries(draw: Any, schema: Schema = TEST_SCHEMA, max_depth: int = 3) -> ast.Query:
    """A query whose formula carries a filter drawn from the whole of spec §5.1 (``!=``,
    ``OR`` across terms, ``FIRST``/``LAST``, sums of two other variables' attributes,
    ``PREV`` over any variable), and sometimes an ``AGG`` with ``FIRST``/``LAST`` outputs
    around it: the queries the oracle answers and the compiled engines should too."""
    formula, _ = draw(formulas_with_env(schema, max_depth, RELATING_OPERATORS))
    env = formula_env(formula, schema)
    with_attrs = sorted(v for v in env if _data_attrs(env, v))
    if with_attrs:
        var = draw(st.sampled_from(with_attrs))
        pred = draw(_any_relating_pred(env, var, tuple(schema.type_names())))
        formula = ast.FilterF(formula, ast.VarPred(var, pred))
    if with_attrs and draw(st.integers(0, 3)) == 3:
        var = draw(st.sampled_from(with_attrs))
        which = draw(st.sampled_from(["FIRST", "LAST"]))
        outputs = (ast.AggOutput("f", which, var, draw(st.sampled_from(_data_attrs(env, var)))),)
        formula = ast.Agg(draw(st.sampled_from(AGG_VARS)), outputs, formula)
    within = draw(st.none() | st.integers(1, 5).map(ast.Window))
    return ast.Query(formula, None, (), within)
