"""Event time on a Spark stream: its millisecond coordinates and the ticks that move
a quiet stream's time (``idle_advance``), split from :mod:`acel.spark_backend.streaming`
(issue 34: one job per module).

Spark counts event time as timestamps in milliseconds: a time ``v`` of the time column
is ``⌊v⌋ + SHIFT`` ms, the end row is at ``END_MS``.  While a stream is quiet the driver
writes tick files (:class:`Ticker`) whose times follow the wall clock from the last
event's time (:class:`TickClock`); papers/spark.md, "Deadlines on a quiet stream".
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

SHIFT = 2**30
"""Event time: time ``v`` (in whole units of the time column) is Spark timestamp
``⌊v⌋ + SHIFT`` milliseconds.  Spark's watermark starts at 0 and timeouts must be
positive, so times down to ``-SHIFT`` work; Spark counts watermarks in whole
milliseconds, so one unit is one millisecond and nothing is rounded."""

END_MS = 8 * 10**12
"""The event time (ms) of the end row: past every real event (and before pandas'
last timestamp, as the column goes through pandas)."""

ENDED_MS = 6 * 10**12
"""A watermark at or past this (ms) means the end row has been read; real times
must stay below ``ENDED_MS - SHIFT``."""

TICK_TYPE = "#tick"
"""The type of a row that only moves event time (not an ACEL name, so no query sees it)."""

TICK_POS = -2
"""The position a tick row is staged with: no event has it, so the keys skip it."""

TICK_EVERY = 1.0
"""Seconds of quiet between two ticks the driver writes (``idle_advance``)."""

@dataclass(frozen=True)
class IdleTicks:
    """How the driver moves a quiet stream's event time (``idle_advance``): tick files
    of ``{"ms": event time}`` in ``folder``, ``rate`` time units a second of quiet,
    one each ``every`` seconds of quiet at most."""

    rate: float
    folder: str
    delay_ms: int
    every: float = TICK_EVERY


def data_rows(progress: dict[str, Any], ticks: IdleTicks | None = None) -> int:
    """A micro-batch's input rows, the driver's ticks left out (they are not events)."""
    return sum(int(s.get("numInputRows") or 0) for s in progress.get("sources") or []
               if ticks is None or ticks.folder not in str(s.get("description", "")))



def progress_ms(progress: dict[str, Any], field: str) -> int | None:
    """An event-time field (``max``, ``watermark``) of a micro-batch's progress, in ms."""
    from datetime import datetime

    text = (progress.get("eventTime") or {}).get(field)
    if not text:
        return None
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _started(progress: dict[str, Any]) -> float:
    """When a micro-batch started (wall clock, seconds since the epoch)."""
    from datetime import datetime

    return datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()


class TickClock:
    """The driver's view of a quiet stream: the largest event time the data brought
    (``high``, ms), since when no data came (wall clock), and the tick that moves
    event time on at ``rate`` units (ms) a second of quiet: ``high + rate·quiet``,
    so Spark's watermark is ``high − delay + rate·quiet``, as the live reader's
    (papers/streaming.md).  Pure: the tests drive it with made-up progress."""

    def __init__(self, ticks: IdleTicks) -> None:
        self.ticks = ticks
        self.every = ticks.every
        self.high: int | None = None
        self.since = 0.0
        self.last_tick = 0.0
        self.ticked = -1
        """The largest tick time written (ms)."""
        self.written: set[int] = set()

    def resume(self, watermark_ms: int | None, now: float) -> None:
        """A query restarted from a checkpoint whose watermark is ``watermark_ms``: event
        time moves on from there (it never moves back) once quiet from ``now``."""
        if watermark_ms is not None and self.high is None and watermark_ms < ENDED_MS:
            self.high = watermark_ms + self.ticks.delay_ms
            self.since = now

    def saw(self, progress: dict[str, Any]) -> None:
        """A micro-batch completed: data in it starts the quiet again from its start."""
        if not data_rows(progress, self.ticks):
            return
        self.since = max(self.since, _started(progress))
        top = progress_ms(progress, "max")
        if top is not None and top not in self.written and top < ENDED_MS:
            self.high = top if self.high is None else max(self.high, top)  # a real event's time

    def due(self, now: float) -> int | None:
        """The tick to write now (its event time, ms), or ``None`` (no data yet, not
        quiet long enough, no move, or past the range of real times)."""
        if self.high is None or now - self.since < self.every or now - self.last_tick < self.every:
            return None
        tick = min(self.high + math.floor(self.ticks.rate * (now - self.since)), ENDED_MS - SHIFT - 1)
        return tick if tick > max(self.ticked, self.high) else None

    def wrote(self, tick: int, now: float) -> None:
        """A tick with this event time was written at ``now``."""
        self.ticked = max(self.ticked, tick)
        self.written.add(tick)
        self.last_tick = now


def write_tick(folder: str, ms: int) -> None:
    """One tick file (``{"ms": …}``), written beside and renamed in: never read half-written."""
    import os
    from pathlib import Path

    name = f"tick-{time.time_ns()}-{ms}.json"
    scratch = Path(folder) / f".{name}"
    scratch.write_text(json.dumps({"ms": ms}) + "\n")
    os.rename(scratch, Path(folder) / name)


class Ticker(threading.Thread):
    """The driver's side of ``idle_advance``: while the running query is active, it
    follows its micro-batches and, when the stream has been quiet for ``every``
    seconds (``TICK_EVERY``) and no micro-batch is under way, writes a tick (a daemon thread;
    it stops with the query)."""

    def __init__(self, ticks: IdleTicks, query: StreamingQuery) -> None:
        super().__init__(name="acel-idle-ticks", daemon=True)
        self.clock = TickClock(ticks)
        self.query = query
        self.seen = -1

    def run(self) -> None:
        import sys

        try:
            while self.query.isActive:
                self.look()
                time.sleep(0.1)
        except Exception as error:
            if self._active():  # else the query stopped under us: its error is its own to report
                print(f"acel: the idle ticks stopped ({type(error).__name__}: {error}); event time "
                      "now moves only with the data", file=sys.stderr)

    def _active(self) -> bool:
        try:
            return bool(self.query.isActive)
        except Exception:
            return False

    def look(self) -> None:
        """Read the new micro-batches' progress; write a tick if one is due."""
        for p in self.query.recentProgress:
            if p["batchId"] > self.seen:
                self.seen = p["batchId"]
                self.clock.saw(p)
        if self.query.status.get("isTriggerActive"):
            return  # a micro-batch may be reading new data: wait for its progress
        now = time.time()
        tick = self.clock.due(now)
        if tick is not None:
            write_tick(self.clock.ticks.folder, tick)
            self.clock.wrote(tick, now)


__all__ = ["END_MS", "ENDED_MS", "SHIFT", "TICK_EVERY", "TICK_POS", "TICK_TYPE", "IdleTicks", "TickClock",
           "Ticker", "data_rows", "progress_ms", "write_tick"]
