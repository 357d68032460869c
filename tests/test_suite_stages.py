"""The suite's stages (issue 37): a ``slow`` property runs a few examples in the default
suite and all of them under ``--slow`` (``make test-slow``), its other settings kept."""

from __future__ import annotations

import pytest
from conftest import FAST_EXAMPLES, shorten
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
    prop, seen = counting(FAST_EXAMPLES * 5)
    shorten(prop)
    prop()  # type: ignore[operator]
    assert len(seen) == FAST_EXAMPLES
    kept = prop._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    assert kept.database is None and HealthCheck.too_slow in kept.suppress_health_check


def test_a_property_already_shorter_keeps_its_count() -> None:
    prop, seen = counting(3)
    shorten(prop)
    prop()  # type: ignore[operator]
    assert len(seen) == 3


@pytest.mark.slow
@settings(max_examples=FAST_EXAMPLES * 3, database=None)
@given(st.integers())
def test_this_slow_property_is_shortened_without_the_option(request: pytest.FixtureRequest, x: int) -> None:
    """The collection hook shortened this very test unless the run has ``--slow``."""
    count = request.function._hypothesis_internal_use_settings.max_examples
    assert count == (FAST_EXAMPLES * 3 if request.config.getoption("slow") else FAST_EXAMPLES)
