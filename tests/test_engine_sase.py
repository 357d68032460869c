"""The optimized engine against the SASE+ baseline (seed 002, spec §8).

Generated SASE+ queries of the translatable fragment (the SASE engineer's
strategies): the engine on the ACEL translation gives the baseline's matches,
and on ACEL RETURN queries of the fragment (PARTITION BY, WITHIN, SLIDE, gaps
between windows included) the two-step baseline's rows.
"""

from __future__ import annotations

import pytest
from acel.acea import engine
from acel.reference.sase import parse_sase, run_sase, translate, two_step_trend
from hypothesis import given
from test_engine_properties import rows_close
from test_sase_properties import sase_texts, trend_queries_of_the_fragment

from acel.lang.ast import Query
from acel.lang.events import Event
from acel.testing import TEST_SCHEMA, streams


@pytest.mark.slow
@given(sase_texts(with_return=False), streams(TEST_SCHEMA, max_len=7))
def test_engine_equals_sase_matches(text: str, stream: list[Event]) -> None:
    query = parse_sase(text)
    assert engine.run(translate(query), stream, TEST_SCHEMA) == run_sase(query, stream)


@given(trend_queries_of_the_fragment(), streams(TEST_SCHEMA, max_len=7))
def test_engine_trends_equal_two_step_baseline(query: Query, stream: list[Event]) -> None:
    got = engine.run(query, stream, TEST_SCHEMA)
    want = two_step_trend(query, stream, TEST_SCHEMA)
    assert rows_close(got, want), (got, want)  # type: ignore[arg-type]
