"""``Y.a`` beside a whole-bag term on one side (issue 32 item 3, brief item 2).

``b[v > a.v + MAX(a.v)]``: the side splits into one part per other variable plus a
whole-bag summand (one value per run), added to the parts' extremes by the last step
(``compiler/relate.py``, ``_parts_and_whole``).  The refusals the bench drew, explicit
forms, and a Hypothesis cross-check against the oracle in the naive automaton runs and the
optimized engine.
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
from acel.testing import TEST_SCHEMA, streams

BENCH = [  # refused before, drawn by bench/refusal_rate.py (seeds 1 and 2)
    "AGG w[n := MAX(B.k), s := COUNT(B.k), v := AVG(z.m)](AGG z[s := MIN(B.k), n := FIRST(B.y), "
    "v := MIN(z.s)](AGG z[n := STDDEV(B.k), m := FIRST(B.y), s := MIN(B.y)](B))) FILTER "
    "B[z.m + FIRST(B.k) = k]",  # the outer z has no m: z.m is NULL, nothing passes
    "(AGG w[s := MIN(C.x)](C) FILTER w[s NOT IN (1, 2) OR s > 3 AND s < 3])+ FILTER "
    "C[w.s + FIRST(C.x) < k]",
]


@pytest.mark.parametrize("text", BENCH)
def test_bench_refusals_now_compile(text: str) -> None:
    query = check_text(text, TEST_SCHEMA)
    compile_query(query, TEST_SCHEMA)
    rng = random.Random(7)
    kept = 0
    for _ in range(60):
        stream = []
        for k in range(rng.randint(1, 5)):
            kind = rng.choice("BC")
            attrs = {"type": kind, "x": rng.choice([0, 1, 2, None]), "k": rng.choice([0, 1, 2, 3])}
            if kind != "C":
                attrs["y"] = rng.choice([0, 1, 2])
            stream.append(Event.make(k, attrs))
        expected = oracle.run(query, stream, TEST_SCHEMA)
        kept += bool(expected)
        assert naive.run(query, stream, TEST_SCHEMA) == expected, stream
        assert engine.run(query, stream, TEST_SCHEMA) == expected, stream
    assert kept or "z.m" in text


EXPLICIT = [
    "(A AS a)+ ; (B AS b)+ FILTER b[v > a.v + MAX(a.v) - 3]",
    "(B AS b)+ ; (A AS a)+ FILTER b[v <= a.v - LAST(a.v) + COUNT(b)]",
    "(A AS a)+ ; (C AS c)+ ; (B AS b)+ FILTER b[v >= a.v + c.v - FIRST(c.v)]",
    "(A AS a OR B AS b)+ FILTER b[NOT v < a.v + MIN(b.w)]",
    "(B AS b)+ ; (A AS a)+ FILTER b[w = 0 OR v < a.v + AVG(b.v)]",
]


@pytest.mark.parametrize("text", EXPLICIT)
def test_parts_with_a_whole_bag_summand_agree_with_the_oracle(text: str) -> None:
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


def test_a_non_linear_mix_is_still_refused() -> None:
    with pytest.raises(UnsupportedQuery, match="one part per variable plus the whole-bag part"):
        compile_query(check_text("(A AS a)+ ; (B AS b)+ FILTER b[v > a.v * MAX(a.v)]", SCHEMA), SCHEMA)


_PATTERNS = ["(A AS a)+ ; (B AS b)+ ; (C AS c)+", "(B AS b)+ ; (A AS a)+", "(A AS a OR B AS b)+",
             "((B AS b)+ ; A AS a)+", "A AS a ; (B AS b)+"]
_PARTS = ["a.v", "2 * a.v", "a.v - c.v"]
_WHOLE = ["MAX(a.v)", "COUNT(b)", "LAST(a.v)", "FIRST(b.w)", "AVG(b.v)", "MIN(c.v)", "SUM(a.v)"]


@st.composite
def _whole_queries(draw: st.DrawFn) -> str:
    """``pattern FILTER b[E op part ± whole]`` (sometimes ``NOT``) over SCHEMA."""
    pattern = draw(st.sampled_from(_PATTERNS))
    part = draw(st.sampled_from([p for p in _PARTS if "c." not in p or "C" in pattern]))
    whole = draw(st.sampled_from([w for w in _WHOLE if "c." not in w or "C" in pattern]))
    sign = draw(st.sampled_from(["+", "-"]))
    own = draw(st.sampled_from(["v", "w", "v + w"]))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "="]))
    comparison = f"{own} {op} {part} {sign} {whole}"
    if draw(st.booleans()):
        comparison = f"NOT {comparison}" if op != "=" else comparison
    within = draw(st.sampled_from(["", "\nWITHIN 4 EVENTS"]))
    return f"{pattern} FILTER b[{comparison}]{within}"


@given(_whole_queries(), streams(SCHEMA, max_len=6))
def test_whole_shape_agrees_with_the_oracle(text: str, stream: list[Event]) -> None:
    """Property: the shape compiles and both compiled engines give the oracle's results."""
    query = check_text(text, SCHEMA)
    expected = oracle.run(query, stream, SCHEMA)
    assert naive.run(query, stream, SCHEMA) == expected
    assert engine.run(query, stream, SCHEMA) == expected
