"""Shipping acel to a cluster's workers, and the executors' Python (no Spark needed).

The zip must hold the whole installed tree (the subpackages mapped from
top-level folders, the grammar, the log settings), import in a Python that
lacks acel, and change name exactly when its content changes; it is added to a
session only when the executors run elsewhere.  End to end on a real cluster:
tests/test_spark_cluster.py.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from acel.spark_backend import shipping
from acel.spark_backend.session import PYTHON_CONF, use_configured_python
from spark_cluster import bare_python

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent


DATA_FOLDERS = {"acel.io.native", "acel.acea.engine.native", "acel.testing.resources"}
"""Listed packages that are folders of files, not modules (pyproject.toml, issue 37)."""


def test_the_zip_holds_every_package_of_pyproject_and_the_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    names = set(zipfile.ZipFile(shipping.build_zip()).namelist())
    for package in config["packages"]:
        if package in DATA_FOLDERS:
            continue  # no module to import (C sources; runner scripts, checked just below)
        assert f"{package.replace('.', '/')}/__init__.py" in names, package
    for package, patterns in config["package-data"].items():
        folder = package.replace(".", "/")
        for pattern in patterns:
            assert any(Path(n).match(f"{folder}/{pattern}") for n in names), (package, pattern)
    assert "acel/acea/engine/runner.py" in names and "acel/reference/sase/run.py" in names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_the_zip_is_named_by_its_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "__init__.py").write_text("x = 1\n")
    (source / "grammar.lark").write_text("start: 'a'\n")
    files = {"acel/__init__.py": source / "__init__.py", "acel/lang/grammar.lark": source / "grammar.lark"}
    monkeypatch.setattr(shipping, "package_files", lambda: files)
    first = shipping.build_zip(tmp_path / "cache")
    first_bytes = first.read_bytes()
    assert shipping.build_zip(tmp_path / "cache") == first  # cached, not rebuilt
    first.unlink()
    assert shipping.build_zip(tmp_path / "cache").read_bytes() == first_bytes  # reproducible
    (source / "__init__.py").write_text("x = 2\n")
    changed = shipping.build_zip(tmp_path / "cache")
    assert changed != first and changed.name.startswith("acel-")
    assert zipfile.ZipFile(changed).read("acel/__init__.py") == b"x = 2\n"


def test_old_zips_are_pruned_beyond_the_bound(tmp_path: Path) -> None:
    """Each edited tree made one more zip and none went away (issue 37): beyond
    MAX_ZIPS the oldest go, but never one younger than an hour, nor the newest."""
    import os
    import time

    now = time.time()
    ages = {f"acel-{i:016x}.zip": 7200 + 60 * i for i in range(shipping.MAX_ZIPS + 3)}
    ages["acel-young000000000.zip"] = 10  # fresh: a concurrent run may ship it
    for name, age in ages.items():
        (tmp_path / name).write_bytes(b"z")
        os.utime(tmp_path / name, (now - age, now - age))
    newest = tmp_path / "acel-00000000000000ff.zip"
    newest.write_bytes(b"z")
    os.utime(newest, (now - 99999, now - 99999))  # the one just asked for stays, however old
    (tmp_path / "other.txt").write_bytes(b"x")
    removed = shipping.prune_zips(tmp_path, newest)
    # newest-first: young, then 0..MAX_ZIPS+2 by age; the first MAX_ZIPS kept (young among them)
    expected_gone = {f"acel-{i:016x}.zip" for i in range(shipping.MAX_ZIPS - 1, shipping.MAX_ZIPS + 3)}
    assert {p.name for p in removed} == expected_gone
    left = {p.name for p in tmp_path.iterdir()}
    assert left == (set(ages) - expected_gone) | {newest.name, "other.txt"}


def test_the_zip_imports_in_a_python_without_acel(tmp_path: Path) -> None:
    python = bare_python(tmp_path / "bare")
    zipped = shipping.build_zip()
    program = (
        "import sys\n"
        "try:\n    import acel\nexcept ImportError:\n    print('no acel')\n"
        f"sys.path.insert(0, {str(zipped)!r})\n"
        "from acel.lang.parser import parse_query\n"
        "import acel.spark_backend.executor, acel.acea.engine\n"
        "print(parse_query('A AS a ; B').formula.right.type, acel.__file__)\n"
    )
    result = subprocess.run([str(python), "-c", program], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["no acel", f"B {zipped}/acel/__init__.py"]


@pytest.mark.parametrize(
    "master, ships",
    [("local", False), ("local[*,4]", False), ("local-cluster[2,1,1024]", False),
     ("spark://host:7077", True), ("yarn", True), ("k8s://https://host:6443", True)],
)
def test_only_executors_elsewhere_get_the_zip(master: str, ships: bool) -> None:
    assert shipping.needs_shipping(master) is ships


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


class _Context:
    def __init__(self, master: str, conf: dict[str, str] | None = None) -> None:
        self.master = master
        self.added: list[str] = []
        self.pythonExec = "python3"
        self.conf = _Conf(conf or {})

    def addPyFile(self, path: str) -> None:  # noqa: N802 - Spark's name
        self.added.append(path)

    def getConf(self) -> _Conf:  # noqa: N802 - Spark's name
        return self.conf


class _Session:
    def __init__(self, master: str, conf: dict[str, str] | None = None) -> None:
        self.sparkContext = _Context(master, conf)
        self.conf = self.sparkContext.conf


def test_a_cluster_session_gets_the_zip_once() -> None:
    session: Any = _Session("spark://host:7077")
    path = shipping.ensure_shipped(session)
    assert path is not None and session.sparkContext.added == [str(path)]
    assert shipping.ensure_shipped(session) == path
    assert session.sparkContext.added == [str(path)]


def test_a_local_session_or_shipping_off_gets_nothing() -> None:
    local: Any = _Session("local[2,2]")
    off: Any = _Session("spark://host:7077", {shipping.SHIP_CONF: "false"})
    assert shipping.ensure_shipped(local) is None and shipping.ensure_shipped(off) is None
    assert local.sparkContext.added == [] and off.sparkContext.added == []


def test_the_configured_executor_python_wins() -> None:
    """pyspark reads only PYSPARK_PYTHON; spark.pyspark.python must win as under spark-submit."""
    configured: Any = _Session("spark://h:7077", {PYTHON_CONF: "/opt/python/bin/python3"})
    assert use_configured_python(configured) == "/opt/python/bin/python3"
    plain: Any = _Session("spark://h:7077")
    assert use_configured_python(plain) == "python3"
