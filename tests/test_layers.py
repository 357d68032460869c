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
