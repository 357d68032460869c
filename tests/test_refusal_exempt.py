"""A relating conjunct ``U OR R`` with ``U`` over X's own attributes (issue 32 item 3).

The events where ``U`` is true are exempt; the rest enter R's extremes
(``compiler/relate_guarded.py``).  Explicit forms and the refusals the bench found, then a
Hypothesis cross-check of the shape against the oracle in the naive automaton runs and the
optimized engine (Spark runs the optimized engine's compiled automaton).
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
from relating_streams import SCHEMA, relating_stream

from acel.lang.checker import check_text
from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, streams


def _stream(rng: random.Random) -> list[Event]:
    """A short stream over SCHEMA with NULLs (missing attributes) and ties of values."""
    return relating_stream(rng, 2, 7)


def _agrees(query_text: str, schema: Schema, runs: int, seed: int) -> int:
    """Checks both compiled engines against the oracle on ``runs`` streams; the number of
    streams with a result (a test that finds none proves nothing)."""
    query = check_text(query_text, schema)
    compile_query(query, schema)
    rng = random.Random(seed)
    nonempty = 0
    for _ in range(runs):
        stream = _stream(rng)
        expected = oracle.run(query, stream, schema)
        nonempty += bool(expected)
        assert naive.run(query, stream, schema) == expected, stream
        assert engine.run(query, stream, schema) == expected, stream
    return nonempty


EXEMPT = [
    # another variable, X's events before, after and around Y's (checked at the end)
    "(A AS a)+ ; (B AS b)+ FILTER b[v > a.v OR v > 2]",
    "(B AS b)+ ; (A AS a)+ FILTER b[v <= a.v OR w = 0 OR v = 3]",
    "(A AS a OR B AS b)+ FILTER b[v >= a.v OR w IN (1, 3)]",
    "(B AS b)+ ; (A AS a)+ FILTER b[NOT v >= a.v OR NOT w < 2]",
    "(B AS b)+ ; (A AS a)+ FILTER b[v = a.v OR w > v]",
    # another variable before X: each event checked as read
    "A AS a ; (B AS b)+ FILTER b[v < a.v OR w = 1]",
    # whole-bag terms over X's own bag and another's, FIRST/LAST, linear sides
    "(A AS a)+ FILTER a[v <= 1 OR AVG(a.v) + AVG(a.v) > v]",
    "(C AS c)+ FILTER c[v = STDDEV(c.v) OR v != 2 * c.v]",
    "(B AS b)+ ; (A AS a)+ FILTER b[w = 0 OR v > MAX(a.v) - 1]",
    "(B AS b)+ ; (A AS a)+ FILTER b[v >= LAST(a.v) OR w >= 2]",
    "(B AS b)+ ; (A AS a)+ FILTER b[2 * v - a.v > 1 OR w != 1]",
    # two other variables in one comparison
    "(A AS a)+ ; (C AS c)+ ; (B AS b)+ FILTER c[v < a.v + b.v OR v = 0]",
    # inside an iteration and under RETURN
    "((B AS b)+ ; A AS a FILTER b[v > a.v OR w = 3])+",
    "RETURN COUNT(*), SUM(b.v) PATTERN (B AS b)+ ; (A AS a)+ FILTER b[v > a.v OR w = 0]\nWITHIN 5 EVENTS",
    # a disjunct written twice counts once (bench/refusal_rate.py 2000 2 drew these)
    "(A AS a)+ FILTER a[LAST(a.v) <= v OR LAST(a.v) <= v]",
    "(A AS a)+ ; (B AS b)+ FILTER b[v > a.v OR v > a.v OR w = 1]",
]


@pytest.mark.parametrize("text", EXEMPT)
def test_exempt_events_compile_and_agree_with_the_oracle(text: str) -> None:
    assert _agrees(text, SCHEMA, 60, len(text))


@pytest.mark.parametrize(
    "text",
    [  # refused before (OR across relating terms over many events), found by bench/refusal_rate.py
        "A{1,3}+ FILTER A[x <= 3 OR AVG(A.x) + AVG(A.x) > x]",
        "C+ FILTER C[k = STDDEV(C.k) OR k != 2 * C.x] WITHIN 5 EVENTS",
        "C+ FILTER C[k = STDDEV(C.k) OR k != 2 * C.k] WITHIN 5 EVENTS",
    ],
)
def test_bench_refusals_now_compile(text: str) -> None:
    query = check_text(text, TEST_SCHEMA)
    compile_query(query, TEST_SCHEMA)
    rng = random.Random(3)
    for _ in range(40):
        stream = []
        for k in range(rng.randint(1, 6)):
            kind = rng.choice("ABC")
            attrs = {"type": kind, "x": rng.choice([0, 1, 2, 4, None]), "k": rng.choice([0, 1, 2])}
            if kind != "C":
                attrs["y"] = rng.randint(0, 2)
            stream.append(Event.make(k, attrs))
        expected = oracle.run(query, stream, TEST_SCHEMA)
        assert naive.run(query, stream, TEST_SCHEMA) == expected, stream
        assert engine.run(query, stream, TEST_SCHEMA) == expected, stream


def test_two_relating_disjuncts_are_still_refused_with_what_to_write() -> None:
    text = "(A AS a)+ ; (B AS b)+ FILTER b[v > a.v OR w > 2 * a.v]"
    with pytest.raises(UnsupportedQuery) as info:
        compile_query(check_text(text, SCHEMA), SCHEMA)
    message = str(info.value)
    assert "OR or IN across relating terms" in message and "\n" not in message
    assert "write X[P] AND X[Q] when that is meant" in message


_PATTERNS = [
    "(A AS a)+ ; (B AS b)+", "(B AS b)+ ; (A AS a)+", "(A AS a OR B AS b)+",
    "A AS a ; (B AS b)+", "(B AS b ; (A AS a)+)+", "(B AS b)+",
]
_OWN = ["v <= 1", "w = 0", "NOT w IN (1, 2)", "v > w", "w = 3"]
_SIDES = ["a.v", "a.v + 1", "2 * a.v - 1", "MAX(a.v)", "AVG(b.v)", "COUNT(a)", "LAST(a.v)",
          "FIRST(b.w)", "SUM(b.w) - 2"]


@st.composite
def _exempt_queries(draw: st.DrawFn) -> str:
    """``pattern FILTER b[U OR own op side]`` (or ``NOT`` of the comparison) over SCHEMA."""
    pattern = draw(st.sampled_from(_PATTERNS))
    sides = [s for s in _SIDES if "a" not in s.replace("AVG", "").replace("MAX", "")
             or "a" in pattern.replace("AS", "")]
    side = draw(st.sampled_from(sides if "A" in pattern else [s for s in _SIDES if "a." not in s
                                                                and "(a)" not in s]))
    own = draw(st.sampled_from(["v", "w", "v + w", "2 * v"]))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "="]))
    comparison = f"{own} {op} {side}"
    if op != "=" and draw(st.booleans()):  # NOT of = is !=, refused over many events
        comparison = f"NOT {comparison}"
    unary = " OR ".join(draw(st.lists(st.sampled_from(_OWN), min_size=1, max_size=2, unique=True)))
    disjuncts = [unary, comparison] if draw(st.booleans()) else [comparison, unary]
    within = draw(st.sampled_from(["", "\nWITHIN 4 EVENTS"]))
    return f"{pattern} FILTER b[{disjuncts[0]} OR {disjuncts[1]}]{within}"


@given(_exempt_queries(), streams(SCHEMA, max_len=6))
def test_exempt_shape_agrees_with_the_oracle(text: str, stream: list[Event]) -> None:
    """Property: ``U OR R`` compiles and both compiled engines give the oracle's results."""
    query = check_text(text, SCHEMA)
    expected = oracle.run(query, stream, SCHEMA)
    assert naive.run(query, stream, SCHEMA) == expected
    assert engine.run(query, stream, SCHEMA) == expected
