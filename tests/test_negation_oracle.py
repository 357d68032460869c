"""Negation on the oracle (spec §3.1): the table's three rows checked against
hand-computed answers, laws relating negation to the other operators, and the
window rules of leading/trailing negation (EVENTS, ON attr, SLIDE, PARTITION BY).
Each choice recorded in papers/semantics.md ("Negation") has its test here."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from acel.reference import oracle
from acel.reference.oracle import OracleTooLarge, evaluate
from hypothesis import assume, given

from acel.lang.ast import LeadingNot, Or, Plus, Query, Seq, SeqNot, Window
from acel.lang.clauses import Match, Negations, TrendRow
from acel.lang.errors import AcelCheckError
from acel.lang.events import ComplexEvent, Event
from acel.lang.parser import parse_formula, parse_query
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, formulas, streams

ABC = Schema.of({"A": ["v", "t"], "B": ["v", "t"], "C": ["v", "t"], "E": ["v", "t"]})
TYPES = TEST_SCHEMA.type_names()


def typed(text: str, times: Sequence[int] | None = None) -> list[Event]:
    """``"a b c"`` → events A, B, C at positions 0..; ``v`` = position, ``t`` = a timestamp."""
    kinds = text.split()
    stamps = list(times) if times is not None else list(range(len(kinds)))
    return [
        Event.make(k, {"type": kind.upper(), "v": k, "t": stamps[k]}) for k, kind in enumerate(kinds)
    ]


def spans(text: str, events: Sequence[Event]) -> list[tuple[int, int]]:
    return sorted((ce.start, ce.end) for ce in evaluate(parse_formula(text), events))


def matches(text: str, events: Sequence[Event]) -> list[tuple[int, int]]:
    out = oracle.run(parse_query(text), events, ABC)
    return [(m.event.start, m.event.end) for m in out if isinstance(m, Match)]


def sem(formula: object, events: Sequence[Event]) -> set[ComplexEvent]:
    try:
        return evaluate(formula, events, types=TYPES, max_complex_events=20_000)  # type: ignore[arg-type]
    except OracleTooLarge:
        assume(False)
        raise


# ------------------------------------------------------------------ middle


def test_middle_negation_by_hand() -> None:
    events = typed("a b c a c")  # a0 b1 c2 a3 c4
    assert spans("A ; C", events) == [(0, 2), (0, 4), (3, 4)]
    assert spans("A ; NOT B ; C", events) == [(3, 4)]
    # N must lie strictly inside the gap: a B at an end of C1 or C2 does not count
    assert spans("(A OR B) ; NOT B ; C", typed("b c")) == [(0, 1)]
    # ψ is any formula: only a B followed by an A inside the gap excludes
    # a0 b1 c2 a3 b4 c5: b1-a3 lies between a0 and c5
    assert spans("A ; NOT (B ; A) ; C", typed("a b c a b c")) == [(0, 2), (3, 5)]


def test_several_nots_guard_the_same_gap() -> None:
    events = typed("a b c a e c a c")
    assert spans("A ; NOT B ; NOT E ; C", events) == spans("A ; NOT (B OR E) ; C", events)
    # a0 b1 c2 a3 e4 c5 a6 c7: b1 guards every gap from a0, e4 every gap from a3
    assert spans("A ; NOT B ; NOT E ; C", events) == [(6, 7)]


def test_nested_negation_inside_psi() -> None:
    """``NOT (C ; NOT E ; D)``: a C-D pair excludes only when no E lies between them."""
    found = spans("A ; NOT (C ; NOT E ; C) ; B", typed("a c e c b"))
    assert found == [(0, 4)]  # c1-c3 holds e2, so it does not exclude
    assert spans("A ; NOT (C ; NOT E ; C) ; B", typed("a c c b")) == []
    # c1 e2 is a match of C ; NOT E ; E (nothing between them)
    assert spans("A ; NOT (C ; NOT E ; E) ; B", typed("a c e b")) == []


def test_negation_applies_inside_each_iteration_only() -> None:
    """``(A ; NOT B ; C)+``: the gaps between iterations are not guarded (as GRETA)."""
    events = typed("a c b a c")
    assert (0, 4) in spans("(A ; NOT B ; C)+", events)
    assert (0, 4) not in spans("A ; NOT B ; C", events)


def test_negated_variables_never_reach_the_output() -> None:
    events = typed("a b c")
    (ce,) = evaluate(parse_formula("A ; NOT (E AS x) ; C"), events)
    assert ce.variables() == ("A", "C")


def test_negated_formulas_are_not_evaluated_as_leading_or_trailing_inside() -> None:
    with pytest.raises(AcelCheckError, match="query driver"):
        evaluate(LeadingNot((parse_formula("B"),), parse_formula("A")), typed("b a"))


@given(formulas(max_depth=2), formulas(max_depth=2), formulas(max_depth=2), streams(max_len=6))
def test_negation_only_removes_from_the_sequence(
    left: object, psi: object, right: object, events: list[Event]
) -> None:
    """``⟦φ1 ; NOT ψ ; φ2⟧ ⊆ ⟦φ1 ; φ2⟧``, and a removed pair has a ψ-match in its gap."""
    guarded = sem(SeqNot(left, (psi,), right), events)  # type: ignore[arg-type]
    plain = sem(Seq(left, right), events)  # type: ignore[arg-type]
    assert guarded <= plain
    found = [(n.start, n.end) for n in sem(psi, events)]
    for ce in plain - guarded:
        assert any(ce.start < s and e < ce.end for s, e in found)


@given(formulas(max_depth=2), formulas(max_depth=1), formulas(max_depth=1), streams(max_len=6))
def test_two_nots_are_one_not_of_the_union(
    left: object, psi1: object, psi2: object, events: list[Event]
) -> None:
    both = sem(SeqNot(left, (psi1, psi2), left), events)  # type: ignore[arg-type]
    union = sem(SeqNot(left, (Or(psi1, psi2),), left), events)  # type: ignore[arg-type, arg-type]
    assert both == union


@given(formulas(max_depth=2), formulas(max_depth=2), streams(max_len=6))
def test_negating_a_formula_plus_is_negating_the_formula(
    left: object, psi: object, events: list[Event]
) -> None:
    """GRETA §2: ``NOT (P+)`` is ``NOT P`` (a match of P+ contains one of P)."""
    one = sem(SeqNot(left, (psi,), left), events)  # type: ignore[arg-type]
    plus = sem(SeqNot(left, (Plus(psi),), left), events)  # type: ignore[arg-type, arg-type]
    assert one == plus


# -------------------------------------------------------- leading, trailing


def test_trailing_negation_without_slide_uses_the_span_from_start_of_c() -> None:
    events = typed("a a e a")  # a0 a1 e2 a3
    # C = a1: e2 comes after it; span start(C)=1 .. end(N)=2 is 1 < 3: excluded
    assert matches("A ; NOT E WITHIN 3 EVENTS", events) == [(3, 3)]
    # with WITHIN 2 the span a0 .. e2 is 2, not below 2: a0 survives, a1 does not
    assert matches("A ; NOT E WITHIN 2 EVENTS", events) == [(0, 0), (3, 3)]


def test_leading_negation_without_slide_uses_the_span_to_end_of_c() -> None:
    events = typed("a e a a")  # a0 e1 a2 a3
    assert matches("NOT E ; A WITHIN 3 EVENTS", events) == [(0, 0)]
    # span start(N)=1 .. end(C)=3 is 2, not below 2: a3 survives
    assert matches("NOT E ; A WITHIN 2 EVENTS", events) == [(0, 0), (3, 3)]


def test_the_span_is_measured_on_the_window_axis() -> None:
    """``WITHIN d ON t``: attribute values, not positions."""
    events = typed("a e a", times=[0, 10, 11])
    assert matches("NOT E ; A WITHIN 5 ON t", events) == [(0, 0)]
    assert matches("A ; NOT E WITHIN 5 ON t", events) == [(0, 0), (2, 2)]
    assert matches("A ; NOT E WITHIN 11 ON t", events) == [(2, 2)]


def test_leading_and_trailing_together_with_filters() -> None:
    events = typed("e a b a a b")
    text = "NOT E ; A ; NOT B FILTER A[v > 1] WITHIN 3 EVENTS"
    # a1: v=1 fails the filter; a3: b5 after within 3 → out; a4: b5 → out
    assert matches(text, events) == []
    # e0 a1 a2 a3 b4: a1 is 1 after e0, a3 is 1 before b4, a2 is 2 from both
    assert matches("NOT E ; A ; NOT B WITHIN 2 EVENTS", typed("e a a a b")) == [(2, 2)]


def test_psi_is_matched_inside_the_partition() -> None:
    events = [
        Event.make(0, {"type": "A", "v": 0, "t": 0}),
        Event.make(1, {"type": "E", "v": 1, "t": 0}),
        Event.make(2, {"type": "A", "v": 0, "t": 1}),
    ]
    query = parse_query("NOT E ; A PARTITION BY v WITHIN 5 EVENTS")
    out = oracle.run(query, events, ABC)
    # the E has v = 1: it is in another partition than both A's
    assert [(dict(m.key)["v"], m.event.start) for m in out if isinstance(m, Match)] == [(0, 0), (0, 2)]


def test_with_slide_a_complex_event_counts_in_one_window_and_not_another() -> None:
    # a0 a1 e2 a3: windows of 3 sliding by 1, from the first that holds a0 (spec §6, k < 0
    # too): [-2,1) [-1,2) [0,3) [1,4) [2,5) [3,6)
    query = parse_query("RETURN COUNT(*) PATTERN A ; NOT E WITHIN 3 EVENTS SLIDE 1 EVENTS")
    rows = oracle.run(query, typed("a a e a"), ABC)
    counts = {r.window: r.value("COUNT(*)") for r in rows if isinstance(r, TrendRow)}
    # a0 and a1 are excluded from every window that also holds e2 ([0,3), [1,4));
    # a3 has no E after it and counts in every window holding it
    assert counts == {(-2, 1): 1, (-1, 2): 2, (0, 3): 0, (1, 4): 1, (2, 5): 1, (3, 6): 1}
    plain = parse_query("RETURN COUNT(*) PATTERN A WITHIN 3 EVENTS SLIDE 1 EVENTS")
    rows = oracle.run(plain, typed("a a e a"), ABC)
    before = {r.window: r.value("COUNT(*)") for r in rows if isinstance(r, TrendRow)}
    assert before == {(-2, 1): 1, (-1, 2): 2, (0, 3): 2, (1, 4): 2, (2, 5): 1, (3, 6): 1}


def test_leading_negation_per_slide_window() -> None:
    query = parse_query("RETURN COUNT(*) PATTERN NOT E ; A WITHIN 2 EVENTS SLIDE 2 EVENTS")
    rows = oracle.run(query, typed("a e a a"), ABC)
    counts = {r.window: r.value("COUNT(*)") for r in rows if isinstance(r, TrendRow)}
    # [0,2): a0 (e1 after it); [2,4): e1 is outside this window, so a2 and a3 count
    assert counts == {(0, 2): 1, (2, 4): 2}


def test_negations_object_tests_spans_directly() -> None:
    events = typed("a a e a")
    negations = Negations(Window(3), events, frozenset(), frozenset({(2, 2)}))
    a0, a1, a3 = (ComplexEvent.make(k, k, {"A": [events[k]]}) for k in (0, 1, 3))
    assert negations.blocks(a0) and negations.blocks(a1) and not negations.blocks(a3)
    assert negations.blocks_in(a0, (0, 3)) and not negations.blocks_in(a0, (-1, 2))


def test_trailing_negation_query_round_trips_through_the_printer() -> None:
    query = Query(parse_formula("A+ ; NOT E"), within=Window(4))
    assert matches("A+ ; NOT E WITHIN 4 EVENTS", typed("a a e")) == []
    assert query == parse_query("A+ ; NOT E WITHIN 4 EVENTS")


def test_a_psi_match_overlapping_c_does_not_count() -> None:
    """Leading: all of N lies before C (``end(N) < start(C)``); trailing: after it."""
    events = typed("e a a")  # e0 a1 a2; N = (e0, a1) is a match of E ; A
    assert matches("NOT (E ; A) ; A WITHIN 5 EVENTS", events) == [(1, 1)]
    events = typed("a a e")  # N = (a1, e2) is a match of A ; E
    assert matches("A ; NOT (A ; E) WITHIN 5 EVENTS", events) == [(1, 1)]


def test_an_unchecked_query_without_within_is_a_user_error() -> None:
    query = Query(parse_formula("NOT E ; A"))  # built directly: the checker never saw it
    with pytest.raises(AcelCheckError, match="needs WITHIN"):
        oracle.run(query, typed("e a"), ABC)
