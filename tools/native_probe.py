"""A pytest plugin that says which tests take a native path (issue 23, papers/engine.md
"Both paths in CI"): the measurement behind ``ONE_PATH`` in ``tests/conftest.py``.

    PYTHONPATH=tools NATIVE_PROBE=probe.json .venv/bin/pytest -p native_probe -m hypothesis

It wraps ``acel.io.native_switch.wanted`` (writer, enumeration walk),
``acel.io.native_scan.reader`` (the C reader: it applies the switch's rule itself) and
``acel.acea.engine.native_trend.choose`` (trend core) and writes, per test that took
a native path, which ones, as JSON to ``$NATIVE_PROBE``; the table printed at the end
counts them per file.  Measurement only: results and the paths taken are unchanged.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Generator
from typing import Any

import pytest

_HITS: dict[str, set[str]] = {}
_CURRENT: list[str | None] = [None]
_ORIGINALS: dict[str, Callable[..., Any]] = {}


def _record(path: str) -> None:
    if _CURRENT[0] is not None:
        _HITS.setdefault(_CURRENT[0], set()).add(path)


def _wanted(available: bool, why_not: str) -> bool:
    """``native_switch.wanted``, noting which native path it let run (named by ``why_not``)."""
    taken: bool = _ORIGINALS["wanted"](available, why_not)
    if taken:
        _record(next((w for w in why_not.split() if "_native_" in w), why_not))
    return taken


def _choose(*args: Any, **kwargs: Any) -> Any:
    """``native_trend.choose``, noting when the trend core takes a partition."""
    plan = _ORIGINALS["choose"](*args, **kwargs)
    if plan is not None:
        _record("acel.acea.engine._native_core")
    return plan


def _scanner() -> Any:
    """``native_scan.reader``, noting when it gives the C reader."""
    module = _ORIGINALS["reader"]()
    if module is not None:
        _record("acel.io._native_reader")
    return module


def _patch() -> None:
    """Replace every module's binding of the two functions (``from`` imports copied them)."""
    if not _ORIGINALS:
        from acel.acea.engine import native_trend

        from acel.io import native_scan, native_switch

        _ORIGINALS["wanted"], _ORIGINALS["choose"] = native_switch.wanted, native_trend.choose
        _ORIGINALS["reader"] = native_scan.reader
        native_scan.reader = _scanner
    modules: list[Any] = list(sys.modules.values())
    for module in modules:
        if getattr(module, "wanted", None) is _ORIGINALS["wanted"]:
            module.wanted = _wanted
        if getattr(module, "choose", None) is _ORIGINALS["choose"]:
            module.choose = _choose


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    """Attribute what runs inside the test body to it (modules imported late are patched too)."""
    _patch()
    _CURRENT[0] = item.nodeid
    yield
    _CURRENT[0] = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the JSON and print the per-file count."""
    target = os.environ.get("NATIVE_PROBE")
    if target:
        with open(target, "w", encoding="utf-8") as handle:
            json.dump({k: sorted(v) for k, v in sorted(_HITS.items())}, handle, indent=1)
    per_file = Counter(nodeid.split("::")[0] for nodeid in _HITS)
    print("\ntests that took a native path, per file:")
    for name, count in sorted(per_file.items()):
        print(f"  {count:4d}  {name}")
