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


# ------------------------------------------------------------ issue 33: --save, --replay,
# --keep-going, --report json|junit

WINDOW = f"{sys.executable} {ROOT / 'examples' / 'conformance' / 'window_engine.py'}"
CORPUS = ROOT / "tests" / "conformance"


def _broken_window(query, stream, schema):  # type: ignore[no-untyped-def]
    """The oracle with an off-by-one window (keeps j - i <= n) and no complex event of C alone."""
    import dataclasses

    window = query.within
    if window is not None and window.attr is None:
        query = dataclasses.replace(query, within=dataclasses.replace(window, size=window.size + 1))
    good = ENGINES["oracle"].batch(query, stream, schema)
    return [m for m in good if [v for v, _bag in m.event.vars] != ["C"]]


def test_keep_going_saves_distinct_disagreements_that_replay(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(ENGINES, "broken", Engine("broken", "two bugs", fn=_broken_window))
    saved = tmp_path / "found"
    code, out, err = _conform(capsys, "--engines", "broken", "--operators", "SEQ,WITHIN",
                              "--generate", "200", "--keep-going", "3", "--save", str(saved))
    assert code == 1
    files = sorted(saved.glob("*.case"))
    found = len(files)
    assert 2 <= found <= 3 and err.count("acel conform: saved") == found
    assert out.count("does not conform to oracle") == found
    from acel.testing.casefile import read_records

    records = [r for f in files for r in read_records(f)]
    assert "C" in {r.query for r in records}  # the second bug, not slipped into the first
    assert any("WITHIN 1 EVENTS" in r.query for r in records)
    assert all(len(r.stream) <= 2 and r.expectation("broken") == ("agree", True) for r in records)
    # a replay of the saved cases fails until the engine is fixed, and passes against a good one
    code, out, _ = _conform(capsys, "--replay", str(saved), "--engines", "broken")
    assert code == 1 and out.count("FAIL") == found and "expected agree, found disagree" in out
    code, out, _ = _conform(capsys, "--replay", str(saved), "--engines", "optimized")
    assert code == 0 and f"ok: optimized: {found} recorded case(s) as expected" in out


def test_a_json_report_keeps_the_counts_apart(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _conform(capsys, "--against", TOY, "--generate", "15", "--report", "json",
                            "--operators", "SEQ,AS,FILTER")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True
    counts = report["counts"]
    assert set(counts) == {"agreed", "disagreed", "unsupported", "too_large", "adapter_error"}
    assert counts["agreed"] == 15 and counts["unsupported"] > 0
    assert any("only sequences of event types" in reason for reason in report["reasons"])
    assert report["coverage"]["SEQ"] > 0


def test_a_junit_report_of_a_failing_run_opens_in_ci_viewers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import xml.etree.ElementTree as ET

    monkeypatch.setitem(ENGINES, "broken", Engine("broken", "two bugs", fn=_broken_window))
    junit = tmp_path / "report.xml"
    code, _, _ = _conform(capsys, "--engines", "broken", "--operators", "SEQ,WITHIN",
                          "--generate", "200", "--keep-going", "2", "--save",
                          str(tmp_path / "cases"), "--report", "junit", "--report-file", str(junit))
    assert code == 1
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("failures") == "2"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert suite.get("tests") == str(len(cases)) and suite.get("failures") == "2"
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 2
    for case in failed:
        failure = case.find("failure")
        assert failure is not None and case.get("name") and case.get("classname")
        path = case.get("file") or ""
        assert path.endswith(".case") and Path(path).exists()
        assert path in (failure.get("message") or "") and path in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["count.disagreed"] is not None and int(props["count.disagreed"]) >= 2


def test_a_junit_report_of_a_replay_names_each_case_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import dataclasses
    import xml.etree.ElementTree as ET

    from acel.testing.casefile import format_record, read_records

    (record,) = read_records(CORPUS / "n3_core_literal_left.case")
    changed = dataclasses.replace(record, expects=(), engine="optimized")
    path = tmp_path / "n3.case"
    path.write_text(format_record(dataclasses.replace(changed, expected=())))
    code, out, _ = _conform(capsys, "--replay", str(path), str(CORPUS / "n4_flink_adjacent_loops.case"),
                            "--engines", "optimized", "--report", "junit")
    assert code == 1
    root = ET.fromstring(out)
    cases = root.find("testsuite").findall("testcase")  # type: ignore[union-attr]
    assert [c.get("name") for c in cases] == ["N3", "N4"]
    failure = cases[0].find("failure")
    assert failure is not None and str(path) in (failure.get("message") or "")
    assert "no longer gives the recorded expected results" in (failure.get("message") or "")
    assert cases[1].find("failure") is None


def test_replay_needs_an_engine_and_no_query(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _conform(capsys, "--replay", str(CORPUS))
    assert code == 2 and "--against or --engines" in err
    code, _, err = _conform(capsys, "A", "--replay", str(CORPUS), "--engines", "optimized")
    assert code == 2 and "give no QUERY" in err
    code, _, err = _conform(capsys, "--replay", "nowhere.case", "--engines", "optimized")
    assert code == 2 and "nowhere.case: no such file or folder" in err


def test_the_shipped_corpus_replays_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _conform(capsys, "--replay", str(CORPUS), "--engines", "optimized")
    assert code == 0 and "recorded case(s) as expected" in out and "FAIL" not in out


def test_the_example_persistent_adapter_on_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _conform(capsys, "--against", WINDOW + " --off-by-one", "--generate", "300",
                            "--save", str(tmp_path))
    assert code == 1 and "window-engine does not conform to oracle" in out
    (saved,) = tmp_path.glob("*.case")
    text = saved.read_text()
    assert "WITHIN 1 EVENTS" in text and "got window-engine:" in text


def test_a_disagreement_on_one_query_can_be_saved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"A": ["x"], "B": ["x"]}))
    code, _, err = _conform(capsys, "A ; B", "--schema", str(schema), "--generate", "40",
                            "--against", PLANTED, "--save", str(tmp_path / "cases"))
    assert code == 1 and "saved" in err
    from acel.testing.casefile import read_records

    (path,) = (tmp_path / "cases").glob("*.case")
    (record,) = read_records(path)
    assert record.query == "A ; B" and len(record.expected) == 1
