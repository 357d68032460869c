"""The oracle operator by operator: edge cases, the spec's choices, the size guards."""

from __future__ import annotations

from collections import Counter

import pytest
from acel.reference import oracle
from acel.reference.oracle import OracleTooLarge, evaluate, run
from hypothesis import given
from hypothesis import strategies as st
from oracle_support import agg, as_, atom, bag, cmp, ev, on, seq, shape, stream, times

from acel.lang.ast import (
    And,
    Attr,
    Compare,
    Contig,
    ContigPlus,
    CountStar,
    FilterF,
    Formula,
    Next,
    Or,
    Plus,
    PredNot,
    ProjectAttrs,
    ProjectVars,
    Query,
    ReturnAgg,
    Window,
)
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import AcelError
from acel.lang.events import ComplexEvent, Event
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["p", "q"], "B": ["p", "q"], "C": ["p"]})
ABC = stream(ev("A", p=1), ev("B", p=2), ev("A", p=3), ev("C", p=4), ev("B", p=5))

# ------------------------------------------------------------------ atoms, ;, :


def test_atom_is_the_events_of_its_type() -> None:
    assert evaluate(atom("A"), ABC) == {
        ComplexEvent.make(0, 0, {"A": [ABC[0]]}),
        ComplexEvent.make(2, 2, {"A": [ABC[2]]}),
    }
    assert evaluate(atom("D"), ABC) == set()


def test_empty_stream_gives_nothing() -> None:
    for formula in (
        atom("A"),
        Plus(atom("A")),
        seq(atom("A"), atom("B")),
        ProjectVars((), atom("A")),
    ):
        assert evaluate(formula, []) == set()


def test_one_event_stream() -> None:
    s = stream(ev("A", p=1))
    assert evaluate(Plus(atom("A")), s) == {ComplexEvent.make(0, 0, {"A": [s[0]]})}
    assert evaluate(seq(atom("A"), atom("A")), s) == set()
    assert evaluate(ContigPlus(atom("A")), s) == evaluate(atom("A"), s)


def test_sequence_needs_strict_order_and_takes_the_hull() -> None:
    result = evaluate(seq(atom("A"), atom("B")), ABC)
    assert sorted((ce.start, ce.end) for ce in result) == [(0, 1), (0, 4), (2, 4)]
    ce = ComplexEvent.make(0, 4, {"A": [ABC[0]], "B": [ABC[4]]})
    assert ce in result


def test_contiguous_sequence_needs_adjacent_intervals() -> None:
    result = evaluate(Contig(atom("A"), atom("B")), ABC)
    assert sorted((ce.start, ce.end) for ce in result) == [(0, 1)]
    # A : (C ; B): the right operand's interval starts at 3 = end(A) + 1
    result = evaluate(Contig(atom("A"), seq(atom("C"), atom("B"))), ABC)
    assert sorted((ce.start, ce.end) for ce in result) == [(2, 4)]


def test_plus_is_every_nonempty_subsequence() -> None:
    s = stream(*(ev("A", p=k) for k in range(4)))
    result = evaluate(Plus(atom("A")), s)
    assert len(result) == 2**4 - 1
    assert all(ce.bag("A") for ce in result)  # never an empty Kleene bag
    assert {times(ce, "A") for ce in result} == {
        tuple(k for k in range(4) if mask >> k & 1) for mask in range(1, 16)
    }


def test_contiguous_plus_is_every_run() -> None:
    s = stream(ev("A"), ev("A"), ev("B"), ev("A"))
    result = evaluate(ContigPlus(atom("A")), s)
    assert sorted(times(ce, "A") for ce in result) == [(0,), (0, 1), (1,), (3,)]


def test_plus_of_a_sequence_allows_gaps_between_iterations() -> None:
    s = stream(ev("A"), ev("B"), ev("C"), ev("A"), ev("B"))
    result = evaluate(Plus(seq(atom("A"), atom("B"))), s)
    assert sorted(shape(ce, "A") for ce in result) == [
        (0, 1, (0,)),
        (0, 4, (0,)),
        (0, 4, (0, 3)),
        (3, 4, (3,)),
    ]


def _literal_fixpoint(base: set[ComplexEvent], contiguous: bool) -> set[ComplexEvent]:
    """``X = base ∪ {C1 ∪ C2 : C1 ∈ base, C2 ∈ X, ...}`` iterated from ∅ until stable."""
    result: set[ComplexEvent] = set()
    while True:
        step = {
            c1.union(c2)
            for c1 in base
            for c2 in result
            if (c1.end + 1 == c2.start if contiguous else c1.end < c2.start)
        }
        nxt = base | step
        if nxt == result:
            return result
        result = nxt


@given(
    st.lists(st.sampled_from(["A", "B"]), max_size=6),
    st.sampled_from(
        [atom("A"), seq(atom("A"), atom("B")), Or(atom("A"), seq(atom("B"), atom("A")))]
    ),
    st.booleans(),
)
def test_semi_naive_iteration_equals_the_literal_fixpoint(
    types: list[str], formula: Formula, contiguous: bool
) -> None:
    s = stream(*(ev(t) for t in types))
    base = evaluate(formula, s)
    iterated = ContigPlus(formula) if contiguous else Plus(formula)
    assert evaluate(iterated, s) == _literal_fixpoint(base, contiguous)


# ------------------------------------------------------------------ OR, AND


def test_or_is_union_and_and_is_intersection_of_complex_events() -> None:
    a, b = atom("A"), atom("B")
    assert evaluate(Or(a, b), ABC) == evaluate(a, ABC) | evaluate(b, ABC)
    assert evaluate(And(a, b), ABC) == set()
    # AND compares whole complex events: the same interval with other variables is not enough
    assert evaluate(And(a, as_("A", "x")), ABC) == set()
    assert evaluate(And(Plus(a), seq(a, a)), ABC) == evaluate(seq(a, a), ABC)


# ------------------------------------------------------------------ AS


def test_as_copies_the_bag_union_of_all_variables() -> None:
    result = evaluate(as_(seq(atom("A"), atom("B")), "x"), ABC)
    for ce in result:
        assert ce.counter("x") == ce.counter("A") + ce.counter("B")


def test_as_uses_max_multiplicity_for_an_event_held_twice() -> None:
    # SELL and x both hold e0: AS y puts it in y once
    s = stream(ev("SELL", price=1))
    (ce,) = evaluate(as_(as_("SELL", "x"), "y"), s)
    assert ce.counter("y") == Counter({s[0]: 1})
    # renaming into an existing variable does not add copies either
    (ce,) = evaluate(as_(as_("SELL", "x"), "x"), s)
    assert ce.counter("x") == Counter({s[0]: 1})


def test_as_keeps_two_equal_created_events_twice() -> None:
    # two AGG events with equal content (same time, same values) both in z
    s = stream(ev("A", p=1))
    inner = agg("z", [("c", "COUNT", "A", None)], atom("A"))
    outer = agg("z", [("c", "COUNT", "A", None)], inner)
    (ce,) = evaluate(as_(outer, "x"), s)
    created = Event.make(0, {"c": 1})
    assert ce.counter("z") == Counter({created: 2})
    assert ce.counter("x") == Counter({created: 2, s[0]: 1})


# ------------------------------------------------------------------ FILTER


def test_filter_on_an_empty_variable_passes() -> None:
    assert evaluate(FilterF(atom("A"), on("B", cmp("p", ">", 100))), ABC) == evaluate(
        atom("A"), ABC
    )


def test_filter_checks_every_event_of_the_variable() -> None:
    result = evaluate(FilterF(Plus(atom("A")), on("A", cmp("p", ">", 1))), ABC)
    assert [times(ce, "A") for ce in result] == [(2,)]


def test_null_attribute_fails_a_comparison_and_its_negation() -> None:
    s = stream(ev("A", p=1), ev("A"))  # the second A has no p
    pos = evaluate(FilterF(atom("A"), on("A", cmp("p", ">", 0))), s)
    neg = evaluate(FilterF(atom("A"), on("A", PredNot(cmp("p", ">", 0)))), s)
    assert [ce.start for ce in pos] == [0]
    assert neg == set()


def test_bag_predicates() -> None:
    s = stream(ev("A", p=1), ev("A", p=3), ev("A", p=2), ev("A", p=3))
    inc = evaluate(FilterF(Plus(atom("A")), bag("A", "INC", "p")), s)
    dec = evaluate(FilterF(Plus(atom("A")), bag("A", "DEC", "p")), s)
    same = evaluate(FilterF(Plus(atom("A")), bag("A", "SAME", "p")), s)
    assert sorted(times(ce, "A") for ce in inc) == sorted(
        [(0,), (1,), (2,), (3,), (0, 1), (0, 2), (0, 3), (2, 3), (0, 2, 3)]
    )
    assert sorted(times(ce, "A") for ce in dec) == sorted([(0,), (1,), (2,), (3,), (1, 2)])
    assert sorted(times(ce, "A") for ce in same) == sorted([(0,), (1,), (2,), (3,), (1, 3)])


def test_bag_predicate_with_a_null_fails_when_compared() -> None:
    s = stream(ev("A", p=1), ev("A"), ev("A", p=2))
    inc = evaluate(FilterF(Plus(atom("A")), bag("A", "INC", "p")), s)
    assert sorted(times(ce, "A") for ce in inc) == [(0,), (0, 2), (1,), (2,)]


def test_bag_predicate_compares_only_events_of_different_times() -> None:
    # AGG A[...] puts an untyped event (no p) at the time of the last A:
    # the two events at equal times are not each other's successors.
    s = stream(ev("A", p=1), ev("A", p=2))
    formula = FilterF(agg("A", [("n", "COUNT", "A", None)], atom("A")), bag("A", "INC", "p"))
    assert sorted(times(ce, "A") for ce in evaluate(formula, s)) == [(0, 0), (1, 1)]


# ------------------------------------------------------------------ PROJECT


def test_project_variables_keeps_the_interval() -> None:
    result = evaluate(ProjectVars(("B",), seq(atom("A"), atom("B"))), ABC)
    assert sorted(shape(ce, "B") for ce in result) == [(0, 1, (1,)), (0, 4, (4,)), (2, 4, (4,))]
    assert all(ce.variables() == ("B",) for ce in result)
    empty = evaluate(ProjectVars((), seq(atom("A"), atom("B"))), ABC)
    assert empty == {ComplexEvent(0, 1, ()), ComplexEvent(0, 4, ()), ComplexEvent(2, 4, ())}


def test_project_attributes_keeps_time_and_only_that_variable_changes() -> None:
    s = stream(ev("A", p=1, q=2))
    (ce,) = evaluate(ProjectAttrs("x", ("p",), as_("A", "x")), s)
    assert ce.bag("x") == (Event(0, (("p", 1),)),)
    assert ce.bag("x")[0].type is None  # dropping `type` makes it untyped
    assert ce.bag("A") == (s[0],)
    (ce,) = evaluate(ProjectAttrs("A", ("type", "q", "missing"), atom("A")), s)
    assert ce.bag("A") == (Event(0, (("q", 2), ("type", "A"))),)


# ------------------------------------------------------------------ AGG


def test_agg_over_an_empty_variable_gives_identities() -> None:
    s = stream(ev("A", p=1))
    outputs = [
        ("s", "SUM", "y", "p"),
        ("c", "COUNT", "y", None),
        ("m", "MIN", "y", "p"),
        ("M", "MAX", "y", "p"),
        ("a", "AVG", "y", "p"),
    ]
    (ce,) = evaluate(agg("z", outputs, atom("A")), s)
    assert ce.bag("z") == (Event.make(0, {"s": 0, "c": 0}),)  # MIN/MAX/AVG are NULL: absent


def test_agg_skips_null_inputs_and_count_x_counts_events() -> None:
    s = stream(ev("A", p=4), ev("A"), ev("A", p=2))
    outputs = [
        ("n", "COUNT", "A", None),
        ("np", "COUNT", "A", "p"),
        ("s", "SUM", "A", "p"),
        ("a", "AVG", "A", "p"),
        ("m", "MIN", "A", "p"),
    ]
    formula = agg("z", outputs, seq(atom("A"), atom("A"), atom("A")))
    (ce,) = evaluate(formula, s)
    assert ce.bag("z") == (Event.make(2, {"n": 3, "np": 2, "s": 6, "a": 3.0, "m": 2}),)


def test_agg_event_is_untyped_at_the_end_and_added_to_the_bag() -> None:
    s = stream(ev("A", p=1), ev("B", p=10), ev("A", p=2))
    formula = agg("A", [("s", "SUM", "A", "p")], seq(atom("A"), atom("B"), atom("A")))
    (ce,) = evaluate(formula, s)
    # the aggregate reads μ(A) before the created event joins A
    assert ce.bag("A") == (s[0], s[2], Event.make(2, {"s": 3}))


def test_nested_agg() -> None:
    s = stream(ev("A", p=1), ev("A", p=2))
    inner = agg("z1", [("s", "SUM", "A", "p")], Plus(atom("A")))
    outer = agg("z2", [("total", "SUM", "z1", "s"), ("n", "COUNT", "z1", None)], inner)
    result = evaluate(outer, s)
    assert sorted((times(ce, "A"), ce.bag("z2")) for ce in result) == [
        ((0,), (Event.make(0, {"total": 1, "n": 1}),)),
        ((0, 1), (Event.make(1, {"total": 3, "n": 1}),)),
        ((1,), (Event.make(1, {"total": 2, "n": 1}),)),
    ]


def test_agg_into_a_variable_later_filtered() -> None:
    s = stream(ev("A", p=1), ev("A", p=2), ev("A", p=4))
    formula = FilterF(
        agg("w", [("s", "SUM", "A", "p")], Plus(atom("A"))), on("w", cmp("s", ">=", 5))
    )
    assert sorted(times(ce, "A") for ce in evaluate(formula, s)) == [(0, 1, 2), (0, 2), (1, 2)]


def test_agg_inside_plus_aggregates_each_iteration() -> None:
    s = stream(ev("A", p=1), ev("A", p=2))
    formula = Plus(agg("z", [("s", "SUM", "A", "p")], atom("A")))
    result = evaluate(formula, s)
    assert {ce.bag("z") for ce in result} == {
        (Event.make(0, {"s": 1}),),
        (Event.make(1, {"s": 2}),),
        (Event.make(0, {"s": 1}), Event.make(1, {"s": 2})),
    }
    assert len(result) == 3


def test_integer_sums_are_exact() -> None:
    big = 2**70
    s = stream(ev("A", p=big), ev("A", p=big + 1))
    (ce,) = evaluate(agg("z", [("s", "SUM", "A", "p")], seq(atom("A"), atom("A"))), s)
    assert ce.bag("z")[0].get("s") == 2 * big + 1


# ------------------------------------------------------------------ NEXT


def test_next_uses_the_shared_macro() -> None:
    pytest.importorskip("acel.lang.macros")
    s = stream(ev("A"), ev("C"), ev("B"), ev("B"), ev("A"), ev("B"))
    # A : NEXT(B): each A with the first B after it (skip-till-next-match)
    result = evaluate(Contig(atom("A"), Next("B")), s, types=("A", "B", "C"))
    assert sorted((ce.start, ce.end, times(ce, "B")) for ce in result) == [
        (0, 2, (2,)),
        (4, 5, (5,)),
    ]
    # NEXT(B) on its own: every B, the one that follows its run of non-B events
    alone = evaluate(Next("B"), s, types=("A", "B", "C"))
    assert sorted(shape(ce, "B") for ce in alone) == [
        (0, 2, (2,)),
        (1, 2, (2,)),
        (2, 2, (2,)),
        (3, 3, (3,)),
        (4, 5, (5,)),
        (5, 5, (5,)),
    ]
    assert all(ce.variables() == ("B",) for ce in alone)  # the macro's helpers are projected away
    # A ; NEXT(B) allows gaps before the run, so it is just A ; B
    assert evaluate(seq(atom("A"), Next("B")), s, types=("A", "B", "C")) == evaluate(
        seq(atom("A"), atom("B")), s
    )
    # by default NEXT ranges over the stream's types
    assert evaluate(Next("B"), s) == alone


# ------------------------------------------------------------------ queries


def test_run_without_clauses_reports_sorted_matches() -> None:
    out = run(Query(seq(atom("A"), atom("B"))), ABC, SCHEMA)
    assert all(isinstance(m, Match) and m.key == () for m in out)
    assert [(m.event.start, m.event.end) for m in out] == [(0, 1), (0, 4), (2, 4)]  # type: ignore[union-attr]


def test_run_with_stream_times_that_are_not_positions() -> None:
    s = [Event.make(100 + 7 * k, e.as_dict()) for k, e in enumerate(ABC)]
    out = run(Query(seq(atom("A"), atom("B"))), s, SCHEMA)
    assert [(m.event.start, m.event.end) for m in out] == [(0, 1), (0, 4), (2, 4)]  # type: ignore[union-attr]


def test_partition_reports_global_positions_and_contiguity_is_local() -> None:
    s = stream(ev("A", k=1), ev("A", k=2), ev("B", k=1), ev("B", k=2))
    out = run(Query(Contig(atom("A"), atom("B")), partition_by=("k",)), s, SCHEMA)
    assert [(m.key, m.event.start, m.event.end) for m in out] == [  # type: ignore[union-attr]
        ((("k", 1),), 0, 2),
        ((("k", 2),), 1, 3),
    ]
    # events lacking the partition attribute are in no partition
    with_unkeyed = [*s, Event.make(4, {"type": "A"})]
    assert len(run(Query(atom("A"), partition_by=("k",)), with_unkeyed, SCHEMA)) == 2


def test_within_events_and_on_attribute() -> None:
    s = stream(ev("A", ts=0), ev("B", ts=5), ev("B", ts=6))
    formula = seq(atom("A"), atom("B"))
    assert len(run(Query(formula, within=Window(2)), s, SCHEMA)) == 1  # span 1 < 2
    assert len(run(Query(formula, within=Window(3)), s, SCHEMA)) == 2
    assert len(run(Query(formula, within=Window(6, "ts")), s, SCHEMA)) == 1  # 5 < 6, 6 !< 6
    assert len(run(Query(formula, within=Window(7, "ts")), s, SCHEMA)) == 2


def test_return_on_an_empty_stream() -> None:
    query = Query(
        atom("A"), returns=(CountStar(), ReturnAgg("SUM", "A", "p"), ReturnAgg("MAX", "A", "p"))
    )
    assert run(query, [], SCHEMA) == [
        TrendRow((), None, (("COUNT(*)", 0), ("SUM(A.p)", 0), ("MAX(A.p)", None)))
    ]
    partitioned = Query(atom("A"), returns=(CountStar(),), partition_by=("p",))
    assert run(partitioned, [], SCHEMA) == []


def test_return_counts_match_enumeration() -> None:
    s = stream(*(ev("A", p=k) for k in range(6)))
    rows = run(
        Query(Plus(atom("A")), returns=(CountStar(), ReturnAgg("COUNT", "A", None))), s, SCHEMA
    )
    # 63 subsets; each event is in 32 of them
    assert rows[0].values == (("COUNT(*)", 63), ("COUNT(A)", 6 * 32))


# ------------------------------------------------------------------ size guards


def test_size_guard_refuses_long_streams_with_a_helpful_message() -> None:
    s = stream(*(ev("A") for _ in range(17)))
    with pytest.raises(OracleTooLarge) as info:
        evaluate(atom("A"), s)
    message = str(info.value)
    assert "17 events" in message and "limit is 16" in message
    assert "ACEL_ORACLE_MAX_EVENTS" in message and "max_events" in message
    assert len(evaluate(atom("A"), s, max_events=17)) == 17
    with pytest.raises(OracleTooLarge):
        run(Query(atom("A")), s, SCHEMA)


def test_size_guard_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    s = stream(*(ev("A") for _ in range(3)))
    monkeypatch.setenv(oracle.ENV_MAX_EVENTS, "2")
    with pytest.raises(OracleTooLarge):
        evaluate(atom("A"), s)
    monkeypatch.setenv(oracle.ENV_MAX_EVENTS, "3")
    assert len(evaluate(atom("A"), s)) == 3


def test_size_guard_applies_to_each_partition_before_evaluating() -> None:
    s = stream(*(ev("A", k=k % 2) for k in range(20)))  # two partitions of 10
    assert len(run(Query(atom("A"), partition_by=("k",)), s, SCHEMA)) == 20
    s3 = s + [Event.make(20 + k, {"type": "A", "k": 0}) for k in range(7)]  # 17 in k=0
    with pytest.raises(OracleTooLarge, match="partition of 17 events"):
        run(Query(atom("A"), partition_by=("k",)), s3, SCHEMA)


def test_intermediate_set_guard() -> None:
    s = stream(*(ev("A") for _ in range(8)))
    with pytest.raises(OracleTooLarge, match="more than 100 complex events"):
        evaluate(Plus(atom("A")), s, max_complex_events=100)
    assert len(evaluate(Plus(atom("A")), s, max_complex_events=255)) == 255


def test_bad_environment_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(oracle.ENV_MAX_EVENTS, "lots")
    with pytest.raises(AcelError, match="not an integer"):
        evaluate(atom("A"), [])


def test_split_partitions_numbers_events_by_position() -> None:
    from acel.lang.clauses import split_partitions

    s = [Event.make(100 + k, {"type": "A", "k": k % 2}) for k in range(4)]
    (whole,) = split_partitions(s, ())
    assert [e.time for e in whole.events] == [0, 1, 2, 3] and whole.positions == (0, 1, 2, 3)
    odd = [p for p in split_partitions(s, ("k",)) if p.key == (("k", 1),)][0]
    assert [e.time for e in odd.events] == [0, 1] and odd.positions == (1, 3)


def test_agg_and_filter_correlate_two_variables() -> None:
    """Seed 004 §5, "expressive power": AGG then FILTER checks x.p = y.p across variables."""
    s = stream(ev("A", p=1), ev("B", p=2), ev("A", p=2), ev("B", p=1), ev("B", p=2))
    correlated = ProjectVars(
        ("x", "y"),
        FilterF(
            agg(
                "z",
                [("a1", "MAX", "x", "p"), ("a2", "MAX", "y", "p")],
                seq(as_("A", "x"), as_("B", "y")),
            ),
            on("z", Compare("=", Attr("a1"), Attr("a2"))),
        ),
    )
    assert sorted((times(ce, "x"), times(ce, "y")) for ce in evaluate(correlated, s)) == [
        ((0,), (3,)),
        ((2,), (4,)),
    ]
