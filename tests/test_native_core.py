"""The native trend core (issue 23, ``papers/engine.md`` "Native core"): same rows as the
pure-Python propagator and the oracle, bit for bit; the int64 → Python int crossing; the
fallback when the extension is missing; ``ACEL_NATIVE`` auto / 1 / 0; save and restore.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from acel.acea import engine
from acel.acea.engine import Runner, native_trend
from acel.acea.engine.aggregate import Propagator, TumblingPropagator
from acel.acea.engine.native_trend import NativePropagator
from acel.reference import oracle
from hypothesis import given
from hypothesis import strategies as st
from test_engine_properties import rows_close

from acel.io.native_switch import NativeUnavailable
from acel.lang.ast import Query
from acel.lang.clauses import TrendRow
from acel.lang.errors import AcelError, DataError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, streams, trend_queries

needs_core = pytest.mark.skipif(not native_trend.available(), reason="native core not built")

W0_SCHEMA = Schema.of({"A": ["ts", "v"], "B": ["ts", "v"], "C": ["ts", "v"]})
W0_RETURN = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"


@pytest.fixture(autouse=True)
def _auto(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("ACEL_NATIVE", "auto")
    yield


def w0(kinds: str, values: list[Any] | None = None) -> list[dict[str, Any]]:
    """A W0-like stream: one event per letter, ts = index, v from ``values`` (default 1)."""
    return [{"type": t, "ts": k, "v": 1 if values is None else values[k]} for k, t in enumerate(kinds)]


def run(query: str, events: list[dict[str, Any]], native: str, schema: Schema = W0_SCHEMA,
        batch: bool = False) -> tuple[list[Any], Runner]:
    """The rows of ``query`` with ``ACEL_NATIVE=native`` (one event at a time, or in a batch)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        runner = Runner(parse_query(query), schema, monotone=None)
        if batch:
            out = runner.push_batch([dict(e) for e in events])
        else:
            out = [r for e in events for r in runner.push(dict(e))]
        return out + runner.finish(), runner


def evaluator(runner: Runner) -> Any:
    return next(iter(runner.partitions.values())).evaluator


def same(a: list[Any], b: list[Any]) -> bool:
    """Equal rows, floats bit for bit (repr tells -0.0 from 0.0 and keeps NaN equal)."""
    return repr(a) == repr(b) and [type(v) for r in a for _, v in r.values] == [
        type(v) for r in b for _, v in r.values
    ]


# ------------------------------------------------------------------ unit


@needs_core
def test_w0_runs_natively_with_the_python_rows() -> None:
    events = w0("ABBCABBBCAC" * 20, [k % 7 for k in range(220)])
    native, runner = run(W0_RETURN, events, "1")
    python, pure = run(W0_RETURN, events, "0")
    assert isinstance(evaluator(runner), NativePropagator)
    assert isinstance(evaluator(pure), Propagator)
    assert evaluator(runner).python is None  # no hand-over was needed
    assert same(native, python)
    assert native[0].values[0] == ("COUNT(*)", python[0].values[0][1]) and python[0].values[0][1] > 0


@pytest.mark.parametrize("query", [
    "RETURN COUNT(*), SUM(b.v), AVG(b.v), MIN(b.v), MAX(b.v), COUNT(b) "
    "PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts",
    "RETURN COUNT(*), MAX(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[v > 2] WITHIN 5 EVENTS",
    "RETURN COUNT(*), MIN(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[v IN (1, 3) OR NOT v < 5]",
    "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[NOT v = 2 OR v = 4] "
    "PARTITION BY v",
])
@needs_core
@pytest.mark.parametrize("batch", [False, True])
def test_queries_in_the_fragment(query: str, batch: bool) -> None:
    values: list[Any] = [k % 6 if k % 5 else None for k in range(121)]
    events = w0("ABCBBACBBBC" * 11, values[:121])
    for e in events:
        if e["v"] is None:
            del e["v"]
    native, runner = run(query, events, "1", batch=batch)
    python, _ = run(query, events, "0", batch=batch)
    assert same(native, python)
    assert any(isinstance(p.evaluator, NativePropagator) for p in runner.partitions.values())


@needs_core
def test_floats_in_python_order_bit_for_bit() -> None:
    """Float sums depend on the order of additions: the core keeps Python's."""
    floats = [0.1, 1e16, -1e16, 3.3, 1 / 3, -0.0, 2.5e-8, 7.0, 1e-300, 0.7]
    events = w0("ABBBBCBBACBBBBBBC" * 6, [floats[k % 10] for k in range(102)])
    query = ("RETURN COUNT(*), SUM(b.v), AVG(b.v), MIN(b.v), MAX(b.v) "
             "PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 9 ON ts")
    native, runner = run(query, events, "1")
    python, _ = run(query, events, "0")
    assert evaluator(runner).python is None
    assert same(native, python)


@needs_core
def test_mixed_int_and_float_values() -> None:
    events = w0("ABBBCABBC" * 4, [1, 2.5, 3, 2**62, 1, 0, -1.5, 4, 1] * 4)
    query = "RETURN SUM(b.v), MIN(b.v), MAX(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 6 ON ts"
    native, _ = run(query, events, "1")
    python, _ = run(query, events, "0")
    assert same(native, python)


@needs_core
@pytest.mark.parametrize("batch", [False, True])
def test_float_and_mixed_coordinates(batch: bool) -> None:
    """``WITHIN 3 ON ts`` with float and int times: classes compare as Python compares them,
    and a hand-over (here an overflow) exports them with their Python types."""
    kinds = "ABBCABBBC" * 3 + "A" + "B" * 66 + "C"
    events = w0(kinds, [k % 5 for k in range(len(kinds))])
    for k, e in enumerate(events):
        e["ts"] = k * 0.5 if k % 3 else k // 2  # 0, 0.5, 1.0, 1, 2.0, 2.5, 3, ...
    query = "RETURN COUNT(*), SUM(b.v), MIN(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 40 ON ts"
    native, runner = run(query, events, "1", batch=batch)
    python, _ = run(query, events, "0")
    assert same(native, python) and dict(python[0].values)["COUNT(*)"] > 2**64
    assert evaluator(runner).why == "int64 overflow"
    short = query.replace("WITHIN 40", "WITHIN 3")
    native, runner = run(short, events[:27], "1", batch=batch)
    assert evaluator(runner).python is None and same(native, run(short, events[:27], "0")[0])


@needs_core
@pytest.mark.parametrize("windows", [
    "WITHIN 6 EVENTS SLIDE 2 EVENTS", "WITHIN 4 EVENTS SLIDE 4 EVENTS", "WITHIN 3 EVENTS SLIDE 5 EVENTS",
    "WITHIN 7 ON ts SLIDE 3 ON ts", "WITHIN 5 ON ts SLIDE 5 ON ts",
])
def test_slide_windows(windows: str) -> None:
    """Overlapping (per-class rows kmin..c) and tumbling (reset per window) SLIDE windows:
    the same rows, released at the same events, as the pure-Python path."""
    kinds = "ABBCABBBCACBBC" * 4
    events = w0(kinds, [(k * 7) % 5 for k in range(len(kinds))])
    for k, e in enumerate(events):
        e["ts"] = k // 2 if k % 2 else k * 0.5
    query = "RETURN COUNT(*), SUM(b.v), AVG(b.v), MAX(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c " + windows
    released = {}
    for native in ("1", "0"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACEL_NATIVE", native)
            runner = Runner(parse_query(query), W0_SCHEMA, monotone=None)
            released[native] = [(k, r) for k, e in enumerate(events) for r in runner.push(dict(e))]
            released[native].append((-1, runner.finish()))
            if native == "1":
                assert isinstance(evaluator(runner), NativePropagator) and evaluator(runner).python is None
    assert repr(released["1"]) == repr(released["0"]) and len(released["0"]) > 3


# ------------------------------------------------------------------ the crossing


@needs_core
@pytest.mark.parametrize("batch", [False, True])
def test_count_and_sum_cross_int64_into_python_ints(batch: bool) -> None:
    """A window of 70 B events: 2^70 − 1 trends, SUM = 3 · 2^69 · 70 (every v is 3)."""
    events = w0("A" + "B" * 70 + "C", [3] * 72)
    query = "RETURN COUNT(*), SUM(b.v), AVG(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 100 ON ts"
    native, runner = run(query, events, "1", batch=batch)
    python, _ = run(query, events, "0")
    values = dict(native[0].values)
    assert values["COUNT(*)"] == 2**70 - 1
    assert values["SUM(b.v)"] == 3 * 70 * 2**69
    assert same(native, python)
    handed = evaluator(runner)
    assert isinstance(handed, NativePropagator) and handed.python is not None
    assert handed.why == "int64 overflow"


@needs_core
def test_the_last_count_that_fits_stays_native() -> None:
    """62 B events: 2^62 − 1 runs fit in int64 (COUNT(*) alone): no hand-over."""
    events = w0("A" + "B" * 62 + "C")
    native, runner = run("RETURN COUNT(*) PATTERN A ; B+ ; C", events, "1")
    assert native[0].values == (("COUNT(*)", 2**62 - 1),)
    assert evaluator(runner).python is None


@needs_core
def test_values_beyond_int64_go_to_python() -> None:
    events = w0("ABBC", [0, 2**70, 1, 0])
    native, runner = run("RETURN SUM(b.v) PATTERN A ; (B AS b)+ ; C", events, "1")
    python, _ = run("RETURN SUM(b.v) PATTERN A ; (B AS b)+ ; C", events, "0")
    assert same(native, python) and native[0].values == (("SUM(b.v)", 2 * 2**70 + 2),)
    assert evaluator(runner).why == "a value that is not an int64 or a float"


# ------------------------------------------------------------------ errors


@needs_core
def test_the_same_one_line_errors() -> None:
    text = w0("ABC", [0, "x", 0])
    for native in ("1", "0"):
        with pytest.raises(DataError, match="SUM adds numbers"):
            run("RETURN SUM(b.v) PATTERN A ; (B AS b)+ ; C", text, native)
    backwards = w0("ABBC")
    backwards[2]["ts"] = 0
    messages = []
    for native in ("1", "0"):
        for batch in (False, True):
            with pytest.raises(DataError) as err:
                run(W0_RETURN, backwards, native, batch=batch)
            messages.append(str(err.value))
    assert len(set(messages)) == 1 and "position 2" in messages[0]


# ------------------------------------------------------------------ ACEL_NATIVE and fallback


@needs_core
def test_outside_the_fragment_auto_uses_python_and_1_says_why() -> None:
    relating = "RETURN COUNT(*) PATTERN A AS a ; (B AS b)+ FILTER b[v > a.v] WITHIN 5 EVENTS"
    events = w0("ABBAB", [1, 2, 0, 3, 4])
    rows, runner = run(relating, events, "auto")
    assert not isinstance(evaluator(runner), NativePropagator)
    assert same(rows, run(relating, events, "0")[0])
    with pytest.raises(NativeUnavailable, match=r"ACEL_NATIVE=1 .* registers carried between events"):
        run(relating, events, "1")
    stddev = "RETURN STDDEV(b.v) PATTERN A AS a ; (B AS b)+ WITHIN 4 EVENTS"
    with pytest.raises(NativeUnavailable, match="the aggregate STDDEV runs in Python"):
        run(stddev, events, "1")


def test_acel_native_0_is_pure_python() -> None:
    _, runner = run(W0_RETURN, w0("ABC"), "0")
    assert isinstance(evaluator(runner), Propagator)
    _, runner = run("RETURN COUNT(*) PATTERN A ; B+ ; C", w0("ABC"), "0")
    assert isinstance(evaluator(runner), TumblingPropagator)


def test_a_missing_extension_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    events = w0("ABBCABC")
    expected, _ = run(W0_RETURN, events, "0")
    monkeypatch.setattr(native_trend, "_native_core", None)
    rows, runner = run(W0_RETURN, events, "auto", batch=True)
    assert isinstance(evaluator(runner), Propagator) and same(rows, expected)
    with pytest.raises(NativeUnavailable, match="_native_core is not built"):
        run(W0_RETURN, events, "1")


def test_a_bad_acel_native_value_is_one_line() -> None:
    with pytest.raises(AcelError, match="ACEL_NATIVE='maybe'"):
        run(W0_RETURN, w0("ABC"), "maybe")


# ------------------------------------------------------------------ state


@needs_core
@pytest.mark.parametrize("cut", [0, 3, 9, 17])
def test_save_and_restore_continue_on_the_core(cut: int) -> None:
    """Issue 31: both the saved runner and the restored one go on natively
    (tests/test_native_restore.py has the properties)."""
    events = w0("ABBCABBBCAC" * 2, list(range(22)))
    query = parse_query(W0_RETURN)
    runner = Runner(query, W0_SCHEMA, monotone=None)
    assert runner.push_batch([dict(e) for e in events[:cut]]) == []
    blob = runner.save()
    restored = Runner.restore(query, W0_SCHEMA, blob)
    assert isinstance(evaluator(restored), NativePropagator) and evaluator(restored).python is None
    assert isinstance(evaluator(runner), NativePropagator) and evaluator(runner).python is None
    rows = restored.push_batch([dict(e) for e in events[cut:]]) + restored.finish()
    rest = runner.push_batch([dict(e) for e in events[cut:]]) + runner.finish()
    expected, _ = run(W0_RETURN, events, "0")
    assert same(rows, expected) and same(rest, expected)


# ------------------------------------------------------------------ properties


def _rows(query: Query, stream: list[Event], native: str, batch: bool = False) -> list[TrendRow]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        if not batch:
            return engine.run(query, stream, TEST_SCHEMA)
        runner = Runner(query, TEST_SCHEMA, monotone=None)
        out = runner.push_batch([dict(e.attrs) for e in stream]) + runner.finish()
        return sorted(out, key=TrendRow.sort_key)


NATIVE_SEEN: list[bool] = []


@needs_core
@given(trend_queries(), streams())
def test_native_equals_python_equals_oracle(query: Query, stream: list[Event]) -> None:
    """Generated trend queries: native (per event and in batches) == pure Python == oracle."""
    try:
        python = _rows(query, stream, "0")
    except AcelError as err:
        with pytest.raises(type(err)):
            _rows(query, stream, "auto")
        return
    assert same(_rows(query, stream, "auto"), python)
    if not query.partition_by:
        assert same(_rows(query, stream, "auto", batch=True), python)
    assert rows_close(python, oracle.run(query, stream, TEST_SCHEMA))
    NATIVE_SEEN.append(bool(Runner(query, TEST_SCHEMA).native))


@needs_core
def test_the_property_runs_the_core_often() -> None:
    """The generated queries are not all outside the fragment (the property is not vacuous)."""
    if not NATIVE_SEEN:
        test_native_equals_python_equals_oracle()
    assert sum(NATIVE_SEEN) >= len(NATIVE_SEEN) // 5 > 0


_FLOATS = st.sampled_from([0.1, 0.2, 1e16, -1e16, 1 / 3, -0.0, 0.0, 2.5, 1e-300, 3])


@needs_core
@given(trend_queries(), streams(), st.lists(_FLOATS, min_size=8, max_size=8))
def test_float_values_bit_for_bit(query: Query, stream: list[Event], floats: list[Any]) -> None:
    """The same property with float (and mixed) values: sums in the same order."""
    changed = [
        Event(e.time, tuple((a, floats[(e.time + len(a)) % 8] if a in ("x", "y") and v is not None else v)
                            for a, v in e.attrs))
        for e in stream
    ]
    try:
        python = _rows(query, changed, "0")
    except AcelError:
        return
    assert same(_rows(query, changed, "auto"), python)


@needs_core
@given(trend_queries(windows_on=True), streams(present=("x",)), st.sampled_from([0.5, 1.0, 0.25]))
def test_float_coordinates_equal_python(query: Query, stream: list[Event], step: float) -> None:
    """``WITHIN d ON x`` with x a mix of ints and floats (with ``step`` 0.25 or 1.0 the
    axis decreases after each even position: non-monotone windows too)."""
    timed = [
        Event(e.time, tuple((a, (e.time // 2 if e.time % 2 == 0 else e.time * step) if a == "x" else v)
                            for a, v in e.attrs))
        for e in stream
    ]
    try:
        python = _rows(query, timed, "0")
    except AcelError:
        return
    assert same(_rows(query, timed, "auto"), python)
    assert rows_close(python, oracle.run(query, timed, TEST_SCHEMA))


@pytest.mark.parametrize("native", ["0", "auto"])
@pytest.mark.parametrize("select", ["ALL", "STRICT"])
def test_strict_slide_counts_a_complex_event_only_where_both_ends_fall(
    native: str, select: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found by Hypothesis (test_float_coordinates_equal_python): on an ``ON`` axis that
    decreases, ``A2 C3`` (x 1 then 0.75) has its end below its start, so it falls in no
    SLIDE window (spec §6: both ends in the window).  SELECT STRICT held it per window
    and tested only ``lo <= start`` and ``end < hi``: counted in [0, 1) and [1, 2)."""
    monkeypatch.setenv("ACEL_NATIVE", native)
    query = parse_query(f"RETURN COUNT(*) SELECT {select} PATTERN A? ; C WITHIN 1 ON x SLIDE 1 ON x")
    stream = [Event(0, (("k", 0), ("type", "C"), ("x", 0))), Event(1, (("k", 0), ("type", "C"), ("x", 0.25))),
              Event(2, (("k", 0), ("type", "A"), ("x", 1), ("y", 0))), Event(3, (("k", 0), ("type", "C"), ("x", 0.75)))]
    got = [(r.window, r.values) for r in engine.run(query, stream, TEST_SCHEMA)]
    assert got == [((0, 1), (("COUNT(*)", 3),)), ((1, 2), (("COUNT(*)", 0),))]
    assert got == [(r.window, r.values) for r in oracle.run(query, stream, TEST_SCHEMA)]


def test_engine_properties_on_the_pure_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the core built, the cross-engine properties run native (auto); these run the
    trend ones again on pure Python (papers/engine.md: both paths in CI)."""
    import test_engine_properties as props

    monkeypatch.setenv("ACEL_NATIVE", "0")
    props.test_propagation_equals_enumeration()
    props.test_trend_rows_equal_oracle()
    props.test_start_positions_split_trend_counts()


@needs_core
def test_skipped_events_still_number_the_partition() -> None:
    """``Runner.skip`` (workloads) numbers events the core never reads: EVENTS windows see it."""
    query = parse_query("RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 4 EVENTS")
    events = w0("ABXBCABBXC" * 3, list(range(30)))
    found = {}
    for native in ("1", "0"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACEL_NATIVE", native)
            runner = Runner(query, W0_SCHEMA, monotone=None)
            out: list[Any] = []
            for k in range(0, 30, 10):
                for e in events[k:k + 10]:
                    if e["type"] == "X":
                        out += runner.skip(dict(e))
                out += runner.push_batch([dict(e) for e in events[k:k + 10] if e["type"] != "X"])
            found[native] = out + runner.finish()
    assert same(found["1"], found["0"]) and found["0"][0].values[0][1] > 0


def test_ci_builds_the_core() -> None:
    """CI (``.ci/run`` sets ``CI``) must build and so test the native path."""
    if os.environ.get("CI"):
        assert native_trend.available(), "the native core was not built in CI"


@needs_core
@pytest.mark.parametrize("windows", ["WITHIN 100 EVENTS SLIDE 30 EVENTS", "WITHIN 90 EVENTS SLIDE 100 EVENTS"])
def test_the_crossing_under_slide_windows(windows: str) -> None:
    """The hand-over exports SLIDE rows (and the tumbling window) in Python's format."""
    events = w0("BA" + "B" * 70 + "CBBAC", [3] * 77)
    query = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c " + windows
    native, runner = run(query, events, "1")
    python, _ = run(query, events, "0")
    assert same(native, python) and max(dict(r.values)["COUNT(*)"] for r in python) > 2**69
    assert evaluator(runner).why == "int64 overflow"


@needs_core
@given(trend_queries(), streams(), st.integers(0, 7))
def test_start_positions_split_like_python(query: Query, stream: list[Event], cut: int) -> None:
    """Spark's time slices (``start_positions``): each slice's rows as the pure-Python path's."""
    for starts in (range(0, cut), range(cut, 10**9)):
        found = {}
        for native in ("auto", "0"):
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("ACEL_NATIVE", native)
                try:
                    found[native] = engine.run(query, stream, TEST_SCHEMA, start_positions=starts)
                except AcelError as err:
                    found[native] = [type(err).__name__]
        assert repr(found["auto"]) == repr(found["0"])  # repr tells 1 from 1.0 and -0.0 from 0.0


# ------------------------------------------------------------------ columns into the core


def _columns_rows(query: Query, events: list[dict[str, Any]], cap: int, schema: Schema = TEST_SCHEMA,
                  native: str = "auto") -> tuple[list[Any], Runner]:
    """The rows when the events come as typed column blocks of ``cap`` rows (the pure-Python
    adapter of the reader's blocks), in stream order."""
    from acel.io.columns import blocks_of_rows

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        runner = Runner(query, schema, monotone=None)
        spec = runner.column_spec()
        out: list[Any] = []
        if spec is None:
            out = runner.push_batch([dict(e) for e in events])
        else:
            floats = frozenset(a for a, k in schema.kinds if k == "float")
            for block in blocks_of_rows(spec.with_floats(floats), [[dict(e) for e in events]], cap=cap):
                out += runner.push_batch(block) if isinstance(block, list) else runner.push_columns(block)
        return out + runner.finish(), runner


def _per_event(query: Query, events: list[dict[str, Any]], native: str,
               schema: Schema = TEST_SCHEMA) -> list[Any]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        runner = Runner(query, schema, monotone=None)
        return [r for e in events for r in runner.push(dict(e))] + runner.finish()


_ODD = st.sampled_from(["keep", "keep", "keep", None, 2.5, -0.0, 2**63, True, 1e16])


@st.composite
def _odd_streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Generated streams with NULLs, missing attributes, floats among ints, a bool, an int
    beyond int64 (the events no column holds) and events without a key."""
    out = []
    for event in draw(streams()):
        attrs = dict(event.attrs)
        for name in ("x", "k"):
            odd = draw(_ODD)
            if odd is None:
                attrs.pop(name, None)
            elif odd != "keep" and name in attrs:
                attrs[name] = odd
        out.append(attrs)
    return out


def _outcome(call: Any) -> Any:
    try:
        return repr(call())
    except AcelError as err:
        return ("error", type(err).__name__, str(err))


@needs_core
@given(trend_queries(), _odd_streams(), st.sampled_from([1, 2, 3, 8192]))
def test_columns_equal_dicts_equal_python_equal_oracle(query: Query, events: list[dict[str, Any]],
                                                        cap: int) -> None:
    """Typed columns (blocks of ``cap`` rows) == attribute maps in batches (PARTITION BY too)
    == one event at a time, native == pure Python, in the same order, errors alike; and
    == the oracle where the values are the schema's."""
    python = _outcome(lambda: _per_event(query, events, "0"))
    assert _outcome(lambda: _per_event(query, events, "auto")) == python
    assert _outcome(lambda: _columns_rows(query, events, cap)[0]) == python
    assert _outcome(lambda: _columns_rows(query, events, cap, native="0")[0]) == python
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", "auto")
        runner = Runner(query, TEST_SCHEMA, monotone=None)
        assert _outcome(lambda: runner.push_batch([dict(e) for e in events]) + runner.finish()) == python
    plain = all(type(v) is int or v is None or type(v) is str for e in events for v in e.values())
    if plain and not isinstance(python, tuple):
        stream = [Event(k, tuple(sorted((a, v) for a, v in e.items() if v is not None)))
                  for k, e in enumerate(events)]
        assert rows_close(sorted(_per_event(query, events, "0"), key=TrendRow.sort_key),
                          oracle.run(query, stream, TEST_SCHEMA))


KEYED = ("RETURN COUNT(*), SUM(b.v), AVG(b.v), MIN(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c "
         "PARTITION BY k WITHIN 11 ON ts")


def _keyed_events(n: int, keys: list[Any]) -> list[dict[str, Any]]:
    kinds = "ABBCABBBCACBBBBC"
    out = [{"type": kinds[i % len(kinds)], "ts": i, "v": (i * 37) % 100, "k": keys[(i // 4) % len(keys)]}
           for i in range(n)]
    return out


@needs_core
@pytest.mark.parametrize("keys", [[0, 1, 2, 3, 4, 5, 6, 7], ["x", "y", "z"], [1, None, 2.5, True, 1.0]])
@pytest.mark.parametrize("cap", [5, 8192])
def test_partition_by_in_batches_and_columns(keys: list[Any], cap: int) -> None:
    """PARTITION BY runs in one C call a batch (int, float, bool and string keys; events
    without a key only counted): the same rows, in the same order, as event by event."""
    schema = Schema.of({t: ["ts", "v", "k"] for t in "ABC"})
    query = parse_query(KEYED)
    events = _keyed_events(400, keys)
    python = _per_event(query, events, "0", schema)
    assert repr(_per_event(query, events, "1", schema)) == repr(python)
    rows, runner = _columns_rows(query, events, cap, schema, native="1")
    assert repr(rows) == repr(python) and len(python) == len(dict.fromkeys(k for k in keys if k is not None))
    assert runner.events == len(events)
    assert all(p.evaluator.python is None for p in runner.partitions.values())
    assert sum(dict(r.values)["COUNT(*)"] for r in python) > 0
    if all(type(k) is int for k in keys):
        assert Runner(query, schema).column_spec() is not None and runner.keyed is not None
        assert len(runner.keyed.table) == len(keys)


@needs_core
@pytest.mark.parametrize("cap", [7, 8192])
def test_partition_by_hand_over_of_one_key(cap: int) -> None:
    """One partition outgrows int64 and goes over to Python; the others stay on their core."""
    schema = Schema.of({t: ["ts", "v", "k"] for t in "ABC"})
    query = parse_query(KEYED.replace("WITHIN 11", "WITHIN 300"))
    events = _keyed_events(120, [0, 1])
    events += [{"type": "A", "ts": 120, "v": 1, "k": 5}]
    events += [{"type": "B", "ts": 121 + i, "v": 3, "k": 5 if i % 2 else 0} for i in range(140)]
    events += [{"type": "C", "ts": 400, "v": 1, "k": 5}, {"type": "C", "ts": 401, "v": 1, "k": 0}]
    python = _per_event(query, events, "0", schema)
    rows, runner = _columns_rows(query, events, cap, schema, native="1")
    assert repr(rows) == repr(python)
    by_key = {p.key: p.evaluator for p in runner.partitions.values()}
    assert by_key[(("k", 5),)].python is not None and by_key[(("k", 1),)].python is None
    assert dict(python[-1].values)["COUNT(*)"] > 2**64


@needs_core
def test_columns_keep_strings_and_the_type_as_a_value_in_attribute_maps() -> None:
    """A query reading a string attribute, the type as a value, or keyed by a string takes
    attribute maps (no column spec); one reading numbers takes columns."""
    schema = Schema.of({t: ["ts", "v", "name"] for t in "ABC"}, {"name": "str"})
    def spec(q: str) -> Any:
        return Runner(parse_query(q), schema, monotone=None).column_spec()
    base = "RETURN COUNT(*) PATTERN A AS a ; (B AS b)+ ; C AS c "
    assert spec(base + "FILTER b[v > 2] WITHIN 5 ON ts").names == ("type", "v", "ts")
    assert spec(base + "FILTER b[name = 'x']") is None
    assert spec(base + "PARTITION BY name") is None
    assert spec(base + "WITHIN 3 EVENTS SLIDE 3 EVENTS") is None


@needs_core
def test_an_int_beyond_int64_in_a_read_column_is_exact(tmp_path: Any) -> None:
    """The reader leaves the line (a dict), the core hands over: the exact Python sum."""
    import acel

    path = tmp_path / "w0.jsonl"
    lines = [f'{{"type":"{t}","ts":{i},"v":{2**70 if i == 5 else i}}}' for i, t in enumerate("ABBCABBBC" * 3)]
    path.write_text("\n".join(lines) + "\n")
    query = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", "0")
        python = list(acel.run(query, str(path)))
    native = list(acel.run(query, str(path)))
    assert repr(native) == repr(python) and dict(python[0].values)["SUM(b.v)"] > 2**70


@needs_core
@pytest.mark.parametrize("bad", ['[1, 2]', '{"type":"B","ts":5,"v":1', '{"type":"B","ts":5,"v":1,"v":2}'])
def test_a_bad_line_in_the_middle_of_a_block_same_message(tmp_path: Any, bad: str) -> None:
    import acel

    path = tmp_path / "w0.jsonl"
    lines = [f'{{"type":"{t}","ts":{i},"v":{i}}}' for i, t in enumerate("ABBCABBBC" * 300)]
    lines[1500] = bad
    path.write_text("\n".join(lines) + "\n")
    query = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
    outcomes = []
    for mode in ("0", "auto"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACEL_NATIVE", mode)
            outcomes.append(_outcome(lambda: list(acel.run(query, str(path)))))
    assert outcomes[0] == outcomes[1] and outcomes[0][0] == "error" and "1501" in outcomes[0][2]


@needs_core
@pytest.mark.parametrize("query", [
    "RETURN COUNT(*), SUM(b.v), MAX(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts",
    "RETURN COUNT(*), SUM(b.v), AVG(b.w) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[v < 70 OR w > 0.5] "
    "PARTITION BY k WITHIN 30 EVENTS",
])
@pytest.mark.parametrize("max_events", [None, 777])
def test_files_through_columns_equal_pure_python(tmp_path: Any, query: str, max_events: int | None) -> None:
    """End to end (``acel.run`` on a JSON Lines file): columns, the dict path and pure Python
    agree, with a float attribute written as ints, strings in other columns (with an escape:
    the dict path), a type the query does not name, missing attributes and blank lines,
    across blocks."""
    import json

    import acel
    from acel.engines import running
    from acel.io import record_pass

    path = tmp_path / "w0.jsonl"
    with open(path, "w") as out:
        for i in range(3000):
            record: dict[str, Any] = {"type": "ABBCBBC"[i % 7], "ts": i, "v": (i * 37) % 100, "k": i % 3}
            record["w"] = (i % 5) / 4 if i % 4 else i % 5
            if i % 97 == 0:
                record["type"] = "Z"
            if i % 89 == 0:
                del record["v"]
            if i % 101 == 0:
                record["note"] = "x\\u00e9"
            out.write(json.dumps(record) + ("\n\n" if i % 500 == 0 else "\n"))
    results = []
    blocks: list[Any] = []
    scan = record_pass.column_blocks

    def spy(*args: Any, **kwargs: Any) -> Any:
        for block in scan(*args, **kwargs):
            blocks.append(type(block))
            yield block

    for mode, columns in (("0", False), ("auto", False), ("auto", True)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACEL_NATIVE", mode)
            mp.setattr(record_pass, "BATCH", 256)
            mp.setattr(record_pass, "column_blocks", spy)
            if not columns:
                mp.setattr(running.Feed, "_source", lambda self, runner, stream: stream.batches())
            results.append(repr(list(acel.run(query, str(path), max_events=max_events))))
    assert results[0] == results[1] == results[2] and "COUNT" in results[0]
    assert {b.__name__ for b in blocks} == {"list", "ColumnBlock"}  # columns, and lines left as maps


@needs_core
@pytest.mark.parametrize("query", [
    "RETURN COUNT(*), SUM(b.v), MAX(b.w), AVG(b.w) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts",
    "RETURN COUNT(*), SUM(b.v), MIN(b.w) PATTERN A AS a ; (B AS b)+ ; C AS c "
    "FILTER b[w > 3.5 OR v = 2 OR f = TRUE] PARTITION BY k WITHIN 11 ON ts",
    "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[name = 'x'] WITHIN 11 ON ts",
    # nested guards the core walks flattened (IN of mixed kinds, NOT, AND/OR over NULLs)
    "RETURN COUNT(*), SUM(b.v), MAX(c.w) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[(v IN (1, 3.0, 74, TRUE) "
    "OR NOT w < 2) AND NOT (f = FALSE AND v > 50)] AND c[w > 100 OR v != 11] WITHIN 11 ON ts",
])
def test_parquet_columns_straight_into_the_core(tmp_path: Any, query: str) -> None:
    """Arrow batches (Parquet: NULLs, NaN, bools, a float column, several row groups, a type
    the query does not name) feed the core column-wise: the rows of pure Python."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import acel
    from acel.io import columns as columns_module

    records = []
    for i in range(3000):
        records.append({"type": "ABBCBBCZ"[i % 8], "ts": i, "v": (i * 37) % 100, "k": i % 3,
                        "w": None if i % 10 == 0 else float("nan") if i % 13 == 0 else i / 7,
                        "f": (i % 5 == 0) if i % 6 else None, "name": "xy"[i % 2]})
    path = tmp_path / "w0.parquet"
    pq.write_table(pa.Table.from_pylist(records), path, row_group_size=700)
    made: list[Any] = []
    arrow_block = columns_module._arrow_block

    def spy(*args: Any) -> Any:
        made.append(arrow_block(*args))
        return made[-1]

    results = []
    for mode in ("0", "auto"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACEL_NATIVE", mode)
            mp.setattr(columns_module, "_arrow_block", spy)
            results.append(repr(list(acel.run(query, str(path)))))
    assert results[0] == results[1] and "COUNT" in results[0]
    assert (len(made) == 5 and all(made)) if "name" not in query else not made


@needs_core
def test_parquet_sorted_by_time_takes_maps(tmp_path: Any) -> None:
    """A Parquet stream re-sorted by its time column exists only as maps: no columns, and
    the rows of pure Python."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import acel

    records = [{"type": "ABBC"[i % 4], "ts": (i * 7) % 400, "v": i % 9} for i in range(400)]
    path = tmp_path / "w0.parquet"
    pq.write_table(pa.Table.from_pylist(records), path)
    query = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
    from acel.io import open_events

    stream = open_events(str(path), time_col="ts")
    assert stream.sort and stream.column_blocks(Runner(parse_query(query), stream.schema).column_spec()) is None
    results = []
    for mode in ("0", "auto"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACEL_NATIVE", mode)
            results.append(repr(list(acel.run(query, str(path), time_col="ts"))))
    assert results[0] == results[1] and "COUNT" in results[0]


@needs_core
@given(trend_queries(), streams())
def test_files_through_the_c_column_pass_equal_pure_python(tmp_path_factory: Any, query: Query,
                                                           stream: list[Event]) -> None:
    """Generated trend queries over generated streams written as JSON Lines: ``acel.run``
    with the C reader's columns into the core == pure Python (rows or the same error)."""
    import json

    import acel
    from acel.lang.printer import format_query

    path = tmp_path_factory.mktemp("cols") / "e.jsonl"
    path.write_text("".join(json.dumps(dict(e.attrs)) + "\n" for e in stream))
    text = format_query(query)
    outcomes = []
    for mode in ("0", "auto"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ACEL_NATIVE", mode)
            outcomes.append(_outcome(lambda: list(acel.run(text, str(path)))))
    assert outcomes[0] == outcomes[1]
    if stream:  # an empty file is an error by design (no events), not a vacuous check
        FILES_SEEN.append(not isinstance(outcomes[0], tuple))


FILES_SEEN: list[bool] = []


@needs_core
def test_the_file_property_is_not_vacuous(tmp_path_factory: Any) -> None:
    """Most generated files with events, and their queries, give rows, not a check error."""
    if not FILES_SEEN:
        test_files_through_the_c_column_pass_equal_pure_python(tmp_path_factory=tmp_path_factory)
    assert sum(FILES_SEEN) >= len(FILES_SEEN) // 3 > 0
