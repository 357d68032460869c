#!/usr/bin/env python3
"""Install Graphviz's ``dot`` for ``make demo`` / ``make test``, when it can be done quietly.

Run first by the Makefile, before the virtual environment is built, with the
system Python (standard library only).  Graphviz only draws automata: without
it ``acel compile --svg``, the demo and notebooks write DOT source instead, so
this script never fails the build.  It:

* says nothing when ``dot`` is already on ``PATH``;
* installs the ``graphviz`` package with ``apt-get`` when it runs as root, or
  through ``sudo -n`` when sudo needs no password (``apt-get update`` first
  only if the plain install fails, e.g. on a fresh container);
* otherwise prints one line saying what to run, and carries on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

PACKAGE = "graphviz"
MANUAL = "sudo apt-get install graphviz"
"""What a user without password-less root runs (Debian, Ubuntu)."""

Runner = Callable[..., Any]

_GETEUID: Callable[[], int] = getattr(os, "geteuid", lambda: -1)
"""The effective user id (-1 where there is none, e.g. Windows: never root)."""


def _ok(run: Runner, argv: Sequence[str]) -> bool:
    """Whether ``argv`` runs and exits 0 (its output is not shown)."""
    try:
        done = run(
            list(argv),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            check=False,
        )
    except OSError:
        return False
    return getattr(done, "returncode", 1) == 0


def ensure(
    *,
    which: Callable[[str], str | None] = shutil.which,
    run: Runner = subprocess.run,
    geteuid: Callable[[], int] = _GETEUID,
    say: Callable[[str], None] = print,
) -> str:
    """Make ``dot`` available if possible; return what happened (for tests).

    ``"present"`` (silent), ``"installed"`` (one line before installing), or
    why not, in one line: ``"no-apt"``, ``"no-root"``, ``"failed"`` (after
    the line announcing the attempt).
    """
    if which("dot"):
        return "present"
    if not which("apt-get"):
        say("Graphviz's dot is missing (automata will be written as DOT text, not drawn): "
            "install the graphviz package with your system's package manager, "
            "e.g. brew install graphviz")
        return "no-apt"
    if geteuid() == 0:
        prefix: list[str] = []
    elif which("sudo") and _ok(run, ["sudo", "-n", "true"]):
        prefix = ["sudo", "-n"]
    else:
        say(f"Graphviz's dot is missing and installing it needs a password: run '{MANUAL}' "
            "to get pictures of automata (the demo and tests run without it)")
        return "no-root"
    install = [*prefix, "apt-get", "install", "-y", "-qq", PACKAGE]
    say(f"Installing Graphviz for pictures of automata ({' '.join(install)}) ...")
    if _ok(run, install) or (
        _ok(run, [*prefix, "apt-get", "update", "-qq"]) and _ok(run, install)
    ):
        if which("dot"):
            return "installed"
    say(f"Could not install Graphviz with apt-get: run '{MANUAL}' to get pictures of "
        "automata (the demo and tests run without it)")
    return "failed"


def main() -> int:
    """Always 0: Graphviz is optional, the message says what to do."""
    ensure(say=lambda line: print(line, file=sys.stderr, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
