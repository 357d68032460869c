"""STDDEV, declared in ``acel/lang/aggregates.py`` only (issue 26 §2).

The sample standard deviation (``papers/semantics.md``, aggregates): NULL
below two values, state ``(count, sum, sum of squares)`` exact until the
finish.  Every engine agrees with the oracle, and the fast paths take it:
the optimized engine propagates it (no enumeration), a workload's shared
plan takes it, Spark merges its partial states.
"""

from __future__ import annotations

import math
import statistics

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.acea.engine.plan import compiled_for, propagation_applies
from acel.acea.engine.runner import PROPAGATE, Runner
from acel.acea.engine.shared import SharedPlan, SharedRunner, unshared_reason
from acel.reference import oracle

from acel.lang import aggregates
from acel.lang.checker import attribute_kinds, check_text
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import AcelCheckError, DataError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["x", "name"], "B": ["x", "name"]}, {"x": "int", "name": "str"})
VALUES = [("A", 1), ("B", 2), ("B", 5), ("A", 3), ("B", 7), ("B", 4), ("A", 6), ("B", 9)]
STREAM = [Event.make(i, {"type": t, "x": x, "name": "n"}) for i, (t, x) in enumerate(VALUES)]
FLOATS = [
    Event.make(i, {"type": t, "x": x / 10, "name": "n"}) for i, (t, x) in enumerate(VALUES)
]


def _value(rows: list[Match] | list[TrendRow], name: str) -> list[object]:
    return [r.value(name) for r in rows if isinstance(r, TrendRow)]


# ------------------------------------------------------------------ the definition


def test_stddev_is_the_sample_standard_deviation() -> None:
    assert aggregates.lookup("stddev") is aggregates.STDDEV
    assert aggregates.STDDEV.apply([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(
        statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]), rel=1e-15
    )
    assert aggregates.STDDEV.apply([1.5, None, 2.5]) == pytest.approx(math.sqrt(0.5), rel=1e-15)


def test_stddev_of_fewer_than_two_values_is_null_and_of_equal_values_zero() -> None:
    assert aggregates.STDDEV.apply([]) is None
    assert aggregates.STDDEV.apply([None, 7]) is None
    assert aggregates.STDDEV.apply([3, 3, 3]) == 0.0
    assert aggregates.STDDEV.apply([0.1, 0.1, 0.1]) == 0.0  # exact: no rounding residue


def test_stddev_state_is_exact_whatever_the_order() -> None:
    """Integers stay integers and floats become fractions until the finish, so the
    order of combination (enumeration, propagation, Spark's merge) cannot matter."""
    values = [0.1, 0.7, 1e16, 0.3, -1e16, 2.5]
    agg = aggregates.STDDEV
    forward = agg.fold(values)
    backward = agg.fold(reversed(values))
    assert forward == backward
    assert agg.finish(forward) == agg.finish(backward)
    big = [10**30 + k for k in range(5)]
    assert agg.apply(big) == pytest.approx(statistics.stdev(range(5)), rel=1e-15)


def test_stddev_refuses_text_at_run_time() -> None:
    with pytest.raises(DataError, match="STDDEV adds numbers, but an event holds the str value"):
        aggregates.STDDEV.apply(["AMZN", "INTL"])


# ------------------------------------------------------------------ the checker


def test_checker_refuses_stddev_of_text_and_types_it_float() -> None:
    with pytest.raises(AcelCheckError, match=r"STDDEV\(b.name\) adds numbers, but name holds str"):
        check_text("RETURN STDDEV(b.name) PATTERN B AS b", SCHEMA)
    query = parse_query("AGG m[s := STDDEV(b.x)](A AS a ; B AS b)")
    assert attribute_kinds(query, dict(SCHEMA.kinds))["s"] == "float"


# ------------------------------------------------------------------ every engine agrees


@pytest.mark.parametrize("stream", [STREAM, FLOATS], ids=["int", "float"])
@pytest.mark.parametrize(
    "text",
    [
        "RETURN COUNT(*), STDDEV(b.x), COUNT(b) PATTERN A AS a ; (B AS b)+",
        "RETURN STDDEV(b.x), STDDEV(a.x) PATTERN (A AS a ; B AS b) WITHIN 4 EVENTS SLIDE 2 EVENTS",
        "RETURN COUNT(*), STDDEV(b.x) PATTERN A AS a ; (B AS b)+ ; A AS c",
    ],
)
def test_return_stddev_oracle_naive_and_engine_agree(stream: list[Event], text: str) -> None:
    query = parse_query(text)
    expected = oracle.run(query, stream, SCHEMA)
    assert any(v is not None for row in expected for _, v in row.values)  # type: ignore[union-attr]
    assert naive.run(query, stream, SCHEMA) == expected
    assert engine.run(query, stream, SCHEMA) == expected
    assert engine.run(query, stream, SCHEMA, trend_mode="enumerate") == expected


def test_return_stddev_by_hand() -> None:
    """``A ; B`` (skip till any match): every (A, B) pair later; the B values of all pairs."""
    query = parse_query("RETURN COUNT(*), STDDEV(b.x) PATTERN A AS a ; B AS b")
    bags = [x for i, (t, _) in enumerate(VALUES) if t == "A"
            for (u, x) in VALUES[i + 1:] if u == "B"]
    rows = engine.run(query, STREAM, SCHEMA)
    assert _value(rows, "COUNT(*)") == [len(bags)]
    assert _value(rows, "STDDEV(b.x)") == [pytest.approx(statistics.stdev(bags), rel=1e-15)]


@pytest.mark.parametrize("stream", [STREAM, FLOATS], ids=["int", "float"])
def test_agg_stddev_per_match_on_every_engine(stream: list[Event]) -> None:
    query = parse_query("AGG m[s := STDDEV(b.x)](A AS a ; (B AS b)+) FILTER b[x > 0]")
    expected = oracle.run(query, stream, SCHEMA)
    with_value = [m for m in expected if isinstance(m, Match) and m.event.bag("m")[0].get("s")]
    assert with_value, "some match has two B values or more"
    assert naive.run(query, stream, SCHEMA) == expected
    assert engine.run(query, stream, SCHEMA) == expected


# ------------------------------------------------------------------ the fast paths are taken


def test_engine_propagates_stddev_without_enumerating() -> None:
    query = parse_query("RETURN COUNT(*), STDDEV(b.x) PATTERN A AS a ; (B AS b)+")
    automaton, _ = compiled_for(query.formula, SCHEMA)
    assert propagation_applies(query, automaton)
    runner = Runner(query, SCHEMA)
    assert runner.mode == PROPAGATE
    for event in STREAM:
        runner.push(dict(event.attrs), event.time)
    assert runner.finish() == oracle.run(query, STREAM, SCHEMA)


def test_a_user_aggregate_without_a_power_is_enumerated() -> None:
    """The same monoid registered without fast-path facts: right answer, no propagation."""
    plain = aggregates.Aggregate(
        "SAMPLESD", aggregates.STDDEV.identity, aggregates.STDDEV.lift,
        aggregates.STDDEV.combine, aggregates.STDDEV.finish,
    )
    aggregates.register(plain)
    try:
        query = parse_query("RETURN STDDEV(b.x), SAMPLESD(b.x) PATTERN A AS a ; (B AS b)+")
        assert Runner(query, SCHEMA).mode != PROPAGATE
        row = engine.run(query, STREAM, SCHEMA)[0]
        assert isinstance(row, TrendRow)
        assert row.value("SAMPLESD(b.x)") == row.value("STDDEV(b.x)") is not None
    finally:
        del aggregates._REGISTRY["SAMPLESD"]


def test_shared_plan_takes_stddev() -> None:
    """A workload's shared trend plan (HAMLET) counts STDDEV's three sums as linear entries."""
    texts = {
        "q1": "RETURN COUNT(*), STDDEV(b.x) PATTERN A AS a ; (B AS b)+ WITHIN 4 EVENTS SLIDE 2 EVENTS",
        "q2": "RETURN STDDEV(b.x), COUNT(b) PATTERN A AS a ; B AS b WITHIN 6 EVENTS SLIDE 2 EVENTS",
    }
    queries = {name: parse_query(text) for name, text in texts.items()}
    for query in queries.values():
        assert unshared_reason(query, SCHEMA) is None
    shared = SharedRunner(SharedPlan(list(queries.items()), SCHEMA))
    got: dict[str, list[TrendRow]] = {name: [] for name in queries}
    for event in FLOATS:
        for name, row in shared.push(dict(event.attrs), event.time):
            got[name].append(row)
    for name, row in shared.finish():
        got[name].append(row)
    for name, query in queries.items():
        assert sorted(got[name], key=TrendRow.sort_key) == oracle.run(query, FLOATS, SCHEMA)
