"""Readable pictures (issue 25 §1): every example query's automaton fits on a laptop
screen (at most 1,600 x 1,200 pt, no label line over 120 characters), edge labels
speak the query's words, self-loops get their own place, and the symbols survive
cairosvg."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from acel.acea.engine import naive
from acel.acea.engine.trace import trace, why_not
from acel.acea.model import layout
from acel.acea.model.layout import collisions
from acel.acea.model.render import FULL_FONT, plain, summary, to_dot, to_svg
from acel.compiler import compile_formula
from hypothesis import example, given, settings
from hypothesis import strategies as st

import acel
from acel.lang.ast import Atom, ProjectVars, Seq
from acel.lang.events import Event
from acel.lang.printer import format_query
from acel.testing import TEST_SCHEMA, formulas, streams
from acel.workload import parse_workload

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SVG = "{http://www.w3.org/2000/svg}"

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")


def example_queries() -> list[tuple[str, str, Path]]:
    """``(name, query text, schema file)`` for every query of ``examples/`` (a workload
    file gives one per QUERY section); the demo's query is flights/delay_propagation."""
    out = []
    for path in sorted(EXAMPLES.glob("*/*.acel")):
        schema = path.parent / "schema.json"
        if path.parent.name == "workloads":
            schema = EXAMPLES / "stocks" / "schema.json"
            text = path.read_text()
            for named in parse_workload(text, str(path)):
                out.append((f"{path.stem}:{named.name}", format_query(named.query), schema))
            continue
        if not schema.exists():  # examples/relate: queries over the flights or stocks data
            schema = next(s for s in DATA_SCHEMAS if _checks(path.read_text(), s))
        out.append((path.relative_to(EXAMPLES).as_posix(), path.read_text(), schema))
    return out


DATA_SCHEMAS = (EXAMPLES / "flights" / "schema.json", EXAMPLES / "stocks" / "schema.json")


def _checks(text: str, schema: Path) -> bool:
    """Whether the query checks against the schema file."""
    try:
        acel.check(text, schema)
    except acel.AcelError:
        return False
    return True


EXAMPLE_QUERIES = example_queries()


def test_every_example_folder_is_measured() -> None:
    names = {name for name, _, _ in EXAMPLE_QUERIES}
    assert "flights/delay_propagation.acel" in names  # the demo's query
    assert "paper/ex5_1_max_intel_price.acel" in names
    assert len(names) >= 20


def _points(value: str) -> float:
    return float(value.removesuffix("pt"))


@needs_dot
@pytest.mark.parametrize("name,text,schema", EXAMPLE_QUERIES, ids=[n for n, _, _ in EXAMPLE_QUERIES])
def test_example_picture_fits_a_laptop_screen(name: str, text: str, schema: Path) -> None:
    compiled = acel.compile(text, schema)
    root = ET.fromstring(compiled.svg())
    width, height = _points(root.attrib["width"]), _points(root.attrib["height"])
    assert width <= 1600 and height <= 1200, (name, width, height)
    lines = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert lines
    assert max(len(line) for line in lines) <= 120, max(lines, key=len)
    assert not any(re.search(r"\b[a-z_]+#\d+", line) for line in lines), "a register name shows"


@pytest.mark.parametrize("name,text,schema", EXAMPLE_QUERIES, ids=[n for n, _, _ in EXAMPLE_QUERIES])
def test_example_labels_use_only_symbols_every_font_has(name: str, text: str, schema: Path) -> None:
    for detail in ("short", "full"):
        source = to_dot(acel.compile(text, schema).automaton, detail)
        assert all(ord(ch) < 256 for ch in source), {ch for ch in source if ord(ch) >= 256}


def test_demo_labels_speak_the_query() -> None:
    text = (EXAMPLES / "flights" / "delay_propagation.acel").read_text()
    source = to_dot(acel.compile(text, EXAMPLES / "flights" / "schema.json").automaton)
    assert "DEP AS d" in source
    assert "d[INC(dep_delay) AND dep_delay > 15]" in source
    assert "m[flights >= 3]" in source and "WITHIN 1440" in source
    assert "m.worst_delay := MAX(worst_delay so far, d.dep_delay)" in source  # the legend
    assert "#" not in source.split("label=")[1].split("\n")[0]  # no register on the first label
    full = to_dot(acel.compile(text, EXAMPLES / "flights" / "schema.json").automaton, "full")
    assert "dep_delay#1 > 15" in full and "acc_worst_delay#" in full


def test_parallel_transitions_share_one_edge_so_self_loops_do_not_overlap() -> None:
    text = (EXAMPLES / "paper" / "ex5_1_max_intel_price.acel").read_text()
    automaton = acel.compile(text, EXAMPLES / "paper" / "schema.json").automaton
    source = to_dot(automaton)
    loops = re.findall(r"^\s*3 -> 3 \[label=", source, flags=re.M)
    assert len(loops) == 1  # one labelled edge 3 -> 3 below the state
    assert 'tailport=s' in source
    skips = re.findall(r'^\s*3 -> 3 \[.*id="skip-3".*style=dashed', source, flags=re.M)
    assert len(skips) == 1  # the skip loop: its own dashed edge above, unlabelled
    assert "dashed grey loop: the run skips any event" in source  # the legend says what it is


def test_plain_replaces_the_symbols_fonts_lack() -> None:
    assert plain("e ▷ #1; x ↦ {{e#1}}; ∅ ⊕MAX ≡ δ[ψ] ∪ ¬") == (
        "e > #1; x -> {{e#1}}; {} +MAX == step[psi] u ¬")


def test_unknown_detail_is_refused() -> None:
    automaton = acel.compile("A ; B").automaton
    with pytest.raises(ValueError, match="detail must be one of short, full"):
        to_dot(automaton, "everything")


@needs_dot
def test_cairosvg_draws_every_glyph_of_the_example_5_1_picture(tmp_path: Path) -> None:
    cairosvg = pytest.importorskip("cairosvg")
    text = (EXAMPLES / "paper" / "ex5_1_max_intel_price.acel").read_text()
    svg = to_svg(acel.compile(text, EXAMPLES / "paper" / "schema.json").automaton, "full")
    png = tmp_path / "a.png"
    cairosvg.svg2png(bytestring=svg.encode(), write_to=str(png))
    assert png.stat().st_size > 1000
    assert all(ord(ch) < 256 for ch in "".join(ET.fromstring(svg).itertext()))


def test_cli_compile_detail(capsys: pytest.CaptureFixture[str]) -> None:
    from acel.app.cli import main

    query = str(EXAMPLES / "paper" / "ex5_1_max_intel_price.acel")
    schema = str(EXAMPLES / "paper" / "schema.json")
    assert main(["compile", query, "--schema", schema]) == 0
    short = capsys.readouterr().out
    assert "intel[name = 'INTL']" in short and "name#2" not in short
    assert main(["compile", query, "--schema", schema, "--detail", "full"]) == 0
    full = capsys.readouterr().out
    assert "name#2 = 'INTL'" in full and "register updates" not in full


# ------------------------------------------------------------------ any query


@settings(max_examples=60, deadline=None)
@given(formulas(), st.sampled_from(["short", "full"]))
def test_any_formula_gets_a_latin1_picture_without_register_names(formula: object,
                                                                  detail: str) -> None:
    automaton = compile_formula(formula, TEST_SCHEMA)  # type: ignore[arg-type]
    source = to_dot(automaton, detail)
    assert all(ord(ch) < 256 for ch in source)
    if detail == "short":
        labels = " ".join(re.findall(r'label="([^"]*)"', source))
        assert not re.search(r"\b(type|inc_has|acc_\w+)#\d", labels), labels
        assert "rel_" not in labels, labels  # relating filters read as the query writes them
    assert summary(automaton, detail)


@settings(max_examples=40, deadline=None)
@given(formulas(), streams())
def test_the_trace_completes_what_naive_runs_find(formula: object, stream: list[Event]) -> None:
    automaton = compile_formula(formula, TEST_SCHEMA)  # type: ignore[arg-type]
    steps = trace(automaton, stream)
    found = {(m["start"], m["end"]) for s in steps for m in s.matches}
    assert found == {(ce.start, ce.end) for ce in naive.evaluate(automaton, stream)}


@settings(max_examples=40, deadline=None)
@given(formulas(), streams())
@example(  # found by Hypothesis: the projected A is read after the match's last kept event
    Seq(Atom("A"), ProjectVars((), Atom("A"))),
    [Event(0, (("type", "A"), ("x", 0), ("y", 0))),
     Event(1, (("k", 0), ("type", "A"), ("x", 0), ("y", 0)))])
@example(  # and the projected A read before the first kept one
    Seq(ProjectVars((), Atom("A")), Atom("A")),
    [Event(0, (("type", "A"), ("x", 0), ("y", 0))),
     Event(1, (("k", 0), ("type", "A"), ("x", 0), ("y", 0)))])
def test_why_not_finds_every_complex_event_naive_runs_find(formula: object,
                                                          stream: list[Event]) -> None:
    automaton = compile_formula(formula, TEST_SCHEMA)  # type: ignore[arg-type]
    for ce in sorted(naive.evaluate(automaton, stream), key=lambda c: (c.start, c.end))[:5]:
        positions = sorted({e.time for _, bag in ce.vars for e in bag})  # NEXT's skips: not
        if not positions:
            continue
        assert why_not(automaton, stream, positions)["found"], (ce, positions)


def test_a_bag_test_names_the_variable_it_filters() -> None:
    text = (EXAMPLES / "paper" / "d2_sase_hadoop_mappers.acel").read_text()
    source = to_dot(acel.compile(text, EXAMPLES / "paper" / "schema.json").automaton)
    assert "job[SAME(job_id)]" in source and not re.search(r"\bb\[SAME", source)


# ------------------------------------------- the compiler's registers in the query's words


def _labels(source: str) -> str:
    """Every text a DOT source draws (edge labels and the legend)."""
    return "\n".join(re.findall(r'label="((?:[^"\\]|\\.)*)"', source))


@pytest.mark.parametrize("counted", [False, True], ids=["as-compiled", "all-counted"])
@pytest.mark.parametrize("name,text,schema", EXAMPLE_QUERIES, ids=[n for n, _, _ in EXAMPLE_QUERIES])
def test_example_labels_name_no_register_of_a_relating_filter_or_counter(
        name: str, text: str, schema: Path, counted: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if counted:  # every repetition built as a counter, not by the expansion
        monkeypatch.setattr("acel.compiler.counter.EXPAND_LIMIT", 1)
    labels = _labels(to_dot(acel.compile(text, schema).automaton))
    assert "rel_" not in labels and not re.search(r"\bcount\b", labels), labels
    assert "#" not in labels.replace("#n", ""), labels


def test_relating_filters_and_counters_read_as_the_query_writes_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    relate, stocks = EXAMPLES / "relate", EXAMPLES / "stocks" / "schema.json"
    first_sale = (relate / "above_first_sale.acel").read_text()
    assert "up[price > 1.05 * first.price]" in to_dot(acel.compile(first_sale, stocks).automaton)
    growing = _labels(to_dot(acel.compile((relate / "growing_delays.acel").read_text(),
                                          EXAMPLES / "flights" / "schema.json").automaton))
    assert "f[dep_delay > PREV(dep_delay)]" in growing and "IS NULL" not in growing
    average = _labels(to_dot(acel.compile((relate / "above_running_average.acel").read_text(),
                                          stocks).automaton))
    assert "s[price > RUNNING AVG(price)]" in average and "drop[price < FIRST(s.price)]" in average
    assert "first s (sets FIRST(s.price))" in average  # the step that sets FIRST, said so
    counted = _labels(to_dot(acel.compile(
        "(SELL AS first ; (SELL AS up){20,30}) FILTER up[price > 1.05 * first.price]",
        stocks).automaton))
    assert "20th..30th repetition of SELL AS up" in counted
    assert "1st repetition of SELL AS up" in counted and "next repetition of SELL AS up" in counted
    monkeypatch.setattr("acel.compiler.counter.EXPAND_LIMIT", 1)
    small = _labels(to_dot(acel.compile(first_sale, stocks).automaton))
    assert "2nd..3rd repetition of SELL AS up" in small and "up[price > 1.05 * first.price]" in small


def test_ordinals() -> None:
    from acel.acea.model.words import ordinal, repetition_text

    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
    assert repetition_text(4, None, "A") == "4th or a later repetition of A"
    assert repetition_text(None, 3, "A") == "1st..3rd repetition of A"
    assert repetition_text(3, 3, "A") == "the 3rd repetition of A"


# ------------------------------------------------------------ labels laid out apart


@needs_dot
@pytest.mark.parametrize("name,text,schema", EXAMPLE_QUERIES, ids=[n for n, _, _ in EXAMPLE_QUERIES])
def test_example_labels_lie_over_no_state_arrowhead_or_other_label(
        name: str, text: str, schema: Path) -> None:
    automaton = acel.compile(text, schema).automaton
    assert collisions(to_dot(automaton)) == []
    assert collisions(to_dot(automaton, "full")) == []


def test_collisions_finds_text_over_a_state_an_arrowhead_and_a_label(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = [{"op": "F", "size": 10.0, "face": "Helvetica"}]
    drawn = {
        "objects": [{"name": "3", "_draw_": [{"op": "e", "rect": [100.0, 100.0, 20.0, 20.0]}]}],
        "edges": [
            {"_gvid": 0, "id": "edge-1-1", "_ldraw_": text + [
                {"op": "T", "pt": [100.0, 115.0], "align": "c", "width": 40.0, "text": "over q3"}],
             "_hdraw_": [{"op": "P", "points": [[300, 300], [310, 305], [300, 310]]}]},
            {"_gvid": 1, "id": "edge-2-2", "_ldraw_": text + [
                {"op": "T", "pt": [305.0, 302.0], "align": "l", "width": 30.0, "text": "head"},
                {"op": "T", "pt": [310.0, 302.0], "align": "l", "width": 30.0, "text": "x"}]},
            {"_gvid": 2, "id": "edge-4-5", "_ldraw_": text + [
                {"op": "T", "pt": [500.0, 500.0], "align": "c", "width": 30.0, "text": "alone"}]},
        ]}
    monkeypatch.setattr(layout, "layout", lambda source: drawn)
    found = layout.collisions("digraph {}")
    assert ("edge-1-1", "state 3") in found
    assert ("edge-2-2", "arrowhead of edge-1-1") in found
    assert not any(name == "edge-4-5" for name, _ in found)
    assert not any("label of edge-2-2" in what for name, what in found if name == "edge-2-2")


# ------------------------------------------------------------------- --detail full


def test_full_pictures_keep_their_text_size_and_explain_their_notation() -> None:
    text = (EXAMPLES / "relate" / "above_running_average.acel").read_text()
    full = to_dot(acel.compile(text, EXAMPLES / "stocks" / "schema.json").automaton, "full")
    assert "size=" not in full.split("\n", 3)[2]  # the graph line: not scaled down to a screen
    assert f"fontsize={FULL_FONT}" in full and int(FULL_FONT) >= 12
    assert "+F: combine two values of aggregate F" in full and "hF(r): the result of F" in full
    assert "kept for s[price > RUNNING AVG(price)]" in full  # what the registers serve
    assert "loop at q2:" in full and 'tooltip="loop at q2: see the legend"' in full
    assert max(len(line) for line in _labels(full).replace("\\l", "\n").split("\n")) <= 120


def _shifted(node: object, by: int) -> object:
    """``node`` with every register number moved by ``by`` (what a copy of a repeated
    subformula, renumbered instead of built again, looks like)."""
    import dataclasses

    from acel.acea.model import expressions as ex
    from acel.acea.model.automaton import Renaming

    def name(reg: str) -> str:
        stem, sep, number = reg.rpartition("#")
        return f"{stem}#{int(number) + by}" if sep and number.isdigit() else reg

    if isinstance(node, ex.Reg):
        return ex.Reg(name(node.name))
    if isinstance(node, Renaming):
        return Renaming(tuple((attr, name(reg)) for attr, reg in node.items))
    if isinstance(node, tuple):
        return tuple(_shifted(item, by) for item in node)
    if isinstance(node, str):
        return name(node) if "#" in node else node
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return dataclasses.replace(node, **{  # type: ignore[misc]
            f.name: _shifted(getattr(node, f.name), by) for f in dataclasses.fields(node)
            if f.name not in ("value", "func", "op", "source", "target", "label", "negated")})
    return node


def test_a_renumbered_copy_of_a_glossed_automaton_still_reads_in_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from acel.acea.model.automaton import ACEA

    monkeypatch.setattr("acel.compiler.counter.EXPAND_LIMIT", 1)
    text = (EXAMPLES / "relate" / "above_running_average.acel").read_text()
    for query, schema in ((text, EXAMPLES / "stocks" / "schema.json"),
                          ((EXAMPLES / "relate" / "above_first_sale.acel").read_text(),
                           EXAMPLES / "stocks" / "schema.json")):
        automaton = acel.compile(query, schema).automaton
        copy = ACEA(automaton.num_states, automaton.initial, automaton.finals,
                    _shifted(automaton.transitions, 1000), automaton.words)  # type: ignore[arg-type]
        assert not copy.registers() & automaton.registers()  # every number moved
        assert _labels(to_dot(copy)) == _labels(to_dot(automaton))
        assert "rel_" not in _labels(to_dot(copy))
