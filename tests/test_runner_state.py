"""The incremental runner: fed event by event, saved and restored anywhere, it gives
exactly the batch results (spec §6, §12), and its output is in §12 order as it comes."""

from __future__ import annotations

import pickle

import pytest
from acel.acea import engine
from acel.acea.engine import Runner
from acel.acea.engine.state import StateMismatch
from hypothesis import given
from hypothesis import strategies as st
from strategies import TEST_SCHEMA, queries, streams, trend_queries

from acel.io.results import to_json_lines
from acel.lang.ast import Query
from acel.lang.clauses import TrendRow
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema


def _feed(runner: Runner, stream: list[Event], cuts: set[int], query: Query) -> tuple[Runner, list]:
    """Push ``stream``; at every cut, save the runner and go on with a restored copy."""
    out: list = []
    for k, event in enumerate(stream):
        if k in cuts:
            runner = Runner.restore(query, TEST_SCHEMA, runner.save())
        out.extend(runner.push(dict(event.attrs)))
    if len(stream) in cuts:
        runner = Runner.restore(query, TEST_SCHEMA, runner.save())
    out.extend(runner.finish())
    return runner, out


@given(queries(top_negation=True), streams(), st.sets(st.integers(0, 8)))
def test_saved_and_restored_runs_equal_the_batch_run(query: Query, stream: list[Event], cuts: set[int]) -> None:
    expected = engine.run(query, stream, TEST_SCHEMA)
    _, got = _feed(Runner(query, TEST_SCHEMA), stream, cuts, query)
    # complex events come out in the order of spec §12 as they are final
    assert to_json_lines(got) == to_json_lines(expected)
    assert [(m.event.end) for m in got] == sorted(m.event.end for m in got)


@given(trend_queries(top_negation=True), streams(), st.sets(st.integers(0, 8)))
def test_saved_and_restored_trend_runs_equal_the_batch_run(
    query: Query, stream: list[Event], cuts: set[int]
) -> None:
    expected = engine.run(query, stream, TEST_SCHEMA)
    _, got = _feed(Runner(query, TEST_SCHEMA), stream, cuts, query)
    assert sorted(got, key=TrendRow.sort_key) == expected


def test_a_long_run_saves_without_recursion() -> None:
    """A run through 20,000 contiguous emitting steps is a DAG 20,000 nodes deep: it is
    written as a flat table, not as nested pickles."""
    schema = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"]})
    query = parse_query("A : (C AS c):+ : B")
    runner = Runner(query, schema)
    runner.push({"type": "A", "v": 0})
    for k in range(1, 20_001):
        runner.push({"type": "C", "v": k})
    restored = Runner.restore(query, schema, runner.save())
    found = restored.push({"type": "B", "v": -1})
    assert found == runner.push({"type": "B", "v": -1})
    assert [(m.event.start, m.event.end, len(m.event.bag("c"))) for m in found] == [(0, 20_001, 20_000)]


def test_restoring_into_another_query_is_refused() -> None:
    schema = Schema.of({"A": ["v"], "B": ["v"]})
    blob = Runner(parse_query("A ; B"), schema).save()
    with pytest.raises(StateMismatch, match="another query"):
        Runner.restore(parse_query("B ; A"), schema, blob)
    with pytest.raises(StateMismatch, match="not a saved runner state"):
        Runner.restore(parse_query("A ; B"), schema, b"garbage")
    with pytest.raises(StateMismatch):
        Runner.restore(parse_query("A ; B"), schema, pickle.dumps({"options": {}}))
