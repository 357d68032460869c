"""Relating filters bounded by the query's window (issue 32 item 3).

Under ``WITHIN n EVENTS`` (``SELECT ALL``) a kept complex event spans at most ``n`` events,
so with ``n <= 5`` every variable holds at most ``n`` in a run that matters and the slot
construction of ``compiler/relate_single.py`` applies to conjuncts refused without the
window (``!=``, ``OR`` across terms, ``PREV`` beside whole-bag terms over ``B+``).  Checked
against the oracle in the naive automaton runs and the optimized engine, with SLIDE,
PARTITION BY and RETURN (trend counting); longer windows and other strategies still refuse.
"""

from __future__ import annotations

import random

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_formula, compile_query, events_bound
from acel.reference import oracle
from hypothesis import example, given
from hypothesis import strategies as st
from relating_streams import SCHEMA, relating_stream

from acel.lang.checker import check_text
from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.testing import TEST_SCHEMA, streams


def _stream(rng: random.Random) -> list[Event]:
    return relating_stream(rng, 2, 9)


WINDOWED = [  # (the != against one value per run compile without the window since the
    # guessed partition: tests/test_refusal_partition.py)
    "(A AS a)+ ; (B AS b)+ FILTER b[v != a.v]\nWITHIN 4 EVENTS",
    "(B AS b)+ FILTER b[v != AVG(b.w) + RUNNING SUM(w) AND w != PREV(v)]\nWITHIN 4 EVENTS",
    "(A AS a)+ ; (B AS b)+ FILTER b[v > a.v OR w > 2 * a.v]\nWITHIN 5 EVENTS",
    "(B AS b)+ FILTER b[v > PREV(v) + MAX(b.w) OR w = 0]\nWITHIN 3 EVENTS",
    "((A AS a)+ ; B AS b FILTER a[v != b.v])+\nWITHIN 4 EVENTS",
    "RETURN COUNT(*), SUM(b.v) PATTERN (A AS a)+ ; (B AS b)+ FILTER b[v != a.v]\nWITHIN 4 EVENTS",
]


@pytest.mark.parametrize("text", WINDOWED)
def test_windowed_conjuncts_compile_and_agree_with_the_oracle(text: str) -> None:
    query = check_text(text, SCHEMA)
    with pytest.raises(UnsupportedQuery):  # refused without the window's bound
        compile_formula(query.formula, SCHEMA)
    compile_query(query, SCHEMA)
    rng = random.Random(len(text))
    nonempty = 0
    for _ in range(50):
        stream = _stream(rng)
        expected = oracle.run(query, stream, SCHEMA)
        nonempty += bool(expected)
        assert naive.run(query, stream, SCHEMA) == expected, stream
        assert engine.run(query, stream, SCHEMA) == expected, stream
    assert nonempty


@pytest.mark.parametrize(
    "text",
    [
        "(A AS a)+ ; (B AS b)+ FILTER b[v != a.v]\nWITHIN 6 EVENTS",  # more than 5 slots
        "(A AS a)+ ; (B AS b)+ FILTER b[v != a.v]\nWITHIN 3 ON v",  # no bound on events
        "SELECT NEXT (A AS a)+ ; (B AS b)+ FILTER b[v != a.v]\nWITHIN 3 EVENTS",
    ],
)
def test_without_a_small_events_window_it_is_refused_with_what_to_write(text: str) -> None:
    query = check_text(text, SCHEMA)
    with pytest.raises(UnsupportedQuery) as info:
        compile_query(query, SCHEMA)
    message = str(info.value)
    assert "\n" not in message and "WITHIN n EVENTS" in message
    with pytest.raises(UnsupportedQuery):
        engine.run(query, [], SCHEMA)


def test_events_bound_reads_the_window_and_the_strategy() -> None:
    def bound(text: str) -> int | None:
        return events_bound(check_text(text, SCHEMA))

    assert bound("A WITHIN 3 EVENTS") == 3
    assert bound("RETURN COUNT(*) PATTERN A WITHIN 3 EVENTS SLIDE 2 EVENTS") == 3
    assert bound("A") is None
    assert bound("A WITHIN 3 ON v") is None
    assert bound("SELECT MAX A WITHIN 3 EVENTS") is None


def test_bench_refusal_now_compiles() -> None:
    """Found by ``bench/refusal_rate.py 2000 2``: refused before the window's bound."""
    query = check_text("B+ FILTER B[2 * LAST(B.x) != k] WITHIN 1 EVENTS", TEST_SCHEMA)
    stream = [Event.make(0, {"type": "B", "x": 1, "y": 0, "k": 2}),
              Event.make(1, {"type": "B", "x": 1, "y": 0, "k": 1})]
    expected = oracle.run(query, stream, TEST_SCHEMA)
    assert [m.event.start for m in expected] == [1]  # type: ignore[union-attr]
    assert naive.run(query, stream, TEST_SCHEMA) == expected
    assert engine.run(query, stream, TEST_SCHEMA) == expected


@st.composite
def _windowed_queries(draw: st.DrawFn) -> str:
    pattern = draw(st.sampled_from([
        "(A AS a)+ ; (B AS b)+", "(B AS b)+ ; (A AS a)+", "(A AS a OR B AS b)+", "(B AS b)+",
        "(B AS b ; (A AS a)+)+", "(B AS b):+ ; A AS a",
    ]))
    others = ["a.v", "FIRST(a.v)", "SUM(a.v)"] if "A AS a" in pattern else []
    side = draw(st.sampled_from([*others, "PREV(v)", "RUNNING MAX(w)", "LAST(b.w)", "AVG(b.v)",
                                 "PREV(w) + MIN(b.v)"]))
    own = draw(st.sampled_from(["v", "w", "v - w"]))
    op = draw(st.sampled_from(["!=", "=", "<", ">="]))
    pred = f"{own} {op} {side}"
    if draw(st.booleans()):
        pred = f"{pred} OR {draw(st.sampled_from(['w = 0', f'v {op} {side}', 'v IN (1, 3)']))}"
    window = draw(st.integers(1, 5))
    if draw(st.booleans()):
        return f"{pattern} FILTER b[{pred}]\nWITHIN {window} EVENTS"
    slide = draw(st.integers(1, window))
    return (f"RETURN COUNT(*), SUM(b.v) PATTERN {pattern} FILTER b[{pred}]\n"
            f"WITHIN {window} EVENTS\nSLIDE {slide} EVENTS")


@given(_windowed_queries(), streams(SCHEMA, max_len=7))
@example(  # an own disjunct beside one the window decides: once an IndexError, not a refusal
    "(A AS a)+ ; (B AS b)+ FILTER b[v != LAST(b.w) OR v IN (1, 3)]\nWITHIN 2 EVENTS",
    [Event.make(0, {"type": "A", "v": 1}), Event.make(1, {"type": "B", "v": 2, "w": 2})],
)
def test_windowed_shape_agrees_with_the_oracle(text: str, stream: list[Event]) -> None:
    """Property: every such query compiles, and both compiled engines give the oracle's."""
    query = check_text(text, SCHEMA)
    expected = oracle.run(query, stream, SCHEMA)
    assert naive.run(query, stream, SCHEMA) == expected
    assert engine.run(query, stream, SCHEMA) == expected


def test_a_workload_runs_windowed_relating_queries_as_alone() -> None:
    """The workload engine compiles with each query's window bound too (shared trend plans,
    prefix groups and lone runners), so it answers what the optimized engine answers."""
    from acel.acea.engine.workload import run_workload

    texts = {
        "ne": "(A AS a)+ ; (B AS b)+ FILTER b[v != a.v]\nWITHIN 4 EVENTS",
        "ne2": "(A AS a)+ ; (B AS b)+ FILTER b[w != a.v]\nWITHIN 4 EVENTS",
        "count": "RETURN COUNT(*) PATTERN (B AS b)+ FILTER b[v != MIN(b.w)]\nWITHIN 3 EVENTS\n"
                 "SLIDE 1 EVENTS",
        "plain": "RETURN COUNT(*) PATTERN A ; B\nWITHIN 3 EVENTS\nSLIDE 1 EVENTS",
    }
    queries = [(name, check_text(text, SCHEMA)) for name, text in texts.items()]
    rng = random.Random(11)
    for _ in range(15):
        stream = _stream(rng)
        got = run_workload(queries, stream, SCHEMA)
        for name, query in queries:
            assert got[name] == oracle.run(query, stream, SCHEMA), (name, stream)


@pytest.mark.parametrize(
    ("text", "instead"),
    [  # every shape papers/compiler.md still lists as refused, and what its message offers
        ("(A AS a)+ ; (B AS b)+ FILTER b[v != a.v]", "FIRST(Y.a), LAST(Y.a), MIN(Y.a)"),
        ("(A AS a)+ ; (B AS b)+ FILTER b[v > a.v OR w > 2 * a.v]", "X[P] AND X[Q]"),
        ("(B AS b)+ FILTER b[RUNNING MAX(v) + LAST(b.w) > v]", "WITHIN n EVENTS with n <= 5"),
        ("(A AS a)+ ; (B AS b)+ FILTER b[v > a.v * MAX(a.v)]", "WITHIN n EVENTS with n <= 5"),
        ("(A AS a)+ ; (B AS b)+ FILTER b[v * a.v > 1]", "WITHIN n EVENTS with n <= 5"),
        ("AGG z[f := FIRST(r.v)](AGG w[s := MAX(A.v)](A) AS r)", "a variable of their own"),
    ],
)
def test_every_refusal_left_says_what_to_write_instead(text: str, instead: str) -> None:
    """Issue 32: a refusal is one clean line, naming the term and what compiles instead."""
    query = check_text(text, SCHEMA)
    with pytest.raises(UnsupportedQuery) as info:
        compile_query(query, SCHEMA)
    message = str(info.value)
    assert "\n" not in message and instead in message
    assert message.startswith("the automaton engines do not compile ")
    assert "--engine oracle" in message
