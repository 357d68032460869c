"""Cross-checks aimed at the data-dependent corners of the constructions.

The shared strategies rarely make two *different* renamings emit equal
events.  Here AGG outputs are named like data attributes, projections drop
``type``, and AS / AND / SAME / INC / DEC see several renamings on one
transition, so the constructions of ``papers/compiler.md`` that split
transitions on ``SameValue`` predicates (AS, AND) are exercised for real.
Formulas are built as ASTs without the checker (the oracle and the compiler
do not need it).  Plus hand-written regression tests with known answers.
"""

from __future__ import annotations

from typing import Any

from acel.acea.engine import naive
from acel.compiler import compile_formula
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiler_oracle import check_formula

from acel.lang.ast import (
    Agg,
    AggOutput,
    And,
    As,
    Atom,
    Attr,
    BagPred,
    Compare,
    Contig,
    ContigPlus,
    FilterF,
    Formula,
    Lit,
    Or,
    Plus,
    ProjectAttrs,
    ProjectVars,
    Seq,
    VarPred,
)
from acel.lang.events import Event
from acel.lang.parser import parse_formula
from acel.testing import TEST_SCHEMA, streams

VARS = ("A", "B", "p", "z")
ATTRS = ("x", "y", "type")


@st.composite
def stress_formulas(draw: Any, depth: int = 3) -> Formula:
    if depth == 0 or draw(st.integers(0, 5)) == 0:
        return Atom(draw(st.sampled_from(["A", "B"])))
    sub = stress_formulas(depth - 1)
    choice = draw(st.integers(0, 10))
    if choice == 0:
        return As(draw(sub), draw(st.sampled_from(["p", "z"])))
    if choice == 1:
        attrs = tuple(draw(st.lists(st.sampled_from(ATTRS), max_size=2, unique=True)))
        return ProjectAttrs(draw(st.sampled_from(VARS)), attrs, draw(sub))
    if choice == 2:
        keep = tuple(draw(st.lists(st.sampled_from(VARS), max_size=2, unique=True)))
        return ProjectVars(keep, draw(sub))
    if choice in (3, 4):
        outs = []
        for name in draw(st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=2, unique=True)):
            func = draw(st.sampled_from(["SUM", "MIN", "MAX", "COUNT"]))
            var = draw(st.sampled_from(VARS))
            attr = None if func == "COUNT" and draw(st.booleans()) else draw(st.sampled_from(["x", "y"]))
            outs.append(AggOutput(name, func, var, attr))
        return Agg(draw(st.sampled_from(["z", "A"])), tuple(outs), draw(sub))
    if choice == 5:
        return And(draw(sub), draw(sub))
    if choice == 6:
        kind = draw(st.sampled_from(["SAME", "INC", "DEC"]))
        filt: Any = BagPred(draw(st.sampled_from(VARS)), kind, draw(st.sampled_from(["x", "y"])))
        return FilterF(draw(sub), filt)
    if choice == 7:
        pred = Compare(draw(st.sampled_from(["<", "=", ">="])), Attr("x"), Lit(draw(st.integers(0, 3))))
        return FilterF(draw(sub), VarPred(draw(st.sampled_from(VARS)), pred))
    if choice == 8:
        op = draw(st.sampled_from([Seq, Contig, Or]))
        return op(draw(sub), draw(sub))
    return (Plus if draw(st.booleans()) else ContigPlus)(draw(stress_formulas(depth - 2)))


SMALL = TEST_SCHEMA


@settings(max_examples=100)  # lowered for CI time; thorough runs use their own profile
@given(stress_formulas(), streams(max_len=5))
def test_stress_formulas_agree_with_oracle(formula: Formula, stream: list[Event]) -> None:
    check_formula(formula, stream)


def _stream(*items: tuple[str, int | None, int | None]) -> list[Event]:
    return [Event.make(i, {"type": t, "x": x, "y": y}) for i, (t, x, y) in enumerate(items)]


def test_as_merges_equal_events_of_different_renamings() -> None:
    # PROJECT A[x] turns A-events into {x}; the AGG event {x: MAX} is equal to it
    # on one event, so p holds it once (bag union), not twice.
    f = parse_formula("(AGG z[x := MAX(A.x)](PROJECT A[x](A))) AS p")
    stream = _stream(("A", 2, 0))
    (ce,) = naive.evaluate(compile_formula(f, SMALL), stream)
    assert ce.bag("p") == (Event.make(0, {"x": 2}),)
    check_formula(f, stream)
    check_formula(f, _stream(("A", None, 1)))


def test_as_keeps_different_events_apart() -> None:
    f = parse_formula("(AGG z[x := SUM(A.x)](PROJECT A[x](A+))) AS p")
    stream = _stream(("A", 2, 0), ("A", 0, 0), ("A", 1, 0))
    for ce in naive.evaluate(compile_formula(f, SMALL), stream):
        assert len(ce.bag("p")) == len(ce.bag("A")) + 1 or ce.bag("z")[0] in ce.bag("A")
    check_formula(f, stream)


def test_and_compares_emitted_events_data_dependently() -> None:
    left = "PROJECT[z](AGG z[x := SUM(A.x)](A+))"
    right = "PROJECT[z](AGG z[x := MAX(A.x)](A+))"
    f = parse_formula(f"{left} AND {right}")
    stream = _stream(("A", 2, 0), ("A", 0, 0), ("A", 1, 0))
    got = naive.evaluate(compile_formula(f, SMALL), stream)
    # SUM = MAX exactly when at most one selected value is non-zero
    assert {(c.start, c.end) for c in got} == {(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)}
    check_formula(f, stream)


def test_bag_predicates_with_several_events_at_one_time() -> None:
    # A AS p puts the same stream event in A and p: AGG z gets two events at one time
    for kind in ("SAME", "INC", "DEC"):
        f = parse_formula(f"(AGG z[x := SUM(A.x)](A) ; A AS z) FILTER z[{kind}(x)]")
        check_formula(f, _stream(("A", 1, 0), ("A", 1, 0), ("A", 2, 0)))
        g = parse_formula(f"(A AS p ; (AGG p[x := MIN(A.x)](A))) FILTER p[{kind}(x)]")
        check_formula(g, _stream(("A", 1, 0), ("A", 1, 0), ("A", 0, 0), ("A", 3, 0)))


def test_same_with_a_null_value_twice_fails() -> None:
    # two copies of one event whose value is NULL: SAME compares NULL = NULL, unknown
    f = parse_formula("(AGG p[x := MAX(B.y)](A) AS q) FILTER q[SAME(y)]")
    check_formula(f, _stream(("A", 1, None)))
