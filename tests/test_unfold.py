"""Counters unfolded into states, and classes dropped when they cannot end in their
window (issue 35; ``acea/engine/unfold.py``, ``aggregate.need_pruning``, ``core.c``).

Trend counting runs a counted repetition ``φ{n,m}`` as a register-free automaton whose
states are the configurations ``(q, count)``; with ``WITHIN w EVENTS`` a run needing
more events than its window has left is dropped.  Both must leave every row as the
oracle computes it (the expansion of spec §3.2), in pure Python and in the native core.
"""

from __future__ import annotations

from typing import Any

import pytest
from acel.acea import engine
from acel.acea.engine import Runner, native_trend, plan
from acel.acea.engine.aggregate import Propagator
from acel.acea.engine.native_trend import NativePropagator
from acel.acea.engine.unfold import events_needed, unfold
from acel.compiler import compile_formula
from acel.reference import oracle
from hypothesis import given
from hypothesis import strategies as st
from test_counters import count_everything

from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v"]})
needs_core = pytest.mark.skipif(not native_trend.available(), reason="native core not built")


def _run(query: str, events: list[dict[str, Any]], native: str) -> tuple[list[Any], Runner]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        runner = Runner(parse_query(query), SCHEMA, monotone=None)
        rows = runner.push_batch([dict(e) for e in events])
        return rows + runner.finish(), runner


def _evaluator(runner: Runner) -> Any:
    return next(iter(runner.partitions.values())).evaluator


# ------------------------------------------------------------------ the unfolding


def test_a_counter_unfolds_into_one_state_per_value() -> None:
    """``A{20}``: 3 states and a counter compiled; 21 states and no register unfolded,
    the run in state ``k`` needing ``20 − k`` more events."""
    automaton = compile_formula(parse_query("A{20}").formula, SCHEMA)
    assert (automaton.num_states, len(automaton.registers() & {"count#2"})) == (3, 1)
    flat = unfold(automaton)
    assert flat is not None
    assert flat.num_states == 21 and flat.finals == frozenset({20})
    assert not any(flat.live.values())
    assert events_needed(flat) == tuple(range(20, -1, -1))


def test_registers_that_read_events_or_too_many_values_are_not_unfolded() -> None:
    relating = parse_query("A AS a ; (B AS b)+ FILTER b[v > a.v]").formula
    assert unfold(compile_formula(relating, SCHEMA)) is None
    assert unfold(compile_formula(parse_query("A").formula, SCHEMA)) is None  # nothing carried
    counted = compile_formula(parse_query("A{100}").formula, SCHEMA)
    assert unfold(counted, limit=50) is None
    assert unfold(counted, limit=102) is not None


# ------------------------------------------------------------- exact against the oracle


def _query(draw: st.DrawFn) -> str:
    low = draw(st.integers(1, 4))
    high = draw(st.none() | st.integers(low, 5))
    bounds = f"{{{low}}}" if high == low else f"{{{low},}}" if high is None and draw(
        st.booleans()) else f"{{{low},{high if high is not None else low + 1}}}"
    inner = draw(st.sampled_from(["A", "(A ; B)", "(A OR B)", "(A AS a FILTER a[v < 2])"]))
    colon = ":" if draw(st.booleans()) else ""
    tail = draw(st.sampled_from(["", " ; B", " ; (B AS b)"]))
    partition = " PARTITION BY v" if draw(st.booleans()) else ""
    window = draw(st.integers(1, 8))
    return (f"RETURN COUNT(*) PATTERN {inner}{colon}{bounds}{tail}{partition} "
            f"WITHIN {window} EVENTS")


_queries = st.composite(_query)()
_streams = st.lists(st.tuples(st.sampled_from("AB"), st.integers(0, 2)), max_size=10)


@given(_queries, _streams)
def test_unfolded_and_pruned_counters_agree_with_oracle(
    query: str, stream: list[tuple[str, int]]
) -> None:
    """``φ{n}``, ``φ{n,m}``, ``φ{n,}`` (``;`` and ``:``), mixed types, PARTITION BY,
    ``WITHIN w EVENTS``: pure Python and the native core give the oracle's rows."""
    events = [{"type": t, "v": v} for t, v in stream]
    try:
        expected = oracle.run(parse_query(query), [Event.make(k, e) for k, e in enumerate(events)],
                              SCHEMA)
    except oracle.OracleTooLarge:
        return
    with count_everything(), pytest.MonkeyPatch.context() as mp:
        for native in ("0", "auto") if native_trend.available() else ("0",):
            mp.setenv("ACEL_NATIVE", native)
            got = engine.run(parse_query(query), [Event.make(k, e) for k, e in enumerate(events)],
                             SCHEMA)
            assert got == expected, (query, native)


# ------------------------------------------------------- the case, small


@pytest.mark.parametrize("native", ["0", pytest.param("1", marks=needs_core)])
def test_runs_of_fifty_consecutive_events(native: str) -> None:
    """``A{50} WITHIN 50 EVENTS`` on 2,000 ``A``: the 1,951 runs of 50 consecutive events
    (``bench/counters.py`` runs the issue's n = 1,000 on 10^5 events)."""
    events = [{"type": "A", "v": k % 3} for k in range(2000)]
    rows, runner = _run("RETURN COUNT(*) PATTERN A{50} WITHIN 50 EVENTS", events, native)
    assert [row.values for row in rows] == [(("COUNT(*)", 1951),)]
    assert isinstance(_evaluator(runner), NativePropagator) == (native == "1")


def test_live_classes_follow_the_counter_not_the_window_squared() -> None:
    """After 300 ``A`` under ``A{50} WITHIN 50 EVENTS`` each configuration ``(q, count)``
    holds the one start that can still finish (49 counting, 1 just accepted): 50 class
    entries, not the ~1,275 of every start in the window."""
    events = [{"type": "A", "v": 0} for _ in range(300)]
    _, runner = _run("RETURN COUNT(*) PATTERN A{50} WITHIN 50 EVENTS", events, "0")
    evaluator = _evaluator(runner)
    assert isinstance(evaluator, Propagator)
    assert sum(len(classes) for classes in evaluator.active.values()) == 50


def test_caches_are_cleared_by_count_everything() -> None:
    """The fixture the properties use clears the unfolded automata too."""
    with count_everything():
        assert plan.trend_compiled.cache_info().currsize == 0


@pytest.mark.parametrize("native", ["0", pytest.param("auto", marks=needs_core)])
def test_a_saved_unfolded_run_restores_and_goes_on(native: str) -> None:
    """A counted trend query saved mid-stream and restored (the state names the unfolded
    automaton's states) gives the rows of the run in one go."""
    query = "RETURN COUNT(*), SUM(A.v) PATTERN A{20} ; B PARTITION BY v WITHIN 30 EVENTS"
    events = [{"type": "B" if k % 7 == 6 else "A", "v": k % 2} for k in range(200)]
    whole, _ = _run(query, events, native)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        first = Runner(parse_query(query), SCHEMA, monotone=None)
        rows = first.push_batch([dict(e) for e in events[:90]])
        second = Runner.restore(parse_query(query), SCHEMA, first.save())
        rows += second.push_batch([dict(e) for e in events[90:]]) + second.finish()
    assert rows == whole and whole
