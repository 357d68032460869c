"""The native per-match walk (``acea/engine/native/enumerate.c``, issue 23) against the
pure-Python walk and line builder, its reference: same bytes, same order, same errors.

``ACEL_NATIVE`` chooses (:mod:`acel.io.native_switch`); without the extension, ``auto``
runs pure Python and ``1`` stops with one line.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from acel.acea import engine
from acel.acea.engine import Runner
from acel.acea.engine.enumeration import choose_native, native_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from acel.io.lines import LineBuilder, LineEncoder
from acel.io.native_switch import NativeUnavailable
from acel.io.results import ResultWriter, to_json_lines
from acel.lang.ast import Query
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, queries, streams

BUILT = native_lines() is not None
needs_native = pytest.mark.skipif(not BUILT, reason="acel.acea.engine._native_enum is not built")


@contextmanager
def native(value: str) -> Iterator[None]:
    """``ACEL_NATIVE=value`` for the block (Hypothesis examples cannot use monkeypatch)."""
    before = os.environ.get("ACEL_NATIVE")
    os.environ["ACEL_NATIVE"] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ["ACEL_NATIVE"]
        else:
            os.environ["ACEL_NATIVE"] = before


def written(query: Query, stream: list[Event], schema: Schema = TEST_SCHEMA, mode: str = "0",
            limit: int | None = None) -> bytes:
    """The bytes ``acel run`` writes (its path, in memory) under ``ACEL_NATIVE=mode``."""
    buffer = io.BytesIO()
    with native(mode):
        writer = ResultWriter(None, "jsonl", stream=buffer, limit=limit)
        runner = Runner(query, schema, build=LineBuilder(writer.encoder))
        for event in stream:
            writer.add(runner.push(dict(event.attrs)))
            writer.flush()
        writer.add(runner.finish())
        writer.close()
    return buffer.getvalue()


def _uses_native(query: Query, schema: Schema, mode: str, first: Event) -> bool:
    with native(mode):
        runner = Runner(query, schema, build=LineBuilder(LineEncoder()))
        runner.push(dict(first.attrs))
    return any(getattr(p.evaluator, "native", None) is not None for p in runner.partitions.values())


@needs_native
@settings(max_examples=150)
@given(queries(top_negation=True), streams(max_len=9))
def test_native_walk_writes_the_pure_python_bytes(query: Query, stream: list[Event]) -> None:
    assert written(query, stream, mode="1") == written(query, stream, mode="0")


@needs_native
@settings(max_examples=60)
@given(queries(), streams(max_len=9), st.integers(0, 6))
def test_native_walk_with_a_limit(query: Query, stream: list[Event], limit: int) -> None:
    assert written(query, stream, mode="1", limit=limit) == written(query, stream, mode="0", limit=limit)


W0 = "A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
W0_SCHEMA = Schema.of({"A": ["ts", "v", "g"], "B": ["ts", "v", "g"], "C": ["ts", "v", "g"]})


def _w0_stream(n: int) -> list[Event]:
    kinds = "ABBCABBBCBAC"
    return [Event.make(k, {"type": kinds[k % len(kinds)], "ts": k, "v": (7 * k) % 10, "g": k % 2}) for k in range(n)]


@needs_native
@pytest.mark.parametrize(("text", "length"), [
    (W0, 40),  # windowed ON an attribute: start coordinates through the coords table
    ("A AS a ; (B AS b)+ ; C AS c WITHIN 6 EVENTS", 40),  # coordinates are positions
    # no window: threshold None; 24 events give 8,329 complex events (40 gave 1.9 million,
    # 2.4 GB of lines and 200 s of CI)
    ("A AS a ; (B AS b)+ ; C AS c", 24),
    ("A AS a ; (B AS b)+ ; C AS c PARTITION BY g WITHIN 9 EVENTS", 40),  # keyed lines
    ("(A AS x)+ ; (A AS x)+ ; C AS c WITHIN 8 EVENTS", 40),  # ambiguous: duplicates dropped
    ("(A OR B) AS x ; (B AS y)+ ; C AS x WITHIN 8 EVENTS", 40),  # one variable, several steps
])
def test_examples_write_the_same_bytes(text: str, length: int) -> None:
    query = parse_query(text)
    stream = _w0_stream(length)
    expected = written(query, stream, W0_SCHEMA, mode="0")
    assert expected  # the example has complex events
    assert written(query, stream, W0_SCHEMA, mode="1") == expected
    assert expected.decode().splitlines() == to_json_lines(engine.run(query, stream, W0_SCHEMA))
    assert _uses_native(query, W0_SCHEMA, "1", stream[0])
    assert not _uses_native(query, W0_SCHEMA, "0", stream[0])


@needs_native
def test_ties_inside_a_bag_go_to_the_python_builder() -> None:
    """One step gives ``x`` two events (the event and the AGG's): the C walk hands the
    run to the builder, whose tie-break sort is the reference."""
    schema = Schema.of({"A": ["v"]})
    query = parse_query("(AGG x[v := SUM(A.v)](A) AS x) ; (A AS x)")
    stream = [Event.make(k, {"type": "A", "v": v}) for k, v in enumerate([5, 1, 9])]
    ours = written(query, stream, schema, mode="1")
    assert ours == written(query, stream, schema, mode="0")
    assert any(line.count('"time":0') >= 2 for line in ours.decode().splitlines())


@needs_native
def test_the_watch_is_called_every_1024_complex_events() -> None:
    """A step that ends many complex events calls the memory guard as the Python walk does."""
    query = parse_query("(B AS b)+ ; C AS c WITHIN 13 EVENTS")
    stream = [Event.make(k, {"type": "B" if k < 12 else "C", "ts": k, "v": 0, "g": 0}) for k in range(13)]
    counts: dict[str, list[int]] = {}
    for mode in ("0", "1"):
        seen: list[int] = []
        with native(mode):
            runner = Runner(query, W0_SCHEMA, build=LineBuilder(LineEncoder()), watch=seen.append)
            found = [m for e in stream for m in runner.push(dict(e.attrs))]
        counts[mode] = seen
        assert len(found) == 2**12 - 1
    assert counts["1"] == counts["0"] == [1024, 2048, 3072]


def test_objects_take_the_python_walk() -> None:
    """Complex events built as objects (no ``native_make``) never take the C walk, even
    with ``ACEL_NATIVE=1``."""
    with native("1"):
        assert choose_native(None) is None


def hide_extensions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``from ... import _native_enum`` (and ``_native_writer``) fail as when not built."""
    import acel.acea.engine

    import acel.io

    for package, name in ((acel.acea.engine, "_native_enum"), (acel.io, "_native_writer")):
        monkeypatch.setitem(sys.modules, f"{package.__name__}.{name}", None)
        monkeypatch.delattr(package, name, raising=False)


def test_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not built: ``auto`` runs the pure-Python walk (same bytes), ``0`` too, and ``1``
    stops with one line naming the missing extension."""
    query, stream = parse_query(W0), _w0_stream(30)
    expected = written(query, stream, W0_SCHEMA, mode="0")
    hide_extensions(monkeypatch)
    assert native_lines() is None
    with native("auto"):
        assert choose_native(LineBuilder(LineEncoder())) is None
    assert written(query, stream, W0_SCHEMA, mode="auto") == expected
    with native("1"), pytest.raises(NativeUnavailable) as error:
        choose_native(LineBuilder(LineEncoder()))
    assert "_native_enum is not built" in str(error.value)
    assert "\n" not in str(error.value)
