"""``make demo`` / ``make test`` set Graphviz up first (issue 17, "No Graphviz, no demo").

``tools/ensure_graphviz.py`` installs the ``graphviz`` package with apt-get
when root or password-less sudo allows it, and otherwise says in one line
what to run; the Makefile runs it before any other work.  The install paths
are tested with a fake system (no package is installed by the tests).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tools" / "ensure_graphviz.py"
INSTALL = ["apt-get", "install", "-y", "-qq", "graphviz"]
UPDATE = ["apt-get", "update", "-qq"]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ensure_graphviz", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ensure_graphviz = _load()


@dataclass
class FakeSystem:
    """Programs on PATH, the commands run, and which of them succeed."""

    programs: set[str]
    euid: int = 1000
    succeed: set[tuple[str, ...]] = field(default_factory=set)
    installs_dot: bool = True
    ran: list[list[str]] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    envs: list[dict[str, str]] = field(default_factory=list)

    def which(self, name: str) -> str | None:
        return f"/usr/bin/{name}" if name in self.programs else None

    def run(self, argv: list[str], **kwargs: Any) -> Any:
        self.ran.append(argv)
        self.envs.append(kwargs.get("env", {}))
        if tuple(argv) in self.succeed and argv[-len(INSTALL):] == INSTALL and self.installs_dot:
            self.programs.add("dot")
        if tuple(argv) in self.succeed:
            return subprocess.CompletedProcess(argv, 0)
        return subprocess.CompletedProcess(argv, 100)

    def ensure(self) -> str:
        return str(ensure_graphviz.ensure(
            which=self.which, run=self.run, geteuid=lambda: self.euid, say=self.said.append
        ))


def test_nothing_to_do_when_dot_is_there() -> None:
    system = FakeSystem({"dot", "apt-get", "sudo"})
    assert system.ensure() == "present"
    assert system.ran == [] and system.said == []


def test_root_installs_with_apt_get() -> None:
    system = FakeSystem({"apt-get"}, euid=0, succeed={tuple(INSTALL)})
    assert system.ensure() == "installed"
    assert system.ran == [INSTALL]
    assert len(system.said) == 1 and system.said[0].startswith("Installing Graphviz")
    assert system.envs[0]["DEBIAN_FRONTEND"] == "noninteractive"


def test_a_fresh_container_updates_the_package_lists_first() -> None:
    system = FakeSystem({"apt-get"}, euid=0, succeed={tuple(UPDATE)})

    def run(argv: list[str], **kwargs: Any) -> Any:
        if argv == UPDATE:
            system.succeed.add(tuple(INSTALL))  # the lists now know graphviz
        return FakeSystem.run(system, argv, **kwargs)

    system.run = run  # type: ignore[method-assign]
    assert system.ensure() == "installed"
    assert system.ran == [INSTALL, UPDATE, INSTALL]


def test_password_less_sudo_installs() -> None:
    sudo_install = ["sudo", "-n", *INSTALL]
    system = FakeSystem({"apt-get", "sudo"}, succeed={("sudo", "-n", "true"), tuple(sudo_install)})
    assert system.ensure() == "installed"
    assert system.ran == [["sudo", "-n", "true"], sudo_install]


@pytest.mark.parametrize("programs", [{"apt-get", "sudo"}, {"apt-get"}])
def test_without_root_one_line_says_what_to_run(programs: set[str]) -> None:
    system = FakeSystem(set(programs))  # sudo wants a password, or there is no sudo
    assert system.ensure() == "no-root"
    assert all(argv[0] != "apt-get" and "apt-get" not in argv for argv in system.ran)
    (line,) = system.said
    assert "'sudo apt-get install graphviz'" in line and "\n" not in line


def test_without_apt_get_one_line_says_what_to_do() -> None:
    system = FakeSystem({"sudo"}, euid=0)
    assert system.ensure() == "no-apt"
    assert system.ran == []
    (line,) = system.said
    assert "graphviz" in line and "\n" not in line


def test_a_failed_install_says_what_to_run() -> None:
    system = FakeSystem({"apt-get"}, euid=0)
    assert system.ensure() == "failed"
    assert system.ran == [INSTALL, UPDATE]
    assert len(system.said) == 2 and "'sudo apt-get install graphviz'" in system.said[1]


def test_an_install_that_brings_no_dot_is_a_failure() -> None:
    system = FakeSystem({"apt-get"}, euid=0, succeed={tuple(INSTALL)}, installs_dot=False)
    assert system.ensure() == "failed"


def test_a_program_that_cannot_start_is_a_failure() -> None:
    system = FakeSystem({"apt-get"}, euid=0)

    def run(argv: list[str], **kwargs: Any) -> Any:
        raise FileNotFoundError(argv[0])

    system.run = run  # type: ignore[method-assign]
    assert system.ensure() == "failed"


def test_the_script_prints_one_line_and_exits_0(tmp_path: Path) -> None:
    """The real script, in a process whose PATH has neither dot nor apt-get."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False,
        env={**os.environ, "PATH": str(tmp_path)}, timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "graphviz" in proc.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is missing")
@pytest.mark.parametrize("target", ["demo", "test", "setup"])
def test_make_sets_graphviz_up_before_any_other_work(target: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'venv'}"], cwd=REPO, capture_output=True,
        text=True, check=True, timeout=60,
    )
    commands = proc.stdout.splitlines()
    assert commands[0] == "python3 tools/ensure_graphviz.py"
    assert any("-m venv" in c for c in commands[1:])
