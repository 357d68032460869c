"""The optimized engine on the papers' worked examples, with the papers' numbers.

Every hand-checked example of ``test_oracle_examples`` (spec §10 = seed 004
Examples 3.2, 5.1, 5.2; GRETA's Figure 12 of seed 000 with windows; the
Appendix D queries of seed 004) is re-run with the oracle's ``run`` and
``evaluate`` replaced by the engine's.  Then the A-Seq (seed 001), SASE+
(seed 002) and HAMLET (seed 003) counting examples that fit the language,
and a few regression tests of engine-specific machinery (indexes, windows,
sharing).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import pytest
import test_oracle_examples as examples
from acel.acea import engine
from acel.reference import oracle

from acel.lang.ast import Formula, Query, Window
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import ComplexEvent, Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema


def _schema_of(stream: Sequence[Event], formula: Formula | None = None) -> Schema:
    """A schema holding every type and attribute of the stream (and the formula's atoms)."""
    types: dict[str, set[str]] = {}
    for e in stream:
        if e.type is not None:
            types.setdefault(e.type, set()).update(a for a, _ in e.attrs if a != "type")
    if formula is not None:
        for name in _atoms(formula):
            types.setdefault(name, set())
    return Schema.of({t: sorted(a) for t, a in types.items()})


def _atoms(node: object) -> set[str]:
    from acel.lang.ast import Atom

    if isinstance(node, Atom):
        return {node.type}
    out: set[str] = set()
    for value in getattr(node, "__dict__", {}).values():
        for v in value if isinstance(value, tuple) else (value,):
            out |= _atoms(v)
    return out


def engine_evaluate(formula: Formula, stream: Sequence[Event], **_: object) -> set[ComplexEvent]:
    """``⟦formula⟧(S)`` computed by the engine (the oracle's ``evaluate`` signature)."""
    matches = engine.run(Query(formula), stream, _schema_of(stream, formula))
    return {m.event for m in matches if isinstance(m, Match)}


EXAMPLES = [
    name
    for name, fn in inspect.getmembers(examples, inspect.isfunction)
    if name.startswith("test_") and not inspect.signature(fn).parameters
]


@pytest.mark.parametrize("name", EXAMPLES)
def test_oracle_worked_example_on_the_engine(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(examples, "run", engine.run)
    monkeypatch.setattr(examples, "evaluate", engine_evaluate)
    getattr(examples, name)()


def test_examples_were_found() -> None:
    assert len(EXAMPLES) >= 10


# ---------------------------------------------- A-Seq, SASE+, HAMLET counts

ABC = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"]})


def _typed(text: str) -> list[Event]:
    """``"a b a c"`` → events of types A, B, A, C with ``v`` = position."""
    return [Event.make(k, {"type": t.upper(), "v": k}) for k, t in enumerate(text.split())]


def _count(query_text: str, stream: Sequence[Event], schema: Schema = ABC) -> object:
    rows = engine.run(parse_query(query_text), stream, schema)
    assert rows == oracle.run(parse_query(query_text), stream, schema)
    (row,) = rows
    assert isinstance(row, TrendRow)
    return row.value("COUNT(*)")


def test_aseq_counts_sequences_without_building_them() -> None:
    """Seed 001 (A-Seq): COUNT of SEQ(A, B, C) = number of a < b < c triples."""
    stream = _typed("a b a c b c")
    # A at {0, 2}, B at {1, 4}, C at {3, 5}: (0,1,3) (0,1,5) (0,4,5) (2,4,5)
    assert _count("RETURN COUNT(*) PATTERN A ; B ; C", stream) == 4


def test_aseq_window_drops_long_sequences() -> None:
    stream = _typed("a b a c b c")
    # span (end - start) below 4: (0,1,3) (2,4,5)
    assert _count("RETURN COUNT(*) PATTERN A ; B ; C WITHIN 4 EVENTS", stream) == 2


def test_sase_kleene_skip_till_any_match_count() -> None:
    """Seed 002: SEQ(A a, B+ b[], C c) under skip-till-any-match: 2^#B per (a, c)."""
    stream = _typed("a b b b c")
    assert _count("RETURN COUNT(*) PATTERN A ; B+ ; C", stream) == 7


def test_hamlet_shared_kleene_counts() -> None:
    """Seed 003 (HAMLET): (A+ ; B) trends: every non-empty subset of earlier A's, per B."""
    stream = _typed("a a b a b")
    # first B: 3 subsets of {0,1}; second B: 7 subsets of {0,1,3}
    assert _count("RETURN COUNT(*) PATTERN A+ ; B", stream) == 10


# ------------------------------------------------------------- regressions

STOCK = Schema.of({"STOCK": ["company", "price"]})


def _stocks(prices: Sequence[int], company: str = "c") -> list[Event]:
    return [
        Event.make(k, {"type": "STOCK", "company": company, "price": p})
        for k, p in enumerate(prices)
    ]


def test_dec_trend_counts_decreasing_subsequences() -> None:
    """GRETA Q1 style: COUNT(*) of (STOCK AS s)+ FILTER s[DEC(price)] = #decreasing subsequences."""
    prices = [5, 3, 4, 2, 2, 1]
    from itertools import combinations

    expected = sum(
        1
        for r in range(1, len(prices) + 1)
        for idx in combinations(range(len(prices)), r)
        if all(prices[a] > prices[b] for a, b in zip(idx, idx[1:]))
    )
    text = "RETURN COUNT(*), SUM(s.price) PATTERN (STOCK AS s)+ FILTER s[DEC(price)]"
    rows = engine.run(parse_query(text), _stocks(prices), STOCK)
    assert rows == oracle.run(parse_query(text), _stocks(prices), STOCK)
    assert isinstance(rows[0], TrendRow) and rows[0].value("COUNT(*)") == expected


def test_indexed_trend_equals_scan_on_a_long_stream() -> None:
    """The Fenwick index and the plain scan agree where the oracle cannot go (300 events)."""
    import random

    rnd = random.Random(3)
    prices = [rnd.randrange(40) for _ in range(300)]
    text = (
        "RETURN COUNT(*), SUM(s.price), MIN(s.price), AVG(s.price) PATTERN (STOCK AS s)+ "
        "FILTER s[DEC(price)] WITHIN 50 EVENTS SLIDE 20 EVENTS"
    )
    query = parse_query(text)
    items = engine.trend_items(query)
    _, ca = engine.compiled_for(query.formula, STOCK, items)
    from acel.acea.engine.aggregate import Propagator
    from acel.acea.engine.windows import WindowRule

    events = _stocks(prices)
    rule = WindowRule(query.within, query.slide)

    def rows(use_index: bool) -> dict[object, object]:
        propagator = Propagator(ca, items, rule, use_index=use_index)
        for k, event in enumerate(events):
            propagator.step(dict(event.attrs), k, k)
        return propagator.rows

    with_index = rows(True)
    without = rows(False)
    assert with_index == without
    assert len(with_index) == 17  # windows [20k, 20k + 50), k = -2..14, holding events


def test_tumbling_windows_reset_the_trend_state() -> None:
    text = (
        "RETURN COUNT(*) PATTERN (STOCK AS s)+ FILTER s[DEC(price)] "
        "WITHIN 3 EVENTS SLIDE 3 EVENTS"
    )
    rows = engine.run(parse_query(text), _stocks([3, 2, 1, 3, 2, 1, 9]), STOCK)
    assert [(r.window, r.value("COUNT(*)")) for r in rows if isinstance(r, TrendRow)] == [
        ((0, 3), 7),
        ((3, 6), 7),
        ((6, 9), 1),
    ]


def test_within_on_a_decreasing_attribute_is_not_pruned() -> None:
    """``WITHIN d ON ts`` with ts going down: nothing may be dropped early."""
    schema = Schema.of({"A": ["ts"], "B": ["ts"]})
    s = [
        Event.make(0, {"type": "A", "ts": 10}),
        Event.make(1, {"type": "A", "ts": 0}),
        Event.make(2, {"type": "B", "ts": 11}),
    ]
    query = Query(parse_query("A ; B").formula, within=Window(2, "ts"))
    assert engine.run(query, s, schema) == oracle.run(query, s, schema)
    assert len(engine.run(query, s, schema)) == 1


def test_long_skip_chains_do_not_recurse() -> None:
    """A run spanning thousands of skipped events enumerates iteratively."""
    s = [Event.make(0, {"type": "A", "v": 0})]
    s += [Event.make(k, {"type": "C", "v": k}) for k in range(1, 5000)]
    s.append(Event.make(5000, {"type": "B", "v": 5000}))
    out = engine.run(parse_query("A ; B"), s, ABC)
    assert [(m.event.start, m.event.end) for m in out if isinstance(m, Match)] == [(0, 5000)]


@pytest.mark.parametrize("name", ["oracle", "automaton", "optimized", "sase"])
@pytest.mark.parametrize(
    "text, data",
    [
        ("RETURN COUNT(*) PATTERN A WITHIN 3 EVENTS SLIDE 2 EVENTS", {"type": "A", "v": 1}),
        ("RETURN COUNT(*) PATTERN A WITHIN 3 ON ts SLIDE 2 ON ts", {"type": "A", "v": 1, "ts": 0}),
        ("RETURN v, COUNT(*) PATTERN A PARTITION BY v WITHIN 3 EVENTS SLIDE 2 EVENTS",
         {"type": "A", "v": 1}),
    ],
)
def test_windows_before_zero_in_every_engine(name: str, text: str, data: dict[str, object]) -> None:
    """Issue 32 / spec §6: on one A, windows [-2,1) and [0,3) both hold it (k = -1, 0)."""
    from acel.engines import engine as registry

    schema = Schema.of({"A": ["v", "ts"]})
    rows = registry(name).batch(parse_query(text), [Event.make(0, data)], schema)
    assert [(r.window, r.value("COUNT(*)")) for r in rows] == [((-2, 1), 1), ((0, 3), 1)]
