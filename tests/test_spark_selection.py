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


@pytest.mark.parametrize(
    "text, rows, windows",
    [
        # spec §6: every integer k, negative too, whose window holds an event
        ("RETURN COUNT(*) PATTERN A WITHIN 3 EVENTS SLIDE 2 EVENTS", [{"type": "A", "v": 1, "ts": 0}],
         [((-2, 1), 1), ((0, 3), 1)]),
        ("RETURN COUNT(*) PATTERN A WITHIN 3 ON ts SLIDE 2 ON ts", [{"type": "A", "v": 1, "ts": 0}],
         [((-2, 1), 1), ((0, 3), 1)]),
        ("RETURN v, COUNT(*) PATTERN A PARTITION BY v WITHIN 3 EVENTS SLIDE 2 EVENTS",
         [{"type": "A", "v": 1, "ts": 0}], [((-2, 1), 1), ((0, 3), 1)]),
        # spec §6.2 per window, §6.3 in start order
        ("RETURN COUNT(*) SELECT NEXT PATTERN A ; B WITHIN 3 EVENTS SLIDE 1 EVENTS",
         [{"type": t, "v": 1, "ts": i} for i, t in enumerate("AABB")],
         [((-2, 1), 0), ((-1, 2), 0), ((0, 3), 1), ((1, 4), 2), ((2, 5), 0), ((3, 6), 0)]),
    ],
)
def test_spark_windows_before_zero_and_per_window_choice(
    spark: Any, text: str, rows: list[dict[str, Any]], windows: list[Any]
) -> None:
    from acel.spark_backend import plan
    from acel.spark_backend.frames import events_frame
    from acel.spark_backend.run import _collect, results_of

    from acel.lang.events import Event
    from acel.lang.schema import Schema

    schema = Schema.of({"A": ["v", "ts"], "B": ["v", "ts"]})
    events = [Event.make(i, row) for i, row in enumerate(rows)]
    query = parse_query(text)
    expected = engine.run(query, events, schema)
    assert [(r.window, r.value("COUNT(*)")) for r in expected] == windows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planned = plan(query, events_frame(spark, events), schema=schema, session=spark)
    assert results_of(planned, _collect(planned.frame)) == expected
