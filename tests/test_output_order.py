"""What ``acel run`` writes, as a user sees it: the lines of spec §12, in its order,
written as results become final, equal to the canonical text of the batch results.

The command line builds each complex event's text straight from the engine's runs
(:class:`acel.io.lines.LineBuilder`); these properties check it against the
canonical encoder on generated queries (PARTITION BY, windows, negation, AGG events
and several renamings into one variable at one step: ties inside a bag).
"""

from __future__ import annotations

import io

from acel.acea import engine
from acel.acea.engine import Runner
from hypothesis import given

from acel.io.lines import LineBuilder
from acel.io.results import ResultWriter, to_json_lines
from acel.lang.ast import Query
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, queries, streams, trend_queries


def _written(query: Query, stream: list[Event], schema: Schema = TEST_SCHEMA) -> list[str]:
    """The lines a streaming run writes (the command line's path, in memory)."""
    buffer = io.BytesIO()
    writer = ResultWriter(None, "jsonl", stream=buffer)
    runner = Runner(query, schema, build=LineBuilder(writer.encoder))
    for event in stream:
        writer.add(runner.push(dict(event.attrs)))
        writer.flush()
    writer.add(runner.finish())
    writer.close()
    return buffer.getvalue().decode("utf-8").splitlines()


@given(queries(top_negation=True), streams())
def test_streamed_lines_are_the_canonical_lines_in_order(query: Query, stream: list[Event]) -> None:
    assert _written(query, stream) == to_json_lines(engine.run(query, stream, TEST_SCHEMA))


@given(trend_queries(top_negation=True), streams())
def test_streamed_rows_are_the_canonical_rows_in_order(query: Query, stream: list[Event]) -> None:
    assert _written(query, stream) == to_json_lines(engine.run(query, stream, TEST_SCHEMA))


def test_ties_inside_a_bag_are_in_canonical_order() -> None:
    """One step gives ``x`` two events (the event and the AGG's created one) with
    attributes that sort differently from emission order."""
    schema = Schema.of({"A": ["v"]})
    query = parse_query("(AGG x[v := SUM(A.v)](A) AS x) ; (A AS x)")
    stream = [Event.make(k, {"type": "A", "v": v}) for k, v in enumerate([5, 1, 9])]
    lines = _written(query, stream, schema)
    assert lines == to_json_lines(engine.run(query, stream, schema))
    assert any(line.count('"time":0') >= 2 for line in lines)


def test_a_skip_released_at_the_end_is_written_in_canonical_order() -> None:
    """Found by Hypothesis (A? ; C ; C AFTER MATCH SKIP TO FIRST A on four C events): the
    same six complex events, but streamed [0,2] before [1,2] is out of §12's order."""
    query = parse_query("A? ; C ; C AFTER MATCH SKIP TO FIRST A")
    stream = [Event(t, (("k", 0), ("type", "C"), ("x", 0))) for t in range(4)]
    assert _written(query, stream) == to_json_lines(engine.run(query, stream, TEST_SCHEMA))
