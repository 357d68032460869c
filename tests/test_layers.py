"""The layers of the code, checked on every import (papers/README.md, "Layers").

Language core < event files (io) < automaton model < compiler < evaluators
(optimized engine, naive runs, reference engines) < Spark < engine registry <
public API (acel.api, acel.spark, acel.testing) < application (acel.app).
A module imports only from its own layer or lower ones, at the top of the
file or inside a function alike, so no layer depends on one above it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "acel": "acel",
    "acel.acea": "acea",
    "acel.compiler": "compiler",
    "acel.reference": "reference",
    "acel.spark_backend": "spark_backend",
}
FOLDERS: dict[str, str] = {
    "acel/lang": "core",
    "acel/io": "io",
    "acea": "model",
    "acea/model": "model",
    "compiler": "compiler",
    "acea/engine": "evaluators",
    "reference": "evaluators",
    "spark_backend": "spark",
    "acel/engines": "engines",
    "acel": "api",
    "acel/testing": "api",
    "acel/app": "app",
}
"""Each folder is one layer: a module's layer is the layer of the deepest listed folder
that holds it (``acel/`` itself holds only the public API)."""
RANKS = {
    "core": 0, "io": 1, "model": 2, "compiler": 3, "evaluators": 4, "spark": 5, "engines": 6,
    "api": 7, "app": 8,
}
FACADES = {"acel", "acel.__main__"}
"""``import acel`` re-exports the API and ``python -m acel`` starts the application."""


def folder_layer(path: Path) -> str:
    """The layer of a source file, read from the folder that holds it."""
    folder = path.parent.relative_to(ROOT).as_posix()
    while folder not in FOLDERS:
        if "/" not in folder:
            raise AssertionError(f"{path} lies in no layer folder: add its folder to FOLDERS")
        folder = folder.rsplit("/", 1)[0]
    return FOLDERS[folder]


def modules() -> list[tuple[str, Path]]:
    found = []
    for package, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join([package, *parts]), path))
    return found


LAYER_OF = {module: folder_layer(path) for module, path in modules()}


def layer(module: str) -> str:
    """The layer of a module of the ``acel`` distribution (from its folder)."""
    while module not in LAYER_OF:
        module = module.rsplit(".", 1)[0]
    return LAYER_OF[module]


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name == "acel" or name.startswith("acel.")}


@pytest.mark.parametrize("module,path", modules(), ids=[m for m, _ in modules()])
def test_imports_go_down_the_layers(module: str, path: Path) -> None:
    if module in FACADES:
        return
    all_modules = {m for m, _ in modules()}
    rank = RANKS[layer(module)]
    upward = sorted(
        name for name in imported(path)
        if name in all_modules and RANKS[layer(name)] > rank
    )
    assert not upward, f"{module} ({layer(module)}) imports from above: {upward}"


def test_the_layers_are_all_used() -> None:
    assert {layer(m) for m, _ in modules()} == set(RANKS)


# ----------------------------------------------------------------- the import graph


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import statements under ``if TYPE_CHECKING:`` (never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports when it runs, at the top or inside a
    function (``from p import m`` names the module ``p.m`` when there is one, else ``p``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    found = set()
    for name in names:
        while name not in known and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in known:
            found.add(name)
    return found


def import_graph() -> nx.DiGraph:
    """The module import graph of the distribution: a node per module (with its layer),
    an edge ``a -> b`` when ``a`` imports ``b`` when it runs."""
    found = modules()
    known = {module for module, _ in found}
    graph = nx.DiGraph()
    for module, _ in found:
        graph.add_node(module, layer=layer(module))
    for module, path in found:
        graph.add_edges_from((module, target) for target in runtime_imports(path, known)
                             if target != module)
    return graph


def test_the_import_graph_has_no_cycle() -> None:
    """Issue 26 §3: cli and workload_cmd imported each other's private helpers."""
    graph = import_graph()
    assert graph.number_of_edges() > 100
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, f"import cycles: {cycles[:5]}"


def test_the_import_graph_sees_a_cycle(tmp_path: Path) -> None:
    """The check can fail: two modules importing each other inside functions."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("def f():\n    from acel.b import g\n")
    b.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import acel.c\n"
                 "def g():\n    from acel import a\n")
    known = {"acel.a", "acel.b", "acel.c"}
    graph = nx.DiGraph([(m, t) for m, p in (("acel.a", a), ("acel.b", b))
                        for t in runtime_imports(p, known)])
    assert sorted(graph.edges) == [("acel.a", "acel.b"), ("acel.b", "acel.a")]
    assert list(nx.simple_cycles(graph))


def test_no_private_name_is_imported_across_modules() -> None:
    """Issue 26 §3: the command line and the API share public helpers only."""
    found = []
    for module, path in modules():
        if layer(module) != "app" and module != "acel.api":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("acel"):
                found.extend(f"{module}: {node.module}.{alias.name}" for alias in node.names
                             if alias.name.startswith("_") and not alias.name.startswith("__"))
    assert not found, found


def package_imports(path: Path) -> list[str]:
    """The statements of ``path`` that read a name from the ``acel`` package itself
    (``import acel``, ``from acel import tables``): each runs the facade ``acel/__init__``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "acel":
            found += [f"from acel import {a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name == "acel"]
    return found


def test_no_module_imports_the_acel_package() -> None:
    """Issue 34: ``acel`` (the facade) loads ``acel.api``, ``acel.spark`` and ``acel.stepper``,
    so none of its modules may import from it (``acel`` ↔ ``acel.api`` was a circle, also
    through ``TYPE_CHECKING``); they import the module that holds the name."""
    offending = {module: package_imports(path) for module, path in modules()
                 if module not in FACADES and package_imports(path)}
    assert offending == {}


def test_package_imports_sees_one(tmp_path: Path) -> None:
    """The check above can fail."""
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from acel import __version__, tables\n")
    assert package_imports(path) == ["from acel import __version__", "from acel import tables"]


# ----------------------------------------------------------------- acea's two layers


def _acel_imports(node: ast.AST) -> set[str]:
    """The ``acel`` modules every import statement under ``node`` names (TYPE_CHECKING too)."""
    names = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.ImportFrom) and inner.level == 0 and inner.module:
            names.add(inner.module)
        elif isinstance(inner, ast.Import):
            names.update(alias.name for alias in inner.names)
    return {name for name in names if name.startswith("acel.")}


def test_acea_holds_two_layers_with_the_compiler_between() -> None:
    """Issue 34 §5: the automaton model (``acea/model``) sits below the compiler and the
    engine (``acea/engine``) above it; both stay in the ``acea`` folder."""
    assert RANKS[FOLDERS["acea/model"]] < RANKS[FOLDERS["compiler"]] < RANKS[FOLDERS["acea/engine"]]
    engine = [m for m, path in modules() if path.is_relative_to(ROOT / "acea" / "engine")]
    model = [m for m, path in modules() if path.is_relative_to(ROOT / "acea" / "model")]
    assert engine and model
    assert {layer(m) for m in engine} == {"evaluators"} and {layer(m) for m in model} == {"model"}


def test_the_model_imports_neither_the_compiler_nor_the_engine() -> None:
    """Not even for the type checker: the model is what both of them read."""
    found = []
    for module, path in modules():
        if not path.is_relative_to(ROOT / "acea" / "model"):
            continue
        for name in _acel_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if name.startswith(("acel.compiler", "acel.acea.engine")):
                found.append(f"{module}: {name}")
    assert not found, found


def test_the_engine_imports_the_compiler_at_the_top() -> None:
    """The engine depends on the compiler openly: no import of it hidden in a function."""
    found = []
    for module, path in modules():
        if not path.is_relative_to(ROOT / "acea" / "engine"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.extend(f"{module}.{node.name}: {name}" for name in _acel_imports(node)
                             if name.startswith("acel.compiler"))
    assert not found, found
