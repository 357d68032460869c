"""The incremental runner: fed event by event, saved and restored anywhere, it gives
exactly the batch results (spec §6, §12), and its output is in §12 order as it comes."""

from __future__ import annotations

import pickle
from pathlib import Path

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


def test_select_max_state_with_a_node_whose_runs_emit_nothing_restores() -> None:
    """Regression (Hypothesis): SELECT MAX codes a DAG node -1 when no run through it has
    taken an event into a complex event (here the projection drops ``A``); the state
    check refused that rank as negative."""
    query = parse_query("SELECT MAX PROJECT[](A)")
    stream = [Event.make(0, {"type": "A", "k": 0, "x": 0, "y": 0}),
              Event.make(1, {"type": "A", "k": 1, "x": 0, "y": 0})]
    expected = to_json_lines(engine.run(query, stream, TEST_SCHEMA))
    assert expected
    for cuts in ({1}, {0, 1, 2}):
        _, got = _feed(Runner(query, TEST_SCHEMA), stream, cuts, query)
        assert to_json_lines(got) == expected


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


# ------------------------------------------------------------------ hostile state (issue 24 §1)


class _Payload:
    """What an attacker plants in a state file: unpickling it would create ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (self.marker.touch, ())


def test_a_pickled_payload_runs_nothing_and_is_refused_in_one_line(tmp_path: Path) -> None:
    """Issue 24 §1: ``acel.runner(q, schema, state=pickle.dumps(E()))`` ran ``E.__reduce__``."""
    import acel

    marker = tmp_path / "ran"
    blob = pickle.dumps(_Payload(marker))
    schema = {"A": ["v"], "B": ["v"]}
    with pytest.raises(acel.AcelError) as caught:
        acel.runner("A ; B", schema, state=blob)
    assert not marker.exists()
    message = str(caught.value)
    assert "\n" not in message and "pickle" in message and "could run code" in message
    # the same inside a streaming checkpoint (Spark's state store holds KeyStream.save())
    import pyarrow as pa
    from acel.spark_backend.executor import UnitSpec
    from acel.spark_backend.streaming import KeyStream, StreamSpec

    query = parse_query("A ; B")
    unit = UnitSpec(query, Schema.of(schema), "matches", (), (), (), None, pa.schema([]))  # type: ignore[arg-type]
    spec = StreamSpec(unit, contiguous=True, axis=False, out_names=())
    saved = KeyStream(spec, KeyStream(spec).save())  # a data-only checkpoint is read back
    assert saved.last == -1 and saved.buffer == []
    with pytest.raises(StateMismatch, match="not a saved runner state"):
        KeyStream(spec, pickle.dumps({"runner": blob, "buffer": [], "last": -1}))
    assert not marker.exists()


@pytest.mark.parametrize(
    "body",
    [
        b'{"r":"Popen","v":[]}',  # no record outside the closed table
        b'{"r":"Event","v":[1]}',  # a record with the wrong number of fields
        b'{"x":[]}',  # an unknown kind
        b'[1,2]',  # a bare list (containers are tagged)
        b'{"f":"1e5"}',  # a float tag that is no non-finite float
        b'{"d":[[{"l":[]},1]]}',  # a list as a dict key
        b'{"l":[{"@":0}]}',  # a list that contains itself
        b'{"d":[["version",2]]}',  # data, but no state
        b"NaN",
        b"[" * 100_000 + b"]" * 100_000,
        b"\xff\xfe",
    ],
)
def test_data_that_is_no_state_is_refused_in_one_line(body: bytes) -> None:
    from acel.acea.engine.codec import FORMAT_VERSION, MAGIC

    schema = Schema.of({"A": ["v"], "B": ["v"]})
    blob = MAGIC + b" %d\n" % FORMAT_VERSION + body
    with pytest.raises(StateMismatch) as caught:
        Runner.restore(parse_query("A ; B"), schema, blob)
    assert "\n" not in str(caught.value)


def test_a_state_of_another_format_version_is_refused() -> None:
    schema = Schema.of({"A": ["v"], "B": ["v"]})
    blob = Runner(parse_query("A ; B"), schema).save()
    assert blob.startswith(b"ACEL-STATE 2\n")
    with pytest.raises(StateMismatch, match="format '3'"):
        Runner.restore(parse_query("A ; B"), schema, blob.replace(b"STATE 2", b"STATE 3", 1))


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**62, max_value=2**400)
    | st.floats(allow_nan=False) | st.text() | st.binary(max_size=8)
    | st.fractions() | st.just(float("inf")) | st.just(float("-inf")),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.integers() | st.text(max_size=3), inner, max_size=3)
    | st.frozensets(st.integers(), max_size=3),
    max_leaves=20,
))
def test_every_value_kind_round_trips(value: object) -> None:
    """The closed set of kinds: ints of any size, floats with ±inf, text (lone surrogates
    too), bytes, booleans, NULL, tuples, lists, dicts with any hashable keys, sets."""
    from acel.acea.engine.codec import dumps, loads

    assert loads(dumps(value)) == value
    assert type(loads(dumps(value))) is type(value)


def test_nan_surrogates_and_shared_values_round_trip() -> None:
    from acel.acea.engine.codec import dumps, loads

    shared = [1]
    value = loads(dumps({"a": [shared, shared], "nan": float("nan"), "s": "\ud800", "big": -(10**5000)}))
    assert value["a"][0] is value["a"][1] and value["a"][0] == [1]
    assert value["nan"] != value["nan"] and value["s"] == "\ud800" and value["big"] == -(10**5000)


def test_a_stddev_state_over_floats_saves_and_restores() -> None:
    """STDDEV keeps exact Fraction sums of floats: a state holding them saves (Hypothesis,
    test_runner_advance: 'cannot save a value of kind Fraction')."""
    schema = Schema.of({"A": ["v"], "B": ["v"]})
    query = parse_query("RETURN STDDEV(a.v) PATTERN (A AS a)+ ; B")
    stream = [{"type": "A", "v": 0.5}, {"type": "A", "v": 2.25}, {"type": "B", "v": 0.0}]
    whole = Runner(query, schema)
    expected = [row for event in stream for row in whole.push(dict(event))] + whole.finish()
    first = Runner(query, schema)
    got = [row for event in stream[:2] for row in first.push(dict(event))]
    again = Runner.restore(query, schema, first.save())
    got += [row for event in stream[2:] for row in again.push(dict(event))] + again.finish()
    assert got == expected and expected and expected[0].values[0][1] > 0


def test_a_state_holding_a_foreign_object_cannot_be_saved() -> None:
    from acel.acea.engine.codec import dumps

    with pytest.raises(StateMismatch, match="cannot save a value of kind object"):
        dumps({"x": object()})


@pytest.mark.slow
@given(st.one_of(queries(top_negation=True), trend_queries(top_negation=True)), streams())
def test_a_run_saved_and_restored_after_every_event_through_the_api_equals_one_run(
    query: Query, stream: list[Event]
) -> None:
    """Issue 24: the data-only state, cut after every event and restored through
    ``acel.runner(..., state=)``, loses and repeats nothing (both engine modes)."""
    import acel
    from acel.lang.printer import format_query

    text = format_query(query)
    uninterrupted = acel.runner(text, TEST_SCHEMA)
    expected: list = []
    for event in stream:
        expected.extend(uninterrupted.push(dict(event.attrs)))
    expected.extend(uninterrupted.finish())
    got: list = []
    state = acel.runner(text, TEST_SCHEMA).save()
    for event in stream:
        runner = acel.runner(text, TEST_SCHEMA, state=state)
        got.extend(runner.push(dict(event.attrs)))
        state = runner.save()
        assert state.startswith(b"ACEL-STATE 2\n")
    got.extend(acel.runner(text, TEST_SCHEMA, state=state).finish())
    assert got == expected
