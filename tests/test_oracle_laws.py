"""Algebraic laws of ACEL checked on the oracle (Hypothesis).

Each law is stated on generated well-formed formulas (``strategies.formulas``)
and short streams (``strategies.streams``).  Some laws hold by the oracle's
construction (OR commutative); the others (``;`` associative, FILTER
identities, iteration laws, projections, AGG) relate different code paths and
are real checks of the transcription.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from acel.reference.oracle import OracleTooLarge, evaluate
from hypothesis import assume, given
from hypothesis import strategies as st

from acel.lang.ast import (
    Agg,
    AggOutput,
    And,
    As,
    Contig,
    ContigPlus,
    Filter,
    FilterAnd,
    FilterF,
    FilterOr,
    Formula,
    Next,
    Or,
    Plus,
    ProjectAttrs,
    ProjectVars,
    Seq,
    VarPred,
)
from acel.lang.events import ComplexEvent, Event
from acel.testing import TEST_SCHEMA, formulas, formulas_with_env, streams

TYPES = TEST_SCHEMA.type_names()
HAS_MACROS = importlib.util.find_spec("acel.lang.macros") is not None
SMALL = formulas(max_depth=3)


def _mentions_next(node: object) -> bool:
    if isinstance(node, Next):
        return True
    if isinstance(node, tuple):
        return any(_mentions_next(x) for x in node)
    fields: dict[str, object] = getattr(node, "__dataclass_fields__", {})
    return any(_mentions_next(getattr(node, f)) for f in fields)


def sem(formula: Formula, stream: Sequence[Event]) -> set[ComplexEvent]:
    """``⟦formula⟧(stream)`` on the oracle; oversized cases are discarded, not failed."""
    assume(HAS_MACROS or not _mentions_next(formula))
    try:
        return evaluate(formula, stream, types=TYPES, max_complex_events=20_000)
    except OracleTooLarge:
        assume(False)
        raise  # unreachable


def _filters(env_formula: tuple[Formula, dict[str, frozenset[str]]]) -> st.SearchStrategy[Filter]:
    """Unary filters on the formula's variables (comparisons of an attribute with 0..3)."""
    _, env = env_formula
    from acel.lang.ast import Attr, Compare, Lit

    choices = []
    for var, attrs in sorted(env.items()):
        for attr in sorted(attrs - {"type"}) or ["x"]:
            choices.append((var, attr))
    choices = choices or [("A", "x")]  # a variable the formula leaves empty: the filter passes
    return st.builds(
        lambda va, op, v: VarPred(va[0], Compare(op, Attr(va[1]), Lit(v))),
        st.sampled_from(choices),
        st.sampled_from(["=", "!=", "<", ">="]),
        st.integers(0, 3),
    )


FormulaEnv = tuple[Formula, dict[str, frozenset[str]]]


@given(formulas(), streams())
def test_laws_of_one_formula(f: Formula, s: list[Event]) -> None:
    """OR and AND idempotent, AS idempotent, intervals hold their events."""
    phi = sem(f, s)
    assert sem(Or(f, f), s) == phi, "φ OR φ = φ"
    assert sem(And(f, f), s) == phi, "φ AND φ = φ"
    for var in ("p", "A", "z"):
        assert sem(As(As(f, var), var), s) == sem(As(f, var), s), "(φ AS X) AS X = φ AS X"
    for ce in phi:
        assert 0 <= ce.start <= ce.end < len(s)
        for _, bag in ce.vars:
            for e in bag:
                assert ce.start <= e.time <= ce.end, "every interval contains its events"
                if e.type is not None:  # typed events are stream events (or their projections)
                    original = dict(s[e.time].attrs)
                    assert all(original.get(k) == v for k, v in e.attrs)


@given(formulas(), streams(max_len=6))
def test_iteration_laws(f: Formula, s: list[Event]) -> None:
    """φ ⊆ φ+, (φ+)+ = φ+, φ:+ ⊆ φ+ and the defining fixpoint equations."""
    phi, plus, cplus = sem(f, s), sem(Plus(f), s), sem(ContigPlus(f), s)
    assert phi <= plus, "φ ⊆ φ+"
    assert cplus <= plus, "φ:+ ⊆ φ+"
    assert phi <= cplus, "φ ⊆ φ:+"
    assert sem(Plus(Plus(f)), s) == plus, "(φ+)+ = φ+"
    assert sem(Or(f, Seq(f, Plus(f))), s) == plus, "φ+ = φ OR (φ ; φ+)"
    assert sem(Or(f, Contig(f, ContigPlus(f))), s) == cplus, "φ:+ = φ OR (φ : φ:+)"


@given(SMALL, SMALL, streams())
def test_laws_of_two_formulas(f: Formula, g: Formula, s: list[Event]) -> None:
    """OR and AND commutative, AND below both sides, φ : ψ ⊆ φ ; ψ."""
    assert sem(Or(f, g), s) == sem(Or(g, f), s), "OR commutative"
    both = sem(And(f, g), s)
    assert both == sem(And(g, f), s), "AND commutative"
    assert both <= sem(f, s) and both <= sem(g, s), "φ AND ψ ⊆ φ, ψ"
    assert sem(Contig(f, g), s) <= sem(Seq(f, g), s), "φ : ψ ⊆ φ ; ψ"


@given(SMALL, SMALL, SMALL, streams(max_len=6))
def test_laws_of_three_formulas(f: Formula, g: Formula, h: Formula, s: list[Event]) -> None:
    """OR, ; and : associative; ; distributes over OR on both sides."""
    assert sem(Or(Or(f, g), h), s) == sem(Or(f, Or(g, h)), s), "OR associative"
    assert sem(Seq(Seq(f, g), h), s) == sem(Seq(f, Seq(g, h)), s), "; associative"
    assert sem(Contig(Contig(f, g), h), s) == sem(Contig(f, Contig(g, h)), s), ": associative"
    assert sem(Seq(Or(f, g), h), s) == sem(Or(Seq(f, h), Seq(g, h)), s), "(φ OR ψ) ; χ"
    assert sem(Seq(h, Or(f, g)), s) == sem(Or(Seq(h, f), Seq(h, g)), s), "χ ; (φ OR ψ)"


@given(
    formulas_with_env().flatmap(lambda fe: st.tuples(st.just(fe[0]), _filters(fe), _filters(fe))),
    streams(),
)
def test_filter_laws(case: tuple[Formula, Filter, Filter], s: list[Event]) -> None:
    """FILTER (a AND b) = two FILTERs (either order); FILTER (a OR b) = OR of FILTERs."""
    f, a, b = case
    both = sem(FilterF(f, FilterAnd(a, b)), s)
    assert both == sem(FilterF(FilterF(f, a), b), s), "FILTER AND = FILTER FILTER"
    assert both == sem(FilterF(FilterF(f, b), a), s), "FILTERs commute"
    either = sem(FilterF(f, FilterOr(a, b)), s)
    assert either == sem(Or(FilterF(f, a), FilterF(f, b)), s), "FILTER OR = OR of FILTERs"
    assert either <= sem(f, s), "FILTER only removes"


@given(formulas_with_env(), streams())
def test_projection_and_agg_laws(fe: FormulaEnv, s: list[Event]) -> None:
    """PROJECT idempotent and keeping intervals; AGG changes only its own variable."""
    f, env = fe
    phi = sem(f, s)
    keep = tuple(sorted(env))[:2]
    once = sem(ProjectVars(keep, f), s)
    assert sem(ProjectVars(keep, ProjectVars(keep, f)), s) == once, "PROJECT[L] idempotent"
    assert {(c.start, c.end) for c in once} == {(c.start, c.end) for c in phi}, "intervals kept"

    var = sorted(env)[0] if env else "A"
    attrs = tuple(sorted(env.get(var, {"x"})))[:2]
    once = sem(ProjectAttrs(var, attrs, f), s)
    assert sem(ProjectAttrs(var, attrs, ProjectAttrs(var, attrs, f)), s) == once, (
        "PROJECT X[a] idempotent"
    )

    count = Agg("fresh_z", (AggOutput("n", "COUNT", var, None),), f)
    everything = tuple(sorted(env))
    assert sem(ProjectVars(everything, count), s) == sem(ProjectVars(everything, f), s), (
        "PROJECT[L](AGG z(φ)) = PROJECT[L](φ) for z ∉ L"
    )
    for ce in sem(count, s):
        (created,) = ce.bag("fresh_z")
        assert created.time == ce.end and created.type is None
        assert created.get("n") == len(ce.bag(var))
