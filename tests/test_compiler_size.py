"""Automaton size: linear in the formula except AND (a product) and filter OR (a union)."""

from __future__ import annotations

from functools import reduce

from acel.acea.model.automaton import ACEA
from acel.compiler import compile_formula
from acel.compiler.compile import build, expand
from acel.compiler.context import Context
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
        b = _constructed(nested)  # the construction itself, before rewriting
        assert b.num_states == n + 2
        # the atom's step is copied between every pair of iteration states it borders
        assert len(b.transitions) == (n + 1) ** 2 + n
        # compiling first rewrites A+…+ to A+ (compiler/rewrite.py, issue 24 §8)
        assert compile_formula(nested, TEST_SCHEMA) == compile_formula(Plus(Atom("A")), TEST_SCHEMA)


def _constructed(formula: Formula) -> ACEA:
    """The automaton the constructions build for ``formula``, idempotent forms kept."""
    return build(Context(TEST_SCHEMA), expand(formula, TEST_SCHEMA)).to_acea()


def test_and_is_a_product() -> None:
    left = _constructed(reduce(Seq, [Plus(Atom("A"))] * 2))
    both = _constructed(And(reduce(Seq, [Plus(Atom("A"))] * 2), reduce(Seq, [Plus(Atom("A"))] * 2)))
    assert both.num_states <= left.num_states ** 2
    assert both.num_states > left.num_states
