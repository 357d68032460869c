"""The walk of one event stream from ``open_events`` to the engine (issue 34, ``tools/walk.py``).

The limits asserted are the figures reached so far (50 W0 events, native scanner, the
event's path only: ``tools/walk.py``): the issue's target is at most 4 files with none
entered more than 3 times; these keep the walk from growing back while it is
straightened (JSON Lines misses it by the ``ACEL_NATIVE`` switch's file alone).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

WALK = Path(__file__).resolve().parent.parent / "tools" / "walk.py"

LIMITS = {"jsonl": (11, 5, 3), "csv": (23, 7, 7)}
"""Format → (stays, files, most entries of one file) at most."""


def _walk_module() -> Any:
    spec = importlib.util.spec_from_file_location("acel_tools_walk", WALK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("fmt", sorted(LIMITS))
def test_walk_stays_within_its_limits(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("acel.io._native_reader")
    monkeypatch.setenv("ACEL_NATIVE", "auto")
    before = sys.getprofile()
    report = _walk_module().walk(fmt, 50)
    assert sys.getprofile() is before
    stays, files, most = LIMITS[fmt]
    assert report["walk"][0] == "source.py"
    assert report["stays"] <= stays, report["walk"]
    assert report["files"] <= files, report["entries"]
    assert report["most_entered"] <= most, report["entries"]
