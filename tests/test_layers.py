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
RANKS = {
    "core": 0, "io": 1, "model": 2, "compiler": 3, "evaluators": 4, "spark": 5, "engines": 6,
    "api": 7, "app": 8,
}
FACADES = {"acel", "acel.__main__"}
"""``import acel`` re-exports the API and ``python -m acel`` starts the application."""


def layer(module: str) -> str:
    """The layer of a module of the ``acel`` distribution."""
    if module.startswith("acel.app"):
        return "app"
    if module in ("acel.api", "acel.spark", "acel.workload") or module.startswith("acel.testing"):
        return "api"
    if module in ("acel.engines", "acel.running"):
        return "engines"
    if module.startswith("acel.spark_backend"):
        return "spark"
    if module.startswith(("acel.acea.engine", "acel.reference")) or module == "acel.acea.naive":
        return "evaluators"
    if module.startswith("acel.compiler"):
        return "compiler"
    if module.startswith("acel.acea"):
        return "model"
    if module.startswith("acel.io"):
        return "io"
    return "core"


def modules() -> list[tuple[str, Path]]:
    found = []
    for package, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if package == "acel" and parts[0] in ("acea", "compiler", "reference"):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join([package, *parts]), path))
    return found


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
