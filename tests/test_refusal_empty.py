"""``!=`` conjuncts that an event of the compared bag always fails (issue 32 item 3).

``X[a != MAX(X.a)]`` (MIN, FIRST, LAST; the term's variable contained in X) holds iff X is
empty, ``X[a != Y.a]`` with Y contained in X iff Y is empty (``compiler/relate_empty.py``).
The refusals the bench drew, explicit forms, and a Hypothesis cross-check of the shape
against the oracle in the naive automaton runs and the optimized engine.
"""

from __future__ import annotations

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_query
from acel.reference import oracle
from hypothesis import given
from hypothesis import strategies as st
from relating_streams import SCHEMA, agrees_where_it_compiles

from acel.lang.checker import check_text
from acel.lang.events import Event
from acel.testing import TEST_SCHEMA, streams

BENCH = [  # refused before, drawn by bench/refusal_rate.py (seeds 2 and 5 at 2,000)
    "B{1,}{1,} FILTER B[MAX(B.x) != x AND k < -(y / x)]",
    "A{1,} FILTER A[MAX(A.x) != x AND k < -(y / x)]",
    "AGG w[f := FIRST(C.k)](C+ FILTER C[1 * LAST(C.k) != k])",
    "A+ FILTER A[NOT x = 1 * LAST(A.x)]",
]


def _stream(seed: int) -> list[Event]:
    import random

    rng = random.Random(seed)
    out = []
    for k in range(rng.randint(0, 6)):
        kind = rng.choice("ABC")
        attrs = {"type": kind, "x": rng.choice([0, 1, 2, None]), "k": rng.choice([0, 1, None])}
        if kind != "C":
            attrs["y"] = rng.randint(0, 2)
        out.append(Event.make(k, attrs))
    return out


@pytest.mark.parametrize("text", BENCH)
def test_bench_refusals_now_compile(text: str) -> None:
    query = check_text(text, TEST_SCHEMA)
    compile_query(query, TEST_SCHEMA)
    for seed in range(60):  # every complex event has an X (a Y) here: all results empty
        stream = _stream(seed)
        expected = oracle.run(query, stream, TEST_SCHEMA)
        assert naive.run(query, stream, TEST_SCHEMA) == expected, stream
        assert engine.run(query, stream, TEST_SCHEMA) == expected, stream


_PATTERNS = ["(B AS b)+", "(A AS a OR B AS b)+", "(A AS a)+ ; (B AS b)+", "(B AS b ; A AS a)+"]
_TERMS = ["MAX(b.v)", "MIN(b.v)", "FIRST(b.v)", "LAST(b.v)", "1 * LAST(b.v)", "MAX(b.v) * 1",
          "b.v", "MAX(b.w)", "AVG(b.v)", "a.v", "LAST(a.v)"]


@st.composite
def _empty_queries(draw: st.DrawFn) -> str:
    """``pattern AS p FILTER p[v != term]`` (or ``b[…]``, ``NOT v = term``) over SCHEMA:
    terms over a contained variable (the shortcut) and others (refused, or another
    construction)."""
    pattern = draw(st.sampled_from(_PATTERNS))
    term = draw(st.sampled_from([t for t in _TERMS if "a." not in t or "a" in pattern]))
    var = draw(st.sampled_from(["p", "b"]))
    own = draw(st.sampled_from(["v", f"{var}.v"]))
    comparison = draw(st.sampled_from([f"{own} != {term}", f"NOT {term} = {own}"]))
    within = draw(st.sampled_from(["", "\nWITHIN 4 EVENTS"]))
    return f"({pattern}) AS p FILTER {var}[{comparison}]{within}"


@given(_empty_queries(), streams(SCHEMA, max_len=6))
def test_empty_shape_agrees_with_the_oracle(text: str, stream: list[Event]) -> None:
    """Property: where the shape compiles, both compiled engines give the oracle's results."""
    agrees_where_it_compiles(text, stream)


@pytest.mark.parametrize("text", [
    "(A AS a)+ ; (B AS b)? FILTER b[v != MAX(b.v)]",
    "((A AS a OR B AS b)+) AS p FILTER p[v != b.v]",
    "(A AS a)+ ; ((B AS b)+)? FILTER b[NOT LAST(b.v) = v]",
])
def test_contained_shapes_keep_the_runs_without_the_variable(text: str) -> None:
    """The shortcut's forms over many events (no window, no slots): the complex events
    without b are kept, the others dropped, as the oracle does."""
    query = check_text(text, SCHEMA)
    compile_query(query, SCHEMA)
    kept = 0
    for seed in range(40):
        stream = [Event.make(k, {"type": "AB"[(seed >> k) & 1], "v": (seed + k) % 3})
                  for k in range(seed % 6)]
        expected = oracle.run(query, stream, SCHEMA)
        kept += bool(expected)
        assert naive.run(query, stream, SCHEMA) == expected, stream
        assert engine.run(query, stream, SCHEMA) == expected, stream
    assert kept
