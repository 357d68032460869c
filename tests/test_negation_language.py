"""Negation in the language front end (spec §3.1, §11): grammar, AST shape,
canonical printing, and the checker's placement and scoping rules."""

from __future__ import annotations

import pytest

from acel.lang.ast import (
    And,
    As,
    Atom,
    Attr,
    Compare,
    Contig,
    FilterF,
    Formula,
    LeadingNot,
    Lit,
    Or,
    Plus,
    Query,
    Seq,
    SeqNot,
    TopNegation,
    TrailingNot,
    VarPred,
    Window,
    top_negation,
)
from acel.lang.checker import check_formula, check_text, formula_env
from acel.lang.errors import AcelCheckError, AcelSyntaxError
from acel.lang.parser import MAX_DEPTH, parse_formula, parse_query, parse_query_located
from acel.lang.printer import format_formula, format_query
from acel.lang.schema import Schema

A, B, C, D, E = (Atom(t) for t in "ABCDE")
S = Schema.of({t: ["x"] for t in "ABCDE"})

SHAPES: list[tuple[str, Formula]] = [
    ("A ; NOT B ; C", SeqNot(A, (B,), C)),
    ("A ; NOT (C ; D) ; B", SeqNot(A, (Seq(C, D),), B)),
    ("A ; NOT B+ ; C", SeqNot(A, (Plus(B),), C)),
    ("A ; NOT B AS b ; C", SeqNot(A, (As(B, "b"),), C)),
    # several NOTs in a row guard the same gap
    ("A ; NOT B ; NOT C ; D", SeqNot(A, (B, C), D)),
    # left-associative: the negation guards the gap it stands in
    ("A ; NOT B ; C ; D", Seq(SeqNot(A, (B,), C), D)),
    ("A ; B ; NOT C ; D", SeqNot(Seq(A, B), (C,), D)),
    ("A : B ; NOT C ; D : E", Contig(SeqNot(Contig(A, B), (C,), D), E)),
    ("A ; NOT B ; C ; NOT D ; E", SeqNot(SeqNot(A, (B,), C), (D,), E)),
    # nested negation inside ψ (GRETA's Figure 6(d))
    ("(A+ ; NOT (C ; NOT E ; D) ; B)+", Plus(SeqNot(Plus(A), (SeqNot(C, (E,), D),), B))),
    ("NOT E ; A+", LeadingNot((E,), Plus(A))),
    ("A+ ; NOT E", TrailingNot(Plus(A), (E,))),
    ("NOT B ; NOT C ; A ; D", LeadingNot((B, C), Seq(A, D))),
    ("NOT B ; A ; NOT C", LeadingNot((B,), TrailingNot(A, (C,)))),
    ("NOT B ; A ; NOT C ; D ; NOT E", LeadingNot((B,), TrailingNot(SeqNot(A, (C,), D), (E,)))),
    # NOT binds like a sequence element: looser than postfix, tighter than AND/OR
    ("A ; NOT B ; C AND D", And(SeqNot(A, (B,), C), D)),
    ("A OR B ; NOT C ; D", Or(A, SeqNot(B, (C,), D))),
]


@pytest.mark.parametrize(("text", "ast"), SHAPES)
def test_negation_parses_to_the_canonical_shape(text: str, ast: Formula) -> None:
    assert parse_formula(text) == ast
    assert format_formula(ast) == text
    assert parse_formula(format_formula(ast)) == ast


@pytest.mark.parametrize(
    ("ast", "text"),
    [
        # non-canonical nestings print with parentheses, so they round-trip exactly
        (SeqNot(LeadingNot((E,), A), (B,), C), "(NOT E ; A) ; NOT B ; C"),
        (TrailingNot(TrailingNot(A, (B,)), (C,)), "(A ; NOT B) ; NOT C"),
        (LeadingNot((B,), LeadingNot((C,), A)), "NOT B ; (NOT C ; A)"),
        (TrailingNot(LeadingNot((B,), A), (C,)), "(NOT B ; A) ; NOT C"),
        (SeqNot(A, (LeadingNot((E,), B),), C), "A ; NOT (NOT E ; B) ; C"),
        (SeqNot(A, (B,), Seq(C, D)), "A ; NOT B ; (C ; D)"),
        (Seq(A, SeqNot(B, (C,), D)), "A ; (B ; NOT C ; D)"),
        (SeqNot(A, (Or(B, C),), D), "A ; NOT (B OR C) ; D"),
    ],
)
def test_printer_parenthesises_what_the_parser_would_regroup(ast: Formula, text: str) -> None:
    assert format_formula(ast) == text
    assert parse_formula(text) == ast


def test_negation_nodes_need_a_negated_formula() -> None:
    with pytest.raises(ValueError):
        SeqNot(A, (), B)
    with pytest.raises(ValueError):
        LeadingNot((), A)
    with pytest.raises(ValueError):
        TrailingNot(A, ())


SYNTAX_ERRORS = [
    ("A : NOT B ; C", 1, 3, "':' cannot stand next to NOT"),
    ("A ; NOT B : C", 1, 11, "':' cannot stand next to NOT"),
    ("NOT B : A", 1, 7, "':' cannot stand next to NOT"),
    ("A : NOT B", 1, 3, "':' cannot stand next to NOT"),
    ("NOT A", 1, 1, "a sequence needs an element that is not negated"),
    ("A ; (NOT B ; NOT C)", 1, 6, "a sequence needs an element that is not negated"),
    ("A ; NOT", 1, 8, "found the end of the query but expected a type name"),
    ("A ; NOT NOT B ; C", 1, 9, "found the keyword NOT but expected a type name"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), SYNTAX_ERRORS)
def test_negation_syntax_errors_are_located(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(AcelSyntaxError) as info:
        parse_query(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert message in info.value.message
    assert "^" in str(info.value)


def test_not_locations_are_recorded() -> None:
    query, loc = parse_query_located("A ;\n  NOT B ; NOT C ; D")
    f = query.formula
    assert isinstance(f, SeqNot)
    assert loc.get(f) == (1, 1)
    assert loc.get(f, "excluded.0") == (2, 3)
    assert loc.get(f, "excluded.1") == (2, 11)


def test_deep_sequences_are_refused_before_anything_recurses() -> None:
    assert parse_formula(" ; ".join(["A"] * MAX_DEPTH)) is not None
    assert parse_formula(" ; NOT B ; ".join(["A"] * (MAX_DEPTH // 2))) is not None
    with pytest.raises(AcelSyntaxError, match="nested too deeply"):
        parse_formula(" ; ".join(["A"] * (MAX_DEPTH + 1)))
    with pytest.raises(AcelSyntaxError, match="nested too deeply"):
        parse_formula(" ; NOT B ; ".join(["A"] * (MAX_DEPTH // 2 + 1)))


# ------------------------------------------------------------------ checker


@pytest.mark.parametrize(
    "text",
    [
        "A ; NOT A ; A",  # the inner A is local to ψ; the outer ones are in scope
        "(A ; NOT (B AS b FILTER b[x > 1]) ; C) FILTER A[x < 2]",
        "A ; NOT (B ; NOT C ; D) ; E",
        "AGG z[n := COUNT(A)]((A ; NOT B ; C)+)",
        "NOT B ; A WITHIN 3 EVENTS",
        "A ; NOT B WITHIN 3 ON x",
        "NOT B ; A ; NOT C FILTER A[x > 1] WITHIN 5 EVENTS",
        "(NOT B ; A ; NOT C FILTER A[x > 1]) FILTER A[x < 3] WITHIN 5 EVENTS",
        "RETURN COUNT(*), SUM(A.x) PATTERN NOT B ; A+ PARTITION BY x WITHIN 4 EVENTS SLIDE 2 EVENTS",
    ],
)
def test_negation_checks(text: str) -> None:
    check_text(text, S)


CHECK_ERRORS = [
    ("(A ; NOT B AS b ; C) FILTER b[x > 1]", 1, 29, "unknown variable 'b' in FILTER",
     "b is bound only inside the NOT at line 1, column 6"),
    ("RETURN COUNT(B) PATTERN A ; NOT B ; C", 1, 14, "unknown variable 'B' in RETURN",
     "local to it"),
    ("AGG z[n := COUNT(b)](A ; NOT (B AS b) ; C)", 1, 18, "unknown variable 'b' in AGG",
     "local to it"),
    ("PROJECT[B](A ; NOT B ; C)", 1, 9, "PROJECT keeps variable 'B'", "local to it"),
    ("A ; NOT (B FILTER A[x > 1]) ; C", 1, 19, "unknown variable 'A' in FILTER",
     "variables in scope: B"),
    ("NOT B ; A", 1, 1, "NOT at the start of the pattern (leading negation) needs WITHIN", ""),
    ("(A FILTER A[x > 1]) ; NOT B", 1, 23, "(trailing negation) needs WITHIN", ""),
    ("(NOT B ; A) OR C WITHIN 3 EVENTS", 1, 2, "is allowed only at the top of a query's pattern",
     "φ1 ; NOT ψ ; φ2"),
    ("A ; NOT (NOT B ; C) ; A WITHIN 3 EVENTS", 1, 10, "(leading negation) is allowed only", ""),
    ("AGG z[n := COUNT(A)](A ; NOT B) WITHIN 3 EVENTS", 1, 26, "(trailing negation) is allowed only",
     ""),
    ("(A ; NOT B) AS y WITHIN 3 EVENTS", 1, 6, "(trailing negation) is allowed only", ""),
    ("A ; NOT F ; C", 1, 9, "unknown event type 'F'", ""),
]


@pytest.mark.parametrize(("text", "line", "column", "message", "hint"), CHECK_ERRORS)
def test_negation_check_errors_are_located(
    text: str, line: int, column: int, message: str, hint: str
) -> None:
    with pytest.raises(AcelCheckError) as info:
        check_text(text, S)
    assert (info.value.line, info.value.column) == (line, column)
    assert message in info.value.message
    assert hint in info.value.message
    assert "^" in str(info.value)


def test_a_bare_formula_has_no_window_for_leading_negation() -> None:
    with pytest.raises(AcelCheckError, match="allowed only at the top"):
        check_formula(parse_formula("NOT B ; A"), S)
    check_formula(parse_formula("A ; NOT B ; C"), S)


def test_environments_leave_the_negated_variables_out() -> None:
    assert set(formula_env(parse_formula("A ; NOT (B AS b) ; C"), S)) == {"A", "C"}
    assert set(formula_env(parse_formula("NOT (B AS b) ; A ; NOT C"), S)) == {"A"}


def test_top_negation_splits_the_top_chain() -> None:
    f1 = VarPred("A", Compare(">", Attr("x"), Lit(1)))
    f2 = VarPred("A", Compare("<", Attr("x"), Lit(3)))
    formula = FilterF(FilterF(LeadingNot((B,), TrailingNot(Plus(A), (C, D))), f1), f2)
    split = top_negation(formula)
    assert split == TopNegation((B,), FilterF(FilterF(Plus(A), f1), f2), (C, D))
    assert split.negated
    plain = SeqNot(A, (B,), C)
    assert top_negation(plain).body is plain and not top_negation(plain).negated


def test_queries_with_top_negation_round_trip() -> None:
    query = Query(
        FilterF(LeadingNot((B,), TrailingNot(Plus(A), (C,))), VarPred("A", Compare(">", Attr("x"), Lit(1)))),
        within=Window(4),
    )
    text = format_query(query)
    assert text == "NOT B ; A+ ; NOT C FILTER A[x > 1]\nWITHIN 4 EVENTS"
    assert parse_query(text) == query
