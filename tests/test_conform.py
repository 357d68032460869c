"""acel conform: engines compared on data and generated streams; disagreements shrunk."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from acel.app import conform as conform_mod
from acel.engines import ENGINES, Engine
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

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
    from acel.lang.errors import AcelError

    with pytest.raises(AcelError, match="unknown engine"):
        conform_mod.conform(QUERY, SCHEMA, ["oracle", "nope"], stream=_stream(2))


# ------------------------------------------------------------ --against CMD

ROOT = Path(__file__).resolve().parents[1]
TOY = f"{sys.executable} {ROOT / 'examples' / 'conformance' / 'seq_engine.py'} {{query}} {{data}}"
PLANTED = f"{sys.executable} {ROOT / 'tests' / 'data' / 'adapters' / 'drop_one.py'} {{query}} {{data}}"


def _conform(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from acel.app.cli import load_extensions, main

    load_extensions()
    code = main(["conform", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _reported_stream(report: str) -> list[dict[str, object]]:
    """The events of a disagreement report (lines of JSON objects after its first line)."""
    lines = report.splitlines()
    events = []
    for line in lines[1:]:
        if not line.startswith("  {"):
            break
        events.append(json.loads(line))
    return events


def test_an_external_engine_that_conforms(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"A": ["v"], "B": ["v"]}))
    code, out, _ = _conform(capsys, "A ; (B ; A)", "--schema", str(schema), "--generate", "15",
                            "--against", TOY)
    assert code == 0 and out.startswith("ok: oracle, ") and "agree on 15 stream(s)" in out
    code, out, _ = _conform(capsys, "--against", TOY, "--operators", "SEQ", "--generate", "15")
    assert code == 0 and "conforms to oracle on" in out


def test_against_finds_a_planted_bug_and_shrinks_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"A": ["x"], "B": ["x"]}))
    code, out, err = _conform(capsys, "A ; B", "--schema", str(schema), "--generate", "40",
                              "--against", PLANTED)
    assert code == 1 and "disagreement on generated stream" in err
    stream = _reported_stream(out)
    assert 1 <= len(stream) <= 3
    assert {"type": "B", "x": 3} in stream  # the chosen case survives shrinking
    assert "(0 line(s))" in out and "oracle (1 line(s))" in out


def test_generated_queries_find_the_planted_bug(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _conform(capsys, "--against", PLANTED, "--operators", "SEQ",
                            "--generate", "150", "--seed", "3")
    assert code == 1 and "does not conform to oracle" in out
    count = int(out.split("stream (", 1)[1].split(" event", 1)[0])
    assert 1 <= count <= 3
    assert '"type": "B", "x": 3' in out and "missing from" in out


def test_an_unsupported_query_is_declared_not_compared(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"A": ["v"], "B": ["v"]}))
    code, _, err = _conform(capsys, "A AS x ; B", "--schema", str(schema), "--generate", "3",
                            "--against", TOY)
    assert code == 2 and "declares the query unsupported" in err
    code, _, err = _conform(capsys, "A ; B", "--schema", str(schema), "--generate", "3",
                            "--against", TOY, "--without", "SEQ")
    assert code == 2 and "declares SEQ unsupported" in err


def test_a_command_must_name_its_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _conform(capsys, "--against", "true", "--generate", "3")
    assert code == 2 and "names neither {query} nor {data}" in err


# ------------------------------------------------------------ kit fixes (issue 22 §4)


def test_an_unsupported_stream_is_skipped_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    from acel.lang.errors import UnsupportedQuery
    from acel.testing.adapters import Tally

    def picky(query, stream, schema):  # type: ignore[no-untyped-def]
        if len(stream) % 2:
            raise UnsupportedQuery("odd streams are not run")
        return ENGINES["oracle"].batch(query, stream, schema)

    monkeypatch.setitem(ENGINES, "picky", Engine("picky", "even streams only", fn=picky))
    tally = Tally()
    compared, found = conform_mod.conform(QUERY, SCHEMA, ["oracle", "picky"], generate=30,
                                          seed=1, tally=tally)
    assert found is None and tally.skipped > 0 and compared + tally.skipped == 30


def test_null_rate_reaches_the_generated_streams() -> None:
    none = conform_mod.generate_stream(QUERY, SCHEMA, 300, random.Random(2), null_rate=0.0)
    assert all(e.get("v") is not None for e in none)
    many = conform_mod.generate_stream(QUERY, SCHEMA, 300, random.Random(2), null_rate=0.5)
    assert 90 < sum(e.get("v") is None for e in many) < 210


def test_null_rate_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _conform(capsys, "--against", TOY, "--operators", "SEQ", "--generate", "10",
                            "--null-rate", "0")
    assert code == 0 and "conforms to oracle" in out


def test_an_unknown_real_engine_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _conform(capsys, "--against", "corez", "--generate", "3")
    assert code == 2 and "not a real engine (core, flink, pandas-mr)" in err


def test_generated_cases_have_windows_on_an_attribute() -> None:
    from hypothesis import given, settings

    from acel.testing import cases

    seen: list[str] = []

    @settings(max_examples=150, database=None, deadline=None)
    @given(cases(operators={"SEQ", "AS", "WITHIN", "WITHIN_ON"}, null_rate=0.5))
    def check(case) -> None:  # type: ignore[no-untyped-def]
        window = case.query.within
        if window is not None and window.attr is not None:
            seen.append(window.attr)
            assert all(e.get(window.attr) is not None for e in case.stream)

    check()
    assert seen and set(seen) == {"x"}
