"""The shared strategies generate what they promise: checked, varied ASTs and streams."""

from __future__ import annotations

from hypothesis import find, given
from strategies import (
    DOMAINS,
    TEST_SCHEMA,
    formulas,
    formulas_with_env,
    queries,
    streams,
    trend_queries,
)

from acel.ast import (
    Agg,
    And,
    As,
    Atom,
    Contig,
    ContigPlus,
    FilterF,
    Formula,
    Next,
    Or,
    Plus,
    ProjectAttrs,
    ProjectVars,
    Query,
    Seq,
)
from acel.checker import check_formula, check_query, formula_env
from acel.events import Event
from acel.macros import expand_next
from acel.printer import format_formula


def _nodes(f: Formula) -> list[object]:
    out: list[object] = [f]
    for name in ("formula", "left", "right"):
        child = getattr(f, name, None)
        if child is not None:
            out.extend(_nodes(child))
    return out


def _plus_depth(f: Formula) -> int:
    children = [
        getattr(f, n) for n in ("formula", "left", "right") if getattr(f, n, None) is not None
    ]
    inner = max((_plus_depth(c) for c in children), default=0)
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


def test_every_operator_is_generated() -> None:
    """Every formula constructor (and bag predicates, nested AGG) shows up."""
    wanted = {
        Atom,
        As,
        FilterF,
        Or,
        And,
        Seq,
        Contig,
        Plus,
        ContigPlus,
        ProjectVars,
        ProjectAttrs,
        Agg,
        Next,
    }
    seen: set[type] = set()
    extras = {"empty_project": False, "nested_agg": False, "bag": False, "agg_filter": False}

    @given(formulas())
    def collect(formula: Formula) -> None:
        nodes = _nodes(formula)
        seen.update(type(n) for n in nodes)
        for n in nodes:
            if isinstance(n, ProjectVars) and not n.vars:
                extras["empty_project"] = True
            if isinstance(n, Agg) and any(isinstance(m, Agg) for m in _nodes(n.formula)):
                extras["nested_agg"] = True
            if isinstance(n, FilterF):
                text = format_formula(n)
                if "SAME(" in text or "INC(" in text or "DEC(" in text:
                    extras["bag"] = True
                if isinstance(n.formula, Agg) and n.filter.__dict__.get("var") == n.formula.var:
                    extras["agg_filter"] = True

    collect()
    assert wanted <= seen, wanted - seen
    assert all(extras.values()), extras


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
