"""The ACEA side: naive runs on hand-built automata, CEA → ACEA (Thm 6.1),
trimming, sizes and strongly connected components."""

from __future__ import annotations

from acel.acea.engine.naive import evaluate
from acel.acea.model.automaton import ACEA, Renaming, Transition
from acel.acea.model.expressions import Cmp, Combine, Const, Finish, Lift, Reg, TrueP
from acel.acea.model.graph import (
    iterations,
    sizes,
    strongly_connected_components,
    to_networkx,
    trim,
)
from acel.compiler import compile_formula
from acel.compiler.cea import CEA, CEATransition, cea_to_acea, evaluate_cea
from acel.reference import oracle
from hypothesis import given, settings
from hypothesis import strategies as st

from acel.lang.ast import Atom, Attr, Compare, Formula, Lit
from acel.lang.events import ComplexEvent, Event
from acel.testing import TEST_SCHEMA, formulas, streams


def ev(t: int, type_: str, x: int | None = None) -> Event:
    return Event.make(t, {"type": type_, "x": x})


def test_naive_runs_of_a_hand_built_sum_automaton() -> None:
    """A+ with a running SUM emitted at the end (Example 6.3's shape)."""
    copy = {"type#": Reg("type"), "x#": Reg("x")}
    is_a = Cmp("=", Reg("type#"), Const("A"))
    rho = Renaming.of({"type": "type#", "x": "x#"})
    out = Renaming.of({"s": "s#"})
    lift = Lift("SUM", Reg("x"))
    automaton = ACEA(
        3,
        0,
        frozenset({2}),
        (
            Transition.make(0, {**copy, "c#": lift}, is_a, {"A": [rho]}, 1),
            Transition.make(1, {**copy, "c#": Combine("SUM", Reg("c#"), lift)}, is_a, {"A": [rho]}, 1),
            Transition.make(1, {"c#": Reg("c#")}, TrueP(), {}, 1),
            Transition.make(
                1,
                {**copy, "s#": Finish("SUM", Combine("SUM", Reg("c#"), lift))},
                is_a,
                {"A": [rho], "z": [out]},
                2,
            ),
        ),
    )
    stream = [ev(0, "A", 1), ev(1, "B", 5), ev(2, "A", 2)]
    got = evaluate(automaton, stream)
    expected = {
        ComplexEvent.make(0, 2, {"A": [stream[0], stream[2]], "z": [Event.make(2, {"s": 3})]}),
    }
    assert got == expected


def test_empty_stream_and_no_finals() -> None:
    automaton = compile_formula(Atom("A"), TEST_SCHEMA)
    assert evaluate(automaton, []) == set()
    dead = ACEA(1, 0, frozenset(), ())
    assert evaluate(dead, [ev(0, "A", 1)]) == set()


# ------------------------------------------------------------- CEA → ACEA


def _example_cea() -> CEA:
    """A (marked a) then, skipping anything, an event with x > 1 (marked b)."""
    a = Compare("=", Attr("type"), Lit("A"))
    big = Compare(">", Attr("x"), Lit(1))
    return CEA(
        3,
        0,
        frozenset({2}),
        (
            CEATransition(0, a, frozenset({"a"}), 1),
            CEATransition(1, None, frozenset(), 1),
            CEATransition(1, big, frozenset({"b", "a"}), 2),
        ),
    )


def test_cea_to_acea_on_an_example() -> None:
    stream = [ev(0, "A", 0), ev(1, "B", 5), ev(2, "C", 2)]
    cea = _example_cea()
    expected = {
        ComplexEvent.make(0, 1, {"a": [stream[0], stream[1]], "b": [stream[1]]}),
        ComplexEvent.make(0, 2, {"a": [stream[0], stream[2]], "b": [stream[2]]}),
    }
    assert evaluate_cea(cea, stream) == expected
    assert evaluate(cea_to_acea(cea, TEST_SCHEMA), stream) == expected


@st.composite
def small_ceas(draw: st.DrawFn) -> CEA:
    n = draw(st.integers(1, 3))
    preds = [None, Compare("=", Attr("type"), Lit("A")), Compare(">=", Attr("x"), Lit(2))]
    transitions = tuple(
        CEATransition(
            draw(st.integers(0, n - 1)),
            draw(st.sampled_from(preds)),
            frozenset(draw(st.lists(st.sampled_from(["u", "v"]), max_size=2))),
            draw(st.integers(0, n - 1)),
        )
        for _ in range(draw(st.integers(0, 5)))
    )
    finals = frozenset(draw(st.lists(st.integers(0, n - 1), max_size=2)))
    return CEA(n, 0, finals, transitions)


@settings(max_examples=80)
@given(small_ceas(), streams(max_len=5))
def test_cea_to_acea_is_equivalent(cea: CEA, stream: list[Event]) -> None:
    """Theorem 6.1 on random CEA, initial states with incoming transitions included."""
    assert evaluate(cea_to_acea(cea, TEST_SCHEMA), stream) == evaluate_cea(cea, stream)


# ------------------------------------------------------------------ graphs


def test_trim_removes_useless_states_and_keeps_results() -> None:
    a = Cmp("=", Reg("type#"), Const("A"))
    copy = {"type#": Reg("type")}
    rho = Renaming.of({"type": "type#"})
    automaton = ACEA(
        5,
        0,
        frozenset({1}),
        (
            Transition.make(0, copy, a, {"A": [rho]}, 1),
            Transition.make(0, copy, a, {"A": [rho]}, 2),  # 2 cannot reach F
            Transition.make(3, copy, a, {"A": [rho]}, 1),  # 3 is unreachable
        ),
    )
    trimmed = trim(automaton)
    assert trimmed.num_states == 2 and len(trimmed.transitions) == 1
    stream = [ev(0, "A"), ev(1, "B"), ev(2, "A")]
    assert evaluate(trimmed, stream) == evaluate(automaton, stream)
    empty = trim(ACEA(2, 0, frozenset(), (Transition.make(0, copy, a, {}, 1),)))
    assert (empty.num_states, empty.transitions, empty.finals) == (1, (), frozenset())


@settings(max_examples=60)
@given(formulas(max_depth=3))
def test_compiled_automata_are_trim(formula: Formula) -> None:
    automaton = compile_formula(formula, TEST_SCHEMA)
    assert trim(automaton) == automaton
    graph = to_networkx(automaton)
    assert graph.number_of_nodes() == automaton.num_states
    assert graph.number_of_edges() == len(automaton.transitions)
    # the normal form of papers/compiler.md: q0 has no incoming edge, finals are sinks
    assert all(t.target != automaton.initial for t in automaton.transitions)
    assert all(t.source not in automaton.finals for t in automaton.transitions)


def test_sizes_and_components_of_plus() -> None:
    from acel.lang.parser import parse_formula

    automaton = compile_formula(parse_formula("A ; (B AS p)+ ; C"), TEST_SCHEMA)
    size = sizes(automaton)
    assert size["states"] == automaton.num_states
    loops = iterations(automaton)
    assert loops, "the + and ; skip loops form cycles"
    assert sum(len(c) for c in strongly_connected_components(automaton)) == automaton.num_states
    single = compile_formula(Atom("A"), TEST_SCHEMA)
    assert iterations(single) == []
    assert sizes(single) == {"states": 2, "transitions": 1, "registers": 4, "loops": 0}


def test_oracle_on_cea_example_formula() -> None:
    """The CEA of _example_cea has a formula too: check both agree with the oracle."""
    from acel.lang.parser import parse_formula

    f = parse_formula("PROJECT[a, b]((A AS a) ; ((A OR B OR C) AS a AS b) FILTER b[x > 1])")
    stream = [ev(0, "A", 0), ev(1, "B", 5), ev(2, "C", 2), ev(3, "A", 3)]
    expected = oracle.evaluate(f, stream, types=TEST_SCHEMA.type_names())
    assert evaluate_cea(_example_cea(), stream) == expected
