"""The checker (scopes, attributes, functions, clauses) and the NEXT macro."""

from __future__ import annotations

import pytest
from hypothesis import given

from acel.lang import aggregates
from acel.lang.ast import (
    As,
    Atom,
    Attr,
    Compare,
    Contig,
    ContigPlus,
    FilterF,
    Formula,
    Lit,
    Next,
    Or,
    ProjectVars,
    Query,
    Seq,
    VarPred,
)
from acel.lang.checker import check_query, check_text, formula_env
from acel.lang.errors import AcelCheckError
from acel.lang.macros import expand_next, next_macro
from acel.lang.parser import parse_formula, parse_query
from acel.lang.printer import format_formula
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, formulas

S = Schema.of({"SELL": ["name", "price"], "BUY": ["name", "price"]})

CHECK_ERRORS = [
    ("SELL ; STOCK", 1, 8, "unknown event type 'STOCK'; the schema has BUY, SELL"),
    ("NEXT(STOCK)", 1, 6, "unknown event type 'STOCK'"),
    ("SELL FILTER x[price > 1]", 1, 13, "unknown variable 'x' in FILTER; variables in scope: SELL"),
    ("SELL FILTER BUY[price > 1]", 1, 13, "unknown variable 'BUY' in FILTER"),
    (
        "SELL AS s FILTER s[volume > 1]",
        1,
        20,
        "unknown attribute 'volume' of variable s; s may carry name, price, type",
    ),
    (
        "SELL FILTER SELL[2 * (price + volume) > 1]",
        1,
        31,
        "unknown attribute 'volume' of variable SELL",
    ),
    ("SELL FILTER SELL[INC(volume)]", 1, 22, "unknown attribute 'volume' of variable SELL"),
    ("SELL FILTER z[SAME(price)]", 1, 13, "unknown variable 'z' in FILTER"),
    ("PROJECT[x](SELL)", 1, 9, "PROJECT keeps variable 'x', which does not occur in its formula"),
    ("PROJECT SELL[volume](SELL)", 1, 14, "PROJECT SELL[...] keeps unknown attribute 'volume'"),
    ("PROJECT x[name](SELL)", 1, 9, "unknown variable 'x' in PROJECT"),
    (
        "AGG m[a := MEDIAN(SELL.price)](SELL)",
        1,
        12,
        "unknown aggregate function 'MEDIAN'; known: AVG, COUNT, MAX, MIN, STDDEV, SUM",
    ),
    (
        "AGG m[a := SUM(SELL)](SELL)",
        1,
        12,
        "SUM needs an attribute: write SUM(X.attribute) (only COUNT may omit it)",
    ),
    (
        "AGG m[a := MAX(SELL.price), a := MIN(SELL.price)](SELL)",
        1,
        29,
        "AGG output 'a' is assigned twice",
    ),
    ("AGG m[type := COUNT(SELL)](SELL)", 1, 7, "'type' cannot be an AGG output"),
    (
        "AGG m[a := MAX(x.price)](SELL)",
        1,
        16,
        "unknown variable 'x' in AGG; variables in scope: SELL",
    ),
    ("AGG m[a := MAX(SELL.volume)](SELL)", 1, 21, "unknown attribute 'volume' of variable SELL"),
    (
        "AGG m[a := MAX(SELL.price)](SELL) FILTER m[price > 1]",
        1,
        44,
        "unknown attribute 'price' of variable m; m may carry a",
    ),
    ("PROJECT SELL[name](SELL) FILTER SELL[price > 1]", 1, 38, "SELL may carry name"),
    ("PROJECT[SELL](SELL ; BUY) FILTER BUY[price > 1]", 1, 34, "unknown variable 'BUY' in FILTER"),
    ("RETURN COUNT(x) PATTERN SELL", 1, 14, "unknown variable 'x' in RETURN"),
    ("RETURN AVG(SELL) PATTERN SELL", 1, 8, "AVG needs an attribute"),
    ("RETURN FOO(SELL.price) PATTERN SELL", 1, 8, "unknown aggregate function 'FOO'"),
    ("RETURN SUM(SELL.volume) PATTERN SELL", 1, 17, "unknown attribute 'volume' of variable SELL"),
    (
        "RETURN name, COUNT(*) PATTERN SELL",
        1,
        8,
        "RETURN name: a bare attribute must be a PARTITION BY attribute",
    ),
    ("RETURN COUNT(*), count(*) PATTERN SELL", 1, 18, "RETURN lists COUNT(*) twice"),
    ("RETURN COUNT(*) PATTERN SELL WITHIN 0 EVENTS", 1, 37, "WITHIN needs a positive size, not 0"),
    ("SELL WITHIN -2 EVENTS", 1, 13, "WITHIN needs a positive size, not -2"),
    ("SELL WITHIN 2.5 EVENTS", 1, 13, "WITHIN 2.5 EVENTS: a number of events is an integer"),
    ("SELL WITHIN 5 EVENTS SLIDE 1 EVENTS", 1, 28, "SLIDE needs both RETURN and WITHIN"),
    ("RETURN COUNT(*) PATTERN SELL SLIDE 1 EVENTS", 1, 36, "SLIDE needs both RETURN and WITHIN"),
    (
        "RETURN COUNT(*) PATTERN SELL WITHIN 3 EVENTS SLIDE 0 EVENTS",
        1,
        52,
        "SLIDE needs a positive size",
    ),
    (
        "RETURN COUNT(*) PATTERN SELL WITHIN 3 EVENTS SLIDE 1 ON price",
        1,
        52,
        "SLIDE must measure the same way as WITHIN",
    ),
    (
        "SELL PARTITION BY volume",
        1,
        19,
        "PARTITION BY volume: unknown attribute; the schema has name, price, type",
    ),
    ("SELL PARTITION BY name, name", 1, 25, "PARTITION BY lists 'name' twice"),
    ("SELL WITHIN 3 ON ts", 1, 18, "WITHIN ... ON ts: unknown attribute"),
    (
        "SELL ;\n  (BUY AS b)+\n  FILTER b[SAME(volume)]",
        3,
        17,
        "unknown attribute 'volume' of variable b",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), CHECK_ERRORS)
def test_check_errors_are_precise(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(AcelCheckError) as info:
        check_text(text, S)
    err = info.value
    assert (err.line, err.column) == (line, column)
    assert message in err.message
    assert str(err).split("\n")[-1] == "  " + " " * (column - 1) + "^"


def test_errors_without_locations_still_name_the_place() -> None:
    with pytest.raises(AcelCheckError) as info:
        check_query(parse_query("SELL FILTER x[price > 1]"), S)
    assert info.value.line is None
    assert "unknown variable 'x' in FILTER" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "SELL AS x FILTER x[type = 'SELL' AND name IN ('MSFT', 'INTL')]",
        "(SELL ; BUY) AS x FILTER x[SAME(name)]",
        "AGG z[n := COUNT(SELL), p := AVG(SELL.price)](SELL+) FILTER z[n > 2 AND p < 10]",
        "AGG z[n := count(SELL)](AGG z[m := MIN(SELL.price)](SELL)) FILTER z[n > m]",
        "AGG SELL[n := COUNT(SELL)](SELL) FILTER SELL[n > 1 OR price > 1]",
        "(AGG z[n := COUNT(SELL)](SELL)) AS all FILTER all[n > 1 OR price > 1]",
        "PROJECT SELL[type](SELL) FILTER SELL[type = 'SELL']",
        "PROJECT[](SELL ; BUY)",
        "NEXT(BUY) AS b FILTER b[price > 1]",
        "RETURN name, COUNT(*), COUNT(x), SUM(x.price), min(x.price) PATTERN SELL AS x PARTITION BY name",
        "RETURN COUNT(*) PATTERN SELL WITHIN 3 EVENTS SLIDE 5 EVENTS",
        "RETURN COUNT(*) PATTERN SELL WITHIN 2.5 ON price SLIDE 0.5 ON price",
        "SELL PARTITION BY type",
    ],
)
def test_well_formed_queries_pass(text: str) -> None:
    check_text(text, S)


def test_user_registered_aggregate_is_accepted() -> None:
    product = aggregates.Aggregate("PRODUCT_TEST", 1, lambda v: v, lambda a, b: a * b, lambda a: a)
    aggregates.register(product)
    try:
        check_text("AGG z[p := product_test(SELL.price)](SELL+)", S)
        check_text("RETURN PRODUCT_TEST(SELL.price) PATTERN SELL", S)
    finally:  # the strategies generate every registered aggregate: leave none behind
        del aggregates._REGISTRY["PRODUCT_TEST"]


def test_formula_env() -> None:
    env = formula_env(parse_formula("AGG z[n := COUNT(x)]((SELL ; BUY) AS x)"), S)
    assert env == {
        "SELL": frozenset({"type", "name", "price"}),
        "BUY": frozenset({"type", "name", "price"}),
        "x": frozenset({"type", "name", "price"}),
        "z": frozenset({"n"}),
    }
    assert formula_env(parse_formula("PROJECT[x](SELL AS x)"), S) == {
        "x": frozenset({"type", "name", "price"})
    }


# -------------------------------------------------------------------- NEXT


def test_next_macro_is_the_spec_formula() -> None:
    u = "__next_BUY"
    expected = Or(
        Atom("BUY"),
        ProjectVars(
            ("BUY",),
            Contig(
                FilterF(
                    ContigPlus(As(Or(Atom("BUY"), Atom("SELL")), u)),
                    VarPred(u, Compare("!=", Attr("type"), Lit("BUY"))),
                ),
                Atom("BUY"),
            ),
        ),
    )
    assert next_macro("BUY", S.type_names()) == expected
    # Exactly the text of spec §3 (with u written __next_BUY).
    assert format_formula(expected) == (
        "BUY OR PROJECT[BUY]((((BUY OR SELL) AS __next_BUY):+ "
        "FILTER __next_BUY[type != 'BUY']) : BUY)"
    )
    assert parse_formula(format_formula(expected)) == expected


def test_expand_next_everywhere() -> None:
    f = parse_formula(
        "AGG z[n := COUNT(x)](PROJECT[x](SELL ; NEXT(BUY) AS x) FILTER x[price > 1]) OR NEXT(SELL)"
    )
    expanded = expand_next(f, S.type_names())
    text = format_formula(expanded)
    assert "NEXT" not in text
    assert text.count("__next_BUY") == 2 and text.count("__next_SELL") == 2
    check_query(Query(expanded), S)
    assert formula_env(expanded, S) == formula_env(f, S)
    assert expand_next(parse_formula("SELL ; BUY"), S.type_names()) == Seq(
        Atom("SELL"), Atom("BUY")
    )


def test_next_needs_types() -> None:
    with pytest.raises(ValueError):
        expand_next(Next("A"), ())


@given(formulas())
def test_expansion_keeps_the_environment(formula: Formula) -> None:
    expanded = expand_next(formula, TEST_SCHEMA.type_names())
    assert formula_env(expanded, TEST_SCHEMA) == formula_env(formula, TEST_SCHEMA)
