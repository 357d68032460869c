"""sympy simplification of ACEA predicates never changes results (and does simplify)."""

from __future__ import annotations

from acel.acea.engine.naive import evaluate
from acel.acea.model.expressions import Arith, Cmp, Const, PAnd, Reg, SameValue
from acel.acea.model.simplify import contradictory, fold_expr, simplify
from acel.compiler import compile_formula
from acel.reference import oracle
from hypothesis import given, settings

from acel.lang.ast import Formula
from acel.lang.events import Event
from acel.lang.parser import parse_formula
from acel.testing import TEST_SCHEMA, formulas, streams


@settings(max_examples=50)  # a lighter echo of test_compiler_oracle
@given(formulas(max_depth=3), streams(max_len=6))
def test_simplify_keeps_results(formula: Formula, stream: list[Event]) -> None:
    automaton = compile_formula(formula, TEST_SCHEMA)
    simpler = simplify(automaton)
    assert len(simpler.transitions) <= len(automaton.transitions)
    try:
        expected = oracle.evaluate(formula, stream, types=TEST_SCHEMA.type_names())
    except oracle.OracleTooLarge:
        expected = evaluate(automaton, stream)
    assert evaluate(simpler, stream) == expected


def test_contradictions_are_dropped() -> None:
    automaton = compile_formula(parse_formula("A FILTER A[x = 1] AND A[x = 2]"), TEST_SCHEMA)
    assert len(automaton.transitions) == 1
    assert simplify(automaton).transitions == ()
    same = PAnd((Cmp("=", Reg("a#1"), Const("A")), Cmp("=", Reg("b#2"), Const("B")),
                 SameValue(Reg("a#1"), Reg("b#2"))))
    assert contradictory(same)
    # 1 and 1.0 compare equal: not a contradiction
    assert not contradictory(PAnd((Cmp("=", Reg("x#1"), Const(1)), Cmp("=", Reg("x#1"), Const(1.0)))))


def test_constants_fold() -> None:
    assert fold_expr(Arith("+", Const(2), Arith("*", Const(3), Const(4)))) == Const(14)
    assert fold_expr(Arith("+", Reg("x#1"), Arith("/", Const(1), Const(0)))) == Arith(
        "+", Reg("x#1"), Const(None)
    )
    automaton = compile_formula(parse_formula("A FILTER A[x + 1 = 2 * 3]"), TEST_SCHEMA)
    (t,) = simplify(automaton).transitions
    assert "Const(value=6)" in repr(t.predicate)
