"""Cross-checks of negation (spec §3.1) on generated formulas, queries and streams.

* middle negation (always present, inside ``+``, AND, OR, AGG, FILTER, nested in ψ):
  oracle == naive automaton runs == optimized engine, for complex events and for
  RETURN rows (propagation and enumeration);
* leading and trailing negation (generated at the top with WITHIN, sometimes
  under a FILTER, with PARTITION BY and SLIDE): oracle == naive automaton runs
  == optimized engine (streaming detectors on a monotone axis; complex events,
  RETURN rows by propagation and by enumeration), and the engine's exact mode
  for an ``ON`` axis that decreases.
"""

from __future__ import annotations

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_formula
from acel.reference import oracle
from hypothesis import assume, given
from hypothesis import strategies as st
from test_engine_properties import rows_close

from acel.lang.ast import Formula, Query, top_negation
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing import (
    TEST_SCHEMA,
    assert_conforms,
    cases,
    negation_formulas,
    negation_formulas_with_env,
    queries,
    streams,
    trend_queries,
)


def _oracle_evaluate(formula: Formula, stream: list[Event]) -> set:
    try:
        return oracle.evaluate(formula, stream, types=TEST_SCHEMA.type_names())
    except oracle.OracleTooLarge:
        assume(False)
        raise


def _oracle_run(query: Query, stream: list[Event]) -> list:
    try:
        return oracle.run(query, stream, TEST_SCHEMA)
    except oracle.OracleTooLarge:
        assume(False)
        raise


@given(negation_formulas(), streams())
def test_middle_negation_oracle_naive_engine(formula: Formula, stream: list[Event]) -> None:
    expected = _oracle_evaluate(formula, stream)
    automaton = compile_formula(formula, TEST_SCHEMA)
    assert naive.evaluate(automaton, stream) == expected
    assert engine.evaluate(automaton, stream) == expected


def test_middle_negation_queries_on_the_engine() -> None:
    strategy = cases(of=queries(of=negation_formulas()))
    assert assert_conforms("optimized", strategy=strategy) > 0


@given(trend_queries(of=negation_formulas_with_env()), streams())
def test_middle_negation_trend_rows_on_the_engine(query: Query, stream: list[Event]) -> None:
    expected = _oracle_run(query, stream)
    got = engine.run(query, stream, TEST_SCHEMA)
    assert rows_close(got, expected), (got, expected)  # type: ignore[arg-type]
    enumerated = engine.run(query, stream, TEST_SCHEMA, trend_mode="enumerate")
    assert rows_close(enumerated, expected), (enumerated, expected)  # type: ignore[arg-type]


@given(queries(top_negation=True), streams())
def test_top_negation_queries_oracle_naive(query: Query, stream: list[Event]) -> None:
    expected = _oracle_run(query, stream)
    assert naive.run(query, stream, TEST_SCHEMA) == expected
    assert engine.run(query, stream, TEST_SCHEMA) == expected


@given(trend_queries(top_negation=True), streams())
def test_top_negation_trend_rows_oracle_naive(query: Query, stream: list[Event]) -> None:
    expected = _oracle_run(query, stream)
    assert naive.run(query, stream, TEST_SCHEMA) == expected
    got = engine.run(query, stream, TEST_SCHEMA)
    assert rows_close(got, expected), (got, expected)  # type: ignore[arg-type]
    enumerated = engine.run(query, stream, TEST_SCHEMA, trend_mode="enumerate")
    assert rows_close(enumerated, expected), (enumerated, expected)  # type: ignore[arg-type]


def _on_axis(query: Query, stream: list[Event], increasing: bool) -> tuple[Query, list[Event]]:
    """The same query with its window ``ON x`` (x a new attribute), the stream carrying
    it: increasing with ties, or zig-zagging (the engine's exact mode)."""
    from dataclasses import replace

    from acel.lang.ast import Window

    assert query.within is not None
    size = query.within.size
    values = [k // 2 for k in range(len(stream))] if increasing else [
        (k * 5) % 7 for k in range(len(stream))
    ]
    moved = [Event.make(e.time, {**e.as_dict(), "t": v}) for e, v in zip(stream, values)]
    slide = None if query.slide is None else Window(query.slide.size, "t")
    return replace(query, within=Window(size, "t"), slide=slide), moved


@pytest.mark.slow
@given(queries(top_negation=True), streams(), st.booleans())
def test_top_negation_on_an_attribute_axis(query: Query, stream: list[Event], up: bool) -> None:
    assume(query.within is not None and top_negation(query.formula).negated)
    query, stream = _on_axis(query, stream, up)
    schema = _with_t(TEST_SCHEMA)
    assert engine.run(query, stream, schema) == _oracle_run_on(query, stream, schema)


@pytest.mark.slow
@given(trend_queries(top_negation=True), streams(), st.booleans())
def test_top_negation_rows_on_an_attribute_axis(query: Query, stream: list[Event], up: bool) -> None:
    assume(query.within is not None and top_negation(query.formula).negated)
    query, stream = _on_axis(query, stream, up)
    schema = _with_t(TEST_SCHEMA)
    expected = _oracle_run_on(query, stream, schema)
    got = engine.run(query, stream, schema)
    assert rows_close(got, expected), (got, expected)  # type: ignore[arg-type]


def _with_t(schema: Schema) -> Schema:
    return Schema.of({t: [*schema.attributes(t)[1:], "t"] for t in schema.type_names()})


def _oracle_run_on(query: Query, stream: list[Event], schema: Schema) -> list:
    try:
        return oracle.run(query, stream, schema)
    except oracle.OracleTooLarge:
        assume(False)
        raise
