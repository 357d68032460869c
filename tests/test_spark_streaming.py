"""Structured Streaming on Spark: the batch results, exactly once, across a kill (issue 16).

Event files land in a folder one micro-batch at a time (``maxFilesPerTrigger``),
some events a batch late (within the watermark delay); the stream ends with a
``#end`` row.  The results in the file sink must be the single-process batch
engine's on the same events: nothing lost, nothing twice, also when the query
is stopped mid-way or its driver process is killed and it restarts from the
checkpoint.  ``tests/test_streaming_keys.py`` checks the per-key logic on many
generated streams without Spark; these tests check the plumbing.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acel.acea import engine

from acel.io.results import to_json_lines
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java"),
]

ATTRS = ["x", "k", "t", "pos"]
SCHEMA = Schema.of({"A": ATTRS, "B": ATTRS, "C": ATTRS},
                   {"x": "int", "k": "int", "t": "int", "pos": "int"})
SPARK_COLUMNS = "type string, x long, k long, t long, pos long"

TRAILING = "A AS a ; B AS b ; NOT C FILTER a[x < 2] PARTITION BY k WITHIN 6 ON t"
SLIDING = "RETURN k, COUNT(*), SUM(a.x) PATTERN (A AS a)+ ; B PARTITION BY k WITHIN 6 ON t SLIDE 3 ON t"
EVENTS = "A AS a ; (B AS b)+ WITHIN 5 EVENTS"


def make_events(n: int, seed: int) -> list[dict[str, Any]]:
    """Types A/B/C, ``x`` 0..3, key ``k`` 0..2 (missing on one event in 12), a
    non-decreasing time ``t`` with ties, and the position ``pos``."""
    rng = random.Random(seed)
    out = []
    t = 0
    for i in range(n):
        t += rng.choice((0, 1, 1, 2))
        event: dict[str, Any] = {"type": rng.choice("AABBC"), "x": rng.randint(0, 3), "t": t, "pos": i}
        if rng.randrange(12):
            event["k"] = rng.randint(0, 2)
        out.append(event)
    return out


def batches(events: list[dict[str, Any]], files: int, delay: int, seed: int) -> list[list[dict[str, Any]]]:
    """The events in ``files`` files in stream order, some a file late, never later than
    Spark's watermark allows (time above the largest time of earlier files − delay)."""
    rng = random.Random(seed)
    size = -(-len(events) // files)
    arrive = [i // size for i in range(len(events))]
    for i in range(len(events)):
        if rng.random() < 0.3 and arrive[i] + 1 < files:
            earlier = [e["t"] for e, a in zip(events, arrive) if a <= arrive[i] and e is not events[i]]
            if not earlier or events[i]["t"] > max(earlier) - delay:
                arrive[i] += 1
    # a late event must not have become late because of another one held with it
    out: list[list[dict[str, Any]]] = [[] for _ in range(files)]
    for e, a in zip(events, arrive):
        out[a].append(e)
    for b in range(1, files):
        limit = max((e["t"] for f in out[:b] for e in f), default=None)
        for e in list(out[b]):
            if limit is not None and e["t"] <= limit - delay:
                out[b].remove(e)
                out[b - 1].append(e)
    for f in out:
        rng.shuffle(f)
    return out


class Folder:
    """A folder files land in: each written beside it, then renamed in (Spark never
    reads half a file), with increasing modification times (Spark's file order)."""

    def __init__(self, root: Path) -> None:
        self.path = root / "in"
        self.path.mkdir(parents=True)
        self.count = 0

    def land(self, rows: list[dict[str, Any]]) -> None:
        name = f"part-{self.count:04d}.jsonl"
        scratch = self.path.parent / f".{name}"
        scratch.write_text("".join(json.dumps(r) + "\n" for r in rows))
        moment = 1_000_000_000 + self.count
        os.utime(scratch, (moment, moment))
        os.rename(scratch, self.path / name)
        self.count += 1


def expected(query: str, events: list[dict[str, Any]]) -> list[Any]:
    return engine.run(parse_query(query), [Event.make(i, e) for i, e in enumerate(events)], SCHEMA)


def _same(got: list[Any], want: list[Any]) -> None:
    assert to_json_lines(got) == to_json_lines(want)


def _source(spark: Any, folder: Path) -> Any:
    return spark.readStream.schema(SPARK_COLUMNS).option("maxFilesPerTrigger", 1).json(str(folder))


def _plan(spark: Any, folder: Path, query: str, **kw: Any) -> Any:
    from acel.spark_backend.streaming import plan_stream

    return plan_stream(query, _source(spark, folder), schema=SCHEMA, **kw)


CASES = [(TRAILING, "t", 2), (SLIDING, "t", 1), (EVENTS, None, 0)]
"""PARTITION BY with a trailing NOT on event time, RETURN with SLIDE windows closed by
the watermark, and the whole stream as one key with an EVENTS window."""


def test_streams_of_files_give_the_batch_results(spark: Any, tmp_path: Path) -> None:
    """The three cases run as three concurrent streaming queries (one test, less time)."""
    from acel.spark_backend.streaming import await_end, end_row, read_results, start

    runs = []
    for n, (query, time_col, delay) in enumerate(CASES):
        events = make_events(80, seed=n)
        folder = Folder(tmp_path / str(n))
        for rows in batches(events, 3, delay, seed=n):
            folder.land(rows)
        folder.land([end_row()])
        planned = _plan(spark, folder.path, query, time_col=time_col, delay=delay)
        out = str(tmp_path / str(n) / "out")
        runs.append((query, events, planned, out,
                     start(planned, out, checkpoint=str(tmp_path / str(n) / "ck"))))
    try:
        for *_, running in runs:
            await_end(running)
    finally:
        for *_, running in runs:
            running.stop()
    for query, events, planned, out, running in runs:
        dropped = sum(int(p["stateOperators"][0].get("numRowsDroppedByWatermark", 0))
                      for p in running.recentProgress)
        assert dropped == 0, query
        _same(read_results(planned, out), expected(query, events))


def test_a_trailing_not_closes_on_the_watermark_alone(spark: Any, tmp_path: Path) -> None:
    """Key 0's ``A, B`` (no ``C``) is final once its window has passed; the other key's
    events move the watermark past it and the result is written, with no further event on
    key 0 and no end row: the key's event-time timeout fires in a micro-batch without its
    rows (issue 31).  Before that the sink holds nothing."""
    from acel.spark_backend.streaming import read_results, start

    query = "A AS a ; B AS b ; NOT C PARTITION BY k WITHIN 6 ON t"
    first = [{"type": "A", "k": 0, "t": 0, "pos": 0}, {"type": "B", "k": 0, "t": 1, "pos": 1},
             {"type": "A", "k": 1, "t": 1, "pos": 2}]
    second = [{"type": "B", "k": 1, "t": 20, "pos": 3}, {"type": "C", "k": 1, "t": 21, "pos": 4}]
    folder = Folder(tmp_path)
    folder.land(first)
    planned = _plan(spark, folder.path, query, time_col="t", delay=1)
    out = str(tmp_path / "out")
    running = start(planned, out, checkpoint=str(tmp_path / "ck"))
    try:
        running.processAllAvailable()
        assert read_results(planned, out) == []  # the watermark (0) has not passed t 6
        folder.land(second)
        deadline = time.monotonic() + 180
        while not read_results(planned, out):
            assert running.isActive and time.monotonic() < deadline, "no result on the watermark"
            time.sleep(0.5)
    finally:
        running.stop()
    want = expected(query, first + second)
    assert [(m.key, m.event.start, m.event.end) for m in want] == [((("k", 0),), 0, 1)]
    _same(read_results(planned, out), want)


DRIVER = """
import sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {tests!r})
from test_spark_streaming import _plan
from acel.spark_backend import get_session
from acel.spark_backend.streaming import start
from pathlib import Path
spark = get_session("local[2,2]", shuffle_partitions=2)
planned = _plan(spark, Path({folder!r}), {query!r}, time_col="t", delay=2)
start(planned, {out!r}, checkpoint={ck!r}).awaitTermination()
"""


def test_a_stopped_then_killed_query_restarts_from_its_checkpoint_losing_and_repeating_nothing(
    spark: Any, tmp_path: Path
) -> None:
    """Stopped inside a micro-batch here; resumed by another driver process, which is
    killed outright (SIGKILL to its JVM and Python workers) once it has committed a
    batch, with more files waiting; resumed here again to the end of the stream."""
    from acel.spark_backend.streaming import await_end, end_row, read_results, start

    events = make_events(120, seed=11)
    files = batches(events, 6, 2, seed=5)
    folder = Folder(tmp_path)
    out, ck = str(tmp_path / "out"), str(tmp_path / "ck")
    folder.land(files[0])
    planned = _plan(spark, folder.path, TRAILING, time_col="t", delay=2)
    first = start(planned, out, checkpoint=ck)
    first.processAllAvailable()
    folder.land(files[1])
    deadline = time.monotonic() + 60
    while not first.status["isTriggerActive"] and time.monotonic() < deadline:
        time.sleep(0.01)
    first.stop()  # most likely inside a micro-batch: interrupted, not committed
    for rows in files[2:4]:
        folder.land(rows)
    commits = Path(ck) / "commits"
    done = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    script = DRIVER.format(tests=str(Path(__file__).parent), folder=str(folder.path),
                           query=TRAILING, out=out, ck=ck)
    driver = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not (commits / str(done + 1)).exists():
            assert driver.poll() is None, "the driver process died on its own"
            assert time.monotonic() < deadline, "no micro-batch committed in 3 minutes"
            time.sleep(0.02)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    for rows in files[4:]:
        folder.land(rows)
    folder.land([end_row()])
    planned = _plan(spark, folder.path, TRAILING, time_col="t", delay=2)
    again = start(planned, out, checkpoint=ck)
    try:
        await_end(again)
    finally:
        again.stop()
    _same(read_results(planned, out), expected(TRAILING, events))


def test_the_command_line_streams_a_folder_until_the_end_row(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from acel.spark_backend.streaming import end_row, plan_stream, read_results

    from acel.app.cli import main

    events = make_events(60, seed=2)
    folder = Folder(tmp_path)
    for rows in batches(events, 3, 0, seed=1):
        folder.land(rows)
    folder.land([end_row()])
    query_file = tmp_path / "q.acel"
    query_file.write_text(SLIDING)
    out = str(tmp_path / "out.jsonl")
    code = main(["run", str(query_file), "--engine", "spark", "--stream", str(folder.path),
                 "--time-col", "t", "--out", out])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "the stream ended" in err and "batch 0:" in err
    planned = plan_stream(SLIDING, _source(spark, folder.path), schema=SCHEMA, time_col="t")
    _same(read_results(planned, out, "jsonl"), expected(SLIDING, events))


def test_a_stream_needs_positions(spark: Any, tmp_path: Path) -> None:
    from acel.spark_backend.streaming import plan_stream

    from acel.lang.errors import DataError

    frame = spark.readStream.schema("type string, x long").json(str(tmp_path))
    with pytest.raises(DataError, match="position column 'pos'"):
        plan_stream("A", frame, schema=SCHEMA)


def test_the_public_stream_is_the_planned_streaming_frame(spark: Any, tmp_path: Path) -> None:
    """acel.spark.stream checks the query and returns the streaming results frame (with
    ``vars="json"`` the executors' own columns; shaped by default:
    ``tests/test_spark_stream_shaped.py``)."""
    import acel
    import acel.spark

    folder = Folder(tmp_path)
    folder.land(make_events(5, seed=1))
    frame = acel.spark.stream(EVENTS, _source(spark, folder.path), schema=SCHEMA, vars="json")
    assert frame.isStreaming
    assert frame.schema == _plan(spark, folder.path, EVENTS).frame.schema
    with pytest.raises(acel.QueryError, match="column"):
        acel.spark.stream("A ; D", _source(spark, folder.path), schema=SCHEMA)


def test_the_stream_refuses_options_it_cannot_honour(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from acel.app.cli import main

    for flag, value in (("--partitions", "4"), ("--max-memory", "500")):
        code = main(["run", EVENTS, "--engine", "spark", "--stream", str(tmp_path),
                     "--out", str(tmp_path / "out"), flag, value])
        assert code == 2
        assert f"{flag} cannot be used with --stream" in capsys.readouterr().err


def test_a_time_beyond_the_streams_range_is_an_error_not_the_end(spark: Any, tmp_path: Path) -> None:
    """Epoch microseconds would read as the end row (every key finished in silence)."""
    from acel.spark_backend.streaming import start

    folder = Folder(tmp_path)
    folder.land([{"type": "A", "x": 1, "k": 0, "t": 1_700_000_000_000_000, "pos": 0}])
    planned = _plan(spark, folder.path, TRAILING, time_col="t", delay=0)
    running = start(planned, str(tmp_path / "out"), checkpoint=str(tmp_path / "ck"), once=True)
    try:
        with pytest.raises(Exception, match="outside"):
            running.awaitTermination(120)
    finally:
        running.stop()


def test_the_stream_refuses_an_output_format_it_cannot_write(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Was: --out x.csv silently wrote a Parquet folder named x.csv."""
    from acel.app.cli import main

    code = main(["run", EVENTS, "--engine", "spark", "--stream", str(tmp_path),
                 "--out", str(tmp_path / "out.csv")])
    assert code == 2
    assert "not '.csv'" in capsys.readouterr().err
