"""The slicing proof of papers/spark.md, checked without Spark (fast, many examples).

``simulate`` does exactly what the Spark plan does, in one process: it copies
each event into the slices ``Slicing.slices_of`` names, runs the optimized
engine on each slice with the owned start range, moves the results to global
positions (and windows by the slice's first position) and merges RETURN
states.  The union must equal the engine on the whole stream.
"""

from __future__ import annotations

import pickle
from dataclasses import replace
from typing import Any

import pytest
from acel.acea import engine
from acel.spark_backend import executor
from acel.spark_backend.partitioning import Slicing, choose, slicing_for
from hypothesis import given
from hypothesis import strategies as st

from acel.lang.ast import As, Atom, CountStar, Plus, Query, ReturnAgg, Seq, Skip, Window
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, queries, streams, trend_queries


def simulate(query: Query, stream: list[Event], schema: Schema, slicing: Slicing) -> list[Any]:
    """The Spark slice plan run in one process (same executor code)."""
    assert query.within is not None and not query.partition_by
    attr = query.within.attr
    events_axis = attr is None

    def axis(position: int) -> float:
        if attr is None:
            return position
        value = stream[position].get(attr)
        assert isinstance(value, (int, float))
        return value

    members: dict[int, list[int]] = {}
    for position in range(len(stream)):
        for k in slicing.slices_of(axis(position)):
            members.setdefault(k, []).append(position)
    out: list[Any] = []
    partials: dict[Any, list[Any]] = {}
    for k, positions in sorted(members.items()):
        local = [stream[p].at(i) for i, p in enumerate(positions)]
        owned_local = [i for i, p in enumerate(positions) if slicing.owner(axis(p)) == k]
        if not owned_local:
            continue
        owned = range(owned_local[0], owned_local[-1] + 1)
        assert len(owned) == len(owned_local), "owned events are contiguous"
        assert positions == list(range(positions[0], positions[-1] + 1)), "slices are contiguous"
        if query.returns is None:
            for m in engine.run(query, local, schema, start_positions=owned):
                assert isinstance(m, Match)
                out.append(Match(m.key, m.event.relabel(positions)))
            continue
        items, where = executor.state_items(query.returns)
        shift = positions[0] if events_axis and query.slide is not None else 0
        for row in engine.run(replace(query, returns=items), local, schema, start_positions=owned):
            assert isinstance(row, TrendRow)
            values = [v for _, v in row.values]
            state = [
                (values[i[0]], values[i[1]]) if len(i) == 2 else values[i[0]] for i in where
            ]
            window = None if row.window is None else (row.window[0] + shift, row.window[1] + shift)
            if window in partials:
                partials[window] = executor.combine_states(query.returns, partials[window], state)
            else:
                partials[window] = pickle.loads(pickle.dumps(state))
    if query.returns is None:
        return sorted(out, key=Match.sort_key)
    rows = [
        TrendRow((), window, tuple(executor.finish_states(query.returns, state)))
        for window, state in partials.items()
    ]
    if not stream and query.slide is None:
        rows = [TrendRow((), None, tuple(executor.identity_row(query.returns)))]
    return sorted(rows, key=TrendRow.sort_key)


def _unpartitioned_windowed(query: Query, window: Window) -> Query:
    """A query Spark slices: no PARTITION BY, a window, and no strategy that compares
    complex events across starts (NEXT, LAST, MAX, a skip: ``choose`` never slices them)."""
    select = query.select if query.select in ("ALL", "STRICT") else "ALL"
    return replace(query, partition_by=(), within=query.within or window, select=select, skip=None)


@pytest.mark.slow
@given(
    queries(),
    streams(max_len=9),
    st.integers(1, 4),
    st.integers(1, 5),
)
def test_event_slices_lose_and_double_nothing(
    query: Query, stream: list[Event], size: int, w: int
) -> None:
    query = _unpartitioned_windowed(query, Window(w))
    expected = engine.run(query, stream, TEST_SCHEMA)
    slicing = slicing_for(query, count=len(stream), span=None, slices=1, slice_size=size)
    assert simulate(query, stream, TEST_SCHEMA, slicing) == expected


@pytest.mark.slow
@given(trend_queries(), streams(max_len=9), st.integers(1, 4), st.integers(1, 5))
def test_event_slices_merge_trend_aggregates_exactly(
    query: Query, stream: list[Event], size: int, w: int
) -> None:
    query = _unpartitioned_windowed(query, Window(w))
    if query.slide is not None and query.within is not None:
        query = replace(query, slide=Window(min(query.slide.size, query.within.size)))
    query = replace(query, returns=tuple(i for i in query.returns or () if not _is_attr(i)) or (CountStar(),))
    expected = engine.run(query, stream, TEST_SCHEMA)
    slicing = slicing_for(query, count=len(stream), span=None, slices=1, slice_size=size)
    got = simulate(query, stream, TEST_SCHEMA, slicing)
    assert _approx(got) == _approx(expected)


def _is_attr(item: object) -> bool:
    return not isinstance(item, (CountStar, ReturnAgg))


def _approx(rows: list[Any]) -> list[Any]:
    """Float results may differ by summation order only (spec §4): round them."""
    out = []
    for row in rows:
        if isinstance(row, TrendRow):
            values = tuple(
                (n, round(v, 9) if isinstance(v, float) else v) for n, v in row.values
            )
            out.append(TrendRow(row.key, row.window, values))
        else:
            out.append(row)
    return out


TS_SCHEMA = Schema.of({"A": ["ts", "x"], "B": ["ts", "x"]})


@st.composite
def ts_streams(draw: Any, max_len: int = 9) -> list[Event]:
    """Streams whose ``ts`` never decreases (gaps 0..3, so ties and jumps occur)."""
    n = draw(st.integers(0, max_len))
    ts = draw(st.integers(-3, 3))
    out = []
    for position in range(n):
        ts += draw(st.integers(0, 3))
        out.append(
            Event.make(
                position,
                {"type": draw(st.sampled_from(["A", "B"])), "ts": ts, "x": draw(st.integers(0, 3))},
            )
        )
    return out


def ts_query(draw_slide: int | None, w: int, returns: bool) -> Query:
    formula = Seq(Plus(As(Atom("A"), "a")), As(Atom("B"), "b"))
    if not returns:
        return Query(formula, None, (), Window(w, "ts"))
    items = (CountStar(), ReturnAgg("SUM", "a", "x"), ReturnAgg("AVG", "b", "x"),
             ReturnAgg("MAX", "a", "x"))
    slide = None if draw_slide is None else Window(min(draw_slide, w), "ts")
    return Query(formula, items, (), Window(w, "ts"), slide)


@given(ts_streams(), st.integers(1, 4), st.integers(1, 5), st.none() | st.integers(1, 5),
       st.booleans())
def test_attribute_slices_are_exact(
    stream: list[Event], size: int, w: int, slide: int | None, returns: bool
) -> None:
    query = ts_query(slide, w, returns)
    expected = engine.run(query, stream, TS_SCHEMA)
    slicing = slicing_for(query, count=len(stream), span=None, slices=1, slice_size=size)
    assert _approx(simulate(query, stream, TS_SCHEMA, slicing)) == _approx(expected)


@given(st.integers(-50, 50), st.integers(1, 7), st.integers(0, 4), st.integers(0, 4))
def test_slices_of_contains_the_owner(value: int, length: int, before: int, after: int) -> None:
    slicing = Slicing(length, before, after)
    ks = slicing.slices_of(value)
    assert slicing.owner(value) in ks
    for k in ks:
        lo, hi = slicing.data_bounds(k)
        assert lo <= value < hi
    assert slicing.data_bounds(ks.start - 1)[1] <= value
    assert value < slicing.data_bounds(ks.stop)[0]


def test_strategy_choice() -> None:
    formula = Atom("A")
    assert choose(Query(formula, partition_by=("k",))).kind == "partition"
    assert choose(Query(formula, within=Window(3))).kind == "slice"
    assert choose(Query(formula)).kind == "single"
    on_ts = Query(formula, within=Window(3, "ts"))
    assert choose(on_ts, attr_monotone=True).kind == "slice"
    assert choose(on_ts, attr_monotone=False).kind == "single"
    for select in ("NEXT", "LAST", "MAX"):
        assert choose(Query(formula, within=Window(3), select=select)).kind == "single"
    assert choose(Query(formula, within=Window(3), select="STRICT")).kind == "slice"
    assert choose(Query(formula, within=Window(3), skip=Skip("TO_NEXT_ROW"))).kind == "single"
    assert choose(Query(formula, partition_by=("k",), within=Window(3), select="MAX")).kind == "partition"


def test_slide_aligns_event_slices() -> None:
    query = Query(Atom("A"), (CountStar(),), (), Window(5), Window(2))
    slicing = slicing_for(query, count=100, span=None, slices=4, slice_size=3)
    assert slicing.length % 2 == 0 and slicing.before % 2 == 0
    assert slicing.before >= 4 and slicing.after == 4


def test_default_slices_are_never_shorter_than_a_window() -> None:
    query = Query(Atom("A"), None, (), Window(50))
    assert slicing_for(query, count=100, span=None, slices=8).length == 50
    assert slicing_for(query, count=10_000, span=None, slices=8).length == 1250
    with pytest.raises(ValueError):
        Slicing(0, 0, 0)


def test_balance_spreads_keys_by_size() -> None:
    from acel.spark_backend.partitioning import balance

    sizes = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    bins = balance(sizes, 3)
    totals = [sum(s for s, b in zip(sizes, bins) if b == k) for k in range(3)]
    assert sorted(totals) == [18, 18, 19]
    assert balance([], 4) == []
    assert balance([5, 5], 4) == [0, 1]
    with pytest.raises(ValueError):
        balance([1], 0)


@given(st.lists(st.integers(0, 1000), max_size=60), st.integers(1, 8))
def test_balance_is_within_the_list_scheduling_bound(sizes: list[int], bins: int) -> None:
    """No bin exceeds the mean by more than one item (greedy to the lightest bin)."""
    from acel.spark_backend.partitioning import balance

    placed = balance(sizes, bins)
    assert len(placed) == len(sizes) and all(0 <= b < bins for b in placed)
    totals = [sum(s for s, b in zip(sizes, placed) if b == k) for k in range(bins)]
    assert bins * max(totals) <= sum(sizes) + (bins - 1) * max(sizes, default=0)
