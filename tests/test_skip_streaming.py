"""AFTER MATCH SKIP on a stream (spec §6.3, issue 32): a kept complex event comes out
as soon as no run that could still be kept starts before it (a run starting before
the skip's resume point gives only complex events the skip drops, as Flink prunes
such partial matches), and the output stays in the order of spec §12."""

from __future__ import annotations

import io

from acel.acea.engine import Runner
from hypothesis import given, settings

from acel.engines import engine
from acel.io.lines import LineBuilder
from acel.io.results import ResultWriter, to_json_lines
from acel.lang.ast import Query
from acel.lang.clauses import Match
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, queries, streams

SCHEMA = Schema.of({"A": ["k"], "B": ["k"], "C": ["k"]})


def stream_of(types: str, keys: str | None = None) -> list[Event]:
    return [Event.make(i, {"type": t, "k": int(keys[i]) if keys else 0}) for i, t in enumerate(types)]


def pushed(text: str, types: str, keys: str | None = None) -> list[list[tuple[int, int]]]:
    """``(start, end)`` of what each push hands back, then what ``finish`` hands back."""
    runner = Runner(parse_query(text), SCHEMA)
    steps = [runner.push(dict(e.attrs)) for e in stream_of(types, keys)]
    steps.append(runner.finish())
    return [[(m.event.start, m.event.end) for m in step if isinstance(m, Match)] for step in steps]


def test_past_last_row_without_within_comes_out_at_its_end() -> None:
    """Spec §6.3's example: ``A ; B AFTER MATCH SKIP PAST LAST ROW`` on A0 A1 B2 B3 keeps
    [0,2], final at B2: the runs from A0 and A1 start before the resume point 3."""
    assert pushed("A ; B AFTER MATCH SKIP PAST LAST ROW", "AABB") == [[], [], [(0, 2)], [], []]


def test_each_kept_complex_event_comes_out_at_its_own_end() -> None:
    """Without WITHIN, every result used to wait for the end of the stream."""
    got = pushed("A ; B AFTER MATCH SKIP PAST LAST ROW", "ABCABAB")
    assert got == [[], [(0, 1)], [], [], [(3, 4)], [], [(5, 6)], []]


def test_a_run_that_may_still_be_kept_holds_back() -> None:
    """``(A ; B ; B) OR (C ; B)`` on A0 C1 B2 B3: [1,2] is found at B2, but the run from
    A0 may still complete and come first in start order; at B3 it does, and its skip
    past the last row drops [1,2] and [1,3]."""
    text = "(A ; B ; B) OR (C ; B) AFTER MATCH SKIP PAST LAST ROW"
    got = pushed(text, "ACBB")
    assert got == [[], [], [], [(0, 3)], []]
    expected = engine("oracle").batch(parse_query(text), stream_of("ACBB"), SCHEMA)
    assert [(m.event.start, m.event.end) for m in expected] == [(0, 3)]


def test_partitions_keep_the_end_order() -> None:
    """Partition 0 holds [1,2] (the run from A0 may come first); partition 1 finds [3,4],
    which must wait for it (spec §12: lines by end); B5 releases both."""
    text = "(A ; B ; B) OR (C ; B) PARTITION BY k AFTER MATCH SKIP TO NEXT ROW"
    got = pushed(text, "ACBCBB", "000110")
    assert got == [[], [], [], [], [], [(1, 2), (3, 4), (0, 5)], []]
    expected = engine("oracle").batch(parse_query(text), stream_of("ACBCBB", "000110"), SCHEMA)
    assert sum(got, []) == [(m.event.start, m.event.end) for m in expected]


def test_a_saved_state_keeps_what_waits_for_end_order() -> None:
    """The [3,4] waiting behind partition 0's held [1,2] survives save and restore."""
    query = parse_query("(A ; B ; B) OR (C ; B) PARTITION BY k AFTER MATCH SKIP TO NEXT ROW")
    events = [dict(e.attrs) for e in stream_of("ACBCBB", "000110")]
    runner = Runner(query, SCHEMA)
    assert not any(runner.push(attrs) for attrs in events[:5])
    restored = Runner.restore(query, SCHEMA, runner.save())
    got = restored.push(events[5]) + restored.finish()
    assert [(m.event.start, m.event.end) for m in got if isinstance(m, Match)] == [
        (1, 2), (3, 4), (0, 5)]


def _streamed(query: Query, stream: list[Event]) -> list[str]:
    """The lines a streaming run writes, pushing one event at a time."""
    buffer = io.BytesIO()
    writer = ResultWriter(None, "jsonl", stream=buffer)
    runner = Runner(query, TEST_SCHEMA, build=LineBuilder(writer.encoder))
    for event in stream:
        writer.add(runner.push(dict(event.attrs)))
        writer.flush()
    writer.add(runner.finish())
    writer.close()
    return buffer.getvalue().decode("utf-8").splitlines()


@settings(max_examples=150)
@given(queries(top_negation=True).filter(lambda q: q.skip is not None), streams())
def test_streamed_skip_equals_batch_and_oracle(query: Query, stream: list[Event]) -> None:
    expected = to_json_lines(engine("oracle").batch(query, stream, TEST_SCHEMA))
    assert to_json_lines(engine("optimized").batch(query, stream, TEST_SCHEMA)) == expected
    assert _streamed(query, stream) == expected
