"""Property tests of the optimized engine (issue 6).

engine == naive automaton runs (same compiled ACEA), engine == oracle on
whole queries (PARTITION BY, WITHIN), RETURN rows == oracle's on trend
queries with windows, propagation == enumeration whenever propagation is
used, and ``start_positions`` keeps exactly the complex events starting in it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_formula
from acel.reference import oracle
from hypothesis import given, settings
from hypothesis import strategies as st

from acel.lang.ast import Query, Window
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event
from acel.testing import (
    TEST_SCHEMA,
    assert_conforms,
    cases,
    formulas,
    queries,
    streams,
    trend_queries,
)


def rows_close(a: Sequence[TrendRow], b: Sequence[TrendRow]) -> bool:
    """Equal rows, floats equal up to summation order (spec §4: relative 1e-9)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.key != y.key or x.window != y.window or len(x.values) != len(y.values):
            return False
        for (n1, v1), (n2, v2) in zip(x.values, y.values):
            if n1 != n2:
                return False
            if isinstance(v1, float) or isinstance(v2, float):
                if v1 is None or v2 is None or not math.isclose(v1, v2, rel_tol=1e-9):  # type: ignore[arg-type]
                    return False
            elif v1 != v2 or type(v1) is not type(v2):
                return False
    return True


@given(formulas(), streams())
def test_engine_equals_naive_automaton(formula, stream: list[Event]) -> None:
    automaton = compile_formula(formula, TEST_SCHEMA)
    assert engine.evaluate(automaton, stream) == naive.evaluate(automaton, stream)


def test_engine_equals_oracle() -> None:
    """The optimized engine through the public conformance kit, as any engine would."""
    assert assert_conforms("optimized", strategy=cases(of=queries())) > 0


def test_trend_rows_equal_oracle() -> None:
    """RETURN rows, floats up to relative 1e-9 (the kit's comparison, spec §4)."""
    assert assert_conforms("optimized", strategy=cases(of=trend_queries())) > 0


@given(trend_queries(), streams())
def test_propagation_equals_enumeration(query: Query, stream: list[Event]) -> None:
    """Whenever the engine propagates, enumerating then aggregating agrees."""
    got = engine.run(query, stream, TEST_SCHEMA, trend_mode="auto")
    enumerated = engine.run(query, stream, TEST_SCHEMA, trend_mode="enumerate")
    assert rows_close(got, enumerated), (got, enumerated)  # type: ignore[arg-type]


@settings(max_examples=100)
@given(queries(), streams(), st.integers(0, 7), st.integers(0, 7))
def test_start_positions_keep_starts_in_range(
    query: Query, stream: list[Event], lo: int, length: int
) -> None:
    query = Query(query.formula, None, (), query.within, None)
    starts = range(lo, lo + length)
    full = engine.run(query, stream, TEST_SCHEMA)
    part = engine.run(query, stream, TEST_SCHEMA, start_positions=starts)
    assert all(isinstance(m, Match) for m in full)
    assert part == [m for m in full if isinstance(m, Match) and m.event.start in starts]


def _sliceable(query: Query) -> bool:
    """Start-position slices keep per-complex-event filters only (STRICT, no skip)."""
    return query.select in ("ALL", "STRICT") and query.skip is None


@settings(max_examples=100)
@given(trend_queries().filter(_sliceable), streams(), st.integers(0, 7), st.integers(0, 7))
def test_start_positions_split_trend_counts(
    query: Query, stream: list[Event], cut: int, _unused: int
) -> None:
    """COUNT(*) of two slices of start positions adds up to the whole count."""
    whole = engine.run(query, stream, TEST_SCHEMA)
    left = engine.run(query, stream, TEST_SCHEMA, start_positions=range(0, cut))
    right = engine.run(query, stream, TEST_SCHEMA, start_positions=range(cut, 10**9))
    for w, a, b in zip(whole, left, right):
        assert isinstance(w, TrendRow) and isinstance(a, TrendRow) and isinstance(b, TrendRow)
        assert (w.key, w.window) == (a.key, a.window) == (b.key, b.window)
        for (name, value), (_, va), (_, vb) in zip(w.values, a.values, b.values):
            if name == "COUNT(*)" or name.startswith("COUNT("):
                assert value == va + vb  # type: ignore[operator]


@settings(max_examples=60)
@given(formulas(max_depth=3), streams(max_len=7), st.integers(1, 4))
def test_within_on_attribute_matches_oracle(formula, stream: list[Event], size: int) -> None:
    """``WITHIN d ON x`` on data where x is sometimes decreasing (no pruning) or not."""
    stream = [e for e in stream if isinstance(e.get("x"), int)]
    query = Query(formula, None, (), Window(size, "x"))
    assert engine.run(query, stream, TEST_SCHEMA) == oracle.run(query, stream, TEST_SCHEMA)


_TREND_FORMULAS = [
    "(A AS p)+ FILTER p[DEC(x)]",
    "(A AS p)+ FILTER p[INC(x)]",
    "((A OR B) AS p)+ FILTER p[INC(x)] AND p[y > 0]",
    "C AS c ; ((A AS p)+ FILTER p[DEC(x)])",
    "((A AS p)+ FILTER p[DEC(x)]) ; B AS b",
    "(A AS p):+ FILTER p[INC(x)]",
]


@st.composite
def _kleene_trend_queries(draw: st.DrawFn) -> Query:
    from acel.lang.ast import CountStar, ReturnAgg
    from acel.lang.parser import parse_formula

    formula = parse_formula(draw(st.sampled_from(_TREND_FORMULAS)))
    items = (
        CountStar(),
        ReturnAgg("SUM", "p", "x"),
        ReturnAgg("MIN", "p", "x"),
        ReturnAgg("MAX", "p", "y"),
        ReturnAgg("AVG", "p", "x"),
        ReturnAgg("COUNT", "p", None),
    )
    partition = ("k",) if draw(st.booleans()) else ()
    within = draw(st.none() | st.integers(1, 7).map(Window))
    slide = None
    if within is not None and draw(st.booleans()):
        slide = Window(draw(st.integers(1, 9)))
    return Query(formula, items, partition, within, slide)


@given(_kleene_trend_queries(), streams(max_len=9))
def test_indexed_kleene_trends_equal_oracle(query: Query, stream: list[Event]) -> None:
    """The Fenwick-indexed path (INC/DEC under +) against the oracle, windows included."""
    got = engine.run(query, stream, TEST_SCHEMA)
    want = oracle.run(query, stream, TEST_SCHEMA)
    assert rows_close(got, want), (got, want)  # type: ignore[arg-type]
