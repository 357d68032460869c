"""The suite's stages (issue 37): a ``slow`` property runs a few examples in the default
suite and all of them under ``--slow`` (``make test-slow``), its other settings kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import MAX_WORKERS, fast_examples, shorten, workers
from conftest import usable_cpus as conftest_usable_cpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def counting(max_examples: int) -> tuple[object, list[int]]:
    """A property of ``max_examples`` examples and the list it appends each example to."""
    seen: list[int] = []

    @settings(max_examples=max_examples, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers())
    def prop(x: int) -> None:
        seen.append(x)

    return prop, seen


def test_a_shortened_property_runs_the_fast_examples_with_its_other_settings() -> None:
    prop, seen = counting(150)
    shorten(prop)
    prop()  # type: ignore[operator]
    assert len(seen) == fast_examples(150) == 15
    kept = prop._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    assert kept.database is None and HealthCheck.too_slow in kept.suppress_health_check


def test_a_short_property_keeps_two_examples_or_its_own_count() -> None:
    assert [fast_examples(count) for count in (1, 2, 12, 29, 30)] == [1, 2, 2, 2, 3]
    prop, seen = counting(12)
    shorten(prop)
    prop()  # type: ignore[operator]
    assert len(seen) == 2


@pytest.mark.slow
@settings(max_examples=40, database=None)
@given(st.integers())
def test_this_slow_property_is_shortened_without_the_option(request: pytest.FixtureRequest, x: int) -> None:
    """The collection hook shortened this very test unless the run has ``--slow``."""
    count = request.function._hypothesis_internal_use_settings.max_examples
    assert count == (40 if request.config.getoption("slow") else 4)


def test_ci_runs_the_slow_stage_after_make_test() -> None:
    """``make test-slow`` runs the ``slow`` properties in full, and CI runs it after ``make test``."""
    root = Path(__file__).resolve().parents[1]
    makefile = (root / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest-slow:", 1)[1].split("\n\n", 1)[0]
    assert [line.strip() for line in recipe.splitlines()[1:]] == [
        '$(BIN)/pytest $(PARALLEL) --slow -m "slow and not external and not cluster"']
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.index("make test-slow") > ci.index("make test ")


def test_make_test_runs_both_passes_on_every_core() -> None:
    """``make test`` and ``make test-slow`` run on pytest-xdist's ``-n auto`` (issue 37)."""
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    assert "\nPARALLEL := -n auto --dist worksteal\n" in makefile
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert [line.strip() for line in recipe.splitlines()[1:]] == [
        '$(BIN)/pytest $(PARALLEL) -m "not external and not cluster"',
        "ACEL_NATIVE=0 $(BIN)/pytest $(PARALLEL) -m native_paths"]


def test_auto_workers_are_one_per_core_or_pytest_workers() -> None:
    """One worker per core, at most :data:`MAX_WORKERS`; one core (or ``PYTEST_WORKERS=1``)
    is a single process (0 workers); ``PYTEST_WORKERS`` overrides the count."""
    assert [workers(cpus, None) for cpus in (None, 1, 2, 3, 64)] == [0, 0, 2, 3, MAX_WORKERS]
    assert [workers(2, asked) for asked in ("", " ", "1", "3", "8")] == [2, 2, 0, 3, 8]
    for bad in ("0", "-2", "two", "auto"):
        with pytest.raises(pytest.UsageError, match=f"PYTEST_WORKERS={bad}: give a number"):
            workers(2, bad)


def test_auto_workers_count_the_cores_this_process_may_use() -> None:
    """A process held to one core (``taskset``, a container's cpuset) runs the suite in
    one process, however many cores the machine has."""
    import subprocess
    import sys

    code = "import os, sys; sys.path.insert(0, 'tests'); import conftest; print(conftest.usable_cpus())"
    root = Path(__file__).resolve().parents[1]
    if not hasattr(os, "sched_setaffinity"):  # not Linux: the machine's count is all there is
        assert conftest_usable_cpus() == os.cpu_count()
        return
    one = sorted(os.sched_getaffinity(0))[:1]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                          preexec_fn=lambda: os.sched_setaffinity(0, one))
    assert done.stdout.strip() == "1"
    assert workers(int(done.stdout), None) == 0



def test_the_suite_collects_without_xdist() -> None:
    """``pytest -p no:xdist`` (or a checkout without pytest-xdist) still runs: the
    conftest's ``-n auto`` hook is optional, not an unknown hook (an INTERNALERROR)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only",
                           "tests/test_suite_stages.py::test_the_suite_collects_without_xdist"],
                          cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 test collected" in done.stdout
