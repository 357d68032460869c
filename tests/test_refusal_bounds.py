"""``OR`` of comparisons bounding one own expression from one side (issue 32 item 3).

``b[v > a.v OR v > COUNT(c)]``: every disjunct compares the same ``E`` with another
event's value or a whole-bag term, all with ``<``/``<=`` or all with ``>``/``>=``, each
other variable in one disjunct; the one extreme of ``E`` decides the disjunction
(``compiler/relate.py``, ``_one_way_bounds``).  The refusals the bench drew, the shapes
that stay refused, and a Hypothesis cross-check against the oracle in the naive automaton
runs and the optimized engine.
"""

from __future__ import annotations

import random

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_query
from acel.reference import oracle
from hypothesis import given
from hypothesis import strategies as st
from relating_streams import SCHEMA, agrees_where_it_compiles, relating_stream

from acel.lang.checker import check_text
from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.testing import TEST_SCHEMA, streams

BENCH = [  # refused before, drawn by bench/refusal_rate.py (seed 0 at 500, seed 2 at 2,000)
    "A{1,} FILTER A[LAST(A.x) <= x OR LAST(A.k) <= x]",
    "(AGG w[n := LAST(B.y)](B FILTER B[y <= 3] AND B[y <= 3]) FILTER w[n NOT IN (4, 0) OR NOT n "
    "NOT IN (1, 3, -1)])+ FILTER w[B.x > n OR COUNT(w.n) > n]",
    "(AGG w[n := LAST(B.y)](B FILTER B[y <= 3] AND B[y <= 3]) FILTER w[n NOT IN (4, 0) OR NOT n "
    "NOT IN (1, 3, -1)])+ FILTER w[n > B.y OR n > COUNT(w.n)]",
]


def _stream(rng: random.Random) -> list[Event]:
    out = []
    for k in range(rng.randint(1, 6)):
        kind = rng.choice("ABC")
        attrs = {"type": kind, "x": rng.choice([0, 1, 2, 4, None]), "k": rng.choice([0, 1, 2])}
        if kind != "C":
            attrs["y"] = rng.choice([0, 1, 2, 3])
        out.append(Event.make(k, attrs))
    return out


@pytest.mark.parametrize("text", BENCH)
def test_bench_refusals_now_compile(text: str) -> None:
    query = check_text(text, TEST_SCHEMA)
    compile_query(query, TEST_SCHEMA)
    rng = random.Random(5)
    kept = 0
    for _ in range(60):
        stream = _stream(rng)
        expected = oracle.run(query, stream, TEST_SCHEMA)
        kept += bool(expected)
        assert naive.run(query, stream, TEST_SCHEMA) == expected, stream
        assert engine.run(query, stream, TEST_SCHEMA) == expected, stream
    assert kept


EXPLICIT = [
    "(A AS a)+ ; (B AS b)+ ; (C AS c)+ FILTER b[v > a.v OR v >= c.v]",
    "(B AS b)+ ; (A AS a)+ FILTER b[v < a.v OR v <= COUNT(b) - 2 OR v < LAST(a.v)]",
    "(A AS a OR B AS b)+ FILTER b[2 * v > a.v OR 2 * v > MAX(b.w)]",
    "RETURN COUNT(*) PATTERN (B AS b)+ ; (C AS c)+ FILTER b[NOT w >= c.v OR w < FIRST(c.v)]",
]


@pytest.mark.parametrize("text", EXPLICIT)
def test_one_way_bounds_agree_with_the_oracle(text: str) -> None:
    query = check_text(text, SCHEMA)
    compile_query(query, SCHEMA)
    rng = random.Random(len(text))
    kept = 0
    for _ in range(60):
        stream = relating_stream(rng, 2, 7)
        expected = oracle.run(query, stream, SCHEMA)
        kept += bool(expected)
        assert naive.run(query, stream, SCHEMA) == expected, stream
        assert engine.run(query, stream, SCHEMA) == expected, stream
    assert kept


@pytest.mark.parametrize("text", [
    "(A AS a)+ ; (B AS b)+ FILTER b[v > a.v OR v > 2 * a.v]",  # a in two disjuncts
    "(A AS a)+ ; (B AS b)+ FILTER b[v > a.v OR w < a.v]",
])
def test_shared_variables_are_still_refused(text: str) -> None:
    """(Two directions or two own expressions compile by the guessed partition,
    test_refusal_partition; a variable read in two disjuncts does not.)"""
    with pytest.raises(UnsupportedQuery, match="OR or IN across relating terms"):
        compile_query(check_text(text, SCHEMA), SCHEMA)


_PATTERNS = ["(A AS a)+ ; (B AS b)+ ; (C AS c)+", "(B AS b)+ ; (A AS a)+ ; (C AS c)+",
             "(A AS a OR B AS b OR C AS c)+", "((B AS b)+ ; A AS a ; C AS c)+"]
_BOUNDS = ["a.v", "c.v + 1", "2 * a.v - 1", "MAX(a.v)", "AVG(b.w)", "COUNT(c)", "LAST(a.v)",
           "FIRST(c.v)", "SUM(b.v) - 2", "1"]


@st.composite
def _bound_queries(draw: st.DrawFn) -> str:
    """``pattern FILTER b[E op1 G1 OR E op2 G2 …]``, ops one way (``NOT`` sometimes)."""
    pattern = draw(st.sampled_from(_PATTERNS))
    own = draw(st.sampled_from(["v", "w", "v + w", "2 * v"]))
    ops = ["<", "<="] if draw(st.booleans()) else [">", ">="]
    bounds = draw(st.lists(st.sampled_from(_BOUNDS), min_size=2, max_size=3, unique=True))
    disjuncts = []
    for bound in bounds:
        op = draw(st.sampled_from(ops))
        if draw(st.booleans()):
            negated = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
            disjuncts.append(f"NOT {own} {negated} {bound}")
        else:
            disjuncts.append(f"{bound} {'<' if op[0] == '>' else '>'}{op[1:]} {own}")
    within = draw(st.sampled_from(["", "\nWITHIN 4 EVENTS"]))
    return f"{pattern} FILTER b[{' OR '.join(disjuncts)}]{within}"


@given(_bound_queries(), streams(SCHEMA, max_len=6))
def test_bound_shape_agrees_with_the_oracle(text: str, stream: list[Event]) -> None:
    """Property: where the shape compiles, both compiled engines give the oracle's results."""
    agrees_where_it_compiles(text, stream)
