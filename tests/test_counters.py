"""Quantifiers as counters, not copies (issue 35; ``compiler/counter.py``).

``φ{n,m}`` above :data:`acel.compiler.counter.EXPAND_LIMIT` copies is compiled with a
counter register: the automaton's size does not depend on the bounds.  The properties
lower the limit to 0, so that every generated repetition is counted, and compare the
counter automaton with the oracle (which evaluates the expansion of spec §3.2) and with
the automaton of the expansion.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from acel.acea import engine
from acel.acea.engine import Runner, naive, native_trend, plan
from acel.acea.engine.native_trend import NativePropagator
from acel.acea.model.automaton import ACEA
from acel.compiler import compile_formula, compile_query, counter
from acel.compiler.compile import build
from acel.compiler.context import Context
from acel.compiler.rewrite import normalise
from acel.reference import oracle
from hypothesis import given
from hypothesis import strategies as st

from acel.io.native_switch import NativeUnavailable
from acel.lang import ast
from acel.lang.checker import check_text
from acel.lang.errors import QueryError
from acel.lang.events import Event
from acel.lang.macros import expand_next, expand_quantifiers
from acel.lang.numbers import MAX_REPEAT
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.testing import (
    TEST_SCHEMA,
    formulas,
    formulas_with_env,
    queries,
    streams,
    trend_queries,
)

SCHEMA = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"]})


def _stream(types: str) -> list[Event]:
    return [Event.make(k, {"type": t, "v": k % 3}) for k, t in enumerate(types)]


def _automaton(formula: ast.Formula, schema: Schema, *, counted: bool) -> ACEA:
    """The formula's automaton with every repetition counted (or every one expanded)."""
    keep = (lambda _node: True) if counted else (lambda _node: False)
    expanded = expand_next(expand_quantifiers(formula, keep=keep), schema.type_names())
    return build(Context(schema), normalise(expanded)).to_acea()


@contextmanager
def count_everything() -> Iterator[None]:
    """Every repetition counted, in every engine (their compiled automata are cached)."""
    saved = counter.EXPAND_LIMIT
    counter.EXPAND_LIMIT = 0
    plan.automaton_for.cache_clear()
    plan.compiled_for.cache_clear()
    plan.trend_compiled.cache_clear()
    try:
        yield
    finally:
        counter.EXPAND_LIMIT = saved
        plan.automaton_for.cache_clear()
        plan.compiled_for.cache_clear()
        plan.trend_compiled.cache_clear()


# ------------------------------------------------------------------ size


@pytest.mark.parametrize("pattern", ["A{%d}", "A:{%d}", "A{2,%d}", "A{%d,}", "(A ; B AS b){%d}",
                                     "(A OR B){3,%d} FILTER A[v > 0]"])
def test_size_does_not_grow_with_the_bound(pattern: str) -> None:
    sizes = set()
    for n in (20, 100, 1000, 100_000, MAX_REPEAT):
        automaton = compile_formula(parse_query(pattern % n).formula, SCHEMA)
        sizes.add((automaton.num_states, len(automaton.transitions), len(automaton.registers())))
    assert len(sizes) == 1, sizes


def test_small_bounds_are_expanded_and_large_ones_counted() -> None:
    small = compile_formula(parse_query("A{3}").formula, SCHEMA)
    large = compile_formula(parse_query("A{17}").formula, SCHEMA)
    assert not any(r.startswith("count#") for r in small.registers())
    assert any(r.startswith("count#") for r in large.registers())
    assert counter.expansion_copies(ast.Repeat(ast.Atom("A"), 2, 5)) == 14
    assert counter.expansion_copies(ast.Repeat(ast.Atom("A"), 7, None)) == 7


# ------------------------------------------------------------- examples


@pytest.mark.parametrize(
    "text",
    [
        "A{3}", "A:{3}", "A{2,4}", "A:{2,4}", "A{3,}", "A:{2,}", "A{1,2}", "A{1}",
        "(A ; B){2}", "(A : B){2,3}", "(A ; B+){2}", "(A OR B){2,3} AS x",
        "(A AS a){2,3} FILTER a[v > 0]", "(A FILTER A[v > 0]){2}", "A{2}{2,3}",
        "A{2,3}:{2}", "(A ; NOT C ; B){2}", "(A ; B?){2}", "A ; B{2} ; C",
        "AGG z[s := SUM(A.v)](A{2,3})", "(AGG z[s := SUM(A.v)](A ; B)){2}",
        "A{2} AND (A ; A)", "PROJECT[](A{2,3})", "(A OR A ; B){2}",
    ],
)
def test_counter_equals_the_expansion(text: str) -> None:
    formula = parse_query(text).formula
    counted = _automaton(formula, SCHEMA, counted=True)
    expanded = _automaton(formula, SCHEMA, counted=False)
    for types in ("AABAB", "ABCABAB", "AAAA", "ACBACB", "BAAAB"):
        stream = _stream(types)
        expected = oracle.evaluate(formula, stream)
        assert naive.evaluate(counted, stream) == expected, (text, types)
        assert engine.evaluate(counted, stream) == expected, (text, types)
        assert naive.evaluate(expanded, stream) == expected, (text, types)


# ----------------------------------------------------------- properties


def _repeated(inner: st.SearchStrategy[ast.Formula]) -> st.SearchStrategy[ast.Formula]:
    """A repetition with small bounds around a generated formula, sometimes nested."""
    bounds = st.integers(1, 3).flatmap(
        lambda low: st.tuples(st.just(low), st.none() | st.integers(low, 4))
    )

    def wrap(f: ast.Formula, b: tuple[int, int | None], contiguous: bool) -> ast.Formula:
        return ast.Repeat(f, b[0], b[1], contiguous)

    once = st.builds(wrap, inner, bounds, st.booleans())
    return once | st.builds(wrap, once, bounds, st.booleans())


@given(_repeated(formulas(max_depth=2)), streams(max_len=6))
def test_counter_agrees_with_oracle(formula: ast.Formula, stream: list[Event]) -> None:
    """Counted ``φ{n,m}`` = the oracle's expansion, on generated φ (AS, FILTER, NOT, AGG,
    nested quantifiers, ...) and streams."""
    try:
        expected = oracle.evaluate(formula, stream, types=TEST_SCHEMA.type_names())
    except oracle.OracleTooLarge:
        return
    counted = _automaton(formula, TEST_SCHEMA, counted=True)
    assert naive.evaluate(counted, stream) == expected
    assert engine.evaluate(counted, stream) == expected


def _repeated_env(pair: tuple[ast.Formula, dict], low: int, high: int | None,
                  contiguous: bool) -> tuple[ast.Formula, dict]:
    return ast.Repeat(pair[0], low, high, contiguous), pair[1]


_trend_repeats = st.builds(
    _repeated_env, formulas_with_env(max_depth=2), st.integers(1, 3),
    st.none() | st.integers(3, 4), st.booleans(),
)


@given(trend_queries(of=_trend_repeats), streams(max_len=6))
def test_counted_trend_queries_agree_with_oracle(query: ast.Query, stream: list[Event]) -> None:
    """RETURN rows (COUNT(*), SUM, …; windows, PARTITION BY) and per-match output of
    counted repetitions, optimized engine and naive runs, against the oracle."""
    try:
        expected = oracle.run(query, stream, TEST_SCHEMA)
    except oracle.OracleTooLarge:
        return
    with count_everything():
        assert engine.run(query, stream, TEST_SCHEMA) == expected
        assert naive.run(query, stream, TEST_SCHEMA) == expected


@given(queries(of=_repeated(formulas(max_depth=2))), streams(max_len=6))
def test_counted_per_match_queries_agree_with_oracle(query: ast.Query, stream: list[Event]) -> None:
    """Per-match output (windows, PARTITION BY, SELECT, AFTER MATCH SKIP) of counted
    repetitions, optimized engine and naive runs, against the oracle."""
    try:
        expected = oracle.run(query, stream, TEST_SCHEMA)
    except oracle.OracleTooLarge:
        return
    with count_everything():
        assert engine.run(query, stream, TEST_SCHEMA) == expected
        assert naive.run(query, stream, TEST_SCHEMA) == expected


# ------------------------------------------------------------ native core


def _rows(query: str, events: list[dict], native: str) -> tuple[list, Runner]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        runner = Runner(parse_query(query), SCHEMA, monotone=None)
        rows = runner.push_batch([dict(e) for e in events])
        return rows + runner.finish(), runner


@pytest.mark.skipif(not native_trend.available(), reason="native core not built")
def test_native_core_runs_counted_repetitions_unfolded() -> None:
    """A counted repetition's register reads no event: trend mode unfolds it into states
    (``acea/engine/unfold.py``) and the native core runs it, with the pure-Python rows;
    a register that reads events (a relating filter) still stops ``ACEL_NATIVE=1`` in one line."""
    events = [{"type": "A" if k % 4 else "B", "v": k % 3} for k in range(60)]
    counted = "RETURN COUNT(*), SUM(A.v) PATTERN A{17} ; B WITHIN 30 EVENTS"
    rows, runner = _rows(counted, events, "1")
    assert isinstance(next(iter(runner.partitions.values())).evaluator, NativePropagator)
    expected = engine.run(parse_query(counted), [Event.make(k, e) for k, e in enumerate(events)],
                          SCHEMA)
    assert repr(rows) == repr(_rows(counted, events, "0")[0]) == repr(expected)
    reading = "RETURN COUNT(*) PATTERN (A AS a ; (B AS b)+ FILTER b[v > a.v]){17} WITHIN 30 EVENTS"
    with pytest.raises(NativeUnavailable, match="registers carried between events that read"):
        _rows(reading, events, "1")


# ------------------------------------------------------------- the limit


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("A{100000000000000000000}", 3, "at most 1,000,000, not a number of 21 digits"),
        ("A ; B{1,1000001}", 9, "at most 1,000,000, not 1,000,001"),
        ("A{1000001,}", 3, "at most 1,000,000"),
        ("A{2," + "9" * 4300 + "}", 5, "not a number of 4,300 digits"),
        ("A{" + "9" * 4301 + "}", 3, "4,301 digits"),
    ],
)
def test_bounds_above_the_limit_are_refused_where_they_stand(
    text: str, column: int, words: str
) -> None:
    with pytest.raises(QueryError) as info:
        check_text(text, SCHEMA)
    assert (info.value.line, info.value.column) == (1, column)
    assert words in info.value.message
    assert "\n" not in info.value.message


def test_the_limit_itself_is_accepted() -> None:
    query = check_text(f"A{{{MAX_REPEAT}}}", SCHEMA)
    assert compile_query(query, SCHEMA).automaton.num_states == 3


def test_oracle_lowers_bounds_to_the_stream() -> None:
    """``A{10^6}`` on 5 events: the oracle expands at most 6 copies (no result)."""
    assert oracle.evaluate(parse_query("A{1000000}").formula, _stream("AAAAA")) == set()
    got = oracle.evaluate(parse_query("A{2,1000000}").formula, _stream("AAA"))
    assert len(got) == 4  # three pairs and the triple


# ------------------------------------------------------ the target


def test_runs_of_consecutive_events_end_to_end(tmp_path: Path) -> None:
    """``acel run`` of ``RETURN COUNT(*) PATTERN A{n} WITHIN n EVENTS`` on ``A``s counts
    the runs of ``n`` consecutive events: the issue's target at a unit-test size
    (``bench/counters.py`` times n = 1,000 on 10^5 events)."""
    n, events = 100, 300
    data = tmp_path / "a.jsonl"
    data.write_text("".join(json.dumps({"type": "A", "x": k}) + "\n" for k in range(events)))
    query = f"RETURN COUNT(*) PATTERN A{{{n}}} WITHIN {n} EVENTS"
    out = subprocess.run(
        [sys.executable, "-m", "acel", "run", query, "--data", str(data)],
        capture_output=True, text=True, timeout=600, env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"COUNT(*)": events - n + 1}
