"""The parser: spec §11 precedence, the paper's queries, precise syntax errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acel.lang.ast import (
    Agg,
    AggOutput,
    And,
    As,
    Atom,
    Attr,
    BagPred,
    BinOp,
    Compare,
    Contig,
    ContigPlus,
    CountStar,
    FilterAnd,
    FilterF,
    FilterOr,
    InList,
    Lit,
    Neg,
    Next,
    Or,
    Plus,
    PredAnd,
    PredNot,
    PredOr,
    ProjectAttrs,
    ProjectVars,
    Query,
    ReturnAgg,
    ReturnAttr,
    Seq,
    VarPred,
    Window,
)
from acel.lang.checker import check_text
from acel.lang.errors import AcelSyntaxError
from acel.lang.parser import parse_formula, parse_query, parse_query_located
from acel.lang.printer import format_query
from acel.lang.schema import Schema

PAPER = Path(__file__).resolve().parent.parent / "examples" / "paper"
PAPER_SCHEMA = Schema.from_json(json.loads((PAPER / "schema.json").read_text()))
PAPER_FILES = sorted(PAPER.glob("*.acel"))


def _vp(var: str, attr: str, op: str, value: object) -> VarPred:
    return VarPred(var, Compare(op, Attr(attr), Lit(value)))  # type: ignore[arg-type]


# ------------------------------------------------------- the paper's queries


def test_all_paper_examples_are_present() -> None:
    names = {p.stem.split("_")[0] for p in PAPER_FILES}
    assert {"ex3", "ex5", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9"} <= names
    assert len(PAPER_FILES) == 12


@pytest.mark.parametrize("path", PAPER_FILES, ids=lambda p: p.stem)
def test_paper_queries_parse_check_and_print_canonically(path: Path) -> None:
    text = path.read_text()
    assert text.startswith("-- "), "each example opens with a one-line comment"
    query = check_text(text, PAPER_SCHEMA)
    canonical = format_query(query)
    assert parse_query(canonical) == query
    assert format_query(parse_query(canonical)) == canonical
    check_text(canonical, PAPER_SCHEMA)


def test_example_3_2_structure() -> None:
    query = parse_query((PAPER / "ex3_2_three_sales.acel").read_text())
    msft, intel, amzn = (
        As(Atom("SELL"), "msft"),
        As(Atom("SELL"), "intel"),
        As(Atom("SELL"), "amzn"),
    )
    filt = FilterAnd(
        FilterAnd(
            VarPred(
                "msft", PredAnd(_vp("", "name", "=", "MSFT").pred, _vp("", "price", ">", 100).pred)
            ),
            _vp("intel", "name", "=", "INTL"),
        ),
        VarPred(
            "amzn", PredAnd(_vp("", "name", "=", "AMZN").pred, _vp("", "price", "<", 2000).pred)
        ),
    )
    assert query == Query(FilterF(Seq(Seq(msft, intel), amzn), filt))


def test_example_5_1_structure() -> None:
    query = parse_query((PAPER / "ex5_1_max_intel_price.acel").read_text())
    assert isinstance(query.formula, Agg)
    assert query.formula.var == "m"
    assert query.formula.outputs == (AggOutput("max_price", "MAX", "intel", "price"),)
    inner = query.formula.formula
    assert isinstance(inner, FilterF)
    assert inner.formula == Seq(
        Seq(As(Atom("SELL"), "msft"), Plus(As(Atom("SELL"), "intel"))), As(Atom("SELL"), "amzn")
    )


def test_example_5_2_structure() -> None:
    query = parse_query((PAPER / "ex5_2_upward_trend_length.acel").read_text())
    f = query.formula
    assert isinstance(f, FilterF) and f.filter == _vp("w", "QNT", ">", 3)
    assert isinstance(f.formula, Agg)
    assert f.formula.outputs == (AggOutput("QNT", "COUNT", "x", None),)
    inner = f.formula.formula
    assert isinstance(inner, FilterF)
    assert inner.formula == Plus(As(Atom("SELL"), "x"))
    assert isinstance(inner.filter, FilterAnd)
    assert inner.filter.left == BagPred("x", "INC", "price")


def test_trend_query_clauses() -> None:
    query = parse_query((PAPER / "d4_greta_down_trends.acel").read_text())
    assert query.returns == (ReturnAttr("sector"), CountStar())
    assert query.partition_by == ("company", "sector")
    assert query.within == Window(600, "ts")
    assert query.slide == Window(10, "ts")
    d8 = parse_query((PAPER / "d8_cogra_pool_trips.acel").read_text())
    assert d8.formula == Contig(
        Contig(Atom("Accept"), ContigPlus(Contig(Next("Call"), Next("Cancel")))), Next("Finish")
    )


# ------------------------------------------------------------- precedence

A, B, C = Atom("A"), Atom("B"), Atom("C")


@pytest.mark.parametrize(
    ("text", "formula"),
    [
        ("A ; B ; C", Seq(Seq(A, B), C)),
        ("A : B ; C", Seq(Contig(A, B), C)),
        ("A ; B : C", Contig(Seq(A, B), C)),
        ("A OR B AND C", Or(A, And(B, C))),
        ("A AND B OR C", Or(And(A, B), C)),
        ("A ; B AND C", And(Seq(A, B), C)),
        ("A OR B ; C", Or(A, Seq(B, C))),
        ("A AS x+", Plus(As(A, "x"))),
        ("A+ AS x", As(Plus(A), "x")),
        ("A :+ AS x :+", ContigPlus(As(ContigPlus(A), "x"))),
        ("A ; B AS x", Seq(A, As(B, "x"))),
        ("(A ; B) AS x", As(Seq(A, B), "x")),
        ("A ; B FILTER A[x = 1]", FilterF(Seq(A, B), _vp("A", "x", "=", 1))),
        ("A OR B FILTER A[x = 1]", FilterF(Or(A, B), _vp("A", "x", "=", 1))),
        (
            "A FILTER A[x = 1] FILTER B[y = 2]",
            FilterF(FilterF(A, _vp("A", "x", "=", 1)), _vp("B", "y", "=", 2)),
        ),
        (
            "(A FILTER A[x = 1]) ; B",
            Seq(FilterF(A, _vp("A", "x", "=", 1)), B),
        ),
        (
            "A FILTER A[x = 1] OR B[y = 2] AND C[k = 0]",
            FilterF(
                A,
                FilterOr(
                    _vp("A", "x", "=", 1),
                    FilterAnd(_vp("B", "y", "=", 2), _vp("C", "k", "=", 0)),
                ),
            ),
        ),
        (
            "A FILTER (A[x = 1] OR B[y = 2]) AND C[SAME(k)]",
            FilterF(
                A,
                FilterAnd(
                    FilterOr(_vp("A", "x", "=", 1), _vp("B", "y", "=", 2)),
                    BagPred("C", "SAME", "k"),
                ),
            ),
        ),
        ("PROJECT[](A)", ProjectVars((), A)),
        ("PROJECT[A, x](A AS x)", ProjectVars(("A", "x"), As(A, "x"))),
        ("PROJECT A[x, type](A)", ProjectAttrs("A", ("x", "type"), A)),
        ("NEXT(A) ; B", Seq(Next("A"), B)),
        (
            "AGG z[n := count(A), s := Sum(A.x)](A+)",
            Agg(
                "z", (AggOutput("n", "COUNT", "A", None), AggOutput("s", "SUM", "A", "x")), Plus(A)
            ),
        ),
    ],
)
def test_formula_precedence(text: str, formula: object) -> None:
    assert parse_formula(text) == formula


def _pred(text: str) -> object:
    f = parse_formula(f"A FILTER A[{text}]")
    assert isinstance(f, FilterF) and isinstance(f.filter, VarPred)
    return f.filter.pred


def _expr(text: str) -> object:
    pred = _pred(f"{text} = 0")
    assert isinstance(pred, Compare)
    return pred.left


x, y, z = Attr("x"), Attr("y"), Attr("z")


@pytest.mark.parametrize(
    ("text", "expr"),
    [
        ("x + y * z", BinOp("+", x, BinOp("*", y, z))),
        ("x - y - z", BinOp("-", BinOp("-", x, y), z)),
        ("x - (y - z)", BinOp("-", x, BinOp("-", y, z))),
        ("x / y % z", BinOp("%", BinOp("/", x, y), z)),
        ("-x * y", BinOp("*", Neg(x), y)),
        ("-(x * y)", Neg(BinOp("*", x, y))),
        ("-3", Lit(-3)),
        ("- 3", Lit(-3)),
        ("-(3)", Lit(-3)),
        ("- -3", Lit(3)),
        ("-2.5e3", Lit(-2500.0)),
        (".5", Lit(0.5)),
        ("'it''s'", Lit("it's")),
        ("TRUE", Lit(True)),
        ("false", Lit(False)),
        ("x - -1", BinOp("-", x, Lit(-1))),
    ],
)
def test_expression_precedence(text: str, expr: object) -> None:
    assert _expr(text) == expr


def test_predicate_precedence() -> None:
    c1, c2, c3 = (Compare("=", Attr(n), Lit(1)) for n in ("x", "y", "z"))
    assert _pred("x = 1 OR y = 1 AND z = 1") == PredOr(c1, PredAnd(c2, c3))
    assert _pred("NOT x = 1 AND y = 1") == PredAnd(PredNot(c1), c2)
    assert _pred("NOT (x = 1 AND y = 1)") == PredNot(PredAnd(c1, c2))
    assert _pred("(x + 1) * 2 >= (3)") == Compare(
        ">=", BinOp("*", BinOp("+", x, Lit(1)), Lit(2)), Lit(3)
    )
    assert _pred("x NOT IN (1, -2, 'a', 2.5, TRUE)") == InList(x, (1, -2, "a", 2.5, True), True)
    assert _pred("NOT x IN ()") == PredNot(InList(x, ()))


# ----------------------------------------------------- lexical conventions


def test_keywords_are_case_insensitive_identifiers_are_not() -> None:
    lower = parse_query(
        "return count(*) pattern sell as x filter x[price > 1] partition by k within 3 events"
    )
    upper = parse_query(
        "RETURN COUNT(*) PATTERN sell AS x FILTER x[price > 1] PARTITION BY k WITHIN 3 EVENTS"
    )
    assert lower == upper
    assert parse_formula("Sell") != parse_formula("SELL")


def test_comments_and_whitespace() -> None:
    text = "-- leading comment\nA ; -- after an operator\n  B\t-- trailing\n"
    assert parse_formula(text) == Seq(A, B)


def test_pattern_keyword_is_optional() -> None:
    assert parse_query("RETURN COUNT(*) A ; B") == parse_query("RETURN COUNT(*) PATTERN A ; B")
    assert parse_query("PATTERN A") == Query(A)
    assert parse_query("RETURN k, MAX(A.x) PATTERN A PARTITION BY k").returns == (
        ReturnAttr("k"),
        ReturnAgg("MAX", "A", "x"),
    )


def test_windows() -> None:
    assert parse_query("A WITHIN 3 EVENTS").within == Window(3)
    assert parse_query("A WITHIN 2.5 ON ts").within == Window(2.5, "ts")
    assert parse_query("A WITHIN -1 EVENTS").within == Window(-1)  # rejected by the checker


def test_parse_formula_rejects_clauses() -> None:
    with pytest.raises(AcelSyntaxError, match="formula only") as info:
        parse_formula("A ;\nB WITHIN 3 EVENTS")
    assert (info.value.line, info.value.column) == (2, 10)


def test_too_deep_nesting_is_a_user_error() -> None:
    assert parse_formula(" ; ".join(["A"] * 200)) is not None
    with pytest.raises(AcelSyntaxError, match="nested too deeply"):
        parse_formula(" ; ".join(["A"] * 5000))


def test_locations_point_at_names() -> None:
    query, loc = parse_query_located("A ;\n  B AS xx FILTER xx[y > 1]")
    f = query.formula
    assert isinstance(f, FilterF) and isinstance(f.formula, Seq)
    assert loc.get(f.formula.left) == (1, 1)
    assert loc.get(f.formula.right, "var") == (2, 8)
    assert isinstance(f.filter, VarPred)
    assert loc.get(f.filter, "var") == (2, 18)
    assert isinstance(f.filter.pred, Compare)
    assert loc.get(f.filter.pred.left) == (2, 21)


# ----------------------------------------------------------- syntax errors

SYNTAX_ERRORS = [
    (
        "",
        1,
        1,
        "found the end of the query but expected RETURN, SELECT, PATTERN, a type name, '(', NEXT, PROJECT, AGG or NOT",
    ),
    (
        "SELL ;",
        1,
        7,
        "found the end of the query but expected a type name, '(', NEXT, PROJECT, AGG or NOT",
    ),
    ("SELL ; ; BUY", 1, 8, "found ';' but expected a type name, '(', NEXT, PROJECT, AGG or NOT"),
    ("SELL AS", 1, 8, "expected a variable name"),
    (
        "SELL AS filter",
        1,
        9,
        "found the keyword FILTER but expected a variable name (FILTER is a reserved word and cannot be a name)",
    ),
    ("SELL FILTER", 1, 12, "expected a variable name or '('"),
    (
        "SELL FILTER SELL[price >]",
        1,
        25,
        "found ']' but expected a name, '(', a number, a 'string', TRUE, FALSE or '-'",
    ),
    (
        "SELL FILTER SELL[price > 1",
        1,
        27,
        "found the end of the query but expected '+', '-', '*', '/', '%', AND, OR or ']'",
    ),
    ("SELL FILTER SELL[name = 'MSFT]", 1, 25, "unterminated string"),
    (
        "SELL FILTER SELL[price $ 3]",
        1,
        24,
        "unexpected character '$'; expected a name, '(', NOT, a comparison (= != < <= > >=), IN",
    ),
    ("(SELL ; BUY", 1, 12, "found the end of the query but expected ')'"),
    (
        "SELL BUY",
        1,
        6,
        "found the name 'BUY' but expected '+', '*', ':+', '{', ':{', '?', AS, ';', ':', AND, OR, FILTER",
    ),
    ("AGG m[x = MAX(SELL.price)](SELL)", 1, 9, "found '=' but expected ':='"),
    ("PROJECT SELL(SELL)", 1, 13, "found '(' but expected '['"),
    ("SELL WITHIN EVENTS", 1, 13, "found the keyword EVENTS but expected a number"),
    ("RETURN SUM(*) PATTERN SELL", 1, 8, "only COUNT takes '*'"),
    ("SELL FILTER SELL[price < 3 < 4]", 1, 28, "found '<' but expected '+', '-', AND, OR or ']'"),
    ("NEXT SELL", 1, 6, "found the name 'SELL' but expected '('"),
    ("SELL\n  FILTER SELL[SAME(price]", 2, 25, "found ']' but expected ')'"),
    ("SELL PARTITION name", 1, 16, "found the name 'name' but expected BY"),
    (
        "SELL ; BUY FILTER SELL[price > 1] OR BUY",
        1,
        41,
        "found the end of the query but expected '['",
    ),
    (
        "SELL WITHIN 3 EVENTS PARTITION BY k",
        1,
        22,
        "found the keyword PARTITION but expected SLIDE, AFTER or the end of the query",
    ),
    ("SELL FILTER SELL[INC(price) AND price > 1]", 1, 29, "found the keyword AND but expected ']'"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), SYNTAX_ERRORS)
def test_syntax_errors_are_precise(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(AcelSyntaxError) as info:
        parse_query(text)
    err = info.value
    assert (err.line, err.column) == (line, column)
    assert message in err.message
    rendered = str(err)
    assert rendered.startswith(f"line {line}, column {column}: ")
    lines = rendered.split("\n")
    assert lines[-1] == "  " + " " * (column - 1) + "^"
