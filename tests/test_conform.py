"""acel conform: engines compared on data and generated streams; disagreements shrunk."""

from __future__ import annotations

import random

import pytest

from acel.app import conform as conform_mod
from acel.engines import ENGINES, Engine
from acel.events import Event
from acel.parser import parse_query
from acel.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v"]})
QUERY = parse_query("(A AS x ; B AS y) FILTER x[v > 1]")


def _stream(n: int) -> list[Event]:
    return [Event.make(k, {"type": "AB"[k % 2], "v": (k // 2) % 4}) for k in range(n)]


def test_agreeing_engines_report_no_disagreement() -> None:
    compared, found = conform_mod.conform(
        QUERY, SCHEMA, ["oracle", "automaton", "optimized"], stream=_stream(8), generate=20, seed=3
    )
    assert compared == 21
    assert found is None


def test_disagreement_is_shrunk_to_a_minimal_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    # A broken engine: it loses every complex event whose x holds v == 3.
    def broken(query, stream, schema):  # type: ignore[no-untyped-def]
        good = ENGINES["oracle"].batch(query, stream, schema)
        return [m for m in good if all(e.get("v") != 3 for e in m.event.bag("x"))]

    monkeypatch.setitem(ENGINES, "broken", Engine("broken", "loses v = 3", fn=broken))
    compared, found = conform_mod.conform(QUERY, SCHEMA, ["oracle", "broken"], stream=_stream(10))
    assert compared == 1 and found is not None
    # Smallest disagreeing stream: an A with v = 3 followed by a B.
    assert len(found.stream) == 2
    assert (found.stream[0].type, found.stream[0].get("v")) == ("A", 3)
    assert found.stream[1].type == "B"
    assert len(found.answers["oracle"]) == 1 and found.answers["broken"] == []
    assert "disagree" in found.report()


def test_generated_streams_use_the_schema_and_the_query_literals() -> None:
    query = parse_query("A AS x FILTER x[v = 42]")
    stream = conform_mod.generate_stream(query, SCHEMA, 200, random.Random(1))
    assert {e.type for e in stream} == {"A", "B"}
    assert [e.time for e in stream] == list(range(200))
    assert any(e.get("v") == 42 for e in stream)


def test_unknown_engine_is_a_user_error() -> None:
    from acel.errors import AcelError

    with pytest.raises(AcelError, match="unknown engine"):
        conform_mod.conform(QUERY, SCHEMA, ["oracle", "nope"], stream=_stream(2))
