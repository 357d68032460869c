"""SASE+ negation (seed 002; spec §3.1, §8) against ACEL.

Middle negation ``SEQ(.., !(T v), ..)`` under skip-till-any-match translates to
``φ1 ; NOT (T AS v FILTER v[P]) ; φ2``: the SASE+ baseline (NFA^b, step one and
two), the oracle and the optimized engine agree on it.  Leading and trailing
negation (with WITHIN) translate to ``NOT ψ ; φ`` / ``φ ; NOT ψ``: the baseline
checks them on complete matches, and the oracle and the naive automaton agree.
"""

from __future__ import annotations

from typing import Any

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.reference import oracle
from acel.reference.sase import NotTranslatable, parse_sase, run_sase, translate
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sase_properties import HALF, _local

from acel.lang.ast import LeadingNot, SeqNot, TrailingNot
from acel.lang.errors import AcelSyntaxError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.printer import format_query
from acel.testing import TEST_SCHEMA, streams


@st.composite
def sase_negation_texts(draw: Any, where: str = "middle", with_return: bool = False) -> str:
    """A translatable SASE+ query with 1-2 negated components.

    ``where``: ``"middle"`` (between positive components), or ``"edges"``
    (anywhere, also first or last; WITHIN is then always given).
    """
    n = draw(st.integers(1 if where == "edges" else 2, 3))
    comps: list[tuple[str, str, bool, bool]] = []
    for i in range(n):
        comps.append((draw(st.sampled_from(("A", "B", "C"))), f"v{i}", draw(st.booleans()), False))
    for j in range(draw(st.integers(1, 2))):
        lo, hi = (1, len(comps) - 1) if where == "middle" else (0, len(comps))
        at = draw(st.integers(lo, hi))
        comps.insert(at, (draw(st.sampled_from(("A", "B", "C"))), f"n{j}", False, True))
    decls = [
        f"!({t} {v})" if negated else (f"{t}+ {v}[]" if kleene else f"{t} {v}")
        for t, v, kleene, negated in comps
    ]
    conjuncts: list[str] = []
    if draw(st.booleans()):
        conjuncts.append("[k]")
    for _t, v, kleene, _negated in comps:
        if draw(st.integers(0, 2)) == 0:
            ref = f"{v}[i].{{attr}}" if kleene else f"{v}.{{attr}}"
            conjuncts.append(draw(_local(ref)))
    text = f"PATTERN SEQ({', '.join(decls)})"
    if conjuncts:
        text += f"\nWHERE {' AND '.join(conjuncts)}"
    if where == "edges" or draw(st.booleans()):
        text += f"\nWITHIN {draw(st.integers(1, 6))}"
    if with_return:
        items = [
            f"COUNT({v}[])" if kleene else f"{v}.x"
            for _t, v, kleene, negated in comps
            if not negated
        ]
        text += "\nRETURN " + ", ".join(items)
    return text


@HALF
@given(sase_negation_texts(), streams(TEST_SCHEMA, max_len=7))
def test_middle_negation_baseline_oracle_engine(text: str, stream: list[Event]) -> None:
    query = parse_sase(text)
    acel = translate(query)
    assert not isinstance(acel.formula, (LeadingNot, TrailingNot))
    expected = oracle.run(acel, stream, TEST_SCHEMA)
    assert run_sase(query, stream) == expected
    assert engine.run(acel, stream, TEST_SCHEMA) == expected


@HALF
@given(sase_negation_texts(with_return=True), streams(TEST_SCHEMA, max_len=7))
def test_middle_negation_return_rows_baseline_engine(text: str, stream: list[Event]) -> None:
    """Per-match RETURN rows: the baseline's rows are the engine's AGG events."""
    from test_sase_properties import _oracle_rows, _sase_rows

    query = parse_sase(text)
    assert _sase_rows(query, stream) == _oracle_rows(query, stream)


@HALF
@given(sase_negation_texts(where="edges"), streams(TEST_SCHEMA, max_len=7))
def test_leading_and_trailing_negation_baseline_oracle_naive(text: str, stream: list[Event]) -> None:
    query = parse_sase(text)
    acel = translate(query)
    expected = oracle.run(acel, stream, TEST_SCHEMA)
    assert run_sase(query, stream) == expected
    assert naive.run(acel, stream, TEST_SCHEMA) == expected


def test_translations_by_hand() -> None:
    middle = translate(parse_sase("PATTERN SEQ(A a, !(B b), C c) WHERE b.x > 1 AND a.y = 0"))
    assert middle == parse_query(
        "PROJECT[a, c](A AS a ; NOT (B AS b FILTER b[x > 1]) ; C AS c FILTER a[y = 0])"
    )
    assert isinstance(middle.formula.formula.formula, SeqNot)  # type: ignore[union-attr]
    edges = translate(
        parse_sase("PATTERN SEQ(!(C n), A+ a[], B b, !(A m)) WHERE [k] AND m.x = 2 WITHIN 4")
    )
    assert format_query(edges) == (
        "NOT C AS n ; PROJECT[a, b]((A AS a)+ ; B AS b) ; NOT (A AS m FILTER m[x = 2])\n"
        "PARTITION BY k\nWITHIN 4 EVENTS"
    )


def test_leading_and_trailing_by_hand() -> None:
    """a0 c1 a2 b3 a4 (x = position): SEQ(A a, !(B n)) WITHIN 3 drops a0 and a2."""
    stream = [
        Event.make(k, {"type": t, "x": k, "y": 0, "k": 0}) for k, t in enumerate("ACABA")
    ]
    stream[1] = Event.make(1, {"type": "C", "x": 1, "k": 0})
    trailing = parse_sase("PATTERN SEQ(A a, !(B n)) WITHIN 3")
    assert [m.event.start for m in run_sase(trailing, stream)] == [0, 4]  # type: ignore[union-attr]
    # b3 - a0 = 3 is not below 3: a0 stays; a2 goes
    leading = parse_sase("PATTERN SEQ(!(C n), A a) WITHIN 2")
    assert [m.event.start for m in run_sase(leading, stream)] == [0, 4]  # type: ignore[union-attr]
    for query in (trailing, leading):
        assert run_sase(query, stream) == oracle.run(translate(query), stream, TEST_SCHEMA)


@settings(max_examples=1)
@given(st.just(0))
def test_edge_negation_needs_within(_: int) -> None:
    with pytest.raises(AcelSyntaxError, match="needs WITHIN"):
        parse_sase("PATTERN SEQ(!(C n), A a)")
    with pytest.raises(NotTranslatable, match="relating a and n"):
        translate(parse_sase("PATTERN SEQ(A a, !(C n), B b) WHERE n.x = a.x"))


def test_regression_sase_in_lists_hold_values() -> None:
    """Found by Hypothesis through the negation labels: the SASE+ parser put ``Lit``
    nodes into ``InList.values``, so ``x IN (1, 0)`` never held (in the baseline and
    in the translation alike) and the translated formula could not be printed."""
    stream = [
        Event.make(0, {"type": "A", "x": 1, "y": 0, "k": 0}),
        Event.make(1, {"type": "B", "x": 3, "y": 0, "k": 0}),
    ]
    query = parse_sase("PATTERN SEQ(A a, B b) WHERE a.x IN (1, 0) AND b.x NOT IN (1, 0)")
    assert [m.event.start for m in run_sase(query, stream)] == [0]  # type: ignore[union-attr]
    assert run_sase(query, stream) == oracle.run(translate(query), stream, TEST_SCHEMA)
    assert "a[x IN (1, 0)]" in format_query(translate(query))
