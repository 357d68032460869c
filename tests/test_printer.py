"""The canonical printer: exact round trip and fixed point (spec §11)."""

from __future__ import annotations

import pytest
from hypothesis import given

from acel.lang.ast import (
    As,
    Atom,
    Attr,
    BinOp,
    Compare,
    FilterF,
    Formula,
    Lit,
    Neg,
    Or,
    Plus,
    PredNot,
    Query,
    Seq,
    VarPred,
    Window,
)
from acel.lang.parser import parse_formula, parse_query
from acel.lang.printer import format_expr, format_formula, format_literal, format_name, format_query
from acel.testing import formulas, queries, raw_formulas, raw_queries, trend_queries


def _round_trip_formula(f: Formula) -> None:
    text = format_formula(f)
    back = parse_formula(text)
    assert back == f, text
    assert format_formula(back) == text


def _round_trip_query(q: Query) -> None:
    text = format_query(q)
    back = parse_query(text)
    assert back == q, text
    assert format_query(back) == text


@given(raw_formulas)
def test_round_trip_arbitrary_formulas(f: Formula) -> None:
    _round_trip_formula(f)


@given(raw_queries)
def test_round_trip_arbitrary_queries(q: Query) -> None:
    _round_trip_query(q)


@given(formulas())
def test_round_trip_well_formed_formulas(f: Formula) -> None:
    _round_trip_formula(f)


@given(queries())
def test_round_trip_queries(q: Query) -> None:
    _round_trip_query(q)


@given(trend_queries())
def test_round_trip_trend_queries(q: Query) -> None:
    _round_trip_query(q)


@pytest.mark.parametrize(
    ("formula", "text"),
    [
        (Plus(As(Atom("SELL"), "x")), "(SELL AS x)+"),
        (As(Plus(Atom("SELL")), "x"), "SELL+ AS x"),
        (Seq(Atom("A"), Seq(Atom("B"), Atom("C"))), "A ; (B ; C)"),
        (Seq(Seq(Atom("A"), Atom("B")), Atom("C")), "A ; B ; C"),
        (Seq(Or(Atom("A"), Atom("B")), Atom("C")), "(A OR B) ; C"),
        (
            Seq(FilterF(Atom("A"), VarPred("A", Compare("=", Attr("x"), Lit(1)))), Atom("B")),
            "(A FILTER A[x = 1]) ; B",
        ),
        (
            FilterF(
                FilterF(Atom("A"), VarPred("A", Compare("=", Attr("x"), Lit(1)))),
                VarPred("A", Compare("<", Attr("y"), Lit(-2))),
            ),
            "A FILTER A[x = 1] FILTER A[y < -2]",
        ),
        (Plus(Plus(Atom("A"))), "A++"),
    ],
)
def test_parentheses_only_where_needed(formula: Formula, text: str) -> None:
    assert format_formula(formula) == text
    assert parse_formula(text) == formula


def test_expressions_never_print_a_comment() -> None:
    assert format_expr(Neg(Neg(Attr("a")))) == "-(-a)"
    assert format_expr(BinOp("-", Attr("a"), Lit(-3))) == "a - -3"
    assert format_expr(BinOp("-", Attr("a"), BinOp("-", Attr("b"), Attr("c")))) == "a - (b - c)"
    assert format_expr(BinOp("*", BinOp("+", Attr("a"), Lit(1)), Attr("c"))) == "(a + 1) * c"
    assert format_expr(Neg(BinOp("*", Attr("a"), Attr("b")))) == "-(a * b)"


def test_literals() -> None:
    assert format_literal("it's") == "'it''s'"
    assert format_literal(True) == "TRUE"
    assert format_literal(0.1) == "0.1"
    assert format_literal(1e16) == "1e+16"
    assert format_literal(-2) == "-2"
    with pytest.raises(ValueError):
        format_literal(float("nan"))


def test_names_that_cannot_be_printed() -> None:
    with pytest.raises(ValueError):
        format_name("filter")
    with pytest.raises(ValueError):
        format_name("a b")


def test_not_binds_tighter_than_and() -> None:
    f = parse_formula("A FILTER A[NOT x = 1 AND y = 2]")
    assert isinstance(f, FilterF) and isinstance(f.filter, VarPred)
    assert format_formula(f) == "A FILTER A[NOT x = 1 AND y = 2]"
    g = FilterF(Atom("A"), VarPred("A", PredNot(parse_pred_and())))
    assert format_formula(g) == "A FILTER A[NOT (x = 1 AND y = 2)]"


def parse_pred_and():  # type: ignore[no-untyped-def]
    f = parse_formula("A FILTER A[x = 1 AND y = 2]")
    assert isinstance(f, FilterF) and isinstance(f.filter, VarPred)
    return f.filter.pred


def test_query_layout() -> None:
    q = parse_query(
        "return count(*), k pattern A ; B partition by k within 5 events slide 2 events"
    )
    assert format_query(q) == (
        "RETURN COUNT(*), k\nPATTERN A ; B\nPARTITION BY k\nWITHIN 5 EVENTS\nSLIDE 2 EVENTS"
    )
    assert parse_query("A WITHIN 2.5 ON ts").within == Window(2.5, "ts")
