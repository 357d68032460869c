"""Predicates that relate events (spec §5.1): syntax, checks and the oracle's reading.

Every rule of §5.1 has an example here whose answer is worked out by hand: the
universal reading conjunct by conjunct (with an empty other bag), whole-bag aggregates,
FIRST/LAST with ties, PREV and RUNNING with the first-event rule and NULLs, and the
equivalences ``INC(a) = a > PREV(a)`` (etc.) on streams without ties.
"""

from __future__ import annotations

import pytest
from acel.reference import oracle
from hypothesis import given
from hypothesis import strategies as st

from acel.lang.ast import BagAgg, BagPred, FirstLast, Prev, Running, VarAttr, VarPred
from acel.lang.checker import check_text
from acel.lang.errors import AcelCheckError, AcelSyntaxError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.printer import format_query
from acel.lang.relate import bag_holds_relating, conjuncts
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v", "w"], "C": ["v"]})


def ev(time: int, type_: str, **attrs: object) -> Event:
    return Event.make(time, {"type": type_, **attrs})  # type: ignore[dict-item]


def bags(**mu: list[Event]):  # type: ignore[no-untyped-def]
    return lambda var: tuple(sorted(mu.get(var, []), key=Event.sort_key))


def pred_of(text: str, var: str = "b"):  # type: ignore[no-untyped-def]
    query = parse_query(f"A AS a ; B AS b FILTER {var}[{text}]")
    flt = query.formula.filter  # type: ignore[union-attr]
    assert isinstance(flt, VarPred)
    return flt.pred


@pytest.mark.parametrize(
    "text",
    [
        "A AS a ; B AS b FILTER b[v > a.v]",
        "A AS a ; B AS b FILTER b[v > 1.05 * a.v AND v - a.v > 3]",
        "A AS a ; B AS b FILTER b[v <= MAX(a.v) - 3 AND COUNT(a) >= 1 AND v > AVG(b.v)]",
        "A AS a ; B AS b FILTER b[FIRST(a.v) < LAST(b.w)]",
        "(B AS b)+ FILTER b[v < PREV(v) OR v > RUNNING AVG(v)]",
        "(B AS b)+ FILTER b[NOT b.v = PREV(v)]",
        "AGG z[f := FIRST(b.v), l := LAST(b.w)]((B AS b)+)",
    ],
)
def test_round_trip(text: str) -> None:
    query = check_text(text, SCHEMA)
    assert format_query(query) == text
    assert parse_query(format_query(query)) == query


def test_the_terms_parse_to_their_nodes() -> None:
    pred = pred_of("v > a.v AND v > MIN(a.v) AND v > COUNT(a) AND v > first(a.v) "
                   "AND v > prev(w) AND v > running sum(w)")
    rights = [c.right for c in conjuncts(pred)]  # type: ignore[union-attr]
    assert rights == [
        VarAttr("a", "v"),
        BagAgg("MIN", "a", "v"),
        BagAgg("COUNT", "a", None),
        FirstLast("FIRST", "a", "v"),
        Prev("w"),
        Running("SUM", "w"),
    ]


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("A AS a ; B AS b FILTER b[v > y.v]", 1, 30, "unknown variable 'y'"),
        ("A AS a ; B AS b FILTER b[v > a.w]", 1, 32, "unknown attribute 'w' of variable a"),
        ("A AS a ; B AS b FILTER b[v > PREV(zz)]", 1, 35, "behind PREV"),
        ("A AS a ; B AS b FILTER b[v > RUNNING SUM(zz)]", 1, 42, "behind RUNNING SUM"),
        ("A AS a ; B AS b FILTER b[v > FOO(a.v)]", 1, 30, "unknown aggregate function 'FOO'"),
        ("RETURN FIRST(A.v) PATTERN A", 1, 8, "FIRST is not allowed in RETURN"),
        ("RETURN LAST(A.v) PATTERN A", 1, 8, "LAST is not allowed in RETURN"),
    ],
)
def test_check_errors_point_at_the_place(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(AcelCheckError) as info:
        check_text(text, SCHEMA)
    assert (info.value.line, info.value.column) == (line, column)
    assert words in info.value.message
    assert "^" in str(info.value)


def test_only_running_comes_before_a_function() -> None:
    with pytest.raises(AcelSyntaxError) as info:
        parse_query("B FILTER B[v > FOO SUM(v)]")
    assert "only RUNNING F(a)" in info.value.message


# ------------------------------------------------------------------ the oracle's reading


def test_universal_reading_and_empty_other_bag() -> None:
    """``b[v > a.v AND v > 4]`` with no ``a`` keeps only ``b`` events with ``v > 4``."""
    pred = pred_of("v > a.v AND v > 4")
    b5, b3 = ev(2, "B", v=5), ev(3, "B", v=3)
    assert bag_holds_relating(pred, "b", bags(b=[b5]))
    assert not bag_holds_relating(pred, "b", bags(b=[b5, b3]))
    # with a's: every b above every a
    a1, a4 = ev(0, "A", v=1), ev(1, "A", v=4)
    assert bag_holds_relating(pred, "b", bags(a=[a1, a4], b=[b5]))
    assert not bag_holds_relating(pred_of("v > a.v"), "b", bags(a=[a1, ev(1, "A", v=6)], b=[b5]))
    # a NULL on either side makes the comparison false
    assert not bag_holds_relating(pred_of("v > a.v"), "b", bags(a=[ev(0, "A")], b=[b5]))


def test_whole_bag_aggregates() -> None:
    a = [ev(0, "A", v=1), ev(1, "A", v=5), ev(2, "A")]
    b = [ev(3, "B", v=3)]
    assert bag_holds_relating(pred_of("v = AVG(a.v)"), "b", bags(a=a, b=b))
    assert bag_holds_relating(pred_of("v = COUNT(a)"), "b", bags(a=a, b=b))
    assert not bag_holds_relating(pred_of("v <= MAX(a.v) - 3"), "b", bags(a=a, b=b))
    # MIN over an empty bag is NULL: the comparison is false (a whole-bag term is not universal)
    assert not bag_holds_relating(pred_of("v > MIN(a.v)"), "b", bags(b=b))
    assert bag_holds_relating(pred_of("v > SUM(a.v)"), "b", bags(b=b))  # SUM of nothing is 0


def test_first_and_last_with_ties() -> None:
    """Ties at one time: FIRST takes the least, LAST the greatest in canonical order."""
    x = [ev(4, "B", v=2, w=9), ev(4, "B", v=1, w=9), ev(1, "B", v=7, w=0)]
    assert bag_holds_relating(pred_of("FIRST(b.v) = 7 AND LAST(b.v) = 2"), "b", bags(b=x))
    assert not bag_holds_relating(pred_of("FIRST(a.v) = 7"), "b", bags(b=x))  # NULL


def test_prev_and_running_first_event_rule() -> None:
    b = [ev(0, "B", v=4), ev(2, "B", v=3), ev(5, "B", v=1)]
    assert bag_holds_relating(pred_of("v < PREV(v)"), "b", bags(b=b))
    assert not bag_holds_relating(pred_of("v < PREV(v) AND v > 3"), "b", bags(b=b))
    assert bag_holds_relating(pred_of("v <= RUNNING MIN(v)"), "b", bags(b=b))
    assert bag_holds_relating(pred_of("v < RUNNING AVG(v)"), "b", bags(b=b))
    assert not bag_holds_relating(pred_of("v < RUNNING AVG(v)"), "b", bags(b=[*b, ev(6, "B", v=3)]))
    # RUNNING AVG over NULLs only is NULL: false for the second event
    assert not bag_holds_relating(pred_of("v > RUNNING AVG(v)"), "b", bags(b=[ev(0, "B"), ev(1, "B", v=1)]))
    # PREV of a NULL is NULL: the comparison is false
    assert not bag_holds_relating(pred_of("v > PREV(v)"), "b", bags(b=[ev(0, "B"), ev(1, "B", v=1)]))


def test_prev_among_ties_takes_the_greatest() -> None:
    b = [ev(0, "B", v=1, w=0), ev(0, "B", v=9, w=0), ev(3, "B", v=5, w=0)]
    # the tied events at time 0 have no earlier event; the one at 3 reads the greater tie
    assert bag_holds_relating(pred_of("PREV(v) = 9"), "b", bags(b=b))
    assert not bag_holds_relating(pred_of("PREV(v) = 1"), "b", bags(b=b))
    assert bag_holds_relating(pred_of("v < PREV(v)"), "b", bags(b=b))


@given(st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=5), st.sampled_from(["INC", "DEC", "SAME"]))
def test_inc_dec_same_are_prev_comparisons(values: list[int | None], kind: str) -> None:
    """``INC(a)`` is ``a > PREV(a)`` etc. (spec §5.1) on a stream bag (no ties in time)."""
    events = [ev(k, "B", **({} if v is None else {"v": v})) for k, v in enumerate(values)]
    op = {"INC": ">", "DEC": "<", "SAME": "="}[kind]
    schema_query = f"(B AS b)+ FILTER b[v {op} PREV(v)]"
    relating = parse_query(schema_query).formula.filter.pred  # type: ignore[union-attr]
    from acel.lang.predicates import bag_holds

    assert bag_holds_relating(relating, "b", bags(b=events)) == bag_holds(kind, "v", events)  # type: ignore[arg-type]


def test_oracle_runs_relating_filters() -> None:
    """GRETA's Q1 shape (seed 000): ``(S AS s)+`` with a falling price."""
    query = check_text("(B AS b)+ FILTER b[v < PREV(v)]", SCHEMA)
    stream = [ev(k, "B", v=v) for k, v in enumerate([3, 1, 2, 0])]
    got = {tuple(e.time for e in m.event.bag("b")) for m in oracle.run(query, stream, SCHEMA)}
    assert got == {(0,), (1,), (2,), (3,), (0, 1), (0, 2), (0, 3), (1, 3), (2, 3),
                   (0, 1, 3), (0, 2, 3)}


def test_oracle_agg_first_last() -> None:
    query = check_text("AGG z[f := FIRST(b.v), l := LAST(b.v)]((B AS b)+)", SCHEMA)
    stream = [ev(k, "B", v=v) for k, v in enumerate([3, 1, 2])]
    rows = {
        tuple(e.time for e in m.event.bag("b")): m.event.bag("z")[0].as_dict()
        for m in oracle.run(query, stream, SCHEMA)
    }
    assert rows[(0, 1, 2)] == {"f": 3, "l": 2}
    assert rows[(1,)] == {"f": 1, "l": 1}


def test_bag_pred_unchanged() -> None:
    assert isinstance(parse_query("B FILTER B[INC(v)]").formula.filter, BagPred)  # type: ignore[union-attr]
