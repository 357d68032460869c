"""SELECT and AFTER MATCH SKIP on Spark: the engine's answers, with the planning
that keeps them exact (papers/spark.md: never sliced by time, except STRICT)."""

from __future__ import annotations

import shutil
import warnings
from typing import Any

import pytest
from acel.acea import engine

from acel.lang.parser import parse_query
from acel.testing import SPEC_STOCK_EVENTS, SPEC_STOCK_SCHEMA

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java"),
]

EXAMPLE_3_2 = (
    "(SELL AS msft ; SELL AS intel ; SELL AS amzn) "
    "FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL'] "
    "AND amzn[name = 'AMZN' AND price < 2000]"
)


@pytest.mark.parametrize(
    "select, clauses, kind",
    [
        ("SELECT NEXT", " WITHIN 5 EVENTS", "single"),
        ("SELECT LAST", " PARTITION BY type", "partition"),
        ("SELECT MAX", "", "single"),
        ("SELECT STRICT (SELL ; SELL) OR (", ") WITHIN 5 EVENTS", "slice"),
        ("", " WITHIN 7 EVENTS AFTER MATCH SKIP PAST LAST ROW", "single"),
        ("RETURN COUNT(*) SELECT LAST PATTERN", " WITHIN 7 EVENTS AFTER MATCH SKIP TO NEXT ROW",
         "single"),
    ],
)
def test_spark_runs_strategies_exactly(spark: Any, select: str, clauses: str, kind: str) -> None:
    from acel.spark_backend import plan
    from acel.spark_backend.frames import events_frame
    from acel.spark_backend.run import _collect, results_of

    query = parse_query(f"{select} {EXAMPLE_3_2}{clauses}")
    expected = engine.run(query, SPEC_STOCK_EVENTS, SPEC_STOCK_SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planned = plan(query, events_frame(spark, SPEC_STOCK_EVENTS), schema=SPEC_STOCK_SCHEMA,
                       session=spark, slice_size=2)
    assert planned.strategy.kind == kind
    assert results_of(planned, _collect(planned.frame)) == expected
    assert expected  # the example has something to keep under every clause
