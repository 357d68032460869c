"""A workload on Spark (issue 14): one job, the same results as the local workload.

Few examples: each Spark job costs about a second on two cores.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import TEST_SCHEMA, queries, streams, trend_queries
from test_workload_properties import _same, shared_workloads

from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.workload import run_workload

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java"),
]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def _spark(spark: Any, named: list[tuple[str, Any]], events: list[Event], schema: Any) -> Any:
    from acel.spark_backend.frames import events_frame
    from acel.spark_backend.workload import run_workload_to_results

    return run_workload_to_results(named, events_frame(spark, events), schema=schema, session=spark)


def test_a_mixed_workload_gives_the_local_results(spark: Any) -> None:
    """Shared trend queries, a partitioned one, per-match queries with and without keys."""
    from workload_gen import Params, schema, stream, workload

    p = Params(queries=4, events=300, windows=2)
    named = [(name, parse_query(text)) for name, text in workload(p)]
    named += [
        ("by_value", parse_query("RETURN v, COUNT(*) PATTERN T1 ; (T2)+ PARTITION BY v")),
        ("pairs", parse_query("T3 AS a ; T4 AS b FILTER a[v = 1] WITHIN 30 EVENTS")),
        ("pairs2", parse_query("T3 AS a ; T5 WITHIN 30 EVENTS")),
        ("keyed", parse_query("T1 ; T3 PARTITION BY v WITHIN 20 EVENTS")),
    ]
    events = [Event.make(k, attrs) for k, attrs in enumerate(stream(p))]
    assert _spark(spark, named, events, schema()) == run_workload(named, events, schema())


SPARK_SETTINGS = settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.slow
@SPARK_SETTINGS
@given(
    st.lists(trend_queries() | queries(), min_size=2, max_size=5) | shared_workloads(),
    streams(max_len=12),
)
def test_generated_workloads_on_spark(spark: Any, qs: list[Any], stream: list[Event]) -> None:
    named = [(f"q{i}", q) for i, q in enumerate(qs)]
    got = _spark(spark, named, stream, TEST_SCHEMA)
    want = run_workload(named, stream, TEST_SCHEMA)
    for name, _ in named:
        assert _same(got[name], want[name]), name


def test_the_public_spark_workload_gives_each_querys_collect(spark: Any) -> None:
    """acel.spark.run_workload: named query texts, one job, each as acel.spark.collect."""
    from acel.spark_backend.frames import events_frame

    import acel
    import acel.spark

    events = [Event.make(i, {"type": "ABC"[i % 3], "v": i % 4}) for i in range(40)]
    frame = events_frame(spark, events)
    workload = {
        "pairs": "A AS a ; B AS b FILTER a[v > 1] WITHIN 4 EVENTS",
        "counts": "RETURN COUNT(*) PATTERN A ; (B)+ ; C WITHIN 6 EVENTS",
    }
    got = acel.spark.run_workload(workload, frame, session=spark)
    assert set(got) == set(workload)
    for name, text in workload.items():
        want = acel.run(text, [e.as_dict() for e in events]).to_list()
        assert got[name] == want and want, name
