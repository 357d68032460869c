"""The import circles of the toolkit, ``TYPE_CHECKING`` imports counted (issue 34).

``tests/test_layers.py`` checks the imports that run; this counts every import
statement, those under ``if TYPE_CHECKING:`` and inside functions too, because
a circle closed only for the type checker still ties the modules together for
whoever reads them.  ``python tools/import_cycles.py`` (from the repository root)
prints each strongly connected component of more than one module, then their
number; ``tests/test_import_cycles.py`` asserts there are none outside an
allow-list that shrinks as circles are removed.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "acel": "acel",
    "acel.acea": "acea",
    "acel.compiler": "compiler",
    "acel.reference": "reference",
    "acel.spark_backend": "spark_backend",
}
"""Each ``acel`` package and the folder that holds it (``package-dir`` in pyproject.toml)."""


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the distribution, by dotted name."""
    found: dict[str, Path] = {}
    for package, folder in PACKAGES.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if package == "acel" and parts and parts[0] in ("acea", "compiler", "reference",
                                                            "spark_backend"):
                continue
            found[".".join([package, *parts])] = path
    return found


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` names in any import statement (relative
    ones resolved; ``from p import m`` counts both ``p`` and ``p.m``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        out.update(name for name in names if name in known and name != module)
    return out


def import_graph(root: Path = ROOT) -> nx.DiGraph:
    """An edge ``a -> b`` for every import of ``b`` written in ``a``."""
    found = modules(root)
    known = set(found)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for module, path in found.items():
        graph.add_edges_from((module, target) for target in imports_of(module, path, known))
    return graph


def circles(root: Path = ROOT) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted."""
    components = nx.strongly_connected_components(import_graph(root))
    return sorted(sorted(c) for c in components if len(c) > 1)


def main() -> int:
    found = circles()
    for circle in found:
        print(circle)
    print(len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
