"""Every pass handles every node of its kind (issue 26 §1).

The passes are ``functools.singledispatch`` functions declared with
:func:`acel.lang.passes.declare`, which already refuses one with a missing case
when its module is imported.  The node lists come from :mod:`acel.lang.ast`
(the members of ``Formula``, ``Filter``, ``Pred`` and ``Expr``), so a node added
there is checked here without touching this file.  The second part adds a toy
binary operator the way papers/language.md ("Adding an operator") says: its
declaration, then one case per pass that names it missing.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from functools import singledispatch

import pytest
from acel.acea.engine import naive
from acel.compiler import compile as compile_module
from acel.compiler import compile_formula, size
from acel.compiler import construct as c
from acel.compiler import translate as _translate  # noqa: F401  (declares its passes)
from acel.compiler.automaton import Auto
from acel.compiler.context import Context
from acel.reference import oracle

from acel.lang import ast as A
from acel.lang import checker
from acel.lang import predicates as _predicates  # noqa: F401  (declares its passes)
from acel.lang.events import Event
from acel.lang.operators import OPERATORS, operators_of
from acel.lang.passes import PASS_MODULES, PASSES, check_complete, declare, missing_cases
from acel.lang.printer import format_formula
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v"]})
STREAM = [Event.make(i, {"type": t, "v": i}) for i, t in enumerate("ABAB")]

FORMULA_PASSES = {
    "checker.formula",
    "compiler.formula",
    "oracle.formula",
    "printer.formula",
    "size.formula_size",
    "size.is_linear",
    "size.state_bound",
}
"""The passes over formulas."""

GENERIC = {"printer.formula", "checker.formula"}
"""The passes a new binary operator needs no case in: the printer reads its declared
symbol and level, the checker merges its operands' environments (acel.lang.ast.Infix)."""


def test_every_pass_handles_every_node_of_its_kind() -> None:
    assert missing_cases() == []
    kinds = {name: kind for name, (kind, _fn) in PASSES.items()}
    assert {n for n, k in kinds.items() if k == "formula"} == FORMULA_PASSES
    assert {n for n, k in kinds.items() if k == "filter"} == {
        "checker.filter", "compiler.filter", "oracle.filter", "printer.filter",
        "size.filter_bound", "size.has_filter_or",
    }
    assert {n for n, k in kinds.items() if k == "predicate"} == {
        "checker.predicate", "predicates.eval_pred3", "printer.predicate", "translate.predicate",
    }
    assert {n for n, k in kinds.items() if k == "expression"} == {
        "checker.expression", "predicates.eval_expr", "printer.expression",
        "translate.expression",
    }
    # the node lists are the members of the AST's unions, every one a frozen dataclass
    known = (A.Atom, A.As, A.FilterF, A.Or, A.And, A.Seq, A.Contig, A.Plus, A.ContigPlus,
             A.ProjectVars, A.ProjectAttrs, A.Agg, A.Next, A.SeqNot, A.LeadingNot,
             A.TrailingNot, A.Repeat, A.Opt)  # Repeat, Opt (§3.2)
    # a new operator joins them with no edit here (issue 34: at most 6 files)
    assert len(set(known)) == 18 and set(known) <= set(A.FORMULA_TYPES)
    # 4 filters, 5 predicates, 9 expressions (the 5 terms of spec §5.1 among them)
    assert [len(A.NODE_KINDS[k]) for k in ("filter", "predicate", "expression")] == [4, 5, 9]
    for nodes in A.NODE_KINDS.values():
        for cls in nodes:
            assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]


def test_every_formula_node_declares_what_it_is() -> None:
    """Operator name (a key of OPERATORS, None for an atom), printer symbol and level."""
    for cls in A.FORMULA_TYPES:
        operator = cls.operator  # type: ignore[attr-defined]
        assert operator is None or operator in OPERATORS, cls
        if operator is not None:  # OPERATORS reads what the name stands for from the node
            assert OPERATORS[operator] and cls.syntax in OPERATORS.values(), cls  # type: ignore[attr-defined]
        assert isinstance(cls.symbol, str) and isinstance(cls.level, A.Level), cls  # type: ignore[attr-defined]
    declared = {cls.operator for cls in A.FORMULA_TYPES} | {A.BagPred.operator}  # type: ignore[attr-defined]
    declared |= {cls.operator for cls in A.RELATING_TYPES}  # type: ignore[attr-defined]
    clauses = {"PARTITION_BY", "WITHIN", "WITHIN_ON", "SLIDE", "RETURN", "SELECT", "SKIP"}
    assert declared - {None} == set(OPERATORS) - clauses
    assert (A.Seq.symbol, A.Contig.symbol, A.Plus.symbol, A.ContigPlus.symbol) == (";", ":", "+", ":+")
    assert A.Or.level < A.And.level < A.Seq.level < A.Plus.level < A.Atom.level


def test_declare_refuses_a_pass_with_a_missing_case() -> None:
    @singledispatch
    def half(node: A.Expr) -> str:
        raise TypeError(node)

    @half.register(A.Attr)
    def _half_attr(node: A.Attr) -> str:
        return node.name

    with pytest.raises(TypeError, match=r"pass toy.half has no case for the expression node\(s\) Lit, BinOp, Neg"):
        declare("toy.half", "expression", half)
    assert "toy.half" not in PASSES


# ------------------------------------------------------------------ a toy operator


def toy_operator(name: str) -> type[A.Infix]:
    """``φ1 & φ2``: both, in either order: ``(φ1 ; φ2) OR (φ2 ; φ1)``; declared only."""

    @dataclass(frozen=True)
    class AnyOrder(A.Infix):
        operator = "ANY_ORDER"
        syntax = "φ1 & φ2 (both, in either order)"
        symbol = "&"
        level = A.Level.SEQUENCE

    AnyOrder.__name__ = AnyOrder.__qualname__ = name
    return AnyOrder


def test_a_new_operator_without_cases_is_named_in_each_pass() -> None:
    toy = toy_operator("Unhandled")
    assert missing_cases([toy], kind="formula") == [
        f"{name}: Unhandled" for name in sorted(FORMULA_PASSES - GENERIC)
    ]
    # the declared form is enough for the printer and for operators_of
    formula = toy(A.Atom("A"), A.Seq(A.Atom("B"), A.Atom("A")))
    assert format_formula(formula) == "A & (B ; A)"
    assert "ANY_ORDER" in operators_of(A.Query(formula))


def test_a_new_operator_with_one_case_per_pass_runs_end_to_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    toy = toy_operator("AnyOrder")
    monkeypatch.setitem(OPERATORS, "ANY_ORDER", "φ1 & φ2 (both, in either order)")

    @oracle._sets.register(toy)
    def _sets_toy(f: A.Infix, ctx: oracle._Context) -> oracle.CESet:
        left, right = oracle._eval(f.left, ctx), oracle._eval(f.right, ctx)
        return oracle.or_sets(oracle.seq(ctx, left, right), oracle.seq(ctx, right, left))

    @compile_module._build.register(toy)
    def _build_toy(f: A.Infix, ctx: Context) -> Auto:
        def sequence(first: A.Formula, then: A.Formula) -> Auto:
            build = compile_module.build
            return c.sequence(ctx, build(ctx, first), build(ctx, then), skip=True)

        return c.union(ctx, sequence(f.left, f.right), sequence(f.right, f.left))

    @size.formula_size.register(toy)
    def _size_toy(f: A.Infix) -> int:
        return 1 + size.formula_size(f.left) + size.formula_size(f.right)

    @size.state_bound.register(toy)
    def _bound_toy(f: A.Infix) -> int:
        return 2 * (size.state_bound(f.left) + size.state_bound(f.right)) + 1

    @size.is_linear.register(toy)
    def _linear_toy(f: A.Infix) -> bool:
        return False  # each operand is compiled twice

    assert missing_cases([toy], kind="formula") == []

    left = A.As(A.Atom("A"), "x")
    right = A.FilterF(A.As(A.Atom("B"), "y"), A.VarPred("y", A.Compare(">", A.Attr("v"), A.Lit(1))))
    formula = toy(left, right)
    same = A.Or(A.Seq(left, right), A.Seq(right, left))
    assert format_formula(formula) == "A AS x & (B AS y FILTER y[v > 1])"
    assert operators_of(A.Query(formula)) == {"ANY_ORDER", "AS", "FILTER"}
    assert set(checker.formula_env(formula, SCHEMA)) == {"A", "B", "x", "y"}
    checker.check_formula(formula, SCHEMA)

    expected = oracle.evaluate(same, STREAM)
    got = oracle.evaluate(formula, STREAM)
    assert got == expected
    # only the B at 3 passes v > 1: after the A at 0 or at 2, and no A follows it
    assert sorted((ce.start, ce.end) for ce in got) == [(0, 3), (2, 3)]

    automaton = compile_formula(formula, SCHEMA)
    assert naive.evaluate(automaton, STREAM) == expected
    assert automaton.num_states <= size.state_bound(formula)
    assert size.formula_size(formula) == 1 + 2 + 3 and not size.is_linear(formula)


# ------------------------------------------------------- one run names every gap


def test_the_pass_modules_are_all_listed() -> None:
    """``declare`` imports PASS_MODULES to name every gap; every pass lives in one of them."""
    assert {fn.__module__ for _kind, fn in PASSES.values()} == set(PASS_MODULES)


def test_one_error_names_every_missing_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: a toy node without cases is named in each pass, in one error."""
    toy = toy_operator("Toy")
    check_complete()  # nothing missing yet
    monkeypatch.setitem(A.NODE_KINDS, "formula", (*A.NODE_KINDS["formula"], toy))
    with pytest.raises(TypeError) as info:
        check_complete()
    wanted = [f"{name}: Toy" for name in sorted(FORMULA_PASSES - GENERIC)]
    assert str(info.value) == f"{len(wanted)} missing pass case(s): {', '.join(wanted)}"

    @singledispatch
    def toy_pass(node: A.Formula) -> None:
        raise TypeError(node)

    for cls in A.NODE_KINDS["formula"][:-1]:
        toy_pass.register(cls)(lambda node: None)
    with pytest.raises(TypeError) as declared:
        declare("toy.pass", "formula", toy_pass)
    assert str(declared.value) == (
        "pass toy.pass has no case for the formula node(s) Toy; every missing case "
        f"({len(wanted) + 1}): toy.pass: Toy, {', '.join(wanted)}"
    )
    assert "toy.pass" not in PASSES


NEW_NODE_AT_IMPORT = """
from dataclasses import dataclass
from acel.lang import ast as A

@dataclass(frozen=True)
class Toy(A.Infix):
    operator = "TOY"
    syntax = "φ1 & φ2"
    symbol = "&"
    level = A.Level.SEQUENCE

A.NODE_KINDS["formula"] += (Toy,)
try:
    import acel.compiler.compile
except TypeError as error:
    print(error)
"""


def test_a_new_node_fails_the_first_import_naming_every_pass() -> None:
    """The real case: a node added to the AST, then any pass module imported in a fresh
    process: one error lists the gaps of every pass, also of modules not yet imported."""
    done = subprocess.run([sys.executable, "-c", NEW_NODE_AT_IMPORT], capture_output=True,
                          text=True, timeout=120, check=True)
    message = done.stdout.strip()
    assert message.startswith("pass ") and "every missing case (5)" in message, message
    for name in FORMULA_PASSES - GENERIC:
        assert f"{name}: Toy" in message


# --------------------------------------------------------- a derived operator


@dataclass(frozen=True)
class EitherOrder(A.Infix, A.Derived):
    """``φ1 & φ2`` defined by its expansion: no case in any pass."""

    operator = "ANY_ORDER"
    syntax = "φ1 & φ2 (both, in either order)"
    symbol = "&"
    level = A.Level.SEQUENCE

    def expand(self) -> A.Formula:
        return A.Or(A.Seq(self.left, self.right), A.Seq(self.right, self.left))


def test_a_derived_operator_needs_no_case_in_any_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``Derived`` operator is its node and its expansion: every pass reads that."""
    monkeypatch.setitem(OPERATORS, "ANY_ORDER", "φ1 & φ2 (both, in either order)")
    monkeypatch.setitem(A.NODE_KINDS, "formula", (*A.NODE_KINDS["formula"], EitherOrder))
    check_complete()
    left = A.As(A.Atom("A"), "x")
    right = A.FilterF(A.As(A.Atom("B"), "y"), A.VarPred("y", A.Compare(">", A.Attr("v"), A.Lit(1))))
    formula = EitherOrder(left, right)
    same = formula.expand()
    assert format_formula(formula) == "A AS x & (B AS y FILTER y[v > 1])"
    assert operators_of(A.Query(formula)) == {"ANY_ORDER", "AS", "FILTER"}
    assert set(checker.formula_env(formula, SCHEMA)) == {"A", "B", "x", "y"}
    expected = oracle.evaluate(same, STREAM)
    assert oracle.evaluate(formula, STREAM) == expected
    assert sorted((ce.start, ce.end) for ce in expected) == [(0, 3), (2, 3)]
    automaton = compile_formula(formula, SCHEMA)
    assert naive.evaluate(automaton, STREAM) == expected
    assert size.state_bound(formula) == size.state_bound(same)
    assert size.formula_size(formula) == size.formula_size(same)
    assert size.is_linear(formula) and size.state_bound(formula) <= 2 * size.formula_size(formula)


@dataclass(frozen=True)
class Hidden(A.Infix, A.Derived):
    """A derived operator whose expansion binds no variable: the checker reads the
    expansion, not the generic merge of the operands (Infix comes first in its MRO)."""

    operator = "HIDDEN"
    syntax = "φ1 && φ2"
    symbol = "&&"
    level = A.Level.SEQUENCE

    def expand(self) -> A.Formula:
        return A.ProjectVars((), A.Seq(self.left, self.right))


def test_the_generic_checker_case_expands_a_derived_operator() -> None:
    assert checker.formula_env(A.Seq(A.Atom("A"), A.Atom("B")), SCHEMA) != {}
    assert checker.formula_env(Hidden(A.Atom("A"), A.Atom("B")), SCHEMA) == {}


def test_the_strategies_draw_a_new_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    """A binary operator of the AST that the strategies do not know is drawn from the
    AST (issue 34), with operands the checker accepts."""
    from hypothesis import find, given, settings

    from acel.testing import formulas

    monkeypatch.setitem(OPERATORS, "ANY_ORDER", "φ1 & φ2 (both, in either order)")
    monkeypatch.setitem(A.NODE_KINDS, "formula", (*A.NODE_KINDS["formula"], EitherOrder))
    ops = ["ANY_ORDER", "AS", "SEQ", "FILTER"]
    found = find(formulas(SCHEMA, 3, ops), lambda f: A.contains(f, EitherOrder))
    assert A.contains(found, EitherOrder)

    @settings(max_examples=30, deadline=None)
    @given(formulas(SCHEMA, 3, ops))
    def well_formed(formula: A.Formula) -> None:
        checker.check_formula(formula, SCHEMA)

    well_formed()
