"""What the Spark test modules share: their marks, Hypothesis settings and input frames.

The session itself is ``tests/conftest.py``'s ``spark`` fixture (one JVM holds one
SparkContext).  ``tests/test_spark.py`` and ``tests/test_spark_lazy.py`` each had
their own copy of these.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from acel.lang.events import Event

SPARK_MARKS = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java"),
]
"""``pytestmark`` of a module whose tests need the local Spark session."""


def spark_settings(max_examples: int) -> Any:
    """Hypothesis settings for properties run through Spark (slow examples, one session)."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


def events_frame(spark: Any, events: list[Event]) -> Any:
    """Events held in memory as a Spark DataFrame (``spark_backend.frames.events_frame``)."""
    from acel.spark_backend.frames import events_frame as frame_of

    return frame_of(spark, events)
