"""``Runner.advance``: a watermark on the ``ON`` axis releases results early, never others.

A live stream (Spark Structured Streaming, ``spark_backend.streaming``) tells the
runner how far event time has got; the results that releases must be exactly
those the batch run has, each once, and in order.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from acel.acea import engine
from acel.acea.engine import Runner
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import queries, streams, trend_queries

from acel.io.results import to_json_lines
from acel.lang.ast import Query, Window
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA_T = Schema.of({"A": ["x", "y", "k", "t"], "B": ["x", "y", "k", "t"], "C": ["x", "k", "t"]})
"""The test schema with a time attribute ``t`` on every type."""


def on_t(query: Query) -> Query:
    """The query with its EVENTS windows on ``t`` instead."""
    within = None if query.within is None else Window(query.within.size, "t")
    slide = None if query.slide is None else Window(query.slide.size, "t")
    return replace(query, within=within, slide=slide)


@st.composite
def timed(draw: Any) -> tuple[list[Event], list[Any]]:
    """A stream with a non-decreasing ``t`` (ties too), and where to call ``advance``:
    before event ``k`` a coordinate at most ``t_k`` (``None``: no call); at the end any."""
    events = draw(streams())
    t = 0
    out = []
    for e in events:
        t += draw(st.sampled_from((0, 1, 1, 2, 5)))
        out.append(Event.make(e.time, {**e.as_dict(), "t": t}))
    calls: list[Any] = []
    previous = 0
    for e in [*out, None]:
        if draw(st.booleans()):
            calls.append(None)
            continue
        upper = e.get("t") if e is not None else previous + 9
        calls.append(draw(st.integers(previous, upper)) if upper >= previous else None)
        if e is not None:
            previous = e.get("t")
    return out, calls


def _feed(query: Query, stream: list[Event], calls: list[Any]) -> list[Any]:
    runner = Runner(query, SCHEMA_T)
    out: list[Any] = []
    for k, call in enumerate(calls):
        if call is not None:
            deadline = runner.next_deadline()
            released = runner.advance(call)
            if deadline is None or call < deadline:
                assert released == [], "advance below next_deadline() released results"
            out.extend(released)
            # a restored runner goes on the same (advance leaves consistent state)
            runner = Runner.restore(query, SCHEMA_T, runner.save())
        if k < len(stream):
            out.extend(runner.push(stream[k].as_dict()))
    out.extend(runner.finish())
    return out


def _skip_case() -> tuple[list[Event], list[Any]]:
    """Hypothesis' counterexample (brief D): four A at t = 0, then a B at t = 1; advance
    to 0 before the B and to 2 at the end.  CE[4,4] is held for the skip's start order
    (a live run through the B starts at the expired A's), and ``advance(2)`` kills it."""
    rows = [{"x": 0, "y": 0}, {}, {"x": 0, "y": 0}, {}]
    stream = [Event.make(i, {"type": "A", "k": 0, "t": 0, **r}) for i, r in enumerate(rows)]
    stream.append(Event.make(4, {"type": "B", "k": 0, "t": 1, "x": 0, "y": 0}))
    return stream, [None, None, None, None, 0, 2]


SKIP_QUERY = "NOT A ; (A? ; B)+ AS p WITHIN 1 EVENTS AFTER MATCH SKIP TO FIRST A"
"""Brief D's query (``on_t`` puts its window on ``t``)."""


@given(queries(top_negation=True), timed())
@example(parse_query(SKIP_QUERY), _skip_case())
def test_advancing_the_axis_releases_exactly_the_batch_complex_events(
    query: Query, case: tuple[list[Event], list[Any]]
) -> None:
    query = on_t(query)
    stream, calls = case
    expected = engine.run(query, stream, SCHEMA_T)
    got = _feed(query, stream, calls)
    assert to_json_lines(got) == to_json_lines(expected)
    assert all(isinstance(m, Match) for m in got)
    assert [m.event.end for m in got] == sorted(m.event.end for m in got)


@given(trend_queries(top_negation=True), timed())
def test_advancing_the_axis_releases_exactly_the_batch_rows(
    query: Query, case: tuple[list[Event], list[Any]]
) -> None:
    query = on_t(query)
    stream, calls = case
    expected = engine.run(query, stream, SCHEMA_T)
    got = _feed(query, stream, calls)
    assert sorted(got, key=TrendRow.sort_key) == expected
    assert len(got) == len(expected)


def test_a_silent_partition_releases_its_window_when_the_watermark_passes() -> None:
    query = parse_query("RETURN k, COUNT(*) PATTERN A ; B PARTITION BY k WITHIN 10 ON t SLIDE 10 ON t")
    runner = Runner(query, SCHEMA_T)
    assert runner.push({"type": "A", "k": 1, "t": 1}) == []
    assert runner.push({"type": "B", "k": 1, "t": 3}) == []
    assert runner.next_deadline() == 10
    assert runner.advance(9) == []
    rows = runner.advance(10)
    assert [(r.key, r.window, r.values) for r in rows] == [((("k", 1),), (0, 10), (("k", 1), ("COUNT(*)", 1)))]
    assert runner.next_deadline() is None
    assert runner.finish() == []


def test_a_trailing_negation_result_is_released_once_its_window_has_passed() -> None:
    query = parse_query("A ; B ; NOT C WITHIN 5 ON t")
    runner = Runner(query, SCHEMA_T)
    runner.push({"type": "A", "t": 0})
    assert runner.push({"type": "B", "t": 2}) == []  # held: a C before t = 5 would block it
    assert runner.advance(4) == []
    found = runner.advance(5)
    assert [(m.event.start, m.event.end) for m in found] == [(0, 1)]
    assert runner.finish() == []


def test_advance_does_nothing_on_an_events_axis() -> None:
    query = parse_query("RETURN COUNT(*) PATTERN A ; B WITHIN 3 EVENTS SLIDE 3 EVENTS")
    runner = Runner(query, SCHEMA_T)
    runner.push({"type": "A", "t": 0})
    assert runner.next_deadline() is None
    assert runner.advance(100) == []


def test_a_complex_event_held_for_the_skip_order_has_its_deadline() -> None:
    """A complex event held for AFTER MATCH SKIP's start order (an earlier-starting run
    is alive) is released by ``advance`` once that run's starts leave the window:
    ``next_deadline`` names that coordinate, not ``None`` (brief D; it ignored them)."""
    query = on_t(parse_query(SKIP_QUERY))
    stream, _ = _skip_case()
    runner = Runner(query, SCHEMA_T)
    for event in stream:
        assert runner.push(event.as_dict()) == []
    assert runner.next_deadline() == 2  # the run through the B holds starts up to t = 1
    assert runner.advance(1) == []
    found = runner.advance(2)
    assert [(m.event.start, m.event.end) for m in found] == [(4, 4)]
    assert runner.next_deadline() is None
    assert runner.finish() == []


def test_a_float_deadline_is_never_an_ulp_late() -> None:
    """``WindowRule.reaching``: the least coordinate whose threshold reaches a start, also
    where ``start + size`` rounds up past it."""
    rule = Runner(parse_query("A ; B WITHIN 0.2 ON t"), SCHEMA_T).rule
    for start in (0.1, 0.7, 1e16, 3, -0.3):
        c = rule.reaching(start)
        assert rule.threshold(c) >= start
        assert rule.threshold(math.nextafter(c, -math.inf)) < start
