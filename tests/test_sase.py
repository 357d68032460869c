"""The SASE+ baseline on the papers' examples: seed 002's Query 3, GRETA's figures.

Query 3's stream (seed 002, Figure 3) is rebuilt from the paper's text: e1
and e3 begin runs (volume > 1000), R1 = a[e1..e5] b=e6, R2 = a[e3 e4] b=e6
and R3 = a[e1..e7] b=e8; these values give exactly the counts the paper's
discussion implies (3 matches under skip-till-next-match, 2 under partition
contiguity) and 68 under skip-till-any-match.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from acel.reference import oracle
from acel.reference.sase import (
    NotInFragment,
    NotTranslatable,
    parse_sase,
    run,
    run_sase,
    run_sase_file,
    translate,
    two_step_trend,
)
from acel.reference.sase.ast import AggRef, Component, Ref

from acel.lang.ast import CountStar, Query, ReturnAgg, ReturnAttr, Window
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import AcelError, AcelSyntaxError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.printer import format_query
from acel.lang.schema import Schema

PRICE = [100, 120, 120, 121, 120, 125, 120, 120]
VOLUME = [1010, 990, 1005, 999, 999, 750, 950, 700]
QUERY3_STREAM = [
    Event.make(k, {"type": "Stock", "symbol": "IBM", "price": p, "volume": v})
    for k, (p, v) in enumerate(zip(PRICE, VOLUME))
]
QUERY3 = """PATTERN SEQ(Stock+ a[], Stock b)
WHERE {strategy}(a[], b) {{
    [symbol] AND a[1].volume > 1000
    AND a[i].price > avg(a[..i-1].price)
    AND b.volume < 0.8 * a[a.len].volume }}
WITHIN 8"""


def _compact(matches: list[Match] | list[TrendRow]) -> list[str]:
    """``"12345:6"``: the a[] events then b, numbered e1..e8 as in the paper."""
    out = []
    for m in matches:
        assert isinstance(m, Match)
        a = "".join(str(e.time + 1) for e in m.event.bag("a"))
        out.append(f"{a}:{m.event.bag('b')[0].time + 1}")
    return sorted(out)


def _query3(strategy: str) -> list[str]:
    return _compact(run_sase(parse_sase(QUERY3.format(strategy=strategy)), QUERY3_STREAM))


def test_query3_skip_till_next_match_gives_r1_r2_r3() -> None:
    assert _query3("skip_till_next_match") == ["1234567:8", "12345:6", "34:6"]


def test_query3_partition_contiguity_gives_r1_r3() -> None:
    # R2 = a[e3 e4] needs to skip e5 (price 120 is not above the average 120.5)
    assert _query3("partition_contiguity") == ["1234567:8", "12345:6"]
    assert _query3("strict_contiguity") == ["1234567:8", "12345:6"]


QUERY3_ANY = sorted(
    # every a[] from e1: e1 then any subset of e2..e5, with b = e6 (16 matches) ...
    [f"1{s}:6" for s in ("", "2", "3", "4", "5", "23", "24", "25", "34", "35", "45", "234",
                         "235", "245", "345", "2345")]
    # ... or e1 then any subset of e2..e7 whose last event is not e6, with b = e8 (48)
    + [
        "1:8", "12:8", "13:8", "14:8", "15:8", "17:8", "123:8", "124:8", "125:8", "127:8",
        "134:8", "135:8", "137:8", "145:8", "147:8", "157:8", "167:8", "1234:8", "1235:8",
        "1237:8", "1245:8", "1247:8", "1257:8", "1267:8", "1345:8", "1347:8", "1357:8",
        "1367:8", "1457:8", "1467:8", "1567:8", "12345:8", "12347:8", "12357:8", "12367:8",
        "12457:8", "12467:8", "12567:8", "13457:8", "13467:8", "13567:8", "14567:8",
        "123457:8", "123467:8", "123567:8", "124567:8", "134567:8", "1234567:8",
    ]
    # ... and from e3: a[e3] or a[e3 e4], with b = e6 or e8 (4)
    + ["3:6", "3:8", "34:6", "34:8"]
)


def test_query3_skip_till_any_match_gives_68_distinct_matches() -> None:
    found = _query3("skip_till_any_match")
    assert len(found) == len(set(found)) == 68
    assert found == QUERY3_ANY


def test_bare_where_is_skip_till_any_match() -> None:
    text = QUERY3.format(strategy="skip_till_any_match")
    bare = text.replace("skip_till_any_match(a[], b) {", "").replace("}", "")
    assert parse_sase(bare).strategy == "skip_till_any_match"
    assert _compact(run_sase(parse_sase(bare), QUERY3_STREAM)) == QUERY3_ANY


def test_query3_return_rows_per_match() -> None:
    text = QUERY3.format(strategy="skip_till_next_match")
    text += "\nRETURN a[1].price, a[a.len].volume, SUM(a[].volume), COUNT(a[]), AVG(a[].price), b.volume"
    rows = run_sase(parse_sase(text), QUERY3_STREAM)
    assert [r.values for r in rows] == [
        (("start", 0), ("end", 5), ("a[1].price", 100), ("a[a.len].volume", 999),
         ("SUM(a[].volume)", 5003), ("COUNT(a[])", 5), ("AVG(a[].price)", 116.2),
         ("b.volume", 750)),
        (("start", 2), ("end", 5), ("a[1].price", 120), ("a[a.len].volume", 999),
         ("SUM(a[].volume)", 2004), ("COUNT(a[])", 2), ("AVG(a[].price)", 120.5),
         ("b.volume", 750)),
        (("start", 0), ("end", 7), ("a[1].price", 100), ("a[a.len].volume", 950),
         ("SUM(a[].volume)", 6703), ("COUNT(a[])", 7), ("AVG(a[].price)", 118.0),
         ("b.volume", 700)),
    ]
    assert all(r.key == (("symbol", "IBM"),) and r.window is None for r in rows)


def test_within_bounds_the_whole_match() -> None:
    text = QUERY3.format(strategy="skip_till_next_match").replace("WITHIN 8", "WITHIN 6")
    assert _compact(run_sase(parse_sase(text), QUERY3_STREAM)) == ["12345:6", "34:6"]


# ------------------------------------------------------------------ parser


def test_parser_builds_the_ast() -> None:
    q = parse_sase(
        "pattern seq(Stock+ a[], !(News n), Stock b) -- a comment\n"
        "where skip_till_next_match(a[], b) { [symbol, market] and a[i].price >= a[i-1].price "
        "and n.symbol = b.symbol }\nwithin 30 on ts\nreturn a[1].price, max(a[].price), count(a[])"
    )
    assert q.components == (
        Component("Stock", "a", kleene=True),
        Component("News", "n", negated=True),
        Component("Stock", "b"),
    )
    assert q.strategy == "skip_till_next_match"
    assert q.partition == ("symbol", "market")
    assert len(q.where) == 2
    assert q.within == Window(30, "ts")
    assert q.returns == (
        Ref("a", "1", "price"),
        AggRef("MAX", "a", "all", "price"),
        AggRef("COUNT", "a", "all", None),
    )
    assert parse_sase("PATTERN SEQ(A a, B b) WITHIN 5 EVENTS").within == Window(5)
    assert parse_sase("PATTERN A a WITHIN 5").within == Window(5)


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("PATTERN SEQ(A a B b)", "found 'B'", 17),
        ("PATTERN SEQ(A a, B b) WHERE a.x > 1 AND b.y = c.z", "unknown variable c", 47),
        ("PATTERN SEQ(A a, B+ b[]) WHERE b.x > 1", "b is a Kleene variable", 32),
        ("PATTERN SEQ(A a, B b) WHERE a[i].x > 1", "a is a single event", 29),
        ("PATTERN SEQ(A a, !(C c))", "at the start or the end of the pattern needs WITHIN", 22),
        ("PATTERN SEQ(A a, A a)", "declared twice", 20),
        ("PATTERN SEQ(A+ a[], B b) WHERE a[i].x < b.x", "iterates over a", 32),
        ("PATTERN SEQ(A a, B b) WHERE a.x > 1 OR [x]", "equivalence test", 41),
        ("PATTERN SEQ(A+ a[], B b) WHERE a[2].x > 1", "index 2 is not supported", 34),
        ("PATTERN SEQ(A+ a[], B b) WHERE median(a[].x) > 1", "unknown aggregate median", 32),
        ("PATTERN SEQ(A+ a[], B b) RETURN a[i].x", "iterator indexes", 33),
        ("PATTERN SEQ(A a, B b) WHERE a.x > ", "found the end of the query but expected", 35),
        ("PATTERN SEQ(A a, B b) WHERE a.x # 1", "unexpected character '#'", 33),
    ],
)
def test_parser_errors_name_line_and_column(text: str, message: str, column: int) -> None:
    with pytest.raises(AcelSyntaxError) as info:
        parse_sase(text)
    err = info.value
    assert message in str(err)
    assert (err.line, err.column) == (1, column)
    assert "^" in str(err)


def test_parser_errors_on_later_lines() -> None:
    with pytest.raises(AcelSyntaxError) as info:
        parse_sase("PATTERN SEQ(A a, B b)\nWHERE a.x > 1\n  AND b.q.r = 2")
    assert info.value.line == 3


# ------------------------------------------------------------- strategies


AB_SCHEMA = Schema.of({"A": ["x", "k"], "B": ["x", "k"], "C": ["x", "k"]})


def ev(time_: int, type_: str, **attrs: int | str) -> Event:
    return Event.make(time_, {"type": type_, **attrs})


def _pairs(strategy: str, stream: list[Event], where: str = "") -> list[tuple[int, ...]]:
    text = f"PATTERN SEQ(A a, B+ b[]) WHERE {strategy}(a, b[]) {{ {where or 'a.x >= 0'} }}"
    return sorted(
        tuple(e.time for e in m.event.bag("a") + m.event.bag("b"))  # type: ignore[union-attr]
        for m in run_sase(parse_sase(text), stream)
    )


def test_strategies_on_a_small_stream() -> None:
    s = [ev(0, "A", x=1), ev(1, "B", x=1), ev(2, "C", x=0), ev(3, "B", x=2)]
    assert _pairs("strict_contiguity", s) == [(0, 1)]
    assert _pairs("partition_contiguity", s) == [(0, 1)]
    assert _pairs("skip_till_next_match", s) == [(0, 1), (0, 1, 3)]
    assert _pairs("skip_till_any_match", s) == [(0, 1), (0, 1, 3), (0, 3)]


def test_partition_contiguity_is_contiguity_inside_the_partition() -> None:
    s = [ev(0, "A", k=0), ev(1, "A", k=1), ev(2, "B", k=0), ev(3, "B", k=1)]
    for strategy, expected in [
        ("strict_contiguity", []),
        ("partition_contiguity", [(0, 2), (1, 3)]),
    ]:
        text = f"PATTERN SEQ(A a, B b) WHERE {strategy}(a, b) {{ [k] }}"
        got = sorted((m.event.start, m.event.end) for m in run_sase(parse_sase(text), s))  # type: ignore[union-attr]
        assert got == expected, strategy


def test_skip_till_next_match_takes_every_relevant_event() -> None:
    # b[i] must increase: skip-till-next-match skips x=0 (irrelevant) but must take x=3
    s = [ev(0, "A"), ev(1, "B", x=1), ev(2, "B", x=0), ev(3, "B", x=3), ev(4, "B", x=5)]
    text = "PATTERN SEQ(A a, B+ b[]) WHERE skip_till_next_match(a, b[]) { b[i].x > b[i-1].x }"
    got = sorted(tuple(e.time for e in m.event.bag("b")) for m in run_sase(parse_sase(text), s))  # type: ignore[union-attr]
    # b must begin with the first B (ignore is "not begin"), then every taken prefix is a match
    assert got == [(1,), (1, 3), (1, 3, 4)]


def test_negation_between_neighbours() -> None:
    s = [ev(0, "A", x=1), ev(1, "C", x=1), ev(2, "B", x=1), ev(3, "C", x=2), ev(4, "B", x=2)]
    text = "PATTERN SEQ(A a, !(C n), B b) WHERE n.x = a.x"
    got = sorted((m.event.start, m.event.end) for m in run_sase(parse_sase(text), s))  # type: ignore[union-attr]
    # C(x=1) at 1 lies between a=0 and both B's, so nothing matches
    assert got == []
    text = "PATTERN SEQ(A a, !(C n), B b) WHERE n.x = b.x"
    got = sorted((m.event.start, m.event.end) for m in run_sase(parse_sase(text), s))  # type: ignore[union-attr]
    # b=2 (x=1) is blocked by C(x=1) at 1; b=4 (x=2) by C(x=2) at 3
    assert got == []
    text = "PATTERN SEQ(A a, !(C n), B b) WHERE n.x > 5"
    assert len(run_sase(parse_sase(text), s)) == 2
    text = "PATTERN SEQ(A a, !(C n), B b)"
    assert run_sase(parse_sase(text), s) == []


def test_match_output_keeps_events_and_global_positions() -> None:
    s = [ev(0, "A", k=0, x=1), ev(1, "A", k=1, x=2), ev(2, "B", k=1, x=3)]
    (m,) = run_sase(parse_sase("PATTERN SEQ(A a, B b) WHERE [k]"), s)
    assert isinstance(m, Match)
    assert m.key == (("k", 1),)
    assert (m.event.start, m.event.end) == (1, 2)
    assert m.event.vars == (("a", (s[1],)), ("b", (s[2],)))


def test_run_sase_file_writes_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "q.sase"
    path.write_text("PATTERN SEQ(A a, B+ b[]) RETURN a.x, SUM(b[].x)\n")
    s = [ev(0, "A", x=1), ev(1, "B", x=2), ev(2, "B", x=3)]
    lines = [json.loads(line) for line in run_sase_file(path, s)]
    assert lines == [
        {"start": 0, "end": 1, "a.x": 1, "SUM(b[].x)": 2},
        {"start": 0, "end": 2, "a.x": 1, "SUM(b[].x)": 5},
        {"start": 0, "end": 2, "a.x": 1, "SUM(b[].x)": 3},
    ]
    path.write_text("PATTERN SEQ(A a, B b)\n")
    (line,) = run_sase_file(path, s[:2])
    assert json.loads(line)["vars"]["a"] == [{"time": 0, "attrs": {"type": "A", "x": 1}}]


# -------------------------------------------------------------- translation


def test_translation_of_the_fragment() -> None:
    q = parse_sase(
        "PATTERN SEQ(A a, B+ b[], C c) WHERE [k] AND a.x > 1 AND b[i-1].x < b[i].x "
        "AND b[i].x != 0 WITHIN 5 RETURN a.x, SUM(b[].x), COUNT(b[])"
    )
    expected = parse_query(
        "PROJECT[a, b, c, ret](AGG ret[a_x := MAX(a.x), sum_b_x := SUM(b.x), "
        "count_b := COUNT(b)]((A AS a ; (B AS b)+ ; C AS c) "
        "FILTER a[x > 1] AND b[INC(x)] AND b[x != 0])) PARTITION BY k WITHIN 5 EVENTS"
    )
    assert translate(q) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("PATTERN SEQ(A a, B b) WHERE skip_till_next_match(a, b) { a.x > 1 }",
         "strategy skip_till_next_match"),
        ("PATTERN SEQ(A a, !(C n), B b) WHERE n.x = a.x", "relating a and n"),
        ("PATTERN SEQ(A B, B b)", "also an event type"),
        ("PATTERN SEQ(A+ a[], B b) RETURN a[1].x", "RETURN a[1].x"),
    ],
)
def test_translation_refuses_what_acel_cannot_say(text: str, message: str) -> None:
    with pytest.raises(NotTranslatable) as info:
        translate(parse_sase(text))
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("text", "acel"),
    [
        ("PATTERN SEQ(A+ a[], B b) WHERE a[1].x > 1", "a[FIRST(a.x) > 1]"),
        ("PATTERN SEQ(A+ a[], B b) WHERE b.x < a[a.len].x", "b[x < LAST(a.x)]"),
        ("PATTERN SEQ(A+ a[], B b) WHERE a[i].x > avg(a[..i-1].x)", "a[x > RUNNING AVG(x)]"),
        ("PATTERN SEQ(A a, B b) WHERE a.x < b.x", "b[a.x < x]"),
        ("PATTERN SEQ(A a, B b) WHERE a.k = b.k", "b[a.k = k]"),
        ("PATTERN SEQ(A+ a[], B b) WHERE a[i].x >= a[i-1].x", "a[x >= PREV(x)]"),
        ("PATTERN SEQ(A+ a[], B b) WHERE b.x > sum(a[].x)", "b[x > SUM(a.x)]"),
    ],
)
def test_translation_relates_events(text: str, acel: str) -> None:
    """Conjuncts relating events become the terms of spec §5.1 (issue 21)."""
    assert acel in format_query(translate(parse_sase(text)))


@pytest.mark.parametrize("strategy", ["skip_till_any_match"])
def test_query3_translation_agrees_with_the_baseline(strategy: str) -> None:
    """Seed 002's Query 3 in ACEL (FIRST, RUNNING AVG, LAST): the two-step baseline,
    the oracle and the optimized engine give the same 68 matches."""
    from acel.acea import engine

    query = parse_sase(QUERY3.format(strategy=strategy))
    acel_query = translate(query)
    assert "a[price > RUNNING AVG(price)]" in format_query(acel_query)
    schema = Schema.of({"Stock": ["symbol", "price", "volume"]})
    baseline = _compact(run_sase(query, QUERY3_STREAM))
    assert baseline == QUERY3_ANY
    assert _compact(oracle.run(acel_query, QUERY3_STREAM, schema)) == baseline
    assert _compact(engine.run(acel_query, QUERY3_STREAM, schema)) == baseline


# ---------------------------------------------------- two-step trend aggregation

GRETA_SCHEMA = Schema.of({"A": ["attr", "ts"], "B": ["ts"]})
GRETA_STREAM = [
    ev(0, "A", attr=5, ts=1),
    ev(1, "B", ts=2),
    ev(2, "A", attr=6, ts=3),
    ev(3, "A", attr=4, ts=4),
    ev(4, "B", ts=7),
]


def test_greta_figure_12_counts_by_the_baseline() -> None:
    query = parse_query(
        "RETURN COUNT(*), COUNT(A), MIN(A.attr), MAX(A.attr), SUM(A.attr), AVG(A.attr) "
        "PATTERN (A+ ; B)+"
    )
    rows = two_step_trend(query, GRETA_STREAM, GRETA_SCHEMA)
    assert [r.values for r in rows] == [
        (("COUNT(*)", 11), ("COUNT(A)", 20), ("MIN(A.attr)", 4), ("MAX(A.attr)", 6),
         ("SUM(A.attr)", 100), ("AVG(A.attr)", 5.0))
    ]
    assert rows == oracle.run(query, GRETA_STREAM, GRETA_SCHEMA)
    windowed = parse_query(
        "RETURN COUNT(*), SUM(A.attr) PATTERN (A+ ; B)+ WITHIN 7 ON ts SLIDE 3 ON ts"
    )
    assert two_step_trend(windowed, GRETA_STREAM, GRETA_SCHEMA) == oracle.run(
        windowed, GRETA_STREAM, GRETA_SCHEMA
    )


STOCK_SCHEMA = Schema.of({"STOCK": ["company", "sector", "price"]})


def test_greta_down_trend_example() -> None:
    """Seed 000 §2: I = 10 2 9 8 7 1 6 5 4 3; any-match finds the long trend 10 9 8 7 6 5 4 3."""
    prices = [10, 2, 9, 8, 7, 1, 6, 5, 4, 3]
    s = [ev(k, "STOCK", company="c", sector="s", price=p) for k, p in enumerate(prices)]
    query = parse_query("(STOCK AS s)+ FILTER s[DEC(price)]")
    matches = run(query, s, STOCK_SCHEMA)
    trends = {tuple(e.get("price") for e in m.event.bag("s")) for m in matches}  # type: ignore[union-attr]
    assert (10, 9, 8, 7, 6, 5, 4, 3) in trends
    assert (10, 2) in trends and (9, 8, 7, 1) in trends and (6, 5, 4, 3) in trends
    trend = Query(query.formula, returns=(CountStar(), ReturnAgg("SUM", "s", "price")))
    rows = two_step_trend(trend, s, STOCK_SCHEMA)
    assert rows == oracle.run(trend, s, STOCK_SCHEMA)
    assert rows[0].value("COUNT(*)") == len(matches)


def test_greta_down_trends_per_company_and_sector() -> None:
    s = [
        ev(0, "STOCK", company="A", sector="tech", price=10),
        ev(1, "STOCK", company="B", sector="tech", price=5),
        ev(2, "STOCK", company="A", sector="tech", price=8),
        ev(3, "STOCK", company="A", sector="tech", price=9),
        ev(4, "STOCK", company="A", sector="tech", price=7),
        ev(5, "STOCK", company="B", sector="tech", price=6),
    ]
    query = Query(
        parse_query("(STOCK AS s)+ FILTER s[DEC(price)]").formula,
        returns=(ReturnAttr("sector"), CountStar()),
        partition_by=("company", "sector"),
    )
    rows = two_step_trend(query, s, STOCK_SCHEMA)
    assert [r.values for r in rows] == [
        (("sector", "tech"), ("COUNT(*)", 11)),
        (("sector", "tech"), ("COUNT(*)", 2)),
    ]
    assert rows == oracle.run(query, s, STOCK_SCHEMA)


def test_benchmark_shape_reaches_windows_of_twenty_events() -> None:
    prices = [(k * 37) % 23 for k in range(120)]
    s = [ev(k, "STOCK", company="ab"[k % 2], sector="s", price=p) for k, p in enumerate(prices)]
    query = parse_query(
        "RETURN COUNT(*), SUM(s.price) PATTERN (STOCK AS s)+ FILTER s[DEC(price)] "
        "PARTITION BY company WITHIN 20 EVENTS SLIDE 20 EVENTS"
    )
    began = time.process_time()  # CPU time, not wall: load-independent (issue 37)
    rows = two_step_trend(query, s, STOCK_SCHEMA)
    assert time.process_time() - began < 30
    assert len(rows) == 6  # 2 companies x 3 windows of 20 of their 60 events
    assert all(isinstance(r.value("COUNT(*)"), int) and r.value("COUNT(*)") > 0 for r in rows)


@pytest.mark.parametrize(
    "text",
    [
        "RETURN COUNT(*) PATTERN STOCK AND STOCK",
        "RETURN COUNT(*) PATTERN (STOCK OR STOCK)+",
        "RETURN COUNT(*) PATTERN STOCK ; AGG z[n := COUNT(STOCK)](STOCK+)",
        "RETURN COUNT(*) PATTERN ((STOCK ; STOCK)+ ; STOCK)+",
        "RETURN COUNT(*) PATTERN (STOCK ; STOCK):+",
    ],
)
def test_two_step_refuses_formulas_outside_the_fragment(text: str) -> None:
    with pytest.raises(NotInFragment) as info:
        two_step_trend(parse_query(text), [], STOCK_SCHEMA)
    assert "SASE+" in str(info.value)


def test_two_step_trend_needs_return() -> None:
    with pytest.raises(AcelError):
        two_step_trend(parse_query("STOCK+"), [], STOCK_SCHEMA)
