"""Event time that moves on while a live stream is quiet (issue 25 §5, spec §3.1).

A live standard-input stream with a time column (``--time-col``) normally
learns that event time has passed only from a later event: a result that is
final only once its window has closed (trailing negation, SLIDE rows) waits
for the next event.  With ``--idle-advance RATE`` the reader also lets event
time follow the wall clock while no line arrives: after ``s`` quiet seconds
the watermark is ``high − max_delay + RATE·s`` (``high``: the largest time
read so far), the reorder buffer releases the events at or below it, and the
batch that carries them says so (:class:`Advance`), so the runner can close
what the watermark closes (:meth:`acel.acea.engine.Runner.advance`).  An event
that then arrives with a time below the watermark is late and reported like
any late event.  See papers/streaming.md, "Deadlines on a quiet stream".
"""

from __future__ import annotations

import time
from typing import Any

TICK = 0.1
"""Seconds of quiet between two looks at the clock (how late a deadline may be seen)."""


class Advance(list):  # type: ignore[type-arg]
    """A batch of events (attribute maps) after which event time has reached
    ``watermark``: no event read later has a smaller time (a live stream's idle
    watermark, :mod:`acel.io.watermark`)."""

    def __init__(self, events: list[Any], watermark: float) -> None:
        super().__init__(events)
        self.watermark = watermark


def watermark_of(batch: list[Any]) -> float | None:
    """The watermark a batch carries (an :class:`Advance`), else ``None``."""
    return batch.watermark if isinstance(batch, Advance) else None


class IdleClock:
    """Wall-clock seconds since the last line arrived, as time-column units (``rate``
    units a second: 1 for a column in seconds, 1000 for milliseconds)."""

    def __init__(self, rate: float) -> None:
        if not rate > 0 or rate == float("inf"):
            raise ValueError(f"--idle-advance must be a positive number of time units a second, not {rate!r}")
        self.rate = rate
        self.last = time.monotonic()

    def arrived(self) -> None:
        """A line arrived: the quiet starts again from now."""
        self.last = time.monotonic()

    def quiet(self) -> float:
        """How far event time has moved since the last line, in time-column units."""
        return self.rate * (time.monotonic() - self.last)


__all__ = ["TICK", "Advance", "IdleClock", "watermark_of"]
