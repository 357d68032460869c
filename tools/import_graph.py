"""Draw the module import graph of the toolkit, one box per layer (docs/architecture.md).

The layers and the graph come from ``tests/test_layers.py`` (``FOLDERS``, ``RANKS``,
``import_graph``), the test that enforces them, so the picture cannot drift from the
rule.  The module graph (about 150 modules) is drawn by folder: each layer is a box,
each of its folders a node listing its modules, and an arrow ``a -> b`` says that
modules of ``a`` import modules of ``b`` when they run (its number: how many such
imports).  ``tests/test_docs.py`` checks that the committed drawing has every folder
and arrow this script finds.

    python tools/import_graph.py                 # docs/img/architecture.{dot,svg}
    python tools/import_graph.py --png a.png     # also a PNG, to look at
    python tools/import_graph.py --check         # exit 1 if the committed DOT is stale
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
DOT = ROOT / "docs" / "img" / "architecture.dot"
SVG = ROOT / "docs" / "img" / "architecture.svg"

LABELS = {
    "core": "language core (acel/lang)",
    "io": "event files (acel/io)",
    "model": "automaton model (acea/model)",
    "compiler": "compiler (compiler/)",
    "evaluators": "evaluators (acea/engine, reference/)",
    "spark": "Spark (spark_backend/)",
    "engines": "engine registry (acel/engines)",
    "api": "public API (acel/, acel/testing)",
    "app": "command line (acel/app)",
}
COLOURS = ["#eef3fb", "#f3f9ee", "#fbf3ee", "#f7eefb", "#eefbf8", "#fbfbee", "#fbeef1",
           "#eef8fb", "#f1f1f1"]


def layers_module() -> ModuleType:
    """``tests/test_layers.py``, where the layers are defined and checked."""
    spec = importlib.util.spec_from_file_location("test_layers", ROOT / "tests" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def short(module: str) -> str:
    """A module's name without its folder's package (``acel.lang.ast`` → ``ast``)."""
    return module.rsplit(".", 1)[-1]


def folder_of(layers: ModuleType, module: str, path: Path) -> str:
    """The deepest layer folder (a key of ``FOLDERS``) that holds a module's file."""
    folder = path.parent.relative_to(ROOT).as_posix()
    while folder not in layers.FOLDERS:
        folder = folder.rsplit("/", 1)[0]
    return str(folder)


def folder_graph(layers: ModuleType) -> tuple[nx.DiGraph, dict[str, list[str]]]:
    """The import graph with one node per layer folder: an edge ``a -> b`` (with
    ``count``, the module imports behind it) when a module of ``a`` imports one of ``b``."""
    modules = layers.import_graph()
    where = {module: folder_of(layers, module, path) for module, path in layers.modules()}
    members: dict[str, list[str]] = {}
    for module in sorted(modules.nodes):
        members.setdefault(where[module], []).append(module)
    graph = nx.DiGraph()
    for folder in members:
        graph.add_node(folder, layer=layers.FOLDERS[folder])
    for a, b in modules.edges:
        fa, fb = where[a], where[b]
        if fa != fb:
            count = graph.edges[fa, fb]["count"] + 1 if graph.has_edge(fa, fb) else 1
            graph.add_edge(fa, fb, count=count)
    return graph, members


def _label(folder: str, modules: list[str], width: int = 6) -> str:
    """An HTML-like label: the folder in bold, then its modules a few to a line."""
    names = sorted({short(m) for m in modules if m.count(".") > 0} or {short(modules[0])})
    lines = [", ".join(names[i:i + width]) for i in range(0, len(names), width)]
    body = "<BR/>".join(f'<FONT POINT-SIZE="8">{line}</FONT>' for line in lines)
    return f"<<B>{folder}/</B><BR/>{body}>"


def to_dot(layers: ModuleType) -> str:
    """The DOT text of the picture: a box per layer, lowest at the bottom, a node per
    folder listing its modules, an arrow per folder that imports another."""
    graph, members = folder_graph(layers)
    ranks: dict[str, int] = layers.RANKS
    lines = [
        "digraph architecture {",
        '  graph [rankdir=BT, fontname="Helvetica", fontsize=12, nodesep=0.3, ranksep=0.45, '
        'label="ACEL: the module import graph by layer folder (tools/import_graph.py); an arrow '
        'points at what a folder\'s modules import, its number counts the module imports", '
        "labelloc=t];",
        '  node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", '
        'fontsize=10, margin="0.12,0.06"];',
        '  edge [color="#5a6678", arrowsize=0.6, penwidth=0.8, fontname="Helvetica", '
        'fontsize=8, fontcolor="#5a6678"];',
    ]
    for name, rank in sorted(ranks.items(), key=lambda item: item[1]):
        folders = sorted(f for f in graph.nodes if graph.nodes[f]["layer"] == name)
        lines.append(f"  subgraph cluster_{rank}_{name} {{")
        lines.append(f'    label="{rank + 1}. {LABELS.get(name, name)}"; style=filled; '
                     f'fillcolor="{COLOURS[rank % len(COLOURS)]}"; color="#9aa5b1"; '
                     'fontsize=11;')
        lines.extend(f'    "{f}" [label={_label(f, members[f])}];' for f in folders)
        lines.append("  }")
    lines.extend(f'  "{a}" -> "{b}" [label="{graph.edges[a, b]["count"]}"];'
                 for a, b in sorted(graph.edges))
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(dot: str, target: Path, fmt: str) -> None:
    """Draw DOT text with Graphviz's ``dot`` (``tools/ensure_graphviz.py`` installs it)."""
    subprocess.run(["dot", f"-T{fmt}", "-o", str(target)], input=dot.encode(), check=True)


def main(argv: list[str] | None = None) -> int:
    """Write docs/img/architecture.dot and .svg (or check that the DOT is up to date)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only check that the committed DOT is what this script draws")
    parser.add_argument("--png", metavar="FILE", help="also draw a PNG")
    args = parser.parse_args(argv)
    dot = to_dot(layers_module())
    if args.check:
        if not DOT.exists() or DOT.read_text(encoding="utf-8") != dot:
            print(f"{DOT} is stale: run python tools/import_graph.py", file=sys.stderr)
            return 1
        return 0
    DOT.parent.mkdir(parents=True, exist_ok=True)
    DOT.write_text(dot, encoding="utf-8")
    render(dot, SVG, "svg")
    if args.png:
        render(dot, Path(args.png), "png")
    print(f"wrote {DOT.relative_to(ROOT)} and {SVG.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
