"""The oracle on the papers' worked examples, with hand-checked answers.

Spec §10 (seed 004 Examples 3.2, 5.1, 5.2), GRETA's Figure 12 trend
aggregation (seed 000), a sliding-window case, and the Appendix D queries of
seed 004 on small hand-made streams.  Formulas are built as ASTs (so that the
semantics is tested independently of the parser); ``TEXTS`` keeps each one's
ACEL text and ``test_texts_parse_to_the_same_formulas`` ties the two together.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from acel.reference.oracle import evaluate, run
from oracle_support import agg, as_, atom, bag, cmp, ev, fand, on, pand, seq, shape, stream, times

from acel.lang.ast import (
    ContigPlus,
    CountStar,
    FilterF,
    Formula,
    Plus,
    Query,
    ReturnAgg,
    ReturnAttr,
    Window,
)
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event, OptValue
from acel.lang.schema import Schema
from acel.testing import SPEC_STOCK_EVENTS, SPEC_STOCK_SCHEMA

# ------------------------------------------------------------ spec §10 stream

STOCKS = SPEC_STOCK_SCHEMA
S10 = SPEC_STOCK_EVENTS

EX32_FILTER = fand(
    on("msft", pand(cmp("name", "=", "MSFT"), cmp("price", ">", 100))),
    on("intel", cmp("name", "=", "INTL")),
    on("amzn", pand(cmp("name", "=", "AMZN"), cmp("price", "<", 2000))),
)
EX32 = FilterF(seq(as_("SELL", "msft"), as_("SELL", "intel"), as_("SELL", "amzn")), EX32_FILTER)
EX51 = agg(
    "m",
    [("max_price", "MAX", "intel", "price")],
    FilterF(seq(as_("SELL", "msft"), Plus(as_("SELL", "intel")), as_("SELL", "amzn")), EX32_FILTER),
)
EX52 = FilterF(
    agg(
        "w",
        [("QNT", "COUNT", "x", None)],
        FilterF(
            Plus(as_("SELL", "x")),
            fand(
                bag("x", "INC", "price"),
                on("x", pand(cmp("price", ">=", 100), cmp("price", "<=", 2000))),
            ),
        ),
    ),
    on("w", cmp("QNT", ">", 3)),
)


def test_example_3_2_gives_the_six_complex_events() -> None:
    result = evaluate(EX32, S10)
    assert Counter(shape(ce, "intel") for ce in result) == Counter(
        {
            (0, 4, (2,)): 1,
            (1, 4, (2,)): 1,
            (0, 6, (2,)): 1,
            (0, 6, (5,)): 1,
            (1, 6, (2,)): 1,
            (1, 6, (5,)): 1,
        }
    )
    assert len(result) == 6
    # the full content of one of them: each variable holds its stream event, SELL all three
    first = next(ce for ce in result if shape(ce, "intel") == (0, 4, (2,)))
    assert first.mapping() == {
        "SELL": (S10[0], S10[2], S10[4]),
        "amzn": (S10[4],),
        "intel": (S10[2],),
        "msft": (S10[0],),
    }


def test_example_5_1_gives_eight_complex_events_with_their_max_prices() -> None:
    result = evaluate(EX51, S10)
    assert len(result) == 8
    got = Counter((ce.start, ce.end, times(ce, "intel"), ce.bag("m")) for ce in result)
    m = {
        4: (Event.make(4, {"max_price": 80}),),
        80: (Event.make(6, {"max_price": 80}),),
        81: (Event.make(6, {"max_price": 81}),),
    }
    assert got == Counter(
        {
            (0, 4, (2,), m[4]): 1,
            (1, 4, (2,), m[4]): 1,
            (0, 6, (2,), m[80]): 1,
            (1, 6, (2,), m[80]): 1,
            (0, 6, (5,), m[81]): 1,
            (1, 6, (5,), m[81]): 1,
            (0, 6, (2, 5), m[81]): 1,
            (1, 6, (2, 5), m[81]): 1,
        }
    )
    # the created event is untyped
    assert all(e.type is None for ce in result for e in ce.bag("m"))


def test_example_5_2_keeps_upward_trends_longer_than_three() -> None:
    # prices 100 150 120 200 2500 300: 2500 is out of range; the increasing
    # subsequences of 100 150 120 200 300 with at least four events are
    # 100<150<200<300 and 100<120<200<300.
    s = stream(*(ev("SELL", name="X", price=p) for p in (100, 150, 120, 200, 2500, 300)))
    result = evaluate(EX52, s)
    assert sorted(times(ce, "x") for ce in result) == [(0, 1, 3, 5), (0, 2, 3, 5)]
    for ce in result:
        assert (ce.start, ce.end) == (0, 5)
        assert ce.bag("w") == (Event.make(5, {"QNT": 4}),)
        assert times(ce, "SELL") == times(ce, "x")


def test_example_5_2_threshold_is_strict() -> None:
    # exactly three increasing events: QNT = 3 is not > 3
    s = stream(*(ev("SELL", name="X", price=p) for p in (100, 200, 300)))
    assert evaluate(EX52, s) == set()


# ------------------------------------------------------ GRETA (seed 000, Fig. 12)

GRETA_SCHEMA = Schema.of({"A": ["attr", "ts"], "B": ["ts"]})
# I = {a1, b2, a3, a4, b7} with a1.attr=5, a3.attr=6, a4.attr=4 (numbers are timestamps)
GRETA_STREAM = stream(
    ev("A", attr=5, ts=1),
    ev("B", ts=2),
    ev("A", attr=6, ts=3),
    ev("A", attr=4, ts=4),
    ev("B", ts=7),
)
GRETA_FORMULA = Plus(seq(Plus(atom("A")), atom("B")))  # (A+ ; B)+ = (SEQ(A+, B))+
GRETA_ITEMS = (
    CountStar(),
    ReturnAgg("COUNT", "A", None),
    ReturnAgg("MIN", "A", "attr"),
    ReturnAgg("MAX", "A", "attr"),
    ReturnAgg("SUM", "A", "attr"),
    ReturnAgg("AVG", "A", "attr"),
)


def test_greta_trends_are_the_eleven_of_figure_12() -> None:
    result = evaluate(GRETA_FORMULA, GRETA_STREAM)
    assert sorted((times(ce, "A"), times(ce, "B")) for ce in result) == sorted(
        [
            ((0,), (1,)),
            ((0,), (4,)),
            ((2,), (4,)),
            ((3,), (4,)),
            ((0, 2), (4,)),
            ((0, 3), (4,)),
            ((2, 3), (4,)),
            ((0, 2, 3), (4,)),
            ((0, 2), (1, 4)),
            ((0, 3), (1, 4)),
            ((0, 2, 3), (1, 4)),
        ]
    )


def test_greta_figure_12_aggregates() -> None:
    query = Query(GRETA_FORMULA, returns=GRETA_ITEMS)
    rows = run(query, GRETA_STREAM, GRETA_SCHEMA)
    assert rows == [
        TrendRow(
            (),
            None,
            (
                ("COUNT(*)", 11),
                ("COUNT(A)", 20),
                ("MIN(A.attr)", 4),
                ("MAX(A.attr)", 6),
                ("SUM(A.attr)", 100),
                ("AVG(A.attr)", 5.0),
            ),
        )
    ]


def test_greta_within_events() -> None:
    # WITHIN 3 EVENTS keeps j - i < 3: {a1 b2}, and {a3 b7}, {a4 b7}, {a3 a4 b7}
    query = Query(GRETA_FORMULA, returns=GRETA_ITEMS[:2], within=Window(3))
    rows = run(query, GRETA_STREAM, GRETA_SCHEMA)
    assert [r.values for r in rows] == [(("COUNT(*)", 4), ("COUNT(A)", 5))]


def test_greta_sliding_window_on_timestamps() -> None:
    # WITHIN 7 ON ts SLIDE 3 ON ts: windows [-3,4) [0,7) [3,10) [6,13) hold events
    # (k = -1 too: spec §6 takes every integer k).  [-3,4): a1 b2 a3 -> {a1 b2};
    # [0,7): a1 b2 a3 a4 -> {a1 b2};  [3,10): a3 a4 b7 -> {a3 b7} {a4 b7} {a3 a4 b7};
    # [6,13): b7 -> nothing.  a1 ... b7 spans 6 < 7 but fits no window.
    query = Query(
        GRETA_FORMULA,
        returns=(CountStar(), ReturnAgg("SUM", "A", "attr"), ReturnAgg("MIN", "A", "attr")),
        within=Window(7, "ts"),
        slide=Window(3, "ts"),
    )
    rows = run(query, GRETA_STREAM, GRETA_SCHEMA)
    assert rows == [
        TrendRow((), (-3, 4), (("COUNT(*)", 1), ("SUM(A.attr)", 5), ("MIN(A.attr)", 5))),
        TrendRow((), (0, 7), (("COUNT(*)", 1), ("SUM(A.attr)", 5), ("MIN(A.attr)", 5))),
        TrendRow((), (3, 10), (("COUNT(*)", 3), ("SUM(A.attr)", 20), ("MIN(A.attr)", 4))),
        TrendRow((), (6, 13), (("COUNT(*)", 0), ("SUM(A.attr)", 0), ("MIN(A.attr)", None))),
    ]


def test_sliding_window_on_positions_counts_a_match_in_every_window_holding_it() -> None:
    # positions 0..4; WITHIN 4 EVENTS SLIDE 2 EVENTS: windows [-2,2) [0,4) [2,6) [4,8)
    query = Query(GRETA_FORMULA, returns=(CountStar(),), within=Window(4), slide=Window(2))
    rows = run(query, GRETA_STREAM, GRETA_SCHEMA)
    # spans < 4: {a1 b2} [0,1]; {a3 b7} [2,4]; {a4 b7} [3,4]; {a3 a4 b7} [2,4]
    assert [(r.window, r.value("COUNT(*)")) for r in rows] == [
        ((-2, 2), 1),
        ((0, 4), 1),
        ((2, 6), 3),
        ((4, 8), 0),
    ]


# ------------------------------------------------------ Appendix D (seed 004)


def test_d2_hadoop_mappers_per_job() -> None:
    """Q14: average and maximum mapper period per job (AGG), PARTITION BY job_id."""
    schema = Schema.of(
        {"JobStart": ["job_id"], "Mapper": ["job_id", "period"], "JobEnd": ["job_id"]}
    )
    s = stream(*HADOOP_JOBS)
    formula = agg(
        "r",
        [("avg", "AVG", "b", "period"), ("mx", "MAX", "b", "period")],
        seq(as_("JobStart", "a"), Plus(as_("Mapper", "b")), as_("JobEnd", "c")),
    )
    out = run(Query(formula, partition_by=("job_id",)), s, schema)
    assert all(isinstance(m, Match) for m in out)
    got = sorted(
        (m.key, m.event.start, m.event.end, times(m.event, "b"), m.event.bag("r"))  # type: ignore[union-attr]
        for m in out
    )
    key1, key2 = (("job_id", 1),), (("job_id", 2),)
    assert got == sorted(
        [
            (key1, 0, 5, (1,), (Event.make(5, {"avg": 10.0, "mx": 10}),)),
            (key1, 0, 5, (4,), (Event.make(5, {"avg": 20.0, "mx": 20}),)),
            (key1, 0, 5, (1, 4), (Event.make(5, {"avg": 15.0, "mx": 20}),)),
            (key2, 2, 6, (3,), (Event.make(6, {"avg": 7.0, "mx": 7}),)),
        ]
    )
    # global positions: the stream events of the output are the input's events
    for m in out:
        for e in m.event.bag("b"):  # type: ignore[union-attr]
            assert e == s[e.time]


def test_d3_esper_orders_with_a_having_filter() -> None:
    """Q15: a ServiceOrder then a ProductOrder of the same customer, total price > 100."""
    schema = Schema.of({"ServiceOrder": ["custId", "price"], "ProductOrder": ["custId", "price"]})
    s = stream(
        ev("ServiceOrder", custId=1, price=50),
        ev("ProductOrder", custId=1, price=60),
        ev("ServiceOrder", custId=2, price=10),
        ev("ProductOrder", custId=2, price=20),
        ev("ProductOrder", custId=1, price=40),
    )
    from acel.lang.ast import Attr, BinOp, Compare, Lit, VarPred

    formula = FilterF(
        agg(
            "r",
            [("sa", "SUM", "a", "price"), ("sb", "SUM", "b", "price")],
            seq(as_("ServiceOrder", "a"), as_("ProductOrder", "b")),
        ),
        VarPred("r", Compare(">", BinOp("+", Attr("sa"), Attr("sb")), Lit(100))),
    )
    out = run(Query(formula, partition_by=("custId",)), s, schema)
    assert [(m.key, m.event.start, m.event.end, m.event.bag("r")) for m in out] == [  # type: ignore[union-attr]
        ((("custId", 1),), 0, 1, (Event.make(1, {"sa": 50, "sb": 60}),))
    ]


STOCK_SCHEMA = Schema.of({"Stock": ["company", "sector", "price"]})


def test_d4_greta_down_trends_per_company_and_sector() -> None:
    """Q16: COUNT(*) of strictly decreasing trends (skipping fluctuations)."""
    s = stream(
        ev("Stock", company="A", sector="tech", price=10),
        ev("Stock", company="B", sector="tech", price=5),
        ev("Stock", company="A", sector="tech", price=8),
        ev("Stock", company="A", sector="tech", price=9),
        ev("Stock", company="A", sector="tech", price=7),
        ev("Stock", company="B", sector="tech", price=6),
    )
    formula = FilterF(Plus(as_("Stock", "s")), bag("s", "DEC", "price"))
    query = Query(
        formula,
        returns=(ReturnAttr("sector"), CountStar()),
        partition_by=("company", "sector"),
    )
    rows = run(query, s, STOCK_SCHEMA)
    # A: 10 8 9 7 -> 4 singles + 5 pairs + 2 triples = 11;  B: 5 6 -> 2 singles
    assert rows == [
        TrendRow(
            (("company", "A"), ("sector", "tech")), None, (("sector", "tech"), ("COUNT(*)", 11))
        ),
        TrendRow(
            (("company", "B"), ("sector", "tech")), None, (("sector", "tech"), ("COUNT(*)", 2))
        ),
    ]


def test_d6_sharon_trips_per_vehicle() -> None:
    """Q18: COUNT(*) of OakSt ; MainSt ; StateSt per vehicle; a key without match gives 0."""
    schema = Schema.of({"OakSt": ["vehicle"], "MainSt": ["vehicle"], "StateSt": ["vehicle"]})
    s = stream(
        ev("OakSt", vehicle=1),
        ev("OakSt", vehicle=2),
        ev("MainSt", vehicle=1),
        ev("OakSt", vehicle=1),
        ev("MainSt", vehicle=1),
        ev("StateSt", vehicle=1),
        ev("StateSt", vehicle=2),
    )
    query = Query(
        seq(atom("OakSt"), atom("MainSt"), atom("StateSt")),
        returns=(ReturnAttr("vehicle"), CountStar()),
        partition_by=("vehicle",),
    )
    rows = run(query, s, schema)
    assert [r.values for r in rows] == [
        (("vehicle", 1), ("COUNT(*)", 3)),
        (("vehicle", 2), ("COUNT(*)", 0)),
    ]


def test_d7_hamlet_cancelled_trips() -> None:
    """Q19: COUNT(*) and SUM(T.duration) of Request ; (Travel AS T)+ ; Cancel."""
    schema = Schema.of(
        {
            "Request": ["driver", "rider"],
            "Travel": ["driver", "rider", "duration"],
            "Cancel": ["driver", "rider"],
        }
    )
    s = stream(
        ev("Request", driver=1, rider=1),
        ev("Travel", driver=1, rider=1, duration=3),
        ev("Travel", driver=2, rider=1, duration=100),
        ev("Travel", driver=1, rider=1, duration=4),
        ev("Cancel", driver=1, rider=1),
        ev("Cancel", driver=2, rider=1),
    )
    query = Query(
        seq(atom("Request"), Plus(as_("Travel", "T")), atom("Cancel")),
        returns=(CountStar(), ReturnAgg("SUM", "T", "duration")),
        partition_by=("driver", "rider"),
    )
    rows = run(query, s, schema)
    assert [(r.key, r.values) for r in rows] == [
        ((("driver", 1), ("rider", 1)), (("COUNT(*)", 3), ("SUM(T.duration)", 14))),
        ((("driver", 2), ("rider", 1)), (("COUNT(*)", 0), ("SUM(T.duration)", 0))),
    ]


def test_d9_contiguous_increasing_heart_rate() -> None:
    """Q21: (Measurement AS M):+ increasing and passive, contiguous inside each patient."""
    schema = Schema.of({"Measurement": ["patient", "activity", "rate"]})
    s = stream(
        ev("Measurement", patient=1, activity="passive", rate=60),
        ev("Measurement", patient=1, activity="passive", rate=62),
        ev("Measurement", patient=2, activity="passive", rate=90),
        ev("Measurement", patient=1, activity="passive", rate=61),
        ev("Measurement", patient=1, activity="active", rate=100),
        ev("Measurement", patient=1, activity="passive", rate=65),
    )
    formula = FilterF(
        ContigPlus(as_("Measurement", "M")),
        fand(bag("M", "INC", "rate"), on("M", cmp("activity", "=", "passive"))),
    )
    query = Query(
        formula,
        returns=(
            ReturnAttr("patient"),
            CountStar(),
            ReturnAgg("MIN", "M", "rate"),
            ReturnAgg("MAX", "M", "rate"),
        ),
        partition_by=("patient",),
    )
    rows = run(query, s, schema)
    # patient 1 (local 60 62 61 [active 100] 65): 4 singles + (60, 62): 5 trends;
    # patient 1's 62 -> 61 is not increasing, and 61 and 65 are not contiguous
    assert [r.values for r in rows] == [
        (("patient", 1), ("COUNT(*)", 5), ("MIN(M.rate)", 60), ("MAX(M.rate)", 65)),
        (("patient", 2), ("COUNT(*)", 1), ("MIN(M.rate)", 90), ("MAX(M.rate)", 90)),
    ]
    # the same without RETURN: the pair is at global positions 0 and 1
    matches = run(Query(formula, partition_by=("patient",)), s, schema)
    assert sorted(times(m.event, "M") for m in matches) == [  # type: ignore[union-attr]
        (0,),
        (0, 1),
        (1,),
        (2,),
        (3,),
        (5,),
    ]


# ------------------------------------------------------------------ the texts

TEXTS: dict[str, tuple[str, Formula]] = {
    "3.2": (
        "(SELL AS msft ; SELL AS intel ; SELL AS amzn) FILTER msft[name = 'MSFT' AND price > 100]"
        " AND intel[name = 'INTL'] AND amzn[name = 'AMZN' AND price < 2000]",
        EX32,
    ),
    "5.1": (
        "AGG m[max_price := MAX(intel.price)]((SELL AS msft ; (SELL AS intel)+ ; SELL AS amzn)"
        " FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL']"
        " AND amzn[name = 'AMZN' AND price < 2000])",
        EX51,
    ),
    "5.2": (
        "(AGG w[QNT := COUNT(x)]((SELL AS x)+ FILTER x[INC(price)]"
        " AND x[price >= 100 AND price <= 2000])) FILTER w[QNT > 3]",
        EX52,
    ),
    "greta": ("(A+ ; B)+", GRETA_FORMULA),
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_texts_parse_to_the_same_formulas(name: str) -> None:
    parser = pytest.importorskip("acel.lang.parser")
    text, formula = TEXTS[name]
    assert parser.parse_formula(text) == formula



HADOOP_JOBS = (
        ev("JobStart", job_id=1),
        ev("Mapper", job_id=1, period=10),
        ev("JobStart", job_id=2),
        ev("Mapper", job_id=2, period=7),
        ev("Mapper", job_id=1, period=20),
        ev("JobEnd", job_id=1),
        ev("JobEnd", job_id=2),
)
"""Two interleaved Hadoop jobs (Example D.2): job 1 has mappers of 10 and 20, job 2 of 7."""

# ------------------------------------------- examples/paper/*.acel on the oracle

PAPER = Path(__file__).resolve().parent.parent / "examples" / "paper"


def paper_query(name: str) -> tuple[Query, Schema]:
    """Parse and check one of the paper's query files with the paper schema."""
    from acel.lang.checker import check_query
    from acel.lang.parser import parse_query

    path = PAPER / f"{name}.acel"
    assert path.exists(), f"{path} is missing"
    schema = Schema.from_json(json.loads((PAPER / "schema.json").read_text()))
    query = parse_query(path.read_text())
    check_query(query, schema)
    return query, schema


def with_ts(*rows: dict[str, OptValue], ts: Sequence[int] | None = None) -> list[Event]:
    """A stream whose events carry ``ts`` (their position unless given)."""
    stamps = list(ts) if ts is not None else list(range(len(rows)))
    return stream(*({**row, "ts": t} for row, t in zip(rows, stamps)))


def from_zero(rows: Sequence[Match] | Sequence[TrendRow]) -> list[TrendRow]:
    """The RETURN rows of the windows that start at 0 or later (the paper's examples
    list those; spec §6 also has the windows that start before 0)."""
    return [r for r in rows if isinstance(r, TrendRow) and r.window is not None and r.window[0] >= 0]


def before_zero(rows: Sequence[Match] | Sequence[TrendRow]) -> list[tuple[object, ...]]:
    """``(key, window, values)`` of the rows of windows that start before 0."""
    return [
        (r.key, r.window, r.values)
        for r in rows
        if isinstance(r, TrendRow) and r.window is not None and r.window[0] < 0
    ]


def matches(out: Sequence[Match] | Sequence[TrendRow]) -> list[Match]:
    assert all(isinstance(m, Match) for m in out)
    return [m for m in out if isinstance(m, Match)]


def test_paper_file_example_3_2_and_5_1() -> None:
    q32, schema = paper_query("ex3_2_three_sales")
    assert q32.formula == EX32
    assert len(run(q32, S10, schema)) == 6
    q51, _ = paper_query("ex5_1_max_intel_price")
    assert {m.event for m in matches(run(q51, S10, schema))} == evaluate(EX51, S10)


def test_paper_file_d1_bad_news_volume() -> None:
    query, schema = paper_query("d1_sase_bad_news_volume")
    s = with_ts(
        ev("News", kind="bad"),
        ev("Stock", symbol="GOOG", volume=10),
        ev("News", kind="good"),
        ev("Stock", symbol="GOOG", volume=5),
        ev("Stock", symbol="MSFT", volume=7),
        ev("Stock", symbol="GOOG", volume=1),
    )
    # the chain of next stocks after the bad news: {1}, {1, 3}; MSFT at 4 breaks it
    got = sorted(
        (m.event.start, m.event.end, times(m.event, "b"), m.event.bag("r"))
        for m in matches(run(query, s, schema))
    )
    assert got == [
        (0, 1, (1,), (Event.make(1, {"total_volume": 10}),)),
        (0, 3, (1, 3), (Event.make(3, {"total_volume": 15}),)),
    ]


def test_paper_file_d2_hadoop_mappers() -> None:
    query, schema = paper_query("d2_sase_hadoop_mappers")
    s = with_ts(*HADOOP_JOBS)
    got = sorted(
        (m.event.start, m.event.end, times(m.event, "b"), m.event.bag("r"))
        for m in matches(run(query, s, schema))
    )
    assert got == [
        (0, 5, (1,), (Event.make(5, {"avg_period": 10.0, "max_period": 10}),)),
        (0, 5, (1, 4), (Event.make(5, {"avg_period": 15.0, "max_period": 20}),)),
        (0, 5, (4,), (Event.make(5, {"avg_period": 20.0, "max_period": 20}),)),
        (2, 6, (3,), (Event.make(6, {"avg_period": 7.0, "max_period": 7}),)),
    ]


def test_paper_file_d3_customer_orders() -> None:
    query, schema = paper_query("d3_esper_customer_orders")
    s = with_ts(
        ev("ServiceOrder", custId=1, name="x", price=50),
        ev("ProductOrder", custId=1, name="x", price=60),
        ev("ServiceOrder", custId=2, name="x", price=10),
        ev("ProductOrder", custId=2, name="x", price=20),
        ev("ProductOrder", custId=1, name="y", price=70),
        ev("ProductOrder", custId=1, name="x", price=40),
    )
    # same customer and name: (0,1) totals 110, (0,5) 90, (2,3) 30; only the first is > 100
    got = [(m.event.start, m.event.end, m.event.bag("r")) for m in matches(run(query, s, schema))]
    assert got == [(0, 1, (Event.make(1, {"total": 110}),))]


def test_paper_file_d4_down_trends_in_sliding_windows() -> None:
    query, schema = paper_query("d4_greta_down_trends")
    s = with_ts(
        ev("Stock", company="A", sector="tech", price=10),
        ev("Stock", company="B", sector="tech", price=5),
        ev("Stock", company="A", sector="tech", price=8),
        ev("Stock", company="A", sector="tech", price=9),
        ev("Stock", company="A", sector="tech", price=7),
        ev("Stock", company="B", sector="tech", price=6),
        ts=[0, 1, 2, 10, 11, 12],
    )
    # windows [0,600) and [10,610).  A: 10 8 9 7 -> 11 down-trends, of which
    # 9 7 -> 3 in the second window;  B: 5 6 -> 2, and 6 alone in the second.
    # Windows [10k, 10k + 600) for k = -59 .. -1 start before 0 (spec §6): [-590, 10)
    # holds A 10 8 (3 down-trends) and B 5 (1); the other 58 hold every event.
    rows = run(query, s, schema)
    early = [(dict(r[0])["company"], r[1], dict(r[2])["COUNT(*)"]) for r in before_zero(rows)]
    assert early == [
        (company, (10 * k, 10 * k + 600), (first if k == -59 else every))
        for company, first, every in (("A", 3, 11), ("B", 1, 2))
        for k in range(-59, 0)
    ]
    rows = from_zero(rows)
    assert [(dict(r.key)["company"], r.window, r.value("COUNT(*)")) for r in rows] == [
        ("A", (0, 600), 11),
        ("A", (10, 610), 3),
        ("B", (0, 600), 2),
        ("B", (10, 610), 1),
    ]


def test_paper_file_d5_mapper_load() -> None:
    query, schema = paper_query("d5_greta_mapper_load")
    s = with_ts(
        ev("Start", job=1, mapper=1),
        ev("Start", job=1, mapper=2),
        ev("End", job=1, mapper=2),
        ev("Measurement", job=1, mapper=1, load=1, cpu=10),
        ev("Measurement", job=1, mapper=1, load=3, cpu=20),
        ev("Measurement", job=1, mapper=1, load=2, cpu=40),
        ev("End", job=1, mapper=1),
        ts=[0, 5, 6, 10, 20, 40, 50],
    )
    # mapper 1, window [0,60): increasing M among loads 1 3 2: {1} {3} {2} {1,3} {1,2}:
    # cpu 10 + 20 + 40 + 30 + 50 = 150; window [30,90) lacks the Start: 0.
    # Window [-30, 30) (spec §6: negative k too) holds Start, M 1 3 but no End: 0.
    rows = run(query, s, schema)
    assert before_zero(rows) == [
        ((("job", 1), ("mapper", m)), (-30, 30), (("mapper", m), ("SUM(M.cpu)", 0))) for m in (1, 2)
    ]
    rows = from_zero(rows)
    assert [(r.key, r.window, r.values) for r in rows] == [
        ((("job", 1), ("mapper", 1)), (0, 60), (("mapper", 1), ("SUM(M.cpu)", 150))),
        ((("job", 1), ("mapper", 1)), (30, 90), (("mapper", 1), ("SUM(M.cpu)", 0))),
        ((("job", 1), ("mapper", 2)), (0, 60), (("mapper", 2), ("SUM(M.cpu)", 0))),
    ]


def test_paper_file_d6_route_popularity() -> None:
    query, schema = paper_query("d6_sharon_route_popularity")
    s = with_ts(
        ev("OakSt", vehicle=1),
        ev("OakSt", vehicle=2),
        ev("MainSt", vehicle=1),
        ev("OakSt", vehicle=1),
        ev("MainSt", vehicle=1),
        ev("StateSt", vehicle=1),
        ev("StateSt", vehicle=2),
        ts=[0, 10, 20, 70, 80, 90, 100],
    )
    # Windows before 0 (spec §6): [-540, 60) holds vehicle 1's Oak 0 and Main 20 (no
    # trip) and vehicle 2's Oak 10; [-480, 120) … [-60, 540) hold every event.
    rows = run(query, s, schema)
    assert [(r[1], r[2]) for r in before_zero(rows)] == [
        ((60 * k, 60 * k + 600), (("vehicle", v), ("COUNT(*)", 3 if v == 1 and k > -9 else 0)))
        for v in (1, 2)
        for k in range(-9, 0)
    ]
    rows = from_zero(rows)
    assert [(r.window, r.values) for r in rows] == [
        ((0, 600), (("vehicle", 1), ("COUNT(*)", 3))),
        ((60, 660), (("vehicle", 1), ("COUNT(*)", 1))),
        ((0, 600), (("vehicle", 2), ("COUNT(*)", 0))),
        ((60, 660), (("vehicle", 2), ("COUNT(*)", 0))),
    ]


def test_paper_file_d7_cancelled_rides() -> None:
    query, schema = paper_query("d7_hamlet_cancelled_rides")
    s = with_ts(
        ev("Request", driver=1, rider=1),
        ev("Travel", driver=1, rider=1, duration=3),
        ev("Travel", driver=2, rider=1, duration=100),
        ev("Travel", driver=1, rider=1, duration=4),
        ev("Cancel", driver=1, rider=1),
        ev("Cancel", driver=2, rider=1),
    )
    rows = run(query, s, schema)
    assert [r.values for r in rows] == [  # type: ignore[union-attr]
        (("driver", 1), ("rider", 1), ("COUNT(*)", 3), ("SUM(T.duration)", 14)),
        (("driver", 2), ("rider", 1), ("COUNT(*)", 0), ("SUM(T.duration)", 0)),
    ]


def test_paper_file_d8_pool_trips_with_next() -> None:
    query, schema = paper_query("d8_cogra_pool_trips")
    pytest.importorskip("acel.lang.macros")
    s = with_ts(
        ev("Accept", driver=1),
        ev("Call", driver=1),
        ev("Call", driver=1),
        ev("Cancel", driver=1),
        ev("Call", driver=1),
        ev("Cancel", driver=1),
        ev("Finish", driver=1),
        ev("Accept", driver=2),
        ev("Cancel", driver=2),
        ev("Call", driver=2),
        ev("Finish", driver=2),
        ev("Cancel", driver=2),
        ev("Finish", driver=2),
    )
    # driver 1: Accept, then (Call 1, next Cancel 3), then either Finish next
    # (skipping 4, 5) or a second pair (Call 4, Cancel 5) and Finish: 2 trips.
    # driver 2: Accept, next Call (skips a Cancel), next Cancel (skips a Finish), next Finish: 1.
    # Every event (ts 0..12) lies in the 20 windows [30k, 30k + 600), k = -19..0 (spec §6).
    rows = run(query, s, schema)
    assert [(r.window, r.values) for r in rows] == [  # type: ignore[union-attr]
        ((30 * k, 30 * k + 600), (("driver", d), ("COUNT(*)", n)))
        for d, n in ((1, 2), (2, 1))
        for k in range(-19, 1)
    ]


def test_paper_file_d9_heart_rate() -> None:
    query, schema = paper_query("d9_cogra_heart_rate")
    s = with_ts(
        ev("Measurement", patient=1, activity="passive", rate=60),
        ev("Measurement", patient=1, activity="passive", rate=62),
        ev("Measurement", patient=2, activity="passive", rate=90),
        ev("Measurement", patient=1, activity="passive", rate=61),
        ev("Measurement", patient=1, activity="active", rate=100),
        ev("Measurement", patient=1, activity="passive", rate=65),
    )
    # Every event (ts 0..5) lies in the 20 windows [30k, 30k + 600), k = -19..0 (spec §6).
    rows = run(query, s, schema)
    assert [(r.window, r.values) for r in rows] == [  # type: ignore[union-attr]
        ((30 * k, 30 * k + 600), (("patient", p), ("MIN(M.rate)", lo), ("MAX(M.rate)", hi)))
        for p, lo, hi in ((1, 60, 65), (2, 90, 90))
        for k in range(-19, 1)
    ]
