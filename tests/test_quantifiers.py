"""Quantifiers (spec §3.2): ``φ{n}``, ``φ{n,m}``, ``φ{n,}``, their ``:`` forms, ``ψ?`` and ``ψ*``.

The sugar is kept in the AST and by the printer; every evaluator runs its expansion
(:func:`acel.lang.macros.expand_quantifiers`).  The Hypothesis strategies generate
quantifiers too (operators REPEAT and OPTIONAL), so every cross-check property covers them;
these are the explicit examples.
"""

from __future__ import annotations

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_query
from acel.reference import oracle

from acel.lang.ast import Atom, Contig, ContigPlus, Opt, Or, Plus, Repeat, Seq
from acel.lang.errors import AcelSyntaxError
from acel.lang.events import Event
from acel.lang.macros import expand_quantifiers
from acel.lang.operators import operators_of
from acel.lang.parser import parse_query
from acel.lang.printer import format_formula, format_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"], "X": ["v"]})


def _stream(types: str) -> list[Event]:
    return [Event.make(k, {"type": t, "v": k % 3}) for k, t in enumerate(types)]


@pytest.mark.parametrize(
    "text",
    [
        "A ; B? ; C",
        "A ; B* ; C{2,} ; X",
        "A : B:{1,3} : C?",
        "(B AS b){2,4}",
        "(B AS b)? ; C",
        "A ; NOT X ; B? ; C",
        "NOT X ; B? ; C\nWITHIN 5 EVENTS",
        "A? ; B? ; C",
        "A ; B+? ; C*",
        "A{1,}",
        "A:{3}",
    ],
)
def test_round_trip_keeps_the_sugar(text: str) -> None:
    query = parse_query(text)
    assert format_query(query) == text
    assert parse_query(format_query(query)) == query


def test_as_closes_the_element() -> None:
    """``B AS b?`` is ``(B AS b)?`` (spec §3.2)."""
    query = parse_query("B AS b? ; C")
    assert query.formula == Seq(Opt(parse_query("B AS b").formula), Atom("C"))


@pytest.mark.parametrize(
    ("text", "expansion"),
    [
        ("A ; B? ; C", "A ; B ; C OR A ; C"),
        ("A : B? : C", "A : B : C OR A : C"),
        ("A ; B* ; C", "A ; B+ ; C OR A ; C"),
        ("A{3}", "A ; A ; A"),
        ("A:{2}", "A : A"),
        ("A{2,3}", "A ; A OR A ; A ; A"),
        ("A{1,}", "A+"),
        ("A{3,}", "A ; A ; A+"),
        ("A:{2,}", "A : A:+"),
        ("A? ; B? ; C", "A ; B ; C OR B ; C OR A ; C OR C"),
        ("A ; NOT X ; B? ; C", "A ; NOT X ; B ; C OR A ; NOT X ; C"),
        ("A ; B? ; NOT X ; C", "A ; B ; NOT X ; C OR A ; NOT X ; C"),
        ("A ; B? ; C ; X", "(A ; B ; C OR A ; C) ; X"),
    ],
)
def test_expansions(text: str, expansion: str) -> None:
    assert format_formula(expand_quantifiers(parse_query(text).formula)) == expansion


def test_expansion_keeps_formulas_without_quantifiers() -> None:
    formula = parse_query("A ; B+ ; C").formula
    assert expand_quantifiers(formula) is formula


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("A?", 1, 2, "alone it would allow an empty complex event"),
        ("A? ; B?", 1, 2, "needs an element without '?' or '*'"),
        ("A ;\n  B?+", 2, 5, "never B?+"),
        ("NOT A? ; B", 1, 6, "NOT ψ cannot be optional"),
        ("B? AS b ; C", 1, 4, "B? AS b"),
        ("A ; B? : C", 1, 6, "mixes ';' and ':'"),
        ("B? ; NOT C ; A", 1, 2, "cannot stand next to NOT"),
        ("A ; B ; NOT C ; X?", 1, 18, "cannot stand next to NOT"),
        ("A{0}", 1, 3, "at least one copy"),
        ("A{3,2}", 1, 5, "n <= m"),
        ("A ; (B?)", 1, 7, "alone it would allow"),
    ],
)
def test_quantifier_errors_point_at_the_place(
    text: str, line: int, column: int, words: str
) -> None:
    with pytest.raises(AcelSyntaxError) as info:
        parse_query(text)
    err = info.value
    assert (err.line, err.column) == (line, column)
    assert words in err.message
    assert "^" in str(err)


def test_operator_names() -> None:
    assert {"REPEAT", "OPTIONAL", "SEQ"} <= operators_of(parse_query("A{2} ; B? ; C"))
    assert "OPTIONAL" not in operators_of(parse_query("A{2,}"))


def test_optional_on_a_stream() -> None:
    """``A ; B? ; C`` on ``A B C``: with and without the B (two complex events)."""
    stream = _stream("ABC")
    got = oracle.evaluate(parse_query("A ; B? ; C").formula, stream)
    spans = sorted((ce.start, ce.end, tuple(ce.variables())) for ce in got)
    assert spans == [(0, 2, ("A", "B", "C")), (0, 2, ("A", "C"))]


def test_repeat_collects_every_copy() -> None:
    """``(B AS b){2}`` on ``B B B``: three pairs, b holding both events of each."""
    got = oracle.evaluate(parse_query("(B AS b){2}").formula, _stream("BBB"))
    assert sorted(sorted(e.time for e in ce.bag("b")) for ce in got) == [[0, 1], [0, 2], [1, 2]]


@pytest.mark.parametrize(
    "text",
    [
        "A ; B? ; C",
        "A ; B* ; C",
        "A : B? : C",
        "(A OR B){2,3}",
        "(A OR B):{2,}",
        "A? ; B{1,2} ; C*",
        "A ; NOT X ; B? ; C",
        "(A ; B? ; C)+ ; X",
        "RETURN COUNT(*), SUM(B.v) PATTERN A ; B* ; C",
        "A ; B? ; C\nWITHIN 4 EVENTS",
        "NOT X ; A ; B?\nWITHIN 4 EVENTS",
    ],
)
def test_engines_agree_with_oracle(text: str) -> None:
    query = parse_query(text)
    for types in ("ABXBCACB", "AABBCC", "XABXC", "BACBBC"):
        stream = _stream(types)
        expected = oracle.run(query, stream, SCHEMA)
        assert engine.run(query, stream, SCHEMA) == expected, (text, types)
        assert naive.run(query, stream, SCHEMA) == expected, (text, types)


def test_compiler_compiles_the_expansion() -> None:
    compiled = compile_query(parse_query("A{2} ; B?"), SCHEMA)
    assert compiled.automaton.num_states > 0


def test_ast_constructor_checks_bounds() -> None:
    with pytest.raises(ValueError):
        Repeat(Atom("A"), 0, None)
    with pytest.raises(ValueError):
        Repeat(Atom("A"), 3, 2)
    assert Repeat(Atom("A"), 2, 2, True) != Repeat(Atom("A"), 2, 2)
    assert expand_quantifiers(Repeat(Atom("A"), 2, None, True)) == Contig(
        Atom("A"), ContigPlus(Atom("A"))
    )
    assert expand_quantifiers(Repeat(Atom("A"), 2, None)) == Seq(Atom("A"), Plus(Atom("A")))
    assert expand_quantifiers(Repeat(Atom("A"), 1, 2)) == Or(Atom("A"), Seq(Atom("A"), Atom("A")))
