"""Where the real engines' adapters keep what they install on first use (venvs, jars,
compiled classes), and the one-at-a-time lock around installing it.

The folder is ``$ACEL_CACHE``, else ``$XDG_CACHE_HOME/acel``, else ``~/.cache/acel``
(``papers/conformance.md``, "Real engines").  Everything comes from PyPI through pip;
nothing else is downloaded.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from acel.lang.errors import AcelError

INSTALL_TIMEOUT = 900.0
"""Seconds one pip or javac run may take (the Flink wheel is about 330 MB)."""


class PrerequisiteMissing(AcelError):
    """Something a real engine needs cannot exist on this machine (no Java, no Python 3.13)."""


def cache_dir() -> Path:
    """The adapters' cache folder (created)."""
    explicit = os.environ.get("ACEL_CACHE")
    if explicit:
        root = Path(explicit)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(base) / "acel"
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def locked(name: str) -> Iterator[Path]:
    """Hold ``<cache>/<name>.lock`` while installing ``<cache>/<name>`` (parallel test
    workers and two shells then install once)."""
    root = cache_dir()
    with open(root / f"{name}.lock", "w", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield root / name
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_step(argv: Sequence[str], what: str, timeout: float = INSTALL_TIMEOUT) -> None:
    """Run one installation step; a failure is one line naming ``what`` and pip's or
    javac's last words."""
    print(f"acel: {what} (first use only) ...", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(list(argv), capture_output=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise PrerequisiteMissing(f"{what}: {argv[0]!r} is not installed") from None
    except subprocess.TimeoutExpired:
        raise AcelError(f"{what}: gave up after {timeout:g} s") from None
    if done.returncode != 0:
        tail = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise AcelError(f"{what} failed: {' / '.join(tail[-3:]) or 'status ' + str(done.returncode)}")
