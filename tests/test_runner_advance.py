"""``Runner.advance``: a watermark on the ``ON`` axis releases results early, never others.

A live stream (Spark Structured Streaming, ``spark_backend.streaming``) tells the
runner how far event time has got; the results that releases must be exactly
those the batch run has, each once, and in order.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from acel.acea import engine
from acel.acea.engine import Runner
from hypothesis import given
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


@given(queries(top_negation=True), timed())
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
