"""Idempotent forms are normalised before compiling (issue 24 §8–9, ``compiler/rewrite.py``).

Each rule has its own fixtures (what it rewrites, what it leaves alone) and a
Hypothesis property: for generated formulas ``φ`` (AS, FILTER, AGG inside) the
oracle gives the same complex events for the rule's two sides.  Then the two
reproductions of the issue: twenty-five ``+`` and an ``AND`` of ``AND``s.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from acel.acea import engine
from acel.compiler import compile_formula
from acel.compiler.rewrite import (
    RULES,
    contig_plus_of_iteration,
    normalise,
    plus_of_iteration,
    same_operands,
)
from acel.reference import oracle
from hypothesis import given

from acel.lang.ast import And, ContigPlus, Formula, Or, Plus
from acel.lang.events import Event
from acel.lang.parser import parse_formula, parse_query
from acel.lang.printer import format_formula
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, formulas, streams


@pytest.mark.parametrize(
    ("rule", "before", "after"),
    [
        (plus_of_iteration, "(A+)+", "A+"),
        (plus_of_iteration, "(A:+)+", "A+"),
        (plus_of_iteration, "((A AS x ; B) FILTER x[v > 1])+", "((A AS x ; B) FILTER x[v > 1])+"),
        (plus_of_iteration, "A+", "A+"),
        (contig_plus_of_iteration, "(A:+):+", "A:+"),
        (contig_plus_of_iteration, "(A+):+", "A+"),
        (contig_plus_of_iteration, "(A ; B):+", "(A ; B):+"),
        (same_operands, "(A AS x ; B) AND (A AS x ; B)", "A AS x ; B"),
        (same_operands, "A+ OR A+", "A+"),
        (same_operands, "A AS x AND A AS y", "A AS x AND A AS y"),
        (same_operands, "A ; B", "A ; B"),
    ],
)
def test_each_rule_rewrites_its_form_only(rule: Callable[[Formula], Formula], before: str, after: str) -> None:
    assert rule(parse_formula(before)) == parse_formula(after)
    assert rule in RULES


def test_normalise_collapses_nested_forms_bottom_up() -> None:
    assert format_formula(normalise(parse_formula("B" + "+" * 25))) == "B+"
    assert format_formula(normalise(parse_formula("((B:+)+):+"))) == "B+"
    q = "(((NEXT(B))+ AND (NEXT(B))+) AND ((NEXT(B))+ AND (NEXT(B))+))"
    assert format_formula(normalise(parse_formula(q))) == "NEXT(B)+"
    unchanged = parse_formula("(A ; B)+ : C AND D")
    assert normalise(unchanged) is unchanged


def _same_on_oracle(left: Formula, right: Formula, stream: list[Event]) -> None:
    types = TEST_SCHEMA.type_names()
    try:
        expected = oracle.evaluate(left, stream, types=types)
        got = oracle.evaluate(right, stream, types=types)
    except oracle.OracleTooLarge:
        return
    assert got == expected


@given(formulas(), streams())
def test_plus_of_plus_is_plus_on_the_oracle(phi: Formula, stream: list[Event]) -> None:
    _same_on_oracle(Plus(Plus(phi)), Plus(phi), stream)


@given(formulas(), streams())
def test_plus_of_contig_plus_is_plus_on_the_oracle(phi: Formula, stream: list[Event]) -> None:
    _same_on_oracle(Plus(ContigPlus(phi)), Plus(phi), stream)


@given(formulas(), streams())
def test_contig_plus_of_contig_plus_is_contig_plus_on_the_oracle(phi: Formula, stream: list[Event]) -> None:
    _same_on_oracle(ContigPlus(ContigPlus(phi)), ContigPlus(phi), stream)


@given(formulas(), streams())
def test_contig_plus_of_plus_is_plus_on_the_oracle(phi: Formula, stream: list[Event]) -> None:
    _same_on_oracle(ContigPlus(Plus(phi)), Plus(phi), stream)


@given(formulas(), streams())
def test_and_and_or_of_the_same_operand_are_the_operand_on_the_oracle(
    phi: Formula, stream: list[Event]
) -> None:
    _same_on_oracle(And(phi, phi), phi, stream)
    _same_on_oracle(Or(phi, phi), phi, stream)


@given(formulas(), streams())
def test_normalised_formulas_mean_the_same_on_the_oracle(phi: Formula, stream: list[Event]) -> None:
    _same_on_oracle(phi, normalise(phi), stream)


SCHEMA = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"]})


def test_twenty_five_plus_compile_to_the_automaton_of_one() -> None:
    """Issue 24 §8: ``NEXT(A) ; B`` with 25 ``+`` took 36 s on 8 events."""
    many = compile_formula(parse_formula("NEXT(A) ; B" + "+" * 25), SCHEMA)
    one = compile_formula(parse_formula("NEXT(A) ; B+"), SCHEMA)
    assert many == one
    stream = [Event.make(i, {"type": t, "v": i}) for i, t in enumerate("ABABBCAB")]
    query = parse_query("NEXT(A) ; B" + "+" * 25)
    assert engine.run(query, stream, SCHEMA) == engine.run(parse_query("NEXT(A) ; B+"), stream, SCHEMA)


def test_an_and_of_ands_runs_on_the_optimized_engine() -> None:
    """Issue 24 §9: the optimized engine hung (the oracle answers at once)."""
    query = parse_query("(((NEXT(B))+ AND (NEXT(B))+) AND ((NEXT(B))+ AND (NEXT(B))+))")
    stream = [Event.make(0, {"type": "A", "v": 3}), Event.make(1, {"type": "A", "v": 0}),
              Event.make(2, {"type": "B", "v": 1})]
    got = engine.run(query, stream, SCHEMA)
    assert got == oracle.run(query, stream, SCHEMA)
    assert [(m.event.start, m.event.end) for m in got] == [(0, 2), (1, 2), (2, 2)]


def test_the_ambiguity_test_of_an_and_of_ands_ends_without_the_rewrite() -> None:
    """Issue 24 §9, where the engine hung: the self-product of the ambiguity test paired
    every two of the 1,315 transitions per product state; only transitions of the same
    emission signature may pair now (the rewrite aside, this must answer)."""
    from acel.acea.model.ambiguity import is_unambiguous
    from acel.compiler.compile import build, expand
    from acel.compiler.context import Context

    formula = parse_formula("(((NEXT(B))+ AND (NEXT(B))+) AND ((NEXT(B))+ AND (NEXT(B))+))")
    automaton = build(Context(SCHEMA), expand(formula, SCHEMA)).to_acea()
    assert len(automaton.transitions) > 1000
    assert is_unambiguous(automaton) is False
    assert compile_formula(formula, SCHEMA) == compile_formula(parse_formula("NEXT(B)+"), SCHEMA)
