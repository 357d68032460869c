"""The examples of the tour, the README and papers/conformance.md run as written.

In those files a ```pycon block is a doctest (blocks of one file share their
names, in order), and a ```console block holds ``$ command`` lines, each
followed by its expected output and errors as a terminal would show them
(``...`` matches anything), run from the
repository's root with ``acel`` meaning this interpreter's ``python -m acel``.
A block tagged ``spark`` (```pycon spark) runs only in the Spark test.
"""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "docs" / "tour.md", ROOT / "README.md", ROOT / "papers" / "conformance.md"]
FENCE = re.compile(r"^```([A-Za-z]+)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def blocks(path: Path) -> list[tuple[str, set[str], str, int]]:
    """``(language, tags, text, line)`` of every fenced block of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start(3))
        out.append((match.group(1), set(match.group(2).split()), match.group(3), line))
    return out


def run_pycon(path: Path, *, spark: bool) -> int:
    """Run the doctest blocks of ``path`` (with ``spark``, the Spark ones too); how many ran."""
    globs: dict[str, Any] = {"__name__": f"doc_{path.stem}"}
    parser = doctest.DocTestParser()
    ran = 0
    for language, tags, text, line in blocks(path):
        if language != "pycon" or ("spark" in tags and not spark):
            continue
        test = parser.get_doctest(text, globs, f"{path.name}:{line + 1}", str(path), line)
        report: list[str] = []
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, out=report.append, clear_globs=False)
        globs.update(test.globs)
        assert runner.failures == 0, "".join(report)
        ran += 1
    return ran


def run_console(text: str, where: str) -> int:
    """Run the ``$ command`` lines of a console block; compare with the lines after each."""
    checker = doctest.OutputChecker()
    commands: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
    for command, expected in commands:
        words = shlex.split(command)
        if words[0] == "acel":
            words = [sys.executable, "-m", "acel", *words[1:]]
        done = subprocess.run(words, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=600)
        got = done.stdout
        want = "\n".join(expected) + "\n"
        assert checker.check_output(want, got, FLAGS), (
            f"{where}: $ {command}\nexpected:\n{want}\ngot (status {done.returncode}):\n{got}"
        )
    return len(commands)


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_python_examples_run(path: Path) -> None:
    assert run_pycon(path, spark=False) > 0 or path.name == "conformance.md"


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_console_examples_run(path: Path) -> None:
    for language, _tags, text, line in blocks(path):
        if language == "console":
            assert run_console(text, f"{path.name}:{line + 1}") > 0


@pytest.mark.spark
def test_tour_on_spark(spark: Any) -> None:
    """The whole tour, its Spark section included (the session is the suite's)."""
    tour = ROOT / "docs" / "tour.md"
    every = [tags for language, tags, _text, _line in blocks(tour) if language == "pycon"]
    assert any("spark" in tags for tags in every)
    assert run_pycon(tour, spark=True) == len(every)


def test_the_worked_example_is_the_file() -> None:
    """papers/conformance.md lists examples/conformance/seq_engine.py in full."""
    source = (ROOT / "examples" / "conformance" / "seq_engine.py").read_text(encoding="utf-8")
    listed = [text for language, _tags, text, _line in blocks(ROOT / "papers" / "conformance.md")
              if language == "python" and text.startswith("#!/usr/bin/env python3")]
    assert listed == [source]


def test_every_document_has_examples() -> None:
    languages = {path.name: {block[0] for block in blocks(path)} for path in DOCS}
    assert {"pycon", "console"} <= languages["tour.md"]
    assert "pycon" in languages["README.md"]
    assert {"console", "python"} <= languages["conformance.md"]


# ----------------------------------------------------------------- the architecture page


def _import_graph_tool() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ARROW = re.compile(r'^  "([^"]+)" -> "([^"]+)"', re.M)


def test_the_architecture_picture_shows_every_layer_and_arrow() -> None:
    """docs/architecture.md's picture is the real import graph (issue 26 §4): the script
    draws every layer and module, and the committed drawing has the same folders and
    arrows (run ``python tools/import_graph.py`` when it does not)."""
    tool = _import_graph_tool()
    layers = tool.layers_module()
    dot = tool.to_dot(layers)
    for name, rank in layers.RANKS.items():
        assert f"cluster_{rank}_{name}" in dot
    for module, _path in layers.modules():
        assert tool.short(module) in dot, module
    committed = (ROOT / "docs" / "img" / "architecture.dot").read_text(encoding="utf-8")
    assert sorted(ARROW.findall(committed)) == sorted(ARROW.findall(dot)), \
        "docs/img/architecture.dot is stale: run python tools/import_graph.py"
    svg = (ROOT / "docs" / "img" / "architecture.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith(("<?xml", "<svg")) and "acel/lang/" in svg
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "![" in page and "img/architecture.svg" in page
    for where in ("An operator", "An aggregate", "An engine", "An input format"):
        assert f"**{where}**" in page


def test_the_import_graph_tool_checks_the_committed_drawing(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _import_graph_tool()
    stale = tmp_path / "architecture.dot"
    stale.write_text("digraph architecture {}\n", encoding="utf-8")
    monkeypatch.setattr(tool, "DOT", stale)
    assert tool.main(["--check"]) == 1
