"""A runner restored from a saved state continues on the native core (issue 31).

``Runner.restore`` loads each restored partition's pure-Python propagator into a core
(``Core.load``, ``native_trend.from_python``), so a Spark stream's key, restored from
the state store every micro-batch, runs natively.  The saved format stays the Python
evaluators' (``Runner.save`` writes a core's Python twin and leaves the core as it is).
Checked here against the pure-Python restore (``ACEL_NATIVE=0``), the reference:
the same rows bit for bit and the same saved bytes at every cut.
"""

from __future__ import annotations

from typing import Any

import pytest
from acel.acea.engine import Runner, native_trend
from acel.acea.engine.aggregate import Propagator
from acel.acea.engine.native_trend import NativePropagator
from hypothesis import given
from hypothesis import strategies as st
from test_native_core import W0_SCHEMA, same, w0

from acel.lang.ast import Query
from acel.lang.clauses import TrendRow
from acel.lang.errors import AcelError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.testing import TEST_SCHEMA, streams, trend_queries

pytestmark = pytest.mark.skipif(not native_trend.available(), reason="native core not built")


@pytest.fixture(autouse=True)
def _auto(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the native core: they choose it whatever ``ACEL_NATIVE`` the
    run was started with (a test comparing with Python sets ``0`` itself)."""
    monkeypatch.setenv("ACEL_NATIVE", "auto")

KEYED = "RETURN k, COUNT(*), SUM(b.v), AVG(b.v), MIN(b.v), MAX(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c " \
        "PARTITION BY k WITHIN 11 ON ts"
KEYED_SCHEMA = Schema.of({t: ["ts", "v", "k"] for t in "ABC"})


def _feed(query: Query, schema: Any, events: list[dict[str, Any]], cuts: set[int], native: str,
          batch: bool) -> tuple[list[Any], list[bytes], Runner]:
    """Push ``events`` with ``ACEL_NATIVE=native``, saving and restoring at every cut: the
    rows, the saved states, the last runner."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        runner = Runner(query, schema)
        out: list[Any] = []
        blobs: list[bytes] = []
        bounds = sorted({0, len(events), *(c for c in cuts if c <= len(events))})
        for lo, hi in zip(bounds, bounds[1:]):
            if lo in cuts:
                blobs.append(runner.save())
                runner = Runner.restore(query, schema, blobs[-1])
            chunk = [dict(e) for e in events[lo:hi]]
            if batch:
                out.extend(runner.push_batch(chunk, list(range(lo, hi))))
            else:
                out.extend(r for k, e in enumerate(chunk) for r in runner.push(e, lo + k))
        if len(events) in cuts:
            blobs.append(runner.save())
            runner = Runner.restore(query, schema, blobs[-1])
        return out + runner.finish(), blobs, runner


def _natives(runner: Runner) -> list[bool]:
    return [isinstance(p.evaluator, NativePropagator) and p.evaluator.python is None
            for p in runner.partitions.values()]


@pytest.mark.parametrize("batch", [False, True])
def test_a_restored_keyed_runner_continues_on_the_core(batch: bool) -> None:
    kinds = "ABBCABBBCACBBAC" * 8
    events = [{**e, "k": k % 3} for k, e in enumerate(w0(kinds, [k % 7 for k in range(len(kinds))]))]
    query = parse_query(KEYED)
    native, blobs, runner = _feed(query, KEYED_SCHEMA, events, {5, 40, 41, 90}, "auto", batch)
    python, python_blobs, pure = _feed(query, KEYED_SCHEMA, events, {5, 40, 41, 90}, "0", batch)
    assert same(sorted(native, key=TrendRow.sort_key), sorted(python, key=TrendRow.sort_key))
    assert blobs == python_blobs  # one saved format
    restored = Runner.restore(query, KEYED_SCHEMA, blobs[-1])
    assert restored.native is not None and all(_natives(restored)) and len(_natives(restored)) == 3
    assert restored.keyed is not None and len(restored.keyed.table) == 3  # batches route in C
    assert not any(_natives(pure))


def test_save_leaves_the_cores_running() -> None:
    events = w0("ABBCABBBCAC" * 3, list(range(33)))
    query = parse_query("RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts")
    runner = Runner(query, W0_SCHEMA)
    runner.push_batch([dict(e) for e in events[:10]])
    first = runner.save()
    assert all(_natives(runner))
    assert runner.save() == first  # saving changes nothing
    rows = runner.push_batch([dict(e) for e in events[10:]]) + runner.finish()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", "0")
        pure = Runner(query, W0_SCHEMA)
        expected = pure.push_batch([dict(e) for e in events]) + pure.finish()
    assert same(rows, expected)


def test_a_state_beyond_int64_stays_in_python() -> None:
    """70 B events make COUNT(*) pass 2^63: a core cannot hold the saved state, so the restored
    partition stays in Python, and the rows are exact."""
    events = w0("A" + "B" * 70 + "C" + "ABC", [3] * 75)
    query = parse_query("RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 100 ON ts")
    native, blobs, runner = _feed(query, W0_SCHEMA, events, {72}, "auto", False)
    python, python_blobs, _ = _feed(query, W0_SCHEMA, events, {72}, "0", False)
    assert same(native, python) and dict(native[0].values)["COUNT(*)"] > 2**63
    assert blobs == python_blobs
    restored = Runner.restore(query, W0_SCHEMA, blobs[0])
    assert isinstance(next(iter(restored.partitions.values())).evaluator, Propagator)


def test_a_refused_load_is_false_and_a_used_core_refuses_loading() -> None:
    query = parse_query("RETURN COUNT(*), MIN(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts")
    runner = Runner(query, W0_SCHEMA)
    runner.push({"type": "A", "ts": 0, "v": 1})
    part = next(iter(runner.partitions.values()))
    state = part.evaluator.core.export()
    fresh = NativePropagator(runner.native, runner.ca, runner.items, part.rule)
    bad = (*state[:6], [(state[6][0][0], [(0, (1, "a string"))])], state[7])
    assert fresh.core.load(bad, 0) is False
    with pytest.raises(ValueError, match="has read events"):
        part.evaluator.core.load(state, 0)
    again = NativePropagator(runner.native, runner.ca, runner.items, part.rule)
    assert again.core.load(state, 0) is True and again.core.export() == state


_FLOATS = st.sampled_from([0.1, 0.2, 1e16, -1e16, 1 / 3, -0.0, 0.0, 2.5, 1e-300, 3, 2**62])


@given(trend_queries(), streams(), st.sets(st.integers(0, 9)), st.booleans(),
       st.one_of(st.none(), st.lists(_FLOATS, min_size=8, max_size=8)))
def test_native_restore_equals_python_restore(query: Query, stream: list[Event], cuts: set[int],
                                              batch: bool, floats: list[Any] | None) -> None:
    """Generated trend queries and streams (float and near-int64 values too), saved and
    restored at any cuts: the native restore gives the pure-Python restore's rows bit for
    bit and saves the same bytes."""
    if floats is not None:
        stream = [Event(e.time, tuple((a, floats[(e.time + len(a)) % 8] if a in ("x", "y") and v is not None
                                       else v) for a, v in e.attrs)) for e in stream]
    events = [dict(e.attrs) for e in stream]
    try:
        python, python_blobs, _ = _feed(query, TEST_SCHEMA, events, cuts, "0", batch)
    except AcelError as err:
        with pytest.raises(type(err)):
            _feed(query, TEST_SCHEMA, events, cuts, "auto", batch)
        return
    native, blobs, runner = _feed(query, TEST_SCHEMA, events, cuts, "auto", batch)
    assert same(sorted(native, key=TrendRow.sort_key), sorted(python, key=TrendRow.sort_key))
    assert blobs == python_blobs
    if blobs:
        RESTORED_NATIVE.append(any(_natives(Runner.restore(query, TEST_SCHEMA, blobs[-1]))))


RESTORED_NATIVE: list[bool] = []


def test_the_property_restores_onto_the_core() -> None:
    """Some generated cases restore partitions onto a core (the property is not vacuous)."""
    if not RESTORED_NATIVE:
        test_native_restore_equals_python_restore()
    assert any(RESTORED_NATIVE)
