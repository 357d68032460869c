"""Stopping a per-match run whose output no file could hold (issue 24 item 7).

``(A AS a)+ ; B`` over 9,999 short A events and one B has 2^9999 - 1 complex
events, all ending at the B: the engine lists them one by one and never
writes a line, while memory stays flat (so the memory guard never fires).
When one event's step has listed many complex events, the guard counts them
all with trend propagation (:func:`acel.engines.running.count_complex_events`,
linear in the events, no listing) and, when the count is astronomically more
than any output can hold, stops the run with the count and what to do
instead (papers/io.md, "Hostile input").
"""

from __future__ import annotations

import time
from collections.abc import Callable

from acel.lang.errors import AcelError

STEP_RESULTS = 100_000
"""A step that has listed this many complex events makes the guard count..."""
STEP_SECONDS = 2.0
"""...and so does one that has been listing them for this long."""
MAX_COMPLEX_EVENTS = 10**12
"""More complex events than this: no output can hold them (a terabyte at a byte each)."""
MAX_STEP_HELD = 500_000
"""The complex events of one step are held in memory until the step ends (they are a
set, and SELECT and SKIP choose among them): past this many (about 0.5 GiB) the run stops
(issue 35: 30 events with 2^29 complex events at the last one ended in MemoryError)."""
MAX_STEP_SECONDS = 8.0
"""...and past this long listing them (a step should take a fraction of a second)..."""
MAX_STEP_MIB = 640.0
"""...and once the process holds this much memory while listing them (long complex
events, such as those of nested repetitions, take kilobytes each)."""


def shown(count: int) -> str:
    """A count as people read it: ``1,234,567``, or ``about 1.2·10^18`` when huge."""
    if count < 10**15:
        return f"{count:,}"
    digits = str(count)
    return f"about {digits[0]}.{digits[1]}·10^{len(digits) - 1}"


class RunawayGuard:
    """The runner's big-step hook (``big_step(found)`` of :mod:`acel.engines.running`):
    counts once, when a step looks like a runaway, and raises if the count is too large.

    ``count()`` is the number of complex events of the whole run, or ``None`` when it
    cannot be counted without listing them (then the run goes on).
    """

    def __init__(self, count: Callable[[], int | None], limit: int | None = None,
                 *, aggregated: bool = False, choosing: bool = False,
                 memory: Callable[[], float] | None = None) -> None:
        self.count = count
        self.memory = memory
        """The process's resident memory now, in MiB (checked inside large steps)."""
        self.limit = limit
        self.aggregated = aggregated
        """A RETURN query: its complex events are listed only to be aggregated."""
        self.choosing = choosing
        """A SELECT strategy or AFTER MATCH SKIP: it chooses among all the complex events,
        which are listed first (``count()`` counts them all)."""
        self.counted: int | None = None
        self.done = False
        self.last_found = 2**62  # the first call starts a step
        self.step_start = 0.0

    def __call__(self, found: int) -> None:
        now = time.perf_counter()
        if found <= self.last_found:  # the first call of a new step
            self.step_start = now
        self.last_found = found
        seconds = now - self.step_start
        heavy = (found >= STEP_RESULTS // 10 and self.memory is not None
                 and self.memory() > MAX_STEP_MIB)
        if found > MAX_STEP_HELD or seconds > MAX_STEP_SECONDS or heavy:
            raise AcelError(self.held_message(found, seconds))
        # a strategy lists every candidate to choose a few: count them sooner
        enough = STEP_RESULTS // 10 if self.choosing else STEP_RESULTS
        if self.done or (found < enough and seconds < STEP_SECONDS):
            return
        self.done = True
        self.counted = self.count()
        if self.counted is not None and self.counted > MAX_COMPLEX_EVENTS:
            raise AcelError(self.message(self.counted))

    def stalled(self, seconds: float) -> None:
        """One event's step has run ``seconds`` without listing a new complex event (a
        walk over very many runs that give the same few): stop past the step's time."""
        if seconds > MAX_STEP_SECONDS:
            raise AcelError(
                f"one event's step has run {seconds:.0f} s (at most {MAX_STEP_SECONDS:.0f}): "
                "the pattern has very many runs for each complex event (nested or ambiguous "
                f"repetitions); {self.advice()}")

    def advice(self) -> str:
        """What to do instead: aggregate, bound, or write only the first ones."""
        if self.aggregated:
            return "bound them with WITHIN (e.g. WITHIN 20 EVENTS) or PARTITION BY"
        if self.limit is None:
            return ("aggregate them with RETURN (e.g. RETURN COUNT(*)), bound them with "
                    "WITHIN, or write only the first ones with --limit N")
        return "aggregate them with RETURN (e.g. RETURN COUNT(*)) or bound them with WITHIN"

    def message(self, count: int) -> str:
        """The one line that stops the run."""
        if self.choosing:
            return (f"this query's SELECT or AFTER MATCH SKIP chooses among {shown(count)} "
                    "complex events (counted without listing them), more than can be listed: "
                    "bound them with WITHIN (e.g. WITHIN 20 EVENTS)")
        return (f"this query has {shown(count)} complex events (counted without listing "
                f"them), more than any output can hold: {self.advice()}")

    def held_message(self, found: int, seconds: float) -> str:
        """The one line that stops a step too large to hold or too slow to list."""
        total = "" if self.counted is None else f", {shown(self.counted)} in all"
        what = (f"more than {MAX_STEP_HELD:,} complex events" if found > MAX_STEP_HELD
                else f"more than {found:,} complex events (listed in {seconds:.0f} s"
                + (")" if seconds > MAX_STEP_SECONDS else f", over {MAX_STEP_MIB:.0f} MiB)"))
        return (f"one event ends {what}{total}, listed and held in memory "
                f"before any is written: {self.advice()}")
