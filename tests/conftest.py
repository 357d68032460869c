"""Shared test set-up: Hypothesis profiles and the import path of tests/strategies.py.

Profiles: ``ci`` (small, for CI), ``dev`` (default), ``thorough`` (the issue
targets: thousands of examples), chosen with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
settings.register_profile("ci", max_examples=150, **_COMMON)
settings.register_profile("dev", max_examples=300, **_COMMON)
settings.register_profile("thorough", max_examples=3000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One Spark session for the whole run (one JVM holds one SparkContext).

    ``local[2,2]``: two cores, and a failed task is retried once (the fault test).
    Code under test that asks for the active session (the command line) gets it.
    """
    from acel.spark_backend import get_session

    yield get_session("local[2,2]", shuffle_partitions=2)
