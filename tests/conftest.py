"""Shared test set-up: Hypothesis profiles and the import path of tests/strategies.py.

Profiles: ``ci`` (small, for CI), ``dev`` (default), ``thorough`` (the issue
targets: thousands of examples), chosen with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
import shutil
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
settings.register_profile("ci", max_examples=150, derandomize=True, **_COMMON)  # CI: the same examples every run
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


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Spark standalone master and one worker (2 cores) on 127.0.0.1, for the whole run.

    Started only when a test asks for it (about 10 s), stopped at the end of
    the run whatever happened, with every process of both daemons (see
    ``tests/spark_cluster.py``).  Its drivers run as subprocesses: this
    process already holds the ``local[2,2]`` session above.
    """
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from spark_cluster import standalone_cluster

    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster
