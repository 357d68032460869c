"""``PREV``/``RUNNING`` over a variable one step fills with several events (issue 32 item 3).

Events created by an ``AGG`` share their time with the event beside them (``AGG w[…](A ;
B) AS p``: B and w's event).  Tied events have the same earlier events, so ``RUNNING``
and the checks need no order among them; ``PREV`` of a *later* event would (the greatest
in the canonical order of §2), so that stays refused when a later step may emit into the
variable (``compiler/relate_history.py``).  The refusals the bench drew, and a Hypothesis
cross-check against the oracle in the naive automaton runs and the optimized engine.
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
from relating_streams import SCHEMA, agrees_where_it_compiles

from acel.lang.checker import check_text
from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.testing import TEST_SCHEMA, streams

BENCH = [  # refused before, drawn by bench/refusal_rate.py (seeds 1, 3 and 5)
    "AGG z[s := AVG(z.v)](AGG z[v := MAX(C.x)](C){2,}) FILTER z[RUNNING COUNT(s) = s] WITHIN 1 EVENTS",
    "AGG z[n := AVG(A.x)](A ; B) AS p FILTER p[PREV(k) + PREV(n) = k]",
    "AGG z[f := FIRST(B.k)]((AGG w[s := COUNT(A.x), v := MAX(A.k)](A ; B) FILTER w[s > 3 AND "
    "(-v = s OR s >= 2)]) AS p FILTER p[NOT v <= 2 * RUNNING SUM(y)]) WITHIN 5 EVENTS",
    "AGG z[v := STDDEV(C.k)]((AGG z[v := MAX(C.x), s := AVG(C.k), m := COUNT(C.x)](C) FILTER "
    "z[s != 2 OR NOT m != (m + 4) % (v / 2)]){2,}) FILTER z[s != 2 OR NOT m != (m + 4) % "
    "(v / 2)] FILTER z[RUNNING AVG(v) < v]",
]


@pytest.mark.parametrize("text", BENCH)
def test_bench_refusals_now_compile(text: str) -> None:
    query = check_text(text, TEST_SCHEMA)
    compile_query(query, TEST_SCHEMA)
    rng = random.Random(9)
    for _ in range(60):
        stream = []
        for k in range(rng.randint(1, 5)):
            kind = rng.choice("ABC")
            attrs = {"type": kind, "x": rng.choice([0, 1, 2, None]), "k": rng.choice([0, 1, 2])}
            if kind != "C":
                attrs["y"] = rng.choice([0, 1, 2])
            stream.append(Event.make(k, attrs))
        expected = oracle.run(query, stream, TEST_SCHEMA)
        assert naive.run(query, stream, TEST_SCHEMA) == expected, stream
        assert engine.run(query, stream, TEST_SCHEMA) == expected, stream


def test_prev_after_tied_events_is_still_refused() -> None:
    """A later event's PREV is the greatest of the tied ones in canonical order."""
    text = "((AGG w[v := SUM(A.v)](A ; B)) AS p)+ FILTER p[v > PREV(v)]"
    with pytest.raises(UnsupportedQuery, match="ties in time"):
        compile_query(check_text(text, SCHEMA), SCHEMA)


_PATTERNS = [
    "(AGG w[v := {f}(a.v)]((A AS a)+ ; B)) AS p",
    "((AGG w[v := {f}(a.v)](A AS a ; B)) AS p)+",
    "(A AS a)+ ; (AGG w[v := {f}(B.v), w := COUNT(B)]((B ; C)+)) AS p",
    "(AGG w[v := {f}(w.v)](AGG w[v := {f}(A.v)]((A ; A)+))) AS p",
]
_CHECKS = ["v > RUNNING {f}(v)", "v <= PREV(v) + 1", "NOT v = RUNNING COUNT(v)",
           "v >= RUNNING {f}(v) OR v = 0", "RUNNING SUM(v) < 2 * v + PREV(v)"]


@st.composite
def _tie_queries(draw: st.DrawFn) -> str:
    """``pattern FILTER p[check]``: an AGG's created events share p with the event beside
    them; the check reads RUNNING and PREV of p."""
    funcs = ["SUM", "MAX", "MIN", "COUNT", "AVG"]
    pattern = draw(st.sampled_from(_PATTERNS)).format(f=draw(st.sampled_from(funcs)))
    check = draw(st.sampled_from(_CHECKS)).format(f=draw(st.sampled_from(funcs)))
    within = draw(st.sampled_from(["", "\nWITHIN 5 EVENTS"]))
    return f"{pattern} FILTER p[{check}]{within}"


@given(_tie_queries(), streams(SCHEMA, max_len=6))
def test_tie_shape_agrees_with_the_oracle(text: str, stream: list[Event]) -> None:
    """Property: where the shape compiles, both compiled engines give the oracle's results."""
    agrees_where_it_compiles(text, stream)
