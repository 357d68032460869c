"""Window coordinates of the native trend core beyond what doubles hold, the bound on the
windows one event falls in, and Ctrl-C / SIGTERM inside long native loops (issue 36 D1;
papers/engine.md "Window coordinates and signals in the native core").
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acel.acea.engine import Runner, native_trend
from acel.acea.engine.native_trend import NativePropagator
from hypothesis import example, given
from hypothesis import strategies as st

from acel.lang.checker import MAX_WINDOWS_PER_EVENT, check_text, windows_per_event
from acel.lang.errors import AcelError, QueryError
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

needs_core = pytest.mark.skipif(not native_trend.available(), reason="native core not built")

SCHEMA = Schema.of({"A": ["ts", "v"], "B": ["ts", "v"], "C": ["ts", "v"]})
ISSUE = "RETURN COUNT(*) PATTERN A ; B WITHIN 1000 ON ts SLIDE 1 ON ts"


class _Late(Exception):
    """Raised by the alarm: a run that does not end (it would also ignore Ctrl-C)."""


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail a test stuck in native code after 60 s: the alarm's handler runs only because
    the core now looks at pending signals."""

    def late(signum: int, frame: Any) -> None:
        raise _Late("still running after 60 s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def rows(query: str, events: list[dict[str, Any]], native: str) -> tuple[Any, Runner | None]:
    """The rows (or the error's type and text) with ``ACEL_NATIVE=native``, and the runner."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        try:
            runner = Runner(parse_query(query), SCHEMA, monotone=None)
            out = [r for e in events for r in runner.push(dict(e))] + runner.finish()
        except AcelError as err:
            return ("error", type(err).__name__, str(err)), None
        return repr(out), runner


def evaluator(runner: Runner) -> Any:
    return next(iter(runner.partitions.values())).evaluator


@needs_core
@pytest.mark.parametrize("kind", [int, float])
def test_the_issue_reproduction_answers_as_the_pure_path(kind: type, alarm: None) -> None:
    """``ts`` = 2^60 and 2^60 + 256: the pure path writes 1,280 rows; the core (whose SLIDE
    row loop could not step past 2^53 in doubles) hands the partition to Python instead
    and writes the same rows, in about the pure path's time."""
    events = [{"type": "A", "ts": kind(2**60), "v": 1}, {"type": "B", "ts": kind(2**60 + 256), "v": 1}]
    began = time.process_time()  # CPU time: a neighbour test (pytest -n 2) cannot skew it
    pure, _ = rows(ISSUE, events, "0")
    pure_time = time.process_time() - began
    began = time.process_time()
    native, runner = rows(ISSUE, events, "1")
    native_time = time.process_time() - began
    assert native == pure and pure.count("TrendRow(") == 1280
    assert runner is not None and isinstance(evaluator(runner), NativePropagator)
    assert evaluator(runner).why == "a coordinate beyond 2^52"
    # generous: the hand-over is the pure path itself (not under the sanitizers' build,
    # whose instrumented core makes any time comparison meaningless)
    if "ACEL_SANITIZED_LIB" not in os.environ:
        assert native_time < 2 * pure_time + 5.0


_BASES = st.sampled_from([0, 2**52 - 40, 2**52, 2**53 - 40, 2**53, 2**60, -(2**53) - 20, 2**63 - 100])


@st.composite
def near_2_53(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A non-decreasing stream of times near 2^52, 2^53 and beyond, ints or floats."""
    base = draw(_BASES)
    steps = draw(st.lists(st.integers(0, 7), min_size=1, max_size=10))
    kinds = draw(st.lists(st.sampled_from("ABC"), min_size=len(steps), max_size=len(steps)))
    floats = draw(st.lists(st.booleans(), min_size=len(steps), max_size=len(steps)))
    out, t = [], base
    for step, kind, as_float in zip(steps, kinds, floats, strict=True):
        t += step
        out.append({"type": kind, "ts": float(t) if as_float else t, "v": step})
    # floats round: keep the stream non-decreasing as the reader would see it
    for k in range(1, len(out)):
        if out[k]["ts"] < out[k - 1]["ts"]:
            out[k]["ts"] = out[k - 1]["ts"]
    return out


_WINDOWS = st.sampled_from([
    "WITHIN 5 ON ts", "WITHIN 6 ON ts SLIDE 2 ON ts", "WITHIN 4 ON ts SLIDE 4 ON ts",
    "WITHIN 3 ON ts SLIDE 5 ON ts", "WITHIN 300 ON ts SLIDE 1 ON ts", "WITHIN 2.5 ON ts SLIDE 0.5 ON ts",
])
_PATTERNS = st.sampled_from([
    "RETURN COUNT(*) PATTERN A ; B", "RETURN COUNT(*), SUM(b.v), MAX(b.v) PATTERN A AS a ; (B AS b)+",
    "RETURN COUNT(*), AVG(c.v) PATTERN (A)+ ; C AS c",
])


@needs_core
@given(_PATTERNS, _WINDOWS, near_2_53())
@example("RETURN COUNT(*) PATTERN A ; B", "WITHIN 300 ON ts SLIDE 1 ON ts",
         [{"type": "A", "ts": float(2**60), "v": 0}, {"type": "B", "ts": float(2**60 + 256), "v": 0}])
@example("RETURN COUNT(*) PATTERN A ; B", "WITHIN 6 ON ts SLIDE 2 ON ts",
         [{"type": "A", "ts": 2**52 - 1, "v": 0}, {"type": "B", "ts": float(2**52), "v": 0}])
def test_times_near_2_53_native_equals_pure(pattern: str, windows: str, events: list[dict[str, Any]]) -> None:
    """Native (``auto``) and pure give the same rows, or the same error, for times near and
    beyond 2^53, ints and floats mixed, with and without SLIDE."""
    query = f"{pattern} {windows}"
    assert rows(query, events, "auto")[0] == rows(query, events, "0")[0]


# ------------------------------------------------------------------ the bound


def test_windows_per_event() -> None:
    assert windows_per_event(1000, 1) == 1000
    assert windows_per_event(7, 3) == 3
    assert windows_per_event(3, 5) == 1
    assert windows_per_event(2.5, 0.5) == 5
    assert windows_per_event(1e300, 1e-300) == float("inf")


def test_too_many_windows_per_event_is_refused_in_one_line() -> None:
    """Above MAX_WINDOWS_PER_EVENT the checker refuses the query (at SLIDE's size), before
    any engine or path is chosen, so every path agrees."""
    over = f"RETURN COUNT(*) PATTERN A ; B WITHIN {MAX_WINDOWS_PER_EVENT + 1} ON ts SLIDE 1 ON ts"
    with pytest.raises(QueryError) as error:
        check_text(over, SCHEMA)
    assert str(error.value).splitlines()[0] == (
        f"line 1, column {over.index('SLIDE 1') + 7}: WITHIN {MAX_WINDOWS_PER_EVENT + 1} with SLIDE 1 puts "
        f"each event in up to {MAX_WINDOWS_PER_EVENT + 1:,} windows; at most {MAX_WINDOWS_PER_EVENT:,} "
        "are allowed (make SLIDE larger or WITHIN smaller)"
    )
    check_text(over.replace(f"{MAX_WINDOWS_PER_EVENT + 1} ON", f"{MAX_WINDOWS_PER_EVENT} ON"), SCHEMA)
    with pytest.raises(QueryError, match="infinitely many windows"):
        check_text("RETURN COUNT(*) PATTERN A WITHIN 1e300 ON ts SLIDE 1e-300 ON ts", SCHEMA)


# ------------------------------------------------------------------ signals


def cpu_seconds(pid: int) -> float:
    """The CPU (user + system) process ``pid`` has used so far; 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_for(pid: int, seconds: float) -> None:
    """Wait until process ``pid`` has used ``seconds`` of CPU (a loaded machine stretches the
    wall time; at most 60 s), or 4 s of wall time where /proc is missing."""
    if not Path(f"/proc/{pid}/stat").exists():
        time.sleep(4)
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and Path(f"/proc/{pid}/stat").exists():
        if cpu_seconds(pid) >= seconds:
            return
        time.sleep(0.1)


@needs_core
@pytest.mark.parametrize(("signum", "message", "code"), [
    (signal.SIGINT, "acel run: interrupted", 130), (signal.SIGTERM, "acel run: terminated", 143),
])
def test_a_signal_stops_a_long_native_run_within_a_second(tmp_path: Path, signum: int, message: str,
                                                          code: int) -> None:
    """150,000 A then 50,000 B under ``A ; B WITHIN 10^6 ON ts``: every B walks ~150,000
    start classes, so one native call (a block of columns) lasts seconds.  Ctrl-C or
    SIGTERM ends the run at once, with one line and no traceback.  (Without the core's
    signal checks it took 3.5 s here; with them 0.04 s.)"""
    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps({"type": "A" if k < 150_000 else "B", "ts": k, "v": 1}) + "\n"
                            for k in range(200_000)))
    env = dict(os.environ, ACEL_NATIVE="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "acel", "run", "RETURN COUNT(*) PATTERN A ; B WITHIN 1000000 ON ts",
         "--data", str(data)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        busy_for(process.pid, 2.0)  # start-up and reading take < 1 s of CPU: then deep in the core
        assert process.poll() is None, process.communicate()
        used_before = cpu_seconds(process.pid)
        sent = time.perf_counter()
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
        took = time.perf_counter() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("acel run: 0 of") and "so far" not in line]
    assert lines and lines[-1].startswith(message), err
    assert len(lines) == 1, err
    assert process.returncode == code
    # within a second of the child's own CPU (load, or a neighbour test under pytest -n 2,
    # stretches only the wall time, which gets a wide margin)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert used - used_before < 1.0 and took < 10
