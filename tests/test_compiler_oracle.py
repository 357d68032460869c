"""Naive ACEA runs of compiled formulas equal the oracle exactly (seed 004 Thm 6.2).

The property of issue 4: for generated formulas (every operator, depth ≤ 4,
nested AGG, filters over created variables, NEXT) and streams of up to 7
events, ``acel.acea.engine.naive.evaluate(compile_formula(φ))`` equals
``acel.reference.oracle.evaluate(φ)``.  Queries (PARTITION BY, WITHIN,
RETURN, SLIDE) go through both engines' ``run``.
"""

from __future__ import annotations

from collections.abc import Sequence

from acel.acea.engine import naive
from acel.compiler import compile_formula
from acel.reference import oracle
from hypothesis import given

from acel.lang.ast import Formula, Query
from acel.lang.events import Event
from acel.testing import (
    TEST_SCHEMA,
    assert_conforms,
    cases,
    formulas,
    queries,
    streams,
    trend_queries,
)


def check_formula(formula: Formula, stream: Sequence[Event]) -> None:
    try:
        expected = oracle.evaluate(formula, stream, types=TEST_SCHEMA.type_names())
    except oracle.OracleTooLarge:
        return
    automaton = compile_formula(formula, TEST_SCHEMA)
    got = naive.evaluate(automaton, stream)
    assert got == expected, (
        f"automaton only: {sorted(got - expected, key=lambda c: c.sort_key())[:3]}\n"
        f"oracle only: {sorted(expected - got, key=lambda c: c.sort_key())[:3]}"
    )


def check_query(query: Query, stream: Sequence[Event]) -> None:
    try:
        expected = oracle.run(query, stream, TEST_SCHEMA)
    except oracle.OracleTooLarge:
        return
    assert naive.run(query, stream, TEST_SCHEMA) == expected


@given(formulas(), streams())
def test_formulas_agree_with_oracle(formula: Formula, stream: list[Event]) -> None:
    check_formula(formula, stream)


def test_queries_agree_with_oracle() -> None:
    """The automaton engine through the public conformance kit, as any engine would."""
    assert assert_conforms("automaton", strategy=cases(of=queries())) > 0


def test_trend_queries_agree_with_oracle() -> None:
    assert assert_conforms("automaton", strategy=cases(of=trend_queries())) > 0
