"""CI runs the properties on both paths (issue 23, papers/engine.md "Both paths in CI").

The second pass of ``make test`` selects ``-m native_paths`` under ``ACEL_NATIVE=0``
(tests/conftest.py); under ``ACEL_NATIVE=1`` a missing extension fails instead of
skipping.  These tests keep that machinery honest.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import conftest
import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
EXTENSIONS = (
    "acel.acea.engine._native_core",
    "acel.acea.engine._native_enum",
    "acel.io._native_reader",
    "acel.io._native_writer",
)


def _skipped(reason: str, when: str = "setup") -> pytest.TestReport:
    return pytest.TestReport(
        "tests/test_x.py::test_y", ("tests/test_x.py", 1, "test_y"), {}, "skipped",
        ("tests/test_x.py", 1, f"Skipped: {reason}"), when,
    )


@pytest.mark.parametrize("reason", [
    "native core not built",
    "acel.io._native_writer is not built",
    "could not import 'acel.io._native_reader': No module named 'acel.io._native_reader'",
])
def test_acel_native_1_turns_a_missing_extension_into_a_failure(
    monkeypatch: pytest.MonkeyPatch, reason: str
) -> None:
    monkeypatch.setenv("ACEL_NATIVE", "1")
    report = _skipped(reason)
    conftest._loud(report)
    assert report.failed
    assert str(report.longrepr) == f"ACEL_NATIVE=1 but {reason}"


@pytest.mark.parametrize("mode", ["auto", "0"])
def test_otherwise_a_missing_extension_is_a_skip(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    monkeypatch.setenv("ACEL_NATIVE", mode)
    monkeypatch.delenv("CI", raising=False)
    report = _skipped("native core not built")
    conftest._loud(report)
    assert report.skipped


@pytest.mark.parametrize(("mode", "fails"), [("auto", True), ("0", False)])
def test_in_ci_a_missing_extension_fails_unless_pure_python_is_asked(
    monkeypatch: pytest.MonkeyPatch, mode: str, fails: bool
) -> None:
    """CI builds every extension, so a "not built" skip there (tests/test_spark_native.py,
    the readers' files) would hide a native path that never ran."""
    monkeypatch.setenv("ACEL_NATIVE", mode)
    monkeypatch.setenv("CI", "true")
    report = _skipped("native core not built")
    conftest._loud(report)
    assert report.failed is fails
    if fails:
        assert str(report.longrepr) == "CI=true but native core not built"


def test_other_skips_stay_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACEL_NATIVE", "1")
    for reason in ("Spark needs Java", "could not import 'nbconvert': No module named 'nbconvert'"):
        report = _skipped(reason)
        conftest._loud(report)
        assert report.skipped, reason


def test_every_one_path_file_exists_and_holds_properties() -> None:
    """A renamed or emptied file in ``ONE_PATH`` would be a stale entry."""
    for name in sorted(conftest.ONE_PATH):
        text = (TESTS / name).read_text(encoding="utf-8")
        assert "@given" in text or "assert_conforms(" in text, name


def test_every_one_path_test_exists_in_a_file_of_both_paths() -> None:
    """A renamed test in ``ONE_PATH_TESTS`` would be a stale entry, and one of a
    ``ONE_PATH`` file a needless one."""
    for entry in sorted(conftest.ONE_PATH_TESTS):
        name, test = entry.split("::")
        assert name not in conftest.ONE_PATH, entry
        assert f"def {test}(" in (TESTS / name).read_text(encoding="utf-8"), entry


def test_the_second_pass_is_in_make_test() -> None:
    """``make test`` (what CI runs, .ci/run) runs the marked properties with ``ACEL_NATIVE=0``."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in recipe.splitlines()[1:]]
    assert lines == ['$(BIN)/pytest $(PARALLEL) -m "not external and not cluster"',
                     "ACEL_NATIVE=0 $(BIN)/pytest $(PARALLEL) -m native_paths"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test " in ci and "make test-external" in ci  # the rest: CI's own stage


def test_the_engine_properties_are_marked() -> None:
    """The marker reaches the properties that take the native core (measured, papers/engine.md):
    the second pass's own selection, collected in a fresh pytest."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", "-m", "native_paths",
         "tests/test_engine_properties.py", "tests/test_native_core.py", "tests/test_both_paths.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    marked = {line.strip() for line in done.stdout.splitlines() if "::" in line}
    kit = "tests/test_engine_properties.py::test_trend_rows_equal_oracle"  # runs assert_conforms
    given = "tests/test_engine_properties.py::test_propagation_equals_enumeration"  # @given
    once = "tests/test_engine_properties.py::test_engine_equals_oracle"  # in ONE_PATH_TESTS
    tests = {nodeid.split("[", 1)[0] for nodeid in marked}
    assert {kit, given} <= tests, done.stdout[-2000:] + done.stderr[-2000:]
    assert once not in tests
    assert not any(nodeid.startswith("tests/test_native_core.py") for nodeid in marked)
    assert not any("test_both_paths.py" in nodeid for nodeid in marked)


@pytest.mark.skipif(not os.environ.get("CI"), reason="CI builds every extension; a user may lack a C compiler")
@pytest.mark.parametrize("name", EXTENSIONS)
def test_ci_builds_every_extension(name: str) -> None:
    """Without it, CI's first pass would quietly run pure Python twice."""
    importlib.import_module(name)
