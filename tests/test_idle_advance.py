"""`--idle-advance`: deadlines on a quiet live stream (issue 25 §5, spec §3.1).

A trailing-negation result is final only once its window has closed.  On a
live stream that goes quiet, event time follows the wall clock, so the result
is written about when its deadline passes, without waiting for another event
or the end; the output stays the batch run's, and an event arriving below the
moved watermark is late.  Real pipes into real subprocesses; the wall-clock
checks are one-sided (never before the deadline, before stdin closes).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acel.acea import engine
from hypothesis import given
from hypothesis import strategies as st
from strategies import queries, streams, trend_queries
from test_runner_advance import SCHEMA_T, on_t

from acel.engines import engine as engine_named
from acel.engines.running import result_groups
from acel.io.records import Row
from acel.io.results import to_json_lines
from acel.io.source import EventStream, _Reorder
from acel.io.watermark import Advance, IdleClock, watermark_of
from acel.lang.ast import Query
from acel.lang.clauses import TrendRow
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

ACEL = [sys.executable, "-m", "acel"]
SCHEMA = Schema.of({"ORDER": ["id", "ts"], "PAY": ["id", "ts"]}, {"id": "int", "ts": "float"})
QUERY = "ORDER AS o ; NOT PAY PARTITION BY id WITHIN 3 ON ts"


class Live:
    """``acel run`` reading a pipe we write to, with each output line's arrival time."""

    def __init__(self, tmp: Path, query: str, *flags: str) -> None:
        schema = tmp / "schema.json"
        schema.write_text(json.dumps(SCHEMA.to_json()))
        self.proc = subprocess.Popen(
            [*ACEL, "run", query, "--data", "-", "--schema", str(schema), "--time-col", "ts", *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.arrived: list[tuple[float, str]] = []
        self.reader = threading.Thread(target=self._read)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.arrived.append((time.monotonic(), line.decode().rstrip("\n")))

    def write(self, event: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(event) + "\n").encode())
        self.proc.stdin.flush()
        return time.monotonic()

    def close(self) -> tuple[float, int, str]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        closed = time.monotonic()
        self.proc.stdin.close()
        self.reader.join(timeout=60)
        code = self.proc.wait(timeout=60)
        return closed, code, self.proc.stderr.read().decode()


def _batch(query: str, events: list[dict[str, Any]]) -> list[str]:
    stream = [Event.make(k, e) for k, e in enumerate(events)]
    return to_json_lines(engine.run(parse_query(query), stream, SCHEMA))


EVENTS = [
    {"type": "ORDER", "id": 1, "ts": 0.0},
    {"type": "ORDER", "id": 2, "ts": 0.5},
    {"type": "PAY", "id": 2, "ts": 1.0},
]


def test_a_deadline_passes_on_a_quiet_pipe_and_the_result_comes_out(tmp_path: Path) -> None:
    live = Live(tmp_path, QUERY, "--idle-advance", "1", "--max-delay", "0.5")
    written = [live.write(e) for e in EVENTS]
    time.sleep(8)  # quiet: order 1's window closes at ts 3
    closed, code, err = live.close()
    assert code == 0, err
    assert [line for _, line in live.arrived] == _batch(QUERY, EVENTS)  # only order 1, unpaid
    (at, line), = live.arrived
    assert json.loads(line)["end"] == 0
    # never before the deadline: the watermark is 1.0 (last time) - 0.5 (delay) + quiet
    # seconds, so ts 3 is passed 2.5 s after the last line was read (which is after it was
    # written); and long before the pipe closed (about 2.5 s plus the process's start-up)
    assert at - written[-1] >= 2.5 - 0.05
    assert at < closed - 1.0, (at - written[-1], closed - written[-1])


def test_without_the_option_the_result_waits_for_the_end(tmp_path: Path) -> None:
    live = Live(tmp_path, QUERY, "--max-delay", "0.5")
    for e in EVENTS:
        live.write(e)
    time.sleep(4.5)
    closed, code, err = live.close()
    assert code == 0, err
    assert [line for _, line in live.arrived] == _batch(QUERY, EVENTS)
    assert all(at >= closed for at, _ in live.arrived)


def test_an_event_below_the_moved_watermark_is_late(tmp_path: Path) -> None:
    live = Live(tmp_path, QUERY, "--idle-advance", "1000")  # a second of quiet: 1000 units
    live.write({"type": "ORDER", "id": 1, "ts": 0.0})
    deadline = time.monotonic() + 30
    while not live.arrived and time.monotonic() < deadline:  # order 1 is final: ts 3 passed
        time.sleep(0.05)
    assert [json.loads(line)["end"] for _, line in live.arrived] == [0]
    live.write({"type": "PAY", "id": 1, "ts": 0.5})  # would have blocked order 1: too late
    _, code, err = live.close()
    assert code == 2, err
    assert "row 2 (line 2)" in err and "--idle-advance" in err and "Traceback" not in err
    assert "Fatal" not in err  # the stdin thread, blocked on the open pipe, does not abort the exit
    assert err.splitlines()[-1].startswith("acel run: data error: <stdin>: row 2 (line 2): time 0.5 ")


def test_the_option_needs_a_live_stream_with_a_time_column(tmp_path: Path) -> None:
    done = subprocess.run([*ACEL, "run", QUERY, "--data", "-", "--idle-advance", "1"],
                          input=b"", capture_output=True, timeout=60)
    assert done.returncode == 2 and "--idle-advance is for --data - with --time-col" in done.stderr.decode()
    done = subprocess.run([*ACEL, "run", QUERY, "--data", "-", "--time-col", "ts", "--idle-advance", "0"],
                          input=b"", capture_output=True, timeout=60)
    assert done.returncode == 2 and "not a positive number" in done.stderr.decode()


# ------------------------------------------------------------------ in-process


def _row(n: int) -> Row:
    return Row(n, n, {})


def test_quiet_time_releases_held_events_and_sets_the_watermark() -> None:
    reorder = _Reorder(2, "<stdin>")
    assert reorder.idle(5) is None  # before any event: no event time yet
    assert reorder.push(10, {"n": 1}, _row(1)) == []  # held: an event down to 8 may come
    assert reorder.push(9, {"n": 2}, _row(2)) == []
    quiet = reorder.idle(0.5)  # watermark 10 - 2 + 0.5
    assert quiet is not None and quiet == [] and watermark_of(quiet) == 8.5
    quiet = reorder.idle(1.5)
    assert quiet == [{"n": 2}] and watermark_of(quiet) == 9.5
    assert reorder.idle(1.0) is None  # no further than before
    reorder.push(9.5, {"n": 3}, _row(3))  # at the watermark: still allowed (ties)
    with pytest.raises(Exception, match="moved on to 9.5"):
        reorder.push(9.4, {"n": 4}, _row(4))
    assert [e["n"] for e in reorder.drain()] == [3, 1]


def test_the_idle_clock_counts_time_units() -> None:
    clock = IdleClock(1000)
    time.sleep(0.05)
    assert clock.quiet() >= 50
    clock.arrived()
    assert clock.quiet() < 50
    with pytest.raises(ValueError):
        IdleClock(0)


def _stream(batches: list[list[dict[str, Any]]]) -> EventStream:
    def gen() -> Iterator[list[dict[str, Any]]]:
        yield from batches

    return EventStream("<stdin>", SCHEMA, gen, None, time_col="ts", sort=False, once=True)


def _groups(query: str, batches: list[list[dict[str, Any]]]) -> list[list[Any]]:
    q = parse_query(query)
    return list(result_groups(q, SCHEMA, _stream(batches), engine_named("optimized")))


def test_a_watermark_batch_releases_negation_and_slide_results_early_and_exactly() -> None:
    # order 1 is final once event time reaches 3: the watermark batch says so, before
    # the next event; the whole output is the batch run's
    groups = _groups(QUERY, [EVENTS[:1], EVENTS[1:], Advance([], 2.9), Advance([], 3.0),
                             [{"type": "ORDER", "id": 3, "ts": 4.0}]])
    ends = [[m.event.end for m in g] for g in groups]
    assert ends == [[0], [3]]  # order 1 at the watermark batch, order 3 at the end
    events = [*EVENTS, {"type": "ORDER", "id": 3, "ts": 4.0}]
    expected = engine.run(parse_query(QUERY), [Event.make(k, e) for k, e in enumerate(events)], SCHEMA)
    assert [m for g in groups for m in g] == expected
    # a watermark below the deadline releases nothing: a PAY at 2.9 still blocks order 1
    pay = {"type": "PAY", "id": 1, "ts": 2.9}
    assert _groups(QUERY, [EVENTS[:1], Advance([], 2.5), Advance([], 2.9), [pay]]) == []
    # SLIDE rows close with the watermark too
    slide = "RETURN COUNT(*) PATTERN ORDER WITHIN 2 ON ts SLIDE 2 ON ts"
    groups = _groups(slide, [EVENTS[:2], Advance([], 2.0)])
    assert [[(r.window, r.values) for r in g] for g in groups] == [[((0, 2), (("COUNT(*)", 2),))]]


def test_a_watermark_on_another_axis_closes_nothing() -> None:
    other = "ORDER AS o ; NOT PAY PARTITION BY id WITHIN 3 ON id"
    groups = _groups(other, [EVENTS[:1], Advance([], 100.0)])
    assert [[m.event.end for m in g] for g in groups] == [[0]]  # only at the end


# ------------------------------------------------------------------ generated


@st.composite
def quiet_stream(draw: Any) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Events with times out of order (by at most the delay 2), quiet moments between
    them, as the live reader cuts them into batches; and the events in the order they
    reach the engine.  Events the moved watermark would reject are not sent."""
    events = draw(streams())
    reorder = _Reorder(2, "<stdin>")
    batches: list[list[dict[str, Any]]] = []
    t = 0
    for n, e in enumerate(events):
        t += draw(st.sampled_from((0, 1, 1, 2, 5)))
        key = t - draw(st.sampled_from((0, 0, 1, 2)))
        if reorder.watermark is not None and key < reorder.watermark:
            continue
        batches.append(reorder.push(key, {**e.as_dict(), "t": key}, _row(n + 1)))
        if draw(st.booleans()):
            quiet = reorder.idle(draw(st.sampled_from((0.5, 1, 2, 3, 7))))
            if quiet is not None:
                batches.append(quiet)
    batches.append(reorder.drain())
    return batches, [e for b in batches for e in b]


@given(queries(top_negation=True), quiet_stream())
def test_quiet_moments_release_exactly_the_batch_complex_events(
    query: Query, case: tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]
) -> None:
    query = on_t(query)
    batches, order = case
    stream = EventStream("<stdin>", SCHEMA_T, lambda: iter(batches), None, time_col="t",
                         sort=False, once=True)
    got = [m for g in result_groups(query, SCHEMA_T, stream, engine_named("optimized")) for m in g]
    expected = engine.run(query, [Event.make(k, e) for k, e in enumerate(order)], SCHEMA_T)
    assert to_json_lines(got) == to_json_lines(expected)


@given(trend_queries(top_negation=True), quiet_stream())
def test_quiet_moments_release_exactly_the_batch_rows(
    query: Query, case: tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]
) -> None:
    query = on_t(query)
    batches, order = case
    stream = EventStream("<stdin>", SCHEMA_T, lambda: iter(batches), None, time_col="t",
                         sort=False, once=True)
    got = [r for g in result_groups(query, SCHEMA_T, stream, engine_named("optimized")) for r in g]
    expected = engine.run(query, [Event.make(k, e) for k, e in enumerate(order)], SCHEMA_T)
    assert sorted(got, key=TrendRow.sort_key) == expected
