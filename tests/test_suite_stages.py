"""The suite's stages (issue 37): a ``slow`` property runs a few examples in the default
suite and all of them under ``--slow`` (``make test-slow``), its other settings kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fast_examples, shorten
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
        '$(BIN)/pytest --slow -m "slow and not external and not cluster"']
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.index("make test-slow") > ci.index("make test ")
