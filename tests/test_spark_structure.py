"""The Spark backend's own import graph has no circle (issue 34), counting relative
imports and ``TYPE_CHECKING`` ones, and ``from . import m`` as an import of the package
too (``tests/test_layers.py`` reads absolute imports only): ``run``, ``lazy`` and
``streaming`` imported ``frames`` through the package, whose ``__init__`` imports them."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

FOLDER = Path(__file__).resolve().parents[1] / "spark_backend"
PACKAGE = "acel.spark_backend"


def _modules(folder: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(folder.glob("*.py")):
        out[PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"] = path
    return out


def _targets(node: ast.AST, package: str) -> list[str]:
    """Every module an import statement may load: ``from p import m`` gives ``p`` and ``p.m``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = package if node.level else ""
    for _ in range(max(node.level - 1, 0)):
        base = base.rsplit(".", 1)[0]
    module = ".".join(filter(None, [base, node.module or ""]))
    return [module, *[f"{module}.{alias.name}" for alias in node.names]]


def import_graph(folder: Path) -> nx.DiGraph:
    modules = _modules(folder)
    graph = nx.DiGraph()
    for module, path in modules.items():
        package = module if path.stem == "__init__" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(node, package):
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != module:
                    graph.add_edge(module, target)
    return graph


def test_the_spark_backend_imports_no_circle() -> None:
    graph = import_graph(FOLDER)
    assert graph.number_of_edges() > 20
    assert list(nx.simple_cycles(graph)) == []


def test_the_check_sees_an_import_through_the_package(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("from .run import go\n")
    (tmp_path / "run.py").write_text("from . import frames\n")
    (tmp_path / "frames.py").write_text("")
    assert list(nx.simple_cycles(import_graph(tmp_path)))


def test_the_spark_modules_stay_short() -> None:
    """Issue 34: no module over 800 lines (``streaming`` split its event time out)."""
    long = {p.name: n for p in FOLDER.glob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800}
    assert set(long) <= {"frames.py"}, long  # frames.py: io34's split (input formats)


def _python(code: str) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_worker_imports_no_driver_module() -> None:
    """Issue 31: what an executor task unpickles (``executor``, ``direct_read``,
    ``in_place``) does not import the driver's planning or streaming through the
    package's ``__init__`` (PEP 562: its names are imported on first use)."""
    loaded = _python(
        "import sys\n"
        "import acel.spark_backend.executor, acel.spark_backend.direct_read, acel.spark_backend.in_place\n"
        "print(sorted(m for m in ('run', 'streaming', 'frames', 'key_stream', 'lazy')\n"
        "             if 'acel.spark_backend.' + m in sys.modules))"
    )
    assert loaded == "[]"


def test_the_package_names_stay_the_functions() -> None:
    """``run`` is a submodule and a function: importing the submodule first (as the
    facade does) must not make ``from acel.spark_backend import run`` the module."""
    names = _python(
        "import acel.spark_backend.run, acel.spark_backend.streaming\n"
        "import acel.spark_backend as sb\n"
        "from acel.spark_backend import NotParallelWarning, get_session, plan, run, run_events\n"
        "from acel.spark_backend import run_to_results, stream, write\n"
        "print(type(run).__name__, run.__module__, stream.__module__, get_session.__module__,\n"
        "      sb.run is run, sorted(set(sb.__all__) - set(dir(sb))))"
    )
    assert names == ("function acel.spark_backend.run acel.spark_backend.streaming "
                     "acel.spark_backend.session True []")
    missing = _python(
        "import acel.spark_backend as sb\n"
        "try:\n    sb.nothing_here\nexcept AttributeError as e:\n    print(e)"
    )
    assert missing == "module 'acel.spark_backend' has no attribute 'nothing_here'"
