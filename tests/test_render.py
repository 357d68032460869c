"""Pictures of automata: DOT text, SVG through ``dot`` (spec §10 examples)."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from acel.acea.model.expressions import (
    Cmp,
    Combine,
    Const,
    Finish,
    In,
    IsNull,
    Lift,
    PNot,
    POr,
    Reg,
)
from acel.acea.model.render import (
    Diagram,
    element_of,
    format_rexpr,
    format_rpred,
    render,
    to_dot,
    to_svg,
    transition_label,
)
from acel.compiler import compile_formula

from acel.lang.parser import parse_formula
from acel.lang.schema import Schema

SCHEMA = Schema.of({"SELL": ["name", "price"], "BUY": ["name", "price"]})

EXAMPLES = {
    "3.2": """(SELL AS msft ; SELL AS intel ; SELL AS amzn)
      FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL']
         AND amzn[name = 'AMZN' AND price < 2000]""",
    "5.1": """AGG m[max_price := MAX(intel.price)](
      (SELL AS msft ; (SELL AS intel)+ ; SELL AS amzn)
        FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL']
           AND amzn[name = 'AMZN' AND price < 2000])""",
    "5.2": """(AGG w[QNT := COUNT(x)](
        (SELL AS x)+ FILTER x[INC(price)] AND x[price >= 100 AND price <= 2000]))
      FILTER w[QNT > 3]""",
}

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is missing")
SVG = "{http://www.w3.org/2000/svg}"


def test_printers() -> None:
    assert format_rexpr(Combine("MAX", Reg("c#1"), Lift("MAX", Reg("price")))) == (
        "c#1 ⊕MAX gMAX(price)"
    )
    assert format_rexpr(Finish("AVG", Reg("c#1"))) == "hAVG(c#1)"
    pred = POr((IsNull(Reg("h#2")), PNot(Cmp("<", Reg("p#1"), Const("it's")))))
    assert format_rpred(pred) == "h#2 IS NULL OR NOT (p#1 < 'it''s')"
    assert format_rpred(In(Reg("t#1"), ("A", 1, None), True)) == "t#1 NOT IN ('A', 1, NULL)"


def test_labels_show_predicate_assignment_and_outputs() -> None:
    automaton = compile_formula(parse_formula(EXAMPLES["5.1"]), SCHEMA)
    labels = [transition_label(t) for t in automaton.transitions]
    assert any("name#1 = 'MSFT'" in label and "msft ↦ {{e#1}}" in label for label in labels)
    assert any("hMAX(" in label and "m ↦ {{" in label for label in labels)
    assert any(label.startswith("TRUE\n") for label in labels)  # the ; skip loops
    dot = to_dot(automaton)
    assert dot.startswith("digraph") and "doublecircle" in dot


@needs_dot
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_spec_examples_render_to_svg(name: str, tmp_path: Path) -> None:
    automaton = compile_formula(parse_formula(EXAMPLES[name]), SCHEMA)
    path = render(automaton, tmp_path / f"example_{name}.svg")
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    nodes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    titles = sorted(int(g.findtext(f"{SVG}title") or "-1") for g in nodes)
    assert titles == list(automaton.states())
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    drawn = {element_of(t) for t in automaton.transitions}  # one per pair; skip loops apart
    assert len(edges) == len(drawn)
    assert {g.get("id") for g in edges} == drawn
    assert Diagram(automaton)._repr_svg_() == to_svg(automaton)
    assert automaton._repr_svg_().startswith("<?xml")  # type: ignore[attr-defined]


@needs_dot
def test_png_and_dot_files(tmp_path: Path) -> None:
    automaton = compile_formula(parse_formula("SELL ; BUY"), SCHEMA)
    png = render(automaton, tmp_path / "a.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    dot = render(automaton, tmp_path / "a.dot")
    assert dot.read_text(encoding="utf-8") == to_dot(automaton)
