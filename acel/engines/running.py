"""One run of a checked query over an event stream, as groups of final results.

This is the loop both the library (:func:`acel.run`) and the command line
(``acel run``) go through: events come from an
:class:`acel.io.source.EventStream` batch by batch, an incremental engine
reads them one by one, and each group of results that became final is handed
on at once (complex events grouped by the position that ends them; RETURN
rows when their window closes or at the end).  Engines without an
incremental runner get the whole stream and give one group.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from acel.engines import Engine
from acel.io.source import EventStream
from acel.lang.ast import Query
from acel.lang.schema import Schema

Progress = Callable[[int, int], None]
"""``progress(events_read, results_so_far)``, called every few thousand events."""

PROGRESS_EVERY = 4096

Inspect = Callable[[Sequence[Any]], None]
"""``inspect(events)``: a look at each batch of events (attribute maps or
:class:`~acel.lang.events.Event`, both with ``get``) before it is run."""


def monotone_hint(query: Query, stream: EventStream) -> bool | None:
    """What the runner may assume about a ``WITHIN … ON attr`` axis (see :class:`Runner`).

    Known from the stream's first pass (or its sort): that answer.  A live
    stream: ``None`` (assumed, and every event checked).  Unknown otherwise:
    ``False``, so nothing is pruned early (exact, more memory).
    """
    within = query.within
    if within is None or within.attr is None:
        return True
    known = stream.monotone(within.attr)
    if known is not None:
        return known
    return None if stream.facts is None and stream.source == "<stdin>" else False


@contextmanager
def watched(check: Callable[[], None] | None, every: float = 0.1) -> Iterator[None]:
    """Run ``check()`` every ``every`` seconds (of wall time) while the block runs.

    For a call that cannot be watched from inside (a batch engine's one call,
    which may explode): a timer signal runs ``check`` in the main thread
    between two steps of Python code, so when it raises (the memory guard),
    the block ends with its error instead of the kernel's out-of-memory kill.
    Only the main thread of a Unix process takes signals; elsewhere the block
    just runs.
    """
    if (
        check is None
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def on_timer(signum: int, frame: Any) -> None:
        check()

    previous = signal.signal(signal.SIGALRM, on_timer)
    signal.setitimer(signal.ITIMER_REAL, every, every)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def result_groups(
    query: Query,
    schema: Schema,
    stream: EventStream,
    engine: Engine,
    *,
    max_events: int | None = None,
    progress: Progress | None = None,
    memory_check: Callable[[], None] | None = None,
    build: Any = None,
    inspect: Inspect | None = None,
    big_step: Callable[[int], None] | None = None,
) -> Iterator[list[Any]]:
    """Groups of final results, in the order of spec §12 across groups.

    ``build`` (incremental engines): what a complex event becomes, e.g. its
    JSON text straight away (:class:`acel.io.lines.LineBuilder`).
    ``inspect``: shown every batch of events before they are run (a look, never a change).
    ``big_step`` (incremental engines): see :attr:`Feed.big_step`.
    """
    engine.check_supported(query)  # a refusal comes before any data is read
    if not engine.incremental:
        events = stream.events(limit=max_events)
        if inspect is not None:
            inspect(events)
        if progress is not None:
            progress(len(events), 0)

        def tick() -> None:
            if memory_check is not None:
                memory_check()
            if progress is not None:
                progress(len(events), 0)

        with watched(tick if memory_check is not None or progress is not None else None):
            results = engine.batch(query, events, schema)  # one call, which may explode
        if results:
            yield results
        return
    feed = Feed(progress, memory_check, inspect=inspect, big_step=big_step)
    watching = memory_check is not None or progress is not None or big_step is not None
    runner = engine.runner(
        query, schema, monotone=monotone_hint(query, stream), build=build,
        watch=feed.watch if watching else None,
    )
    within = query.within
    on_time = within is not None and within.attr is not None and within.attr == stream.time_col
    yield from feed.groups(runner, stream, max_events, advance=on_time)


class Feed:
    """Pushes a stream's events into an incremental runner (one query's, a workload's)
    and hands back each group of results as it becomes final, counting events read
    and results found for the progress line and the memory guard."""

    def __init__(
        self,
        progress: Progress | None = None,
        memory_check: Callable[[], None] | None = None,
        every: int = PROGRESS_EVERY,
        inspect: Inspect | None = None,
        big_step: Callable[[int], None] | None = None,
    ) -> None:
        self.progress = progress
        self.inspect = inspect
        self.big_step = big_step
        """``big_step(found)``: inside one event's step that has ended ``found`` complex
        events so far (every 1,024), e.g. a check that the run is not a runaway."""
        self.memory_check = memory_check
        self.every = every
        self.pushing = False
        """Inside the runner's push of one event (the stall check watches only then)."""
        self.read = 0
        self.found = 0

    def watch(self, found: int) -> None:
        """Inside one event's step that ends very many complex events (the runner's hook)."""
        if self.memory_check is not None:
            self.memory_check()
        if self.big_step is not None:
            self.big_step(found)
        if self.progress is not None:
            self.progress(self.read, self.found + found)

    def _stall_check(self) -> Callable[[], None] | None:
        """A timer check for one event's step that runs long without calling :meth:`watch`
        (a walk over very many runs of few complex events, issue 35): it hands the seconds
        spent on that event to ``big_step.stalled``, which may stop the run."""
        stalled = getattr(self.big_step, "stalled", None)
        if stalled is None:
            return None
        seen = [-1, 0.0]

        def check() -> None:
            now = time.perf_counter()
            if self.read != seen[0] or not self.pushing:
                seen[0], seen[1] = self.read, now
                return
            stalled(now - seen[1])

        return check

    def _source(self, runner: Any, stream: EventStream) -> Iterator[Any]:
        """The stream's batches: typed column blocks straight into a native trend core when
        both sides can (``papers/engine.md``, "Columns into the core"), else attribute maps."""
        spec = None
        if self.inspect is None and getattr(runner, "native", None) is not None:
            spec = runner.column_spec()
        blocks = None if spec is None else stream.column_blocks(spec)
        return stream.batches() if blocks is None else blocks

    def groups(self, runner: Any, stream: EventStream, max_events: int | None,
               *, advance: bool = False) -> Iterator[list[Any]]:
        """Every event of ``stream`` (at most ``max_events``) into ``runner``, then its end.

        ``advance``: the runner's ``WITHIN … ON`` axis is the stream's time column, so a
        batch that carries a watermark (a quiet live stream, :mod:`acel.io.watermark`)
        also releases what the watermark makes final (``runner.advance``).
        """
        from acel.acea.engine import paused_gc
        from acel.io.watermark import watermark_of

        progress, memory_check, every = self.progress, self.memory_check, self.every
        try:
            # no timer on a live stream: its signals would delay the reader's lines
            live = stream.source == "<stdin>"
            with paused_gc(), watched(None if live else self._stall_check(), every=0.5):
                for batch in self._source(runner, stream):
                    columns = not isinstance(batch, list)
                    if max_events is not None and self.read + len(batch) > max_events:
                        if columns:
                            batch.n = max_events - self.read
                        else:
                            batch = batch[: max_events - self.read]
                    if self.inspect is not None:
                        self.inspect(batch)
                    push = runner.push
                    native = getattr(runner, "native", None) is not None and (columns or isinstance(batch, list))
                    if native:  # the native trend core (issue 23)
                        found = runner.push_columns(batch) if columns else runner.push_batch(batch)
                        self.read += len(batch)
                        if found:
                            self.found += len(found)
                            yield found
                        if progress is not None:
                            progress(self.read, self.found)
                        if memory_check is not None:
                            memory_check()
                    self.pushing = True
                    for attrs in () if native else batch:
                        found = push(attrs)
                        self.read += 1
                        if found:
                            self.found += len(found)
                            self.pushing = False
                            yield found
                            self.pushing = True
                        if self.read % every == 0:
                            if progress is not None:
                                progress(self.read, self.found)
                            if memory_check is not None:
                                memory_check()
                    self.pushing = False
                    if max_events is not None and self.read >= max_events:
                        break
                    mark = watermark_of(batch) if advance and not columns else None
                    if mark is not None:
                        found = runner.advance(mark)
                        if found:
                            self.found += len(found)
                            yield found
                rest = runner.finish()
            self.found += len(rest)
            if rest:
                yield rest
        finally:
            if progress is not None:
                progress(self.read, self.found)


def count_complex_events(query: Query, schema: Schema, stream: EventStream,
                         max_events: int | None = None) -> int | None:
    """How many complex events a per-match query has over ``stream`` (before its SELECT
    and AFTER MATCH SKIP, which choose among them), counted by trend
    propagation (GRETA, seed 000: ``RETURN COUNT(*)``) without listing a single one.

    ``None`` where counting would need the listing: a query with RETURN or SLIDE, or
    an automaton whose accepting runs are not one per complex event (papers/engine.md).
    Linear in the events, so a run whose output would be astronomically large can be
    stopped with its size (issue 24 item 7).
    """
    from dataclasses import replace

    from acel.acea.engine.plan import compiled_for, events_bound, propagation_applies
    from acel.engines import engine as engine_named
    from acel.lang.ast import CountStar

    if query.returns is not None or query.slide is not None:
        return None
    # a selection or a skip chooses among all of them, which are listed first (issue 35)
    counting = replace(query, returns=(CountStar(),), select="ALL", skip=None)
    automaton, _ = compiled_for(query.formula, schema, events=events_bound(counting))
    if not propagation_applies(counting, automaton):
        return None
    total = 0
    for group in result_groups(counting, schema, stream, engine_named("optimized"),
                               max_events=max_events):
        for row in group:
            value = row.values[0][1]
            total += int(value) if isinstance(value, (int, float)) else 0
    return total
