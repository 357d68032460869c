"""The walk of one event stream from ``open_events`` to the engine (issue 34, ``tools/walk.py``).

The limits asserted (50 W0 events, native scanner, the event's path only:
``tools/walk.py``) are the issue's target, reached by both formats: at most 4 files, none
entered more than 3 times (9 stays each today).  The scanner's choice is read in
``record_pass.py`` without a call to the switch's module; the last test holds that
shortcut to the switch's own answer.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

WALK = Path(__file__).resolve().parent.parent / "tools" / "walk.py"

LIMITS = {"jsonl": (9, 4, 3), "csv": (9, 4, 3)}
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


def _answer(choose: Any) -> Any:
    """What a choice of the C scanner gives: the module, ``None``, or its error's type and words."""
    try:
        return choose()
    except Exception as error:  # the switch's one-line errors
        return type(error), str(error)


@pytest.mark.parametrize("value", ["", "auto", " Auto ", "1", "on", "YES", "0", "off", "false", "maybe"])
@pytest.mark.parametrize("built", [True, False])
def test_the_scanner_choice_is_the_switch_rule(value: str, built: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``record_pass.scanner`` (the walk's shortcut) answers as ``native_switch.reader`` does,
    built or not, for every value of ``ACEL_NATIVE``, errors word for word."""
    import importlib

    from acel.io import native_switch, record_pass

    real = importlib.import_module

    def refuse(name: str, package: str | None = None) -> Any:
        if name == "acel.io._native_reader":
            raise ImportError("not built")
        return real(name, package)

    if built:
        pytest.importorskip("acel.io._native_reader")
    else:
        monkeypatch.setattr(importlib, "import_module", refuse)
    with pytest.MonkeyPatch.context() as switch:  # undone before pytest's report reads the variable
        switch.setenv("ACEL_NATIVE", value)
        expected, got = _answer(native_switch.reader), _answer(record_pass.scanner)
    assert got == expected
    given = got is not None and not isinstance(got, tuple)  # the module, not None nor an error
    assert given == (built and value.strip().lower() in ("", "auto", "1", "on", "yes"))
    assert isinstance(got, tuple) == (value == "maybe" or (not built and value in ("1", "on", "YES")))
