"""Automaton size: linear in the formula except AND (a product) and filter OR (a union)."""

from __future__ import annotations

from functools import reduce

from acel.compiler import compile_formula
from acel.compiler.compile import expand
from acel.compiler.size import formula_size, is_linear, state_bound
from hypothesis import given, settings

from acel.lang.ast import And, Atom, Formula, Plus, Seq
from acel.testing import TEST_SCHEMA, formulas


@settings(max_examples=80)
@given(formulas())
def test_states_within_the_bound(formula: Formula) -> None:
    expanded = expand(formula, TEST_SCHEMA)
    automaton = compile_formula(formula, TEST_SCHEMA)
    assert automaton.num_states <= state_bound(expanded)
    if is_linear(expanded):
        assert automaton.num_states <= 2 * formula_size(expanded)


def test_sequences_and_iterations_grow_linearly() -> None:
    for n in range(1, 12):
        chain = reduce(Seq, [Atom("A")] * n)
        a = compile_formula(chain, TEST_SCHEMA)
        assert a.num_states == n + 1 and len(a.transitions) == 2 * n - 1
        nested: Formula = Atom("A")
        for _ in range(n):
            nested = Plus(nested)
        b = compile_formula(nested, TEST_SCHEMA)
        assert b.num_states == n + 2
        # the atom's step is copied between every pair of iteration states it borders
        assert len(b.transitions) == (n + 1) ** 2 + n


def test_and_is_a_product() -> None:
    left = compile_formula(reduce(Seq, [Plus(Atom("A"))] * 2), TEST_SCHEMA)
    both = compile_formula(
        And(reduce(Seq, [Plus(Atom("A"))] * 2), reduce(Seq, [Plus(Atom("A"))] * 2)), TEST_SCHEMA
    )
    assert both.num_states <= left.num_states ** 2
    assert both.num_states > left.num_states
