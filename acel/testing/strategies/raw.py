"""Arbitrary ASTs for the parser/printer round trip (``raw_formulas``, ``raw_queries``)."""

from __future__ import annotations

from hypothesis import strategies as st

from acel.lang import ast
from acel.lang.ast import SELECT_STRATEGIES, neg
from acel.lang.events import Value
from acel.testing.strategies.schema_streams import aggregate_funcs

# ---------------------------------------------- arbitrary ASTs (round trip)

NAMES = ("A", "B", "SELL", "x", "y_1", "_t", "Count", "orx", "ANDY", "__next_A")

_names = st.sampled_from(NAMES)
_floats = st.floats(allow_nan=False, allow_infinity=False)
_strings = st.text(alphabet="ab' -\n\\\"é", max_size=5)
raw_literals: st.SearchStrategy[Value] = st.one_of(
    st.integers(-(10**20), 10**20), _floats, _strings, st.booleans()
)


def _raw_lit(value: Value) -> ast.Lit:
    return ast.Lit(value)


_raw_funcs = aggregate_funcs()
_raw_relating: st.SearchStrategy[ast.Expr] = st.one_of(
    st.builds(ast.VarAttr, _names, _names),
    st.builds(ast.BagAgg, _raw_funcs, _names, st.none() | _names),
    st.builds(ast.FirstLast, st.sampled_from(["FIRST", "LAST"]), _names, _names),
    st.builds(ast.Prev, _names),
    st.builds(ast.Running, _raw_funcs, _names),
)

raw_exprs: st.SearchStrategy[ast.Expr] = st.recursive(
    st.one_of(_names.map(ast.Attr), raw_literals.map(_raw_lit), _raw_relating),
    lambda inner: st.one_of(
        st.builds(ast.BinOp, st.sampled_from(["+", "-", "*", "/", "%"]), inner, inner),
        inner.map(neg),
    ),
    max_leaves=6,
)

raw_preds: st.SearchStrategy[ast.Pred] = st.recursive(
    st.one_of(
        st.builds(
            ast.Compare, st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), raw_exprs, raw_exprs
        ),
        st.builds(ast.InList, raw_exprs, st.lists(raw_literals, max_size=3).map(tuple), st.booleans()),
    ),
    lambda inner: st.one_of(
        st.builds(ast.PredAnd, inner, inner), st.builds(ast.PredOr, inner, inner), st.builds(ast.PredNot, inner)
    ),
    max_leaves=5,
)

raw_filters: st.SearchStrategy[ast.Filter] = st.recursive(
    st.one_of(
        st.builds(ast.VarPred, _names, raw_preds),
        st.builds(ast.BagPred, _names, st.sampled_from(["SAME", "INC", "DEC"]), _names),
    ),
    lambda inner: st.one_of(st.builds(ast.FilterAnd, inner, inner), st.builds(ast.FilterOr, inner, inner)),
    max_leaves=4,
)

_raw_outputs = st.builds(
    ast.AggOutput,
    _names,
    aggregate_funcs() | st.sampled_from(["FIRST", "LAST"]),
    _names,
    st.none() | _names,
)
_name_tuples = st.lists(_names, max_size=3).map(tuple)


def _raw_excluded(inner: st.SearchStrategy[ast.Formula]) -> st.SearchStrategy[tuple[ast.Formula, ...]]:
    """The ψ list of a raw negation node (one or two NOTs in a row)."""
    return st.lists(inner, min_size=1, max_size=2).map(tuple)


def _raw_repeat(f: ast.Formula, low: int, extra: int, contiguous: bool) -> ast.Formula:
    """``φ{n}``, ``φ{n,m}`` or ``φ{n,}`` (``extra`` 0: exact, 1: one more, 2: unbounded)."""
    high = None if extra == 2 else low + extra
    return ast.Repeat(f, low, high, contiguous)


_CHAINS = (ast.Seq, ast.Contig, ast.SeqNot, ast.LeadingNot, ast.TrailingNot)


def _raw_optional(first: ast.Formula, second: ast.Formula, star: bool) -> ast.Formula:
    """``(φ ; ψ?)+``: an optional element in a chain of its own (parenthesised, so that
    no outer connector or NOT can make it ill-formed)."""
    if isinstance(first, _CHAINS):
        first = ast.Or(first, first)
    return ast.Plus(ast.Seq(first, ast.Opt(second, star)))


raw_formulas: st.SearchStrategy[ast.Formula] = st.recursive(
    st.one_of(_names.map(ast.Atom), _names.map(ast.Next)),
    lambda inner: st.one_of(
        st.builds(ast.As, inner, _names),
        st.builds(ast.FilterF, inner, raw_filters),
        st.builds(ast.Or, inner, inner),
        st.builds(ast.And, inner, inner),
        st.builds(ast.Seq, inner, inner),
        st.builds(ast.Contig, inner, inner),
        st.builds(ast.Plus, inner),
        st.builds(ast.ContigPlus, inner),
        st.builds(ast.ProjectVars, _name_tuples, inner),
        st.builds(ast.ProjectAttrs, _names, _name_tuples, inner),
        st.builds(ast.Agg, _names, st.lists(_raw_outputs, min_size=1, max_size=3).map(tuple), inner),
        st.builds(ast.SeqNot, inner, _raw_excluded(inner), inner),
        st.builds(ast.LeadingNot, _raw_excluded(inner), inner),
        st.builds(ast.TrailingNot, inner, _raw_excluded(inner)),
        st.builds(_raw_repeat, inner, st.integers(1, 3), st.integers(0, 2), st.booleans()),
        st.builds(_raw_optional, inner, inner, st.booleans()),
    ),
    max_leaves=8,
)

_raw_items: st.SearchStrategy[ast.ReturnItem] = st.one_of(
    st.just(ast.CountStar()),
    st.builds(
        ast.ReturnAgg,
        aggregate_funcs(),
        _names,
        st.none() | _names,
    ),
    st.builds(ast.ReturnAttr, _names),
)
_raw_windows = st.builds(ast.Window, st.integers(-5, 100) | _floats, st.none() | _names)

_raw_skips: st.SearchStrategy[ast.Skip] = st.one_of(
    st.sampled_from((ast.Skip("TO_NEXT_ROW"), ast.Skip("PAST_LAST_ROW"))),
    st.builds(ast.Skip, st.sampled_from(("TO_FIRST", "TO_LAST")), _names),
)

raw_queries: st.SearchStrategy[ast.Query] = st.builds(
    ast.Query,
    raw_formulas,
    st.none() | st.lists(_raw_items, min_size=1, max_size=3).map(tuple),
    _name_tuples,
    st.none() | _raw_windows,
    st.none() | _raw_windows,
    st.sampled_from(SELECT_STRATEGIES),
    st.none() | _raw_skips,
)
