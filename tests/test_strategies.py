"""The shared strategies generate what they promise: checked, varied ASTs and streams."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, find, given, settings

from acel.lang.ast import (
    Agg,
    And,
    As,
    Atom,
    Contig,
    ContigPlus,
    FilterF,
    Formula,
    LeadingNot,
    Next,
    Or,
    Plus,
    ProjectAttrs,
    ProjectVars,
    Query,
    Seq,
    SeqNot,
    TrailingNot,
    top_chain,
    top_negation,
)
from acel.lang.checker import check_formula, check_query, formula_env
from acel.lang.events import Event
from acel.lang.macros import expand_next
from acel.lang.printer import format_formula
from acel.testing import (
    DOMAINS,
    TEST_SCHEMA,
    formulas,
    formulas_with_env,
    queries,
    streams,
    trend_queries,
)


def _children(f: Formula) -> list[Formula]:
    out = [getattr(f, n) for n in ("formula", "left", "right") if getattr(f, n, None) is not None]
    return out + list(getattr(f, "excluded", ()))


def _nodes(f: Formula) -> list[object]:
    out: list[object] = [f]
    for child in _children(f):
        out.extend(_nodes(child))
    return out


def _plus_depth(f: Formula) -> int:
    inner = max((_plus_depth(c) for c in _children(f)), default=0)
    return inner + (1 if isinstance(f, (Plus, ContigPlus)) else 0)


@given(formulas_with_env())
def test_generated_formulas_pass_the_checker(
    pair: tuple[Formula, dict[str, frozenset[str]]],
) -> None:
    formula, env = pair
    check_formula(formula, TEST_SCHEMA)
    assert formula_env(formula, TEST_SCHEMA) == env
    assert _plus_depth(formula) <= 2


@given(formulas())
def test_expanded_next_passes_the_checker(formula: Formula) -> None:
    expanded = expand_next(formula, TEST_SCHEMA.type_names())
    check_formula(expanded, TEST_SCHEMA)
    assert "NEXT(" not in format_formula(expanded)


@given(queries())
def test_generated_queries_pass_the_checker(query: Query) -> None:
    check_query(query, TEST_SCHEMA)
    assert query.returns is None


@given(trend_queries())
def test_generated_trend_queries_pass_the_checker(query: Query) -> None:
    check_query(query, TEST_SCHEMA)
    assert query.returns
    if query.slide is not None:
        assert query.within is not None and query.slide.size <= query.within.size


@given(streams())
def test_streams_are_typed_and_numbered(stream: list[Event]) -> None:
    assert len(stream) <= 7
    assert [e.time for e in stream] == list(range(len(stream)))
    for event in stream:
        assert event.type in TEST_SCHEMA.type_names()
        for attr, value in event.attrs:
            if attr != "type":
                assert attr in TEST_SCHEMA.attributes(event.type or "")
                assert value in DOMAINS[attr]


FIND = settings(
    max_examples=3000, derandomize=True, database=None, phases=[Phase.generate], deadline=None
)
"""Deterministic search (fixed seed, no shrinking): a feature the strategy can
generate is always found, so the test cannot fail by chance."""


def _has(kind: type) -> Callable[[Formula], bool]:
    return lambda f: any(isinstance(n, kind) for n in _nodes(f))


def _seq_not_inside(outer: type) -> Callable[[Formula], bool]:
    def found(f: Formula) -> bool:
        return any(
            isinstance(n, outer) and any(isinstance(m, SeqNot) for m in _nodes(n)[1:])
            for n in _nodes(f)
        )

    return found


def _nested_agg(f: Formula) -> bool:
    return any(
        isinstance(n, Agg) and any(isinstance(m, Agg) for m in _nodes(n.formula)) for n in _nodes(f)
    )


def _bag(f: Formula) -> bool:
    return any(
        isinstance(n, FilterF) and any(k + "(" in format_formula(n) for k in ("SAME", "INC", "DEC"))
        for n in _nodes(f)
    )


def _agg_filter(f: Formula) -> bool:
    return any(
        isinstance(n, FilterF)
        and isinstance(n.formula, Agg)
        and n.filter.__dict__.get("var") == n.formula.var
        for n in _nodes(f)
    )


def _nested_negation(f: Formula) -> bool:
    return any(
        isinstance(n, SeqNot) and any(isinstance(m, SeqNot) for x in n.excluded for m in _nodes(x))
        for n in _nodes(f)
    )


FORMULA_FEATURES: dict[str, Callable[[Formula], bool]] = {
    **{
        kind.__name__: _has(kind)
        for kind in (
            Atom, As, FilterF, Or, And, Seq, Contig, Plus, ContigPlus, ProjectVars,
            ProjectAttrs, Agg, Next, SeqNot,
        )
    },
    "empty_project": lambda f: any(isinstance(n, ProjectVars) and not n.vars for n in _nodes(f)),
    "nested_agg": _nested_agg,
    "bag": _bag,
    "agg_filter": _agg_filter,
    "two_nots": lambda f: any(isinstance(n, SeqNot) and len(n.excluded) == 2 for n in _nodes(f)),
    "negation_inside_psi": _nested_negation,
    **{f"negation_in_{k.__name__}": _seq_not_inside(k) for k in (Plus, And, Or, Agg)},
}


@pytest.mark.parametrize("feature", sorted(FORMULA_FEATURES))
def test_every_operator_is_generated(feature: str) -> None:
    """Every formula constructor and the special shapes (bag predicates, nested AGG,
    AGG filtered through its variable, negation in every context) show up."""
    found = find(formulas(), FORMULA_FEATURES[feature], settings=FIND)
    check_formula(found, TEST_SCHEMA)


def _top(query: Query) -> list[object]:
    return [n for n in top_chain(query.formula) if isinstance(n, (LeadingNot, TrailingNot))]


QUERY_FEATURES: dict[str, Callable[[Query], bool]] = {
    "leading": lambda q: any(isinstance(n, LeadingNot) for n in _top(q)),
    "trailing": lambda q: any(isinstance(n, TrailingNot) for n in _top(q)),
    "both": lambda q: len(_top(q)) == 2,
    "under_filter": lambda q: isinstance(q.formula, FilterF) and bool(_top(q)),
    "with_partition": lambda q: bool(_top(q)) and bool(q.partition_by),
}


@pytest.mark.parametrize("feature", sorted(QUERY_FEATURES))
def test_top_negation_is_generated(feature: str) -> None:
    query = find(queries(top_negation=True), QUERY_FEATURES[feature], settings=FIND)
    check_query(query, TEST_SCHEMA)
    assert query.within is not None


def test_top_negation_is_generated_in_sliding_trend_queries() -> None:
    query = find(
        trend_queries(top_negation=True),
        lambda q: bool(_top(q)) and q.slide is not None,
        settings=FIND,
    )
    check_query(query, TEST_SCHEMA)


@given(queries(top_negation=True))
def test_generated_queries_with_top_negation_pass_the_checker(query: Query) -> None:
    check_query(query, TEST_SCHEMA)
    if _top(query):
        assert query.within is not None
        assert not any(isinstance(n, (LeadingNot, TrailingNot)) for n in _nodes(top_negation(query.formula).body))


@given(trend_queries(top_negation=True))
def test_generated_trend_queries_with_top_negation_pass_the_checker(query: Query) -> None:
    check_query(query, TEST_SCHEMA)


@pytest.mark.parametrize("on", [False, True])
def test_windows_before_zero_are_generated(on: bool) -> None:
    """Spec §6: SLIDE windows ``[k·s, k·s + w)`` for negative ``k`` too. The cases hold
    streams whose first event sits in a window that starts before 0 (``s < w``), on
    positions and on an ``ON attr`` axis, so the engines are checked there (issue 32)."""
    from acel.lang.clauses import window_value, windows_of
    from acel.testing import cases

    def before_zero(case: Any) -> bool:
        query, stream = case.query, list(case.stream)
        if query.slide is None or query.within is None or not stream:
            return False
        if (query.within.attr is not None) != on:
            return False
        first = window_value(query.within, stream, 0)
        ks = [k for k in windows_of(query.within, query.slide, stream) if k < 0]
        return any(k * query.slide.size <= first < k * query.slide.size + query.within.size for k in ks)

    found = find(cases(of=trend_queries(windows_on=True)), before_zero, settings=FIND)
    assert found.query.slide.size < found.query.within.size


def test_streams_sometimes_miss_attributes() -> None:
    def missing(stream: list[Event]) -> bool:
        return any(len(e.attrs) < len(TEST_SCHEMA.attributes(e.type or "")) for e in stream)

    assert missing(find(streams(), missing))


def test_regression_project_attributes_of_an_attributeless_variable() -> None:
    """Found by the thorough profile: ``PROJECT[](A) AS p`` binds p with no
    attributes, and ``PROJECT p[...]`` then had nothing to keep."""
    formula = find(
        formulas_with_env(max_depth=4),
        lambda pair: any(not attrs for attrs in pair[1].values()),
    )
    check_formula(formula[0], TEST_SCHEMA)


# ------------------------------------------- registries, not copied lists (issue 34)


def _uses(func: str) -> Callable[[object], bool]:
    from acel.lang.printer import format_query

    def check(query: object) -> bool:
        return f"{func}(" in format_query(query)  # type: ignore[arg-type]

    return check


@pytest.mark.parametrize("func", ["STDDEV", "AVG", "COUNT"])
def test_every_registered_aggregate_is_generated(func: str) -> None:
    """RETURN items, AGG outputs and relating terms read the aggregate registry."""
    from acel.testing import queries, trend_queries

    assert find(trend_queries(), _uses(func), settings=settings(max_examples=3000, database=None))
    assert find(queries(operators={"AS", "SEQ", "PLUS", "FILTER", "RELATE", "AGG"}), _uses(func),
                settings=settings(max_examples=3000, database=None))


def test_a_newly_registered_aggregate_is_generated_with_no_other_change() -> None:
    from dataclasses import replace

    from acel.lang import aggregates
    from acel.testing import trend_queries

    aggregates.register(replace(aggregates.SUM, name="TOTAL_TEST"))
    try:
        assert find(trend_queries(), _uses("TOTAL_TEST"),
                    settings=settings(max_examples=3000, database=None))
    finally:
        aggregates._REGISTRY.pop("TOTAL_TEST")


@settings(max_examples=200)
@given(queries(top_negation=True))
def test_generated_queries_compile(query: Any) -> None:
    """Regression (CI's Hypothesis, test_streaming_keys): the generator drew
    ``AGG z[n := FIRST(p.k)]((AGG z[n := AVG(A.k)](A)) AS p)``, whose ``p`` gets two events in
    one step, which the compiler refuses; FIRST/LAST outputs now avoid variables that may
    hold an AGG's event, so every generated query compiles."""
    from acel.acea import engine

    engine.Runner(query, TEST_SCHEMA)  # compiles the query's automaton
