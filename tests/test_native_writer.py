"""The native §12 line writer (``acel/io/native/writer.c``, issue 23) against
:meth:`ResultWriter._flush_matches`, its reference: same bytes, same order, same count,
and the pure-Python path for everything outside its fragment.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from acel.acea.engine import Runner
from hypothesis import given, settings
from hypothesis import strategies as st
from test_native_enum import W0_SCHEMA, _w0_stream, hide_extensions, native

from acel.io.lines import LineBuilder, LineEncoder, PreparedEvent
from acel.io.native_switch import NativeUnavailable
from acel.io.results import ResultWriter, native_match_lines
from acel.lang.ast import Query
from acel.lang.clauses import Match
from acel.lang.events import ComplexEvent, Event
from acel.lang.parser import parse_query
from acel.testing import TEST_SCHEMA, queries, streams

with native("auto"):
    MATCH_LINES = native_match_lines()
needs_native = pytest.mark.skipif(MATCH_LINES is None, reason="acel.io._native_writer is not built")


def groups_of(query: Query, stream: list[Event], schema: Any = TEST_SCHEMA) -> list[list[Any]]:
    """The groups of results a run hands the writer (pure-Python enumeration)."""
    with native("0"):
        runner = Runner(query, schema, build=LineBuilder(LineEncoder()))
        out = [runner.push(dict(e.attrs)) for e in stream]
        out.append(runner.finish())
    return out


def write(groups: list[list[Any]], use_native: bool, limit: int | None = None,
          query: str | None = None) -> tuple[bytes, int]:
    """The bytes and count a JSON Lines writer writes, by the C writer or the reference."""
    buffer = io.BytesIO()
    with native("auto"):
        writer = ResultWriter(None, "jsonl", stream=buffer, limit=limit)
    if not use_native:
        writer.native = None
    for group in groups:
        writer.add(group, query)
        writer.flush()
    count = writer.close()
    return buffer.getvalue(), count


@needs_native
@settings(max_examples=150)
@given(queries(top_negation=True), streams(max_len=9), st.none() | st.integers(0, 8))
def test_native_writer_writes_the_reference_bytes(query: Query, stream: list[Event],
                                                  limit: int | None) -> None:
    groups = groups_of(query, stream)
    assert write(groups, True, limit) == write(groups, False, limit)


@needs_native
def test_lines_are_ordered_by_end_start_then_text() -> None:
    """One group: ends, then starts, then the text bytewise (a shorter prefix first)."""
    events = [PreparedEvent(s, e, v) for s, e, v in [
        (3, 9, b'{"a":[2]}'), (1, 9, b'{"b":[1]}'), (1, 9, b'{"a":[1],"b":[1]}'),
        (0, 4, b'{"a":[1]}'), (1, 9, b'{"a":[1]}'), (-5, 9, b"{}"),
    ]]
    group = [Match((), ce) for ce in events]
    ours, count = write([group], True)
    assert (ours, count) == write([group], False)
    assert count == 6
    lines = ours.decode().splitlines()
    assert lines[0] == '{"end":4,"start":0,"vars":{"a":[1]}}'
    assert lines[1] == '{"end":9,"start":-5,"vars":{}}'
    assert lines[2:4] == ['{"end":9,"start":1,"vars":{"a":[1],"b":[1]}}',
                          '{"end":9,"start":1,"vars":{"a":[1]}}']


@needs_native
@pytest.mark.parametrize("case", ["keyed", "query", "objects", "beyond 64 bits"])
def test_outside_the_fragment_the_reference_writes(case: str) -> None:
    """A key, a workload's query name, complex events as objects, positions beyond 64
    bits: the C writer declines (writes nothing) and the pure-Python path writes."""
    query: str | None = None
    if case == "keyed":
        group = [Match((("g", 1),), PreparedEvent(0, 1, b"{}"))]
    elif case == "query":
        group, query = [Match((), PreparedEvent(0, 1, b"{}"))], "q1"
    elif case == "objects":
        e = Event.make(0, {"type": "A", "v": 1})
        group = [Match((), ComplexEvent.make(0, 0, {"a": [e]}))]
    else:
        group = [Match((), PreparedEvent(2**63, 2**70, b"{}")),
                 Match((), PreparedEvent(2**63 - 1, 2**63 - 1, b"{}"))]
    assert MATCH_LINES is not None
    assert MATCH_LINES([(m, query) for m in group], PreparedEvent, None) is None
    ours, count = write([group], True, query=query)
    assert (ours, count) == write([group], False, query=query)
    assert count == len(group)
    if case == "beyond 64 bits":
        assert ours.splitlines()[1] == b'{"end":%d,"start":%d,"vars":{}}' % (2**70, 2**63)


@needs_native
def test_the_largest_64_bit_positions_stay_native() -> None:
    group = [Match((), PreparedEvent(2**63 - 1, 2**63 - 1, b"{}")),
             Match((), PreparedEvent(-(2**63), 2**63 - 1, b"{}"))]
    assert MATCH_LINES is not None
    done = MATCH_LINES([(m, None) for m in group], PreparedEvent, None)
    assert done is not None
    assert done == write([group], False)


@needs_native
@pytest.mark.parametrize("extra", [-2, -1, 0, 1, 2])
def test_a_line_that_fills_the_buffer_exactly(extra: int) -> None:
    """Issue 36 D2: the header ``{"end":E,"start":S,"vars":`` takes 64 characters when E
    and S are 20-character int64s; the first line sized to fill the 64 KiB buffer exactly
    (and its neighbours) wrote its closing brace one byte past the end (ASan's finding,
    ``make sanitize`` runs this).  The bytes must be the reference's, brace included."""
    lowest = -(2**63)
    header = b'{"end":%d,"start":%d,"vars":' % (lowest, lowest)
    assert len(header) == 64
    vars_json = b'{"a":"' + b"x" * (2**16 - 64 - 8 + extra) + b'"}'
    assert len(header) + len(vars_json) == 2**16 + extra
    group = [Match((), PreparedEvent(lowest, lowest, vars_json)),
             Match((), PreparedEvent(lowest, lowest + 1, b"{}"))]
    assert MATCH_LINES is not None
    done = MATCH_LINES([(m, None) for m in group], PreparedEvent, None)
    assert done is not None
    assert done == write([group], False)
    assert done[0].split(b"\n")[0] == header + vars_json + b"}"


@needs_native
def test_w0_lines_with_a_limit_across_groups() -> None:
    groups = groups_of(parse_query("A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"), _w0_stream(60),
                       W0_SCHEMA)
    total = write(groups, False)[1]
    assert total > 20
    for limit in (0, 1, 7, total - 1, total, total + 5):
        ours = write(groups, True, limit)
        assert ours == write(groups, False, limit)
        assert ours[1] == min(limit, total)


def test_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not built: ``auto`` and ``0`` write by the reference, ``1`` stops with one line."""
    hide_extensions(monkeypatch)
    for mode in ("auto", "0"):
        with native(mode):
            assert native_match_lines() is None
            assert ResultWriter(None, "jsonl", stream=io.BytesIO()).native is None
    with native("1"), pytest.raises(NativeUnavailable) as error:
        ResultWriter(None, "jsonl", stream=io.BytesIO())
    assert "_native_writer is not built" in str(error.value)
    with native("1"):  # CSV never uses it
        assert ResultWriter(None, "csv", stream=io.BytesIO()).native is None


@needs_native
def test_acel_native_0_writes_by_the_reference() -> None:
    with native("0"):
        assert ResultWriter(None, "jsonl", stream=io.BytesIO()).native is None
    with native("1"):
        assert ResultWriter(None, "jsonl", stream=io.BytesIO()).native is not None
