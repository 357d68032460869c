"""Without Graphviz's ``dot`` (issue 17, "No Graphviz, no demo").

``dot`` is hidden from ``PATH``, so the graphviz library really fails to start
it (``graphviz.ExecutableNotFound``).  The demo's drawing step, ``acel compile
--svg/--png`` and the notebook displays must still work: write the DOT source,
say how to get the picture, and carry on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import graphviz
import pytest
from acel.acea.model.automaton import ACEA
from acel.acea.model.render import (
    Diagram,
    render,
    render_or_dot,
    summary,
    svg_or_none,
    to_dot,
)
from acel.compiler import compile_formula

from acel.app.cli import main
from acel.lang.parser import parse_formula
from acel.lang.schema import Schema

SCHEMA = Schema.of({"SELL": ["name", "price"], "BUY": ["name", "price"]})
STOCKS_SCHEMA = Path(__file__).parent / "data" / "stocks_schema.json"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def no_dot(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A PATH with no ``dot`` on it (an empty folder); returns the folder."""
    empty = tmp_path / "bin-without-dot"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("dot") is None
    return empty


def automaton() -> ACEA:
    return compile_formula(parse_formula("SELL AS s ; BUY FILTER s[price > 100]"), SCHEMA)


class _Printer:
    """What IPython passes to ``_repr_pretty_``: something with ``text``."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def text(self, value: str) -> None:
        self.out.append(value)


def test_the_graphviz_library_really_misses_dot(no_dot: Path, tmp_path: Path) -> None:
    with pytest.raises(graphviz.ExecutableNotFound):
        render(automaton(), tmp_path / "a.svg")


def test_render_or_dot_writes_the_dot_source(no_dot: Path, tmp_path: Path) -> None:
    a = automaton()
    written, drawn = render_or_dot(a, tmp_path / "a.svg")
    assert (written, drawn) == (tmp_path / "a.dot", False)
    assert written.read_text(encoding="utf-8") == to_dot(a)
    assert not (tmp_path / "a.svg").exists()


def test_notebook_display_falls_back_to_text(no_dot: Path) -> None:
    a = automaton()
    assert a._repr_svg_() is None and svg_or_none(a) is None
    printer = _Printer()
    a._repr_pretty_(printer, False)
    (text,) = printer.out
    assert text == summary(a)
    size = a.size()
    assert text.startswith(f"ACEA: {size['states']} states, {size['transitions']} transitions")
    assert "price#1 > 100" in text or "> 100" in text
    assert text.splitlines()[-1].startswith("(no picture: Graphviz's dot is not installed;")
    assert "apt-get install graphviz" in text
    diagram = Diagram(a)
    assert diagram._repr_svg_() is None
    printer = _Printer()
    diagram._repr_pretty_(printer, False)
    assert printer.out == [text] and str(diagram) == text


def test_ipython_shows_text_without_dot(no_dot: Path) -> None:
    formatters = pytest.importorskip("IPython.core.formatters")
    bundle, _ = formatters.DisplayFormatter().format(automaton())
    assert "image/svg+xml" not in bundle
    assert bundle["text/plain"].startswith("ACEA: ")


def test_summary_lists_a_bounded_number_of_transitions(monkeypatch: pytest.MonkeyPatch) -> None:
    from acel.acea.model import render as render_module

    a = automaton()
    assert len(a.transitions) > 2
    monkeypatch.setattr(render_module, "SUMMARY_TRANSITIONS", 2)
    text = summary(a)
    assert f"... and {len(a.transitions) - 2} more transitions" in text
    assert sum(line.startswith("  q") for line in text.splitlines()) == 2


def test_cli_compile_svg_and_png_without_dot(
    no_dot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svg, png = tmp_path / "a.svg", tmp_path / "b.png"
    code = main(["compile", "SELL AS s ; BUY", "--schema", str(STOCKS_SCHEMA),
                 "--svg", str(svg), "--png", str(png)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("states: ")
    assert not svg.exists() and not png.exists()
    assert (tmp_path / "a.dot").read_text(encoding="utf-8").startswith("digraph")
    assert (tmp_path / "b.dot").read_text(encoding="utf-8").startswith("digraph")
    assert f"dot -Tsvg {tmp_path / 'a.dot'} -o {svg}" in err
    assert f"dot -Tpng {tmp_path / 'b.dot'} -o {png}" in err
    assert "apt-get install graphviz" in err and "Traceback" not in err


def test_cli_compile_without_dot_in_a_subprocess(no_dot: Path, tmp_path: Path) -> None:
    """The installed command, in a process whose PATH has no ``dot``."""
    svg = tmp_path / "a.svg"
    env = {**os.environ, "PATH": str(no_dot)}
    proc = subprocess.run(
        [sys.executable, "-m", "acel", "compile", "(SELL AS x)+ FILTER x[INC(price)]",
         "--schema", str(STOCKS_SCHEMA), "--svg", str(svg)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Graphviz's dot is not installed" in proc.stderr
    assert (tmp_path / "a.dot").exists() and not svg.exists()


class _StopAfterDrawing(Exception):
    """Raised where the demo would start Spark: steps 1–3 are what is tested."""


def test_demo_draws_without_dot_and_carries_on(
    no_dot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import acel.spark_backend as spark_backend

    from acel.app.demo import run_demo

    def no_spark(*_args: Any, **_kwargs: Any) -> Any:
        raise _StopAfterDrawing

    monkeypatch.setattr(spark_backend, "get_session", no_spark)
    with pytest.raises(_StopAfterDrawing):  # step 4 is reached: step 3 carried on
        run_demo(tmp_path / "out", days=1)
    out = capsys.readouterr().out
    dot_file = tmp_path / "out" / "delay_propagation.dot"
    assert dot_file.read_text(encoding="utf-8").startswith("digraph")
    assert not (tmp_path / "out" / "delay_propagation.svg").exists()
    assert "3. Compiling it to an ACEA" in out and f"-> {dot_file}" in out
    assert "Graphviz's dot is not installed" in out
    assert f"dot -Tsvg {dot_file} -o {tmp_path / 'out' / 'delay_propagation.svg'}" in out
    assert "4. Running it with the Spark backend" in out


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is missing")
def test_with_dot_the_pictures_are_drawn(tmp_path: Path) -> None:
    a = automaton()
    written, drawn = render_or_dot(a, tmp_path / "a.svg")
    assert (written, drawn) == (tmp_path / "a.svg", True)
    assert written.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    svg = a._repr_svg_()
    assert svg is not None and svg.startswith("<?xml")
    assert "no picture" not in summary(a)
