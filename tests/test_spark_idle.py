"""Deadlines on a quiet Spark stream: ``--idle-advance`` with ``--stream`` (issue 25 §5).

Spark's watermark moves only with the rows it reads, so the driver writes tick
rows (a second file source) while the stream is quiet: a trailing-negation
result comes out a few seconds after its deadline, with no later event, and
equals the one-process run's; an event below the moved watermark is late
(dropped and counted, as any late event of a Spark stream).  The tick
arithmetic (``TickClock``) and the keys' skipping of tick rows are checked
without Spark.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from acel.acea import engine
from acel.spark_backend.streaming import (
    ATTRS,
    ENDED_MS,
    ET_MS,
    POS,
    SHIFT,
    TICK_POS,
    IdleTicks,
    KeyStream,
    TickClock,
    data_rows,
    end_row,
    handler,
)

from acel.io.results import to_json_lines
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

QUERY = "ORDER AS o ; NOT PAY PARTITION BY id WITHIN 3 ON ts"
SCHEMA = Schema.of({"ORDER": ["id", "ts", "pos"], "PAY": ["id", "ts", "pos"]},
                   {"id": "int", "ts": "int", "pos": "int"})
EVENTS: list[dict[str, Any]] = [
    {"type": "ORDER", "id": 1, "ts": 0, "pos": 0},
    {"type": "ORDER", "id": 2, "ts": 1, "pos": 1},
    {"type": "PAY", "id": 2, "ts": 2, "pos": 2},
]
LATE: dict[str, Any] = {"type": "PAY", "id": 1, "ts": 2, "pos": 3}
"""Would have paid order 1, but arrives after quiet time moved event time past ts 3."""

def _batch(events: list[dict[str, Any]]) -> list[str]:
    """The one-process run's results (the same as ``--data -`` with ``--idle-advance``,
    tests/test_idle_advance.py)."""
    stream = [Event.make(k, e) for k, e in enumerate(events)]
    return to_json_lines(engine.run(parse_query(QUERY), stream, SCHEMA))


def _land(folder: Path, name: str, rows: list[dict[str, Any]]) -> float:
    scratch = folder.parent / f".{name}"
    scratch.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scratch.rename(folder / name)
    return time.monotonic()


def _sink_lines(out: Path) -> list[str]:
    """The result lines in a JSON sink's files so far ([] while one is half written)."""
    lines = [line for p in sorted(out.glob("part-*")) for line in p.read_text().splitlines() if line]
    try:
        [json.loads(line) for line in lines]
    except ValueError:
        return []
    return lines


# ------------------------------------------------------------------ without Spark

TICKS = IdleTicks(rate=2.0, folder="/tmp/acel-ticks-x", delay_ms=1)


def _progress(batch: int, started: float, data: int, ticks: int = 0, top: int | None = None) -> dict[str, Any]:
    from datetime import datetime, timezone

    def iso(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")

    p: dict[str, Any] = {"batchId": batch, "timestamp": iso(started), "sources": [
        {"description": "FileStreamSource[file:/data/in]", "numInputRows": data},
        {"description": f"FileStreamSource[file:{TICKS.folder}]", "numInputRows": ticks},
    ]}
    if top is not None:
        p["eventTime"] = {"max": iso(top / 1000)}
    return p


def test_ticks_follow_the_wall_clock_from_the_last_events_time() -> None:
    clock = TickClock(TICKS)
    assert clock.due(1000.0) is None  # no event yet: nothing to move on from
    clock.saw(_progress(0, 100.0, data=3, top=SHIFT + 7))
    assert clock.high == SHIFT + 7 and clock.since == 100.0
    assert clock.due(100.5) is None  # not quiet for a TICK_EVERY yet
    assert clock.due(101.6) == SHIFT + 7 + 3  # 1.6 s at 2 units a second, rounded down
    clock.wrote(SHIFT + 10, 101.6)
    assert clock.due(102.0) is None  # one tick a TICK_EVERY
    assert clock.due(102.7) == SHIFT + 12
    clock.wrote(SHIFT + 12, 102.7)
    # the ticks' own micro-batch (its max is a tick) is no data: the quiet goes on
    clock.saw(_progress(1, 102.8, data=0, ticks=1, top=SHIFT + 12))
    assert clock.high == SHIFT + 7 and clock.since == 100.0
    # data and a tick in one micro-batch: the max may be the tick's, not an event's
    clock.saw(_progress(2, 103.0, data=1, ticks=1, top=SHIFT + 12))
    assert clock.high == SHIFT + 7 and clock.since == 103.0
    assert clock.due(104.5) is None  # SHIFT + 10: event time never moves back
    clock.saw(_progress(3, 105.0, data=2, top=SHIFT + 20))
    assert clock.due(106.0) == SHIFT + 22
    assert data_rows(_progress(4, 0.0, data=5, ticks=2), TICKS) == 5
    assert data_rows(_progress(4, 0.0, data=5, ticks=2)) == 7


def test_a_tick_never_reaches_the_end_rows_range() -> None:
    clock = TickClock(IdleTicks(rate=1e15, folder="/t", delay_ms=0))
    clock.saw(_progress(0, 0.0, data=1, top=SHIFT))
    tick = clock.due(10.0)
    assert tick is not None and tick < ENDED_MS - SHIFT


class _State:
    """The part of Spark's GroupState the handler uses."""

    def __init__(self, watermark: int) -> None:
        self.blob: bytes | None = None
        self.watermark = watermark
        self.timeout = -1

    @property
    def exists(self) -> bool:
        return self.blob is not None

    @property
    def get(self) -> tuple[bytes | None]:
        return (self.blob,)

    def getCurrentWatermarkMs(self) -> int:  # noqa: N802 (Spark's name)
        return self.watermark

    def update(self, value: tuple[bytes]) -> None:
        self.blob = value[0]

    def setTimeoutTimestamp(self, ms: int) -> None:  # noqa: N802
        self.timeout = ms

    def remove(self) -> None:
        self.blob = None


def test_tick_rows_are_skipped_by_the_keys_and_only_move_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key's rows with ticks among them give what the rows alone give."""
    import acel.spark_backend.key_stream as key_stream
    from test_streaming_keys import _spec

    captured: list[Any] = []

    def keep(_spec: Any, results: list[Any]) -> Any:
        captured.extend(results)
        return pd.DataFrame()

    monkeypatch.setattr(key_stream, "_pandas", keep)
    spec = _spec(parse_query(QUERY), SCHEMA, axis=True)
    rows = [(e["pos"], SHIFT + e["ts"], json.dumps(e)) for e in EVENTS if e["id"] == 1]  # key 1
    ticks = [(TICK_POS, SHIFT + 5, None), (TICK_POS, SHIFT + 9, None)]
    outputs = []
    for extra in (ticks, []):
        captured.clear()
        state = _State(watermark=SHIFT + 8)
        frame = pd.DataFrame([*rows, *extra], columns=[POS, ET_MS, ATTRS])
        list(handler(spec)(0, iter([frame]), state))
        assert state.blob is not None
        assert KeyStream(spec, state.blob).last == 0  # the ticks took no position
        outputs.append(to_json_lines(captured))
    assert outputs[0] == outputs[1] == _batch(EVENTS)


# ------------------------------------------------------------------ on Spark


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_a_deadline_passes_on_a_quiet_stream_and_the_result_comes_out(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``acel run --engine spark --stream DIR --idle-advance 1`` writes order 1 (not paid
    within 3) while no file lands; a control query without the option, on the same
    folder, still holds it.  A later PAY below the moved watermark is dropped as late
    (it pays order 1 in the control run)."""
    from acel.spark_backend.streaming import await_end, plan_stream, read_results, start

    from acel.app.cli import main

    folder = tmp_path / "in"
    folder.mkdir()
    landed = _land(folder, "part-0.jsonl", EVENTS)
    out, control_out = tmp_path / "out.jsonl", tmp_path / "control.jsonl"
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA.to_json()))
    done: dict[str, int] = {}

    def run() -> None:
        done["code"] = main(["run", QUERY, "--engine", "spark", "--stream", str(folder),
                             "--schema", str(schema), "--time-col", "ts", "--max-delay", "1",
                             "--idle-advance", "1", "--out", str(out)])

    cli = threading.Thread(target=run)
    cli.start()
    source = spark.readStream.schema("type string, id long, ts long, pos long").json(str(folder))
    control = plan_stream(QUERY, source, schema=SCHEMA, time_col="ts", delay=1)
    running = start(control, str(control_out), checkpoint=str(tmp_path / "control.ck"), fmt="jsonl")
    ended = False
    try:
        deadline = time.monotonic() + 180
        while not (out.exists() and _sink_lines(out)):
            assert cli.is_alive(), capsys.readouterr().err
            assert time.monotonic() < deadline, "no result 3 minutes after the stream went quiet"
            time.sleep(0.1)
        at = time.monotonic()
        # quiet time moved event time: ts 3 needs a second of quiet after the file was read
        assert at - landed >= 1.0
        with capsys.disabled():
            print(f"\norder 1 written {at - landed:.1f} s after its file landed")
        (line,) = _sink_lines(out)  # order 1, not paid, and only it
        assert {k: json.loads(line)[k] for k in ("id", "start", "end")} == {"id": 1, "start": 0, "end": 0}
        running.processAllAvailable()
        assert not _sink_lines(control_out)  # without ticks it waits for a later event
        _land(folder, "part-1.jsonl", [LATE])
        _land(folder, "part-2.jsonl", [end_row()])
        ended = True
        cli.join(timeout=180)
        assert not cli.is_alive()
        await_end(running)
    finally:
        if not ended:
            _land(folder, "part-9.jsonl", [end_row()])
        cli.join(timeout=180)
        running.stop()
    err = capsys.readouterr().err
    assert done["code"] == 0, err
    assert "1 late rows dropped (raise --delay or lower --idle-advance)" in err
    assert "stream ended; 1 late rows dropped" in err
    assert to_json_lines(read_results(control, str(out), "jsonl")) == _batch(EVENTS)
    assert to_json_lines(read_results(control, str(control_out), "jsonl")) == _batch([*EVENTS, LATE]) == []


def test_a_restarted_query_ticks_on_from_its_checkpoints_watermark(tmp_path: Path) -> None:
    """After a restart no micro-batch may run until data comes: the checkpoint's last
    watermark (plus the delay) is where event time moves on from."""
    from acel.spark_backend.streaming import checkpoint_watermark

    assert checkpoint_watermark(str(tmp_path)) is None
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "2").write_text('v1\n{"batchWatermarkMs":5,"conf":{}}\n{"logOffset":0}\n')
    (tmp_path / "offsets" / "10").write_text(f'v1\n{{"batchWatermarkMs":{SHIFT + 40},"conf":{{}}}}\n')
    (tmp_path / "offsets" / ".10.crc").write_text("x")
    assert checkpoint_watermark(str(tmp_path)) == SHIFT + 40
    clock = TickClock(TICKS)
    clock.resume(checkpoint_watermark(str(tmp_path)), 50.0)
    assert clock.due(50.5) is None and clock.due(52.0) == SHIFT + 41 + 4
    (tmp_path / "offsets" / "11").write_text("v1\nnot json\n")
    assert checkpoint_watermark(str(tmp_path)) is None


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_a_producers_own_tick_row_moves_event_time_and_is_no_event(spark: Any, tmp_path: Path) -> None:
    """A ``#tick`` row (a time, no position) written by the producer: the whole stream as
    one key (no PARTITION BY) gets order 0's result without a later event or the end."""
    from acel.spark_backend.streaming import TICK_TYPE, plan_stream, read_results, start

    query = "ORDER AS o ; NOT PAY WITHIN 3 ON ts"
    folder = tmp_path / "in"
    folder.mkdir()
    _land(folder, "part-0.jsonl", [EVENTS[0]])
    source = spark.readStream.schema("type string, id long, ts long, pos long").json(str(folder))
    planned = plan_stream(query, source, schema=SCHEMA, time_col="ts")
    out = tmp_path / "out.jsonl"
    running = start(planned, str(out), checkpoint=str(tmp_path / "ck"), fmt="jsonl")
    try:
        running.processAllAvailable()
        assert not _sink_lines(out)  # its window is open as far as the stream knows
        _land(folder, "part-1.jsonl", [{"type": TICK_TYPE, "ts": 10}])
        deadline = time.monotonic() + 120
        while not (got := read_results(planned, str(out), "jsonl")):  # committed results only
            assert time.monotonic() < deadline, "the tick row did not close order 0's window"
            time.sleep(0.5)
        rows = sum(int(p["numInputRows"]) for p in running.recentProgress)
    finally:
        running.stop()
    want = engine.run(parse_query(query), [Event.make(0, EVENTS[0])], SCHEMA)
    assert to_json_lines(got) == to_json_lines(want) != []
    assert rows == 2  # the event and the tick (Spark counts rows, not events)


@pytest.mark.parametrize(("flags", "message"), [
    (["--idle-advance", "1"], "--idle-advance with --stream needs --time-col"),
    (["--time-col", "ts", "--idle-advance", "1", "--once"], "--idle-advance cannot be used with --once"),
    (["--delay", "1", "--max-delay", "1"], "give either --delay or --max-delay"),
    (["--max-delay", "-1"], "must be a non-negative number"),
])
def test_the_stream_checks_its_time_options_before_spark_starts(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from acel.app.cli import main

    code = main(["run", QUERY, "--engine", "spark", "--stream", str(tmp_path),
                 "--out", str(tmp_path / "out"), *flags])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err


def test_a_ticker_that_cannot_write_says_so_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tick folder that is gone: one line on stderr, not a silent stop or a traceback."""
    from acel.spark_backend.streaming import Ticker

    class Query:
        isActive = True
        status = {"isTriggerActive": False}
        recentProgress = [_progress(0, time.time() - 5, data=1, top=SHIFT + 1)]

    ticker = Ticker(IdleTicks(rate=1.0, folder=str(tmp_path / "gone"), delay_ms=0), Query())  # type: ignore[arg-type]
    ticker.run()
    err = capsys.readouterr().err
    assert err.startswith("acel: the idle ticks stopped (FileNotFoundError") and err.count("\n") == 1
