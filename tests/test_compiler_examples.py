"""Spec §10 on naive automaton runs, plus regression tests found by the cross-check."""

from __future__ import annotations

from acel.acea.engine import naive
from acel.compiler import compile_formula, compile_query
from test_compiler_oracle import check_formula
from test_render import EXAMPLES, SCHEMA

from acel.lang.ast import Query, Window
from acel.lang.events import Event
from acel.lang.parser import parse_formula, parse_query
from acel.testing import SPEC_STOCK_EVENTS, TEST_SCHEMA

STREAM = SPEC_STOCK_EVENTS


def test_example_3_2() -> None:
    got = naive.evaluate(compile_formula(parse_formula(EXAMPLES["3.2"]), SCHEMA), STREAM)
    spans = sorted((c.start, c.end, tuple(e.time for e in c.bag("intel"))) for c in got)
    assert spans == [(0, 4, (2,)), (0, 6, (2,)), (0, 6, (5,)), (1, 4, (2,)), (1, 6, (2,)), (1, 6, (5,))]


def test_example_5_1() -> None:
    got = naive.evaluate(compile_formula(parse_formula(EXAMPLES["5.1"]), SCHEMA), STREAM)
    assert len(got) == 8
    for ce in got:
        intel = tuple(e.time for e in ce.bag("intel"))
        (m,) = ce.bag("m")
        assert m.time == ce.end
        assert m.get("max_price") == (81 if 5 in intel else 80)


def test_example_5_2_counts_increasing_runs() -> None:
    stream = [Event.make(i, {"type": "SELL", "name": "X", "price": p})
              for i, p in enumerate([100, 150, 120, 200, 300, 400])]
    got = naive.evaluate(compile_formula(parse_formula(EXAMPLES["5.2"]), SCHEMA), stream)
    assert got and all(ce.bag("w")[0].get("QNT") > 3 for ce in got)
    for ce in got:
        prices = [e.get("price") for e in ce.bag("x")]
        assert prices == sorted(set(prices)) and len(prices) > 3  # type: ignore[type-var]


def test_next_keeps_the_type_check_regression() -> None:
    """First property failure: folding dropped the atom's own ``type#k = 'R'``."""
    f = parse_formula("NEXT(A) AS p")
    stream = [Event.make(0, {"type": "B"})]
    assert naive.evaluate(compile_formula(f, TEST_SCHEMA), stream) == set()
    check_formula(f, stream)
    check_formula(f, [Event.make(0, {"type": "B"}), Event.make(1, {"type": "A", "x": 1})])


def test_within_register_check() -> None:
    query = parse_query("A ; B WITHIN 2 EVENTS")
    compiled = compile_query(query, TEST_SCHEMA)
    assert compiled.within == Window(2) and compiled.partition_by == ()
    stream = [Event.make(i, {"type": t}) for i, t in enumerate("A A B C B".split())]
    ces = naive.evaluate(compiled.automaton, stream)
    assert {(c.start, c.end) for c in ces} == {(1, 2)}
    bare = naive.evaluate(compiled.formula_automaton, stream)
    assert {(c.start, c.end) for c in bare} == {(0, 2), (1, 2), (0, 4), (1, 4)}
    on_attr = compile_query(Query(parse_formula("A ; B"), within=Window(5, "x")), TEST_SCHEMA)
    timed = [Event.make(i, {"type": t, "x": x}) for i, (t, x) in enumerate([("A", 0), ("A", 3), ("B", 6)])]
    assert {(c.start, c.end) for c in naive.evaluate(on_attr.automaton, timed)} == {(1, 2)}
