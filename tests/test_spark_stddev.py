"""STDDEV on Spark: slices' partial states (count, sum, sum of squares) merge exactly (issue 26 §2)."""

from __future__ import annotations

import shutil
import warnings
from typing import Any

import pytest
from acel.acea import engine

from acel.lang.ast import ReturnAgg
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.testing import TEST_SCHEMA

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java"),
]


def test_return_stddev_merges_partial_states_across_slices(spark: Any) -> None:
    from acel.spark_backend import executor, run_to_results
    from acel.spark_backend.frames import events_frame
    from acel.spark_backend.layout import item_kind

    query = parse_query(
        "RETURN COUNT(*), STDDEV(a.x), STDDEV(b.x) PATTERN (A AS a)+ ; B AS b WITHIN 4 EVENTS"
    )
    assert query.returns is not None
    assert executor.decomposable(query.returns)  # the engine's rows carry the states
    assert item_kind(ReturnAgg("STDDEV", "a", "x"), {"x": "int"}) == "double"
    stream = [
        Event.make(i, {"type": "AB"[i % 2 if i % 5 else 0], "x": i % 4, "k": i % 2})
        for i in range(17)
    ]
    expected = engine.run(query, stream, TEST_SCHEMA)
    assert any(v not in (None, 0.0) for _, v in expected[0].values)  # type: ignore[union-attr]
    for size in (2, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = run_to_results(query, events_frame(spark, stream), schema=TEST_SCHEMA,
                                 session=spark, slice_size=size)
        assert got == expected  # exact: integer states until the finish
