"""Middle negation compiled to ACEA (spec §3.1, papers/compiler.md "Negation"):
the gap-register construction, its semantics in naive runs, its closures in the
optimized engine (enumeration and RETURN propagation), and every other consumer
of register expressions (rendering, simplification, sizes, indexes, ambiguity).
Leading/trailing negation runs on the oracle and naive automata only."""

from __future__ import annotations

import shutil
from collections.abc import Sequence

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.acea.engine.closures import compile_automaton, gap_clear, gap_stepper
from acel.acea.engine.indexed import plan_indexes, range_shape
from acel.acea.model.ambiguity import is_unambiguous
from acel.acea.model.automaton import ACEA, Transition
from acel.acea.model.expressions import Const, GapClear, GapStep, Reg, names_in_expr, names_in_pred
from acel.acea.model.render import format_rexpr, format_rpred, render, to_dot, transition_label
from acel.acea.model.simplify import simplify
from acel.compiler import compile_formula, compile_query
from acel.compiler.size import formula_size, negated_state_bound, state_bound
from acel.reference import oracle

from acel.lang.ast import SeqNot
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.lang.parser import parse_formula, parse_query
from acel.testing import TEST_SCHEMA


def stream(text: str) -> list[Event]:
    """``"a b c"`` → events of types A, B, C at positions 0.., with ``x`` = position mod 4."""
    out = []
    for k, t in enumerate(text.split()):
        attrs: dict[str, object] = {"type": t.upper(), "x": k % 4, "k": k % 2}
        if t.upper() != "C":
            attrs["y"] = (k * 3) % 4
        out.append(Event.make(k, attrs))  # type: ignore[arg-type]
    return out


def oracle_set(text: str, events: Sequence[Event]) -> set:
    return oracle.evaluate(parse_formula(text), events, types=TEST_SCHEMA.type_names())


def gap_loops(automaton: ACEA) -> list[Transition]:
    return [t for t in automaton.transitions if any(isinstance(e, GapStep) for _, e in t.assignment)]


# ----------------------------------------------------------- the construction


def test_construction_replaces_the_skip_loop_by_a_gap_loop() -> None:
    plain = compile_formula(parse_formula("A ; C"), TEST_SCHEMA)
    automaton = compile_formula(parse_formula("A ; NOT B ; C"), TEST_SCHEMA)
    assert automaton.num_states == plain.num_states == 3
    assert len(automaton.transitions) == len(plain.transitions)
    (loop,) = gap_loops(automaton)
    assert loop.source == loop.target and not loop.output
    ((register, step),) = loop.assignment
    assert isinstance(step, GapStep) and step.operand == Reg(register)
    assert loop.predicate == GapClear(step.automaton, Reg(register))
    assert step.label == "B"
    # ψ's automaton: one B step, outputs dropped
    psi = step.automaton
    assert psi.num_states == 2 and all(not t.output for t in psi.transitions)
    # the way into the gap empties the register
    (entry,) = [t for t in automaton.transitions if t.target == loop.source and t is not loop]
    assert dict(entry.assignment)[register] == Const(frozenset())


def test_several_nots_share_one_union_automaton() -> None:
    automaton = compile_formula(parse_formula("A ; NOT B ; NOT (C ; C) ; A"), TEST_SCHEMA)
    (loop,) = gap_loops(automaton)
    step = dict(loop.assignment)
    (expr,) = step.values()
    assert isinstance(expr, GapStep)
    assert expr.label == "B, C ; C"
    formula = parse_formula("A ; NOT B ; NOT (C ; C) ; A")
    assert isinstance(formula, SeqNot)
    assert expr.automaton.num_states <= negated_state_bound(formula) == 2 + 4 + 1


def test_size_bound_counts_the_gap_state_once() -> None:
    formula = parse_formula("(A+ ; NOT (C ; NOT B ; C) ; B)+")
    automaton = compile_formula(formula, TEST_SCHEMA)
    assert automaton.num_states <= state_bound(formula) <= 2 * formula_size(formula)


def test_names_read_by_the_gap_nodes() -> None:
    automaton = compile_formula(parse_formula("A ; NOT (B FILTER B[x > 1]) ; C"), TEST_SCHEMA)
    (loop,) = gap_loops(automaton)
    ((register, step),) = loop.assignment
    assert names_in_expr(step) == {register, "type", "x", "y", "k"}
    assert names_in_pred(loop.predicate) == {register}


# ---------------------------------------------------- semantics (naive runs)

STREAM = stream("a b c a c b a b c c a c")

FORMULAS = [
    "A ; NOT B ; C",
    "A ; NOT (B FILTER B[x > 1]) ; C",
    "A ; NOT (B ; A) ; C",
    "A ; NOT B+ ; C",
    "A ; NOT B ; NOT C ; A",
    "A ; NOT A ; A",
    "A ; NOT (B ; NOT A ; C) ; C",
    "(A ; NOT C ; B)+",
    "(A+ ; NOT (C ; NOT B ; C) ; B)+",
    "(A ; NOT B ; C) AND (A ; C)",
    "(A ; NOT B ; C) OR (B ; NOT A ; C)",
    "(A AS p ; NOT B ; (C AS p)+) FILTER p[INC(x)]",
    "AGG z[n := COUNT(A), s := SUM(A.x)](A+ ; NOT B ; C)",
    "AGG z[m := MAX(p.x)]((A AS p)+ ; NOT (B FILTER B[y = 0]) ; C) FILTER z[m > 1]",
    "A : C ; NOT B ; A",
    "A ; NOT NEXT(B) ; C",
    "PROJECT[C](A ; NOT B ; C)",
]


@pytest.mark.parametrize("text", FORMULAS)
def test_naive_runs_and_the_engine_equal_the_oracle(text: str) -> None:
    automaton = compile_formula(parse_formula(text), TEST_SCHEMA)
    expected = oracle_set(text, STREAM)
    assert naive.evaluate(automaton, STREAM) == expected
    assert engine.evaluate(automaton, STREAM) == expected
    assert engine.evaluate(simplify(automaton), STREAM) == expected


def test_the_negation_changes_something() -> None:
    """The examples above are not vacuous: ψ removes matches ``;`` would keep.

    On a0 b1 c2 a3 c4 b5 a6 b7 c8 c9 a10 c11 (by hand): ``A ; C`` has 5+4+3+1
    pairs; with no B between, only (a3, c4) and (a10, c11); with no B-then-A
    between (N = (1,3) (1,6) (1,10) (5,6) (5,10) (7,10)), (a0, c2) (a3, c4)
    (a6, c8) (a6, c9) (a10, c11)."""
    assert oracle_set("A ; NOT B ; C", STREAM) < oracle_set("A ; C", STREAM)
    spans = {
        text: sorted((ce.start, ce.end) for ce in oracle_set(text, STREAM))
        for text in ("A ; C", "A ; NOT B ; C", "A ; NOT (B ; A) ; C")
    }
    assert len(spans["A ; C"]) == 13
    assert spans["A ; NOT B ; C"] == [(3, 4), (10, 11)]
    assert spans["A ; NOT (B ; A) ; C"] == [(0, 2), (3, 4), (6, 8), (6, 9), (10, 11)]


def test_agg_registers_cross_the_gap() -> None:
    """``AGG`` accumulators are kept by the gap loop like by a skip loop."""
    text = "AGG z[s := SUM(A.x), n := COUNT(C)](A+ ; NOT B ; C+)"
    events = stream("a a c c b a c")
    got = naive.evaluate(compile_formula(parse_formula(text), TEST_SCHEMA), events)
    assert got == oracle_set(text, events)
    rows = {
        (tuple(e.time for e in ce.bag("A")), tuple(e.time for e in ce.bag("C"))): (
            ce.bag("z")[0].get("s"),
            ce.bag("z")[0].get("n"),
        )
        for ce in got
    }
    # a0 a1 c2 c3 b4 a5 c6; x = position mod 4
    assert rows[((0, 1), (2, 3))] == (1, 2)
    assert rows[((0, 1, 5), (6,))] == (2, 1)
    assert rows[((0,), (2, 3, 6))] == (0, 3)  # b4 is inside C+, not in the gap
    assert ((0,), (6,)) not in rows  # b4 lies in the gap


def test_step_configurations_follow_psi() -> None:
    automaton = compile_formula(parse_formula("A ; NOT (B ; C) ; A"), TEST_SCHEMA)
    (loop,) = gap_loops(automaton)
    ((register, step),) = loop.assignment
    assert isinstance(step, GapStep)
    psi = step.automaton
    b, c = stream("b c")
    after_b = psi.step_configurations(frozenset(), dict(b.attrs, **{"@time": 0}).get)
    assert after_b and not psi.accepting(after_b)
    after_c = psi.step_configurations(after_b, dict(c.attrs, **{"@time": 1}).get)
    assert psi.accepting(after_c)
    # the compiled stepper agrees on acceptance, and memoises per event
    step_fn, clear = gap_stepper(psi), gap_clear(psi.finals)
    b_attrs, c_attrs = dict(b.attrs), dict(c.attrs)
    s1 = step_fn(frozenset(), b_attrs, 0)
    assert step_fn(frozenset(), b_attrs, 0) is s1
    assert clear(s1) and not clear(step_fn(s1, c_attrs, 1))
    assert clear(step_fn(s1, dict(b.attrs), 1))  # another event at the same time: no stale memo


# ------------------------------------------------ the optimized engine, queries


@pytest.mark.parametrize(
    "text",
    [
        "RETURN COUNT(*), SUM(A.x), MAX(C.x) PATTERN A+ ; NOT B ; C",
        "RETURN COUNT(*), COUNT(A) PATTERN (A ; NOT (B ; A) ; C)+ PARTITION BY k",
        "RETURN COUNT(*), AVG(p.x) PATTERN ((A AS p)+ FILTER p[DEC(x)]) ; NOT B ; C WITHIN 6 EVENTS",
        "RETURN COUNT(*) PATTERN A ; NOT B ; C+ WITHIN 8 EVENTS SLIDE 3 EVENTS",
    ],
)
def test_engine_trend_rows_equal_the_oracle(text: str) -> None:
    query = parse_query(text)
    events = stream("a a b a c a c b c a c c")
    want = oracle.run(query, events, TEST_SCHEMA)
    assert engine.run(query, events, TEST_SCHEMA) == want
    assert engine.run(query, events, TEST_SCHEMA, trend_mode="enumerate") == want
    assert any(isinstance(r, TrendRow) and r.value("COUNT(*)") for r in want)


def test_engine_propagates_counts_through_gaps() -> None:
    """The gap loop is deterministic, so the automaton stays unambiguous and RETURN
    is computed by propagation (no complex event is built)."""
    query = parse_query("RETURN COUNT(*), SUM(A.x) PATTERN A+ ; NOT B ; C")
    automaton, _ = engine.compiled_for(query.formula, TEST_SCHEMA)
    assert is_unambiguous(automaton)
    assert engine.propagation_applies(query, automaton)


def test_engine_matches_equal_the_oracle_with_partitions_and_windows() -> None:
    query = parse_query("(A AS a ; NOT (B FILTER B[y > 0]) ; C AS c)+ PARTITION BY k WITHIN 9 EVENTS")
    events = stream("a b c a a c b c a c a b c c")
    want = oracle.run(query, events, TEST_SCHEMA)
    assert want and all(isinstance(m, Match) for m in want)
    assert engine.run(query, events, TEST_SCHEMA) == want == naive.run(query, events, TEST_SCHEMA)


def test_indexed_states_keep_working_next_to_a_gap() -> None:
    query = parse_query("RETURN COUNT(*), SUM(p.x) PATTERN ((A AS p)+ FILTER p[DEC(x)]) ; NOT B ; C")
    events = stream("a a a c b a a c a c")
    _, ca = engine.compiled_for(query.formula, TEST_SCHEMA)
    plans = plan_indexes(ca, engine.trend_items(query))
    gap_states = {t.source for t in gap_loops(ca.automaton)}
    assert plans and not gap_states & set(plans)
    (loop,) = gap_loops(ca.automaton)
    ((register, _),) = loop.assignment
    assert range_shape(loop, register, ca.live[loop.target]) is None
    assert engine.run(query, events, TEST_SCHEMA) == oracle.run(query, events, TEST_SCHEMA)


# --------------------------------------------------- leading and trailing


@pytest.mark.parametrize(
    "text",
    [
        "NOT B ; A+ WITHIN 4 EVENTS",
        "A+ ; NOT B WITHIN 4 EVENTS",
        "NOT (B ; C) ; A ; NOT B FILTER A[x > 0] WITHIN 3 EVENTS",
        "A ; NOT B ; C ; NOT (A FILTER A[y = 2]) WITHIN 6 EVENTS",
        "NOT B ; A PARTITION BY k WITHIN 6 EVENTS",
        "RETURN COUNT(*), SUM(A.x) PATTERN NOT B ; A+ WITHIN 5 EVENTS",
        "RETURN COUNT(*) PATTERN A+ ; NOT C WITHIN 6 EVENTS SLIDE 2 EVENTS",
        "A ; NOT B WITHIN 3 ON x",
    ],
)
def test_naive_runs_apply_leading_and_trailing_like_the_oracle(text: str) -> None:
    query = parse_query(text)
    compiled = compile_query(query, TEST_SCHEMA)
    assert compiled.leading or compiled.trailing
    want = oracle.run(query, STREAM, TEST_SCHEMA)
    assert naive.run(query, STREAM, TEST_SCHEMA) == want
    assert want  # something survives


def test_compiling_a_bare_formula_with_top_negation_is_a_user_error() -> None:
    with pytest.raises(UnsupportedQuery, match="depend on the query's window"):
        compile_formula(parse_formula("A ; NOT B"), TEST_SCHEMA)


# ------------------------------------------------------------------ diagrams


def test_diagram_shows_the_negation() -> None:
    automaton = compile_formula(parse_formula("(A+ ; NOT (C ; NOT B ; C) ; B)+"), TEST_SCHEMA)
    (loop,) = gap_loops(automaton)
    label = transition_label(loop)
    assert label.startswith("¬(C ; NOT B ; C)\nno match of C ; NOT B ; C in gap#")
    dot = to_dot(automaton)
    assert dot.count("subgraph") == 2 and "style=dashed" in dot  # ψ and, inside it, B
    assert 'label="¬(B): its runs, held in the state it joins"' in dot and "color=firebrick" in dot
    assert "step the runs of NOT C ; NOT B ; C" in dot  # the legend of the gap loop's update
    assert format_rexpr(Const(frozenset())) == "∅"
    step = dict(loop.assignment)
    assert any(format_rexpr(e).startswith("δ[C ; NOT B ; C](gap#") for e in step.values())
    assert format_rpred(loop.predicate).startswith("no match of C ; NOT B ; C in gap#")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is missing")
def test_diagram_renders_to_svg(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import xml.etree.ElementTree as ET

    automaton = compile_formula(parse_formula("A ; NOT (B ; C) ; C"), TEST_SCHEMA)
    root = ET.parse(render(automaton, tmp_path / "negation.svg")).getroot()
    svg = "{http://www.w3.org/2000/svg}"
    clusters = [g for g in root.iter(f"{svg}g") if g.get("class") == "cluster"]
    assert len(clusters) == 1
    nodes = [g for g in root.iter(f"{svg}g") if g.get("class") == "node"]
    (step,) = (e for t in gap_loops(automaton) for _, e in t.assignment)
    assert isinstance(step, GapStep)
    assert len(nodes) == automaton.num_states + step.automaton.num_states


def test_compiled_closures_reuse_one_stepper_per_negated_automaton() -> None:
    """A filter OR copies the gap loop: both copies step one compiled ψ."""
    automaton = compile_formula(
        parse_formula("(A ; NOT B ; C) FILTER A[x = 0] OR A[x = 3]"), TEST_SCHEMA
    )
    loops = gap_loops(automaton)
    steps = {e.automaton for t in loops for _, e in t.assignment if isinstance(e, GapStep)}
    assert len(loops) == 2 and len(steps) == 1
    (psi,) = steps
    assert gap_stepper(psi) is gap_stepper(psi)
    compiled = compile_automaton(automaton)
    assert len(compiled.transitions) == len(automaton.transitions)
    text = "(A ; NOT B ; C) FILTER A[x = 0] OR A[x = 3]"
    assert engine.evaluate(automaton, STREAM) == oracle_set(text, STREAM)
