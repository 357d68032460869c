"""The step-through view (issue 25 §2): the trace of naive runs, "why not this match?",
the page in headless Chromium (Debian's ``chromium``), and ``acel stepper``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from acel.acea.engine.trace import trace, why_not

import acel
from acel.app.cli import main
from acel.io import read_events
from acel.stepper import step_through, trace_json

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_5_1 = (ROOT / "examples" / "paper" / "ex5_1_max_intel_price.acel").read_text()
STOCKS = ROOT / "tests" / "data" / "stocks.jsonl"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _pairs(results: object) -> Counter[tuple[int, int]]:
    return Counter((m.event.start, m.event.end) for m in results)  # type: ignore[attr-defined]


@pytest.mark.parametrize("query", [
    EXAMPLE_5_1,
    "SELL AS a ; SELL AS b PARTITION BY name",
    "(SELL AS s)+ FILTER s[INC(price)] WITHIN 3 EVENTS",
])
def test_the_trace_completes_the_complex_events_of_the_engine(query: str) -> None:
    data = trace_json(query, STOCKS)
    completed = Counter((m["start"], m["end"]) for s in data["steps"] for m in s["matches"])
    assert completed == _pairs(acel.run(query, STOCKS))
    assert len(data["steps"]) == len(data["events"]) + 1 == 8


def test_runs_and_edges_of_each_step() -> None:
    compiled = acel.compile(EXAMPLE_5_1, ROOT / "examples" / "paper" / "schema.json")
    events, _ = read_events(STOCKS)
    steps = trace(compiled.automaton, events)
    assert steps[0].runs == [] and steps[1].edges == {(0, 1)}
    assert {r.state for r in steps[1].runs} == {1}
    assert steps[4].edges == {(1, 1), (2, 2), (3, 3)}  # the BUY is skipped by every run
    assert {(m["start"], m["end"]) for m in steps[5].matches} == {(0, 4), (1, 4)}
    assert steps[5].matches[0]["vars"]["intel"] == [2]


def test_why_not_names_the_event_where_the_run_died_and_why() -> None:
    compiled = acel.compile(EXAMPLE_5_1, ROOT / "examples" / "paper" / "schema.json")
    events, _ = read_events(STOCKS)
    why = why_not(compiled.automaton, events, [0, 3, 4])
    assert not why["found"] and why["position"] == 3 and why["event"].startswith("BUY")
    reasons = {t["edge"]: t["why"] for t in why["tried"]}
    assert reasons["q1 -> q2"] == "the event is not a SELL"
    assert reasons["q1 -> q1"] == "skips this event, which the match needs"
    first = why_not(compiled.automaton, events, [2, 4])
    assert first["position"] == 2
    assert first["tried"] == [{"edge": "q0 -> q1",  # the values compared (issue 37)
                               "why": "msft[name = 'MSFT'] is false: msft.name 'INTL' vs 'MSFT'"}]
    assert why_not(compiled.automaton, events, [0, 2, 4])["found"]
    short = why_not(compiled.automaton, events, [0, 2])
    assert not short["found"] and "not a final state" in short["reason"]


def test_why_not_with_partitions() -> None:
    query = acel.compile("SELL AS a ; SELL AS b PARTITION BY name",
                         ROOT / "examples" / "paper" / "schema.json")
    events, _ = read_events(STOCKS)
    apart = why_not(query.automaton, events, [0, 2], ["name"])
    assert "not all in one partition" in apart["reason"]
    assert why_not(query.automaton, events, [2, 5], ["name"])["found"]  # the BUY is INTL too


def test_expected_positions_outside_the_stream_are_one_clear_error() -> None:
    with pytest.raises(acel.AcelError, match=r"expected positions must lie in 0\.\.6"):
        step_through(EXAMPLE_5_1, STOCKS, expect=[0, 9])


def test_long_streams_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("acel.stepper.MAX_EVENTS", 5)
    with pytest.raises(acel.AcelError, match="at most 5 events"):
        step_through(EXAMPLE_5_1, STOCKS)


def test_the_page_is_self_contained() -> None:
    page = acel.step_through(EXAMPLE_5_1, STOCKS, expect=[0, 3, 4])
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert not re.search(r"""(src|href)=["']https?:""", page)  # nothing fetched
    assert '<script type="application/json" id="trace">' in page


def test_cli_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "page.html"
    code = main(["stepper", str(ROOT / "examples" / "paper" / "ex5_1_max_intel_price.acel"),
                 "--data", str(STOCKS), "--expect", "0,3,4", "--out", str(out)])
    assert code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    assert "wrote" in capsys.readouterr().err
    code = main(["stepper", "SELL", "--data", str(STOCKS), "--expect", "a,b", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "--expect takes event positions" in err and "Traceback" not in err


# ------------------------------------------------------------------ in a browser


def _dom(page: Path, step: int | str, profile: Path) -> str:
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--no-first-run", "--disable-sync",
         "--disable-component-update", f"--user-data-dir={profile}", "--dump-dom",
         f"{page.as_uri()}#step={step}"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _marked(dom: str, mark: str) -> set[str]:
    """The ids of the SVG groups the page marked with class ``mark``."""
    found = set()
    for tag in re.findall(r"<g [^>]*>", dom):
        if re.search(rf'class="[^"]*\b{mark}\b', tag):
            found.add(re.search(r'id="([^"]+)"', tag).group(1))  # type: ignore[union-attr]
    return found


def _why(dom: str) -> str:
    """The "why not" box as the page filled it."""
    return re.search(r'<div id="why"[^>]*>(.*?)</div>', dom, re.S).group(1)  # type: ignore[union-attr]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_page_steps_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(acel.step_through(EXAMPLE_5_1, STOCKS, expect=[0, 3, 4]), encoding="utf-8")
    profile = tmp_path / "profile"

    start = _dom(page, 0, profile)
    assert 'data-step="0"' in start
    assert _marked(start, "acel-active") == {"state-0"} and _marked(start, "acel-fired") == set()

    after_buy = _dom(page, 4, profile)
    assert 'data-step="4"' in after_buy
    assert _marked(after_buy, "acel-active") == {"state-1", "state-2", "state-3"}
    assert _marked(after_buy, "acel-fired") == {"skip-1", "skip-2", "skip-3"}  # skip loops: own ids
    assert 'class="current"><td>3</td><td>BUY' in after_buy
    assert 'id="why-here"' in _why(after_buy) and "the event is not a SELL" in _why(after_buy)

    completed = _dom(page, 5, profile)
    assert _marked(completed, "acel-fired") == {"skip-1", "skip-2", "edge-2-4", "skip-3"}
    assert "state-4" in _marked(completed, "acel-active")
    new = re.findall(r'<tr class="new"><td>(\d+)</td><td>(\d+)</td>', completed)
    assert sorted(new) == [("0", "4"), ("1", "4")]
    assert "the event is not a SELL" in _why(completed) and 'id="why-here"' not in _why(completed)

    clicked = _dom(page, "3&next=2", profile)  # the "next" button, pressed twice from step 3
    assert 'data-step="5"' in clicked
    assert _marked(clicked, "acel-fired") == _marked(completed, "acel-fired")

    end = _dom(page, 7, profile)
    assert len(re.findall(r'<tr class="(?:new)?"><td>\d+</td><td>\d+</td><td>[^<]*m=', end)) == 8


def test_without_graphviz_the_page_shows_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from acel.acea.model import render

    monkeypatch.setattr(render, "svg_or_none", lambda automaton: None)
    page = step_through(EXAMPLE_5_1, STOCKS)
    assert "<svg" not in page and "<pre>ACEA: 5 states" in page
    assert "SELL AS intel, intel[name = &#x27;INTL&#x27;]" in page or "intel[name" in page


def test_in_jupyter_the_page_shows_in_a_frame() -> None:
    page = acel.step_through(EXAMPLE_5_1, STOCKS)
    assert isinstance(page, str) and page.startswith("<!DOCTYPE html>")
    frame = page._repr_html_()
    assert frame.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;') and "&quot;" in frame


# ------------------------------------------------- values and titles (issue 37 item 3)

GROWING = "(DEP AS f)+ FILTER f[dep_delay > PREV(dep_delay) AND dep_delay > 15]"
FLIGHTS_SCHEMA = ROOT / "examples" / "flights" / "schema.json"


def _flights(*delays: int) -> list[dict[str, object]]:
    return [{"type": "DEP", "tailnum": "N1", "ts": t, "dep_delay": d}
            for t, d in enumerate(delays, start=1)]


def test_a_prev_failure_says_the_values_it_compared() -> None:
    why = trace_json(GROWING, _flights(20, 80, 73), FLIGHTS_SCHEMA, expect=[0, 1, 2])["why"]
    assert not why["found"] and why["position"] == 2
    reasons = {t["why"] for t in why["tried"]}
    assert ("f[dep_delay > PREV(dep_delay)] is false: f.dep_delay 73 vs PREV(dep_delay) 80"
            in reasons), reasons
    assert not any("rel_" in r for r in reasons)
    assert why["title"] == "Why not the match of events 0, 1, 2?"


def test_a_found_match_is_titled_as_found() -> None:
    why = trace_json(GROWING, _flights(20, 80, 73), FLIGHTS_SCHEMA, expect=[0, 1])["why"]
    assert why["found"] and why["title"] == "Found: the match of events 0, 1"


def test_runs_and_matches_show_aggregates_and_the_values_terms_compare() -> None:
    query = (ROOT / "examples" / "flights" / "delay_propagation.acel").read_text()
    data = trace_json(query, _flights(20, 30, 80, 73), FLIGHTS_SCHEMA)
    runs = data["steps"][2]["runs"]  # after 20 and 30
    assert {"flights so far": 2, "total_delay so far": 50, "worst_delay so far": 30} in [
        r["values"] for r in runs]
    matches = [m for s in data["steps"] for m in s["matches"]]
    assert [m["values"] for m in matches] == [
        {"m.flights": 3, "m.total_delay": 130, "m.worst_delay": 80}]
    prev = trace_json(GROWING, _flights(20, 80), FLIGHTS_SCHEMA)["steps"][2]["runs"]
    assert {"PREV(dep_delay)": 80} in [r["values"] for r in prev]
    average = trace_json("(SELL AS s)+ FILTER s[price > RUNNING AVG(price)]",
                         [{"type": "SELL", "name": "A", "price": p, "month": m}
                          for m, p in enumerate((10, 20, 40), start=1)],
                         ROOT / "examples" / "stocks" / "schema.json")
    assert {"RUNNING AVG(price)": 70 / 3} in [r["values"] for r in average["steps"][3]["runs"]]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_page_titles_a_found_match_and_shows_values_in_chromium(tmp_path: Path) -> None:
    query = (ROOT / "examples" / "flights" / "delay_propagation.acel").read_text()
    page = tmp_path / "found.html"
    page.write_text(acel.step_through(query, _flights(20, 30, 80, 73), FLIGHTS_SCHEMA,
                                      expect=[0, 1, 2]), encoding="utf-8")
    dom = _dom(page, 3, tmp_path / "profile")
    assert "Found: the match of events 0, 1, 2" in _why(dom) and "Why not" not in dom
    assert "m.worst_delay = 80" in dom and "worst_delay so far = 80" in dom
# ------------------------------------------------------------------ hostile inputs (issue 36 D6, D7)

HOSTILE_QUERY = "A AS a ; B AS b FILTER a[s = '@DATA@'] OR b[s = '--><img src=x onerror=alert(1)>']"
HOSTILE_EVENTS = [
    {"type": "A", "s": "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"},
    {"type": "B", "s": "<!--<script>"},
    {"type": "A", "s": "</script><script>document.body.setAttribute('data-pwned','2')</script>"},
    {"type": "B", "s": "line\u2028sep\u2029x --> ]]> &amp; @TITLE@ @SCRIPT@"},
]


def _hostile_page(tmp_path: Path) -> str:
    data = tmp_path / "hostile.jsonl"
    data.write_text("".join(json.dumps(e) + "\n" for e in HOSTILE_EVENTS), encoding="utf-8")
    return acel.step_through(HOSTILE_QUERY, data)


def test_hostile_query_and_events_inject_no_markup(tmp_path: Path) -> None:
    page = _hostile_page(tmp_path)
    tags = {t.lower() for t in re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", page)}
    assert "img" not in tags  # the handlers stay text: no tag carries them
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "<!--" not in page and "\u2028" not in page and "\u2029" not in page
    trace = re.search(r'<script type="application/json" id="trace">(.*?)</script>', page, re.S)
    assert trace is not None and not set(trace.group(1)) & set("<>&")
    data = json.loads(trace.group(1))  # the data survives the escaping intact
    assert data["query"] == HOSTILE_QUERY
    assert [e["text"] for e in data["events"]] == [f"s={e['s']!r}" for e in HOSTILE_EVENTS]
    assert "<title>ACEL step-through: A AS a ; B AS b FILTER a[s = &#x27;@DATA@&#x27;]" in page


def test_placeholders_are_filled_in_one_pass() -> None:
    from acel.stepper import _fill, script_json

    assert _fill("@A@|@B@", {"A": "@B@", "B": "x"}) == "@B@|x"
    assert script_json({"s": "</script><!--\u2028&"}) == \
        '{"s": "\\u003c/script\\u003e\\u003c!--\\u2028\\u0026"}'


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_hostile_page_runs_no_injected_script_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(_hostile_page(tmp_path), encoding="utf-8")
    dom = _dom(page, "0&next=4", tmp_path / "profile")
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None and "data-pwned" not in body.group(0)  # no handler ran
    assert 'data-step="4"' in body.group(0)  # the page's script ran, and "next" works
    assert "<img" not in dom
    events = re.findall(r'<tr class="(?:current)?"><td>(\d)</td><td>([AB])</td><td>([^<]*)</td>', dom)
    assert [(p, t) for p, t, _ in events] == [("0", "A"), ("1", "B"), ("2", "A"), ("3", "B")]
    assert events[1][2] == "s='&lt;!--&lt;script&gt;'"  # shown as text
