"""Events as they arrive on standard input (JSON Lines, read once; spec §9, papers/io.md).

The schema is the given one or the one the first lines show (a later event that
does not fit it is an error naming its line); with a time column a bounded reorder
buffer (``max_delay``) restores order, and while no line arrives event time may
move on (``idle_advance``, :mod:`acel.io.watermark`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from acel.io.options import SourceOptions
from acel.io.records import Inference, Problems, RecordChecker, Row
from acel.io.stream import Attrs, EventStream
from acel.io.watermark import TICK, Advance, IdleClock
from acel.lang.errors import DataError


def stdin_stream(handle: IO[bytes], options: SourceOptions) -> EventStream:
    """JSON Lines as they arrive on standard input (read once).

    Without a schema, the schema is the one of the lines that arrive first: up
    to ``infer_lines``, or fewer if the input pauses for half a second (a live
    stream must not wait for a thousand events before its first result).
    """
    source = "<stdin>"
    time_col, schema = options.time_col, options.schema
    max_delay, infer_lines, idle_advance = options.max_delay, options.infer_lines, options.idle_advance
    lines = _LiveLines(handle)
    head: list[Row] = []
    if schema is None:
        problems = Problems(source)
        checker = RecordChecker(options, problems=problems)
        inference = Inference(options)
        for row in lines.rows(pause=0.5):
            head.append(row)
            checker.infer(row, inference)
            if len(head) >= infer_lines:
                break
        schema = inference.final_schema(problems)
        inferred = True
    else:
        inferred = False
    final = schema

    def batches() -> Iterator[list[Attrs]]:
        problems = Problems(source)
        checker = RecordChecker(options, schema=final, problems=problems)
        reorder = _Reorder(max_delay, source) if time_col is not None else None
        clock = IdleClock(idle_advance) if idle_advance is not None and reorder is not None else None
        for row in _chain(head, lines.ticking(None, TICK if clock is not None else None)):
            if row is None:  # a quiet moment (only with a clock): event time moves on
                assert clock is not None and reorder is not None
                advanced = reorder.idle(clock.quiet())
                if advanced is not None:
                    yield advanced
                continue
            if clock is not None:
                clock.arrived()
            checked = checker.check(row)
            if checked is None:
                problem = problems.shown[-1]
                hint = (
                    f" (the schema was taken from the first {len(head)} lines; give --schema)"
                    if inferred
                    else ""
                )
                raise DataError(f"{source}: {problem}{hint}")
            if reorder is None:
                yield [checked[0]]  # one at a time: each event as soon as its line arrives
            else:
                released = reorder.push(checked[1], checked[0], row)
                if released:
                    yield released
        if reorder is not None:
            rest = reorder.drain()
            if rest:
                yield rest

    return EventStream(source, final, batches, None, time_col=time_col, sort=False, once=True)


def _chain(head: list[Row], rest: Iterator[Row | None]) -> Iterator[Row | None]:
    yield from head
    yield from rest


class _LiveLines:
    """The records of a live binary stream as their lines arrive.

    A thread reads lines into a queue, so the reader can ask for what has
    arrived so far without blocking (``pause``) and a line is parsed as soon
    as it is complete.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        import queue
        import threading

        self.queue: queue.Queue[bytes | None] = queue.Queue()
        self.index = 0
        self.number = 0
        self.done = False
        source = _private_reader(handle)

        def pump() -> None:
            try:
                for line in iter(source.readline, b""):
                    self.queue.put(line)
            finally:
                self.queue.put(None)

        threading.Thread(target=pump, name="acel-stdin", daemon=True).start()

    def rows(self, pause: float | None = None) -> Iterator[Row]:
        """Records in order; with ``pause``, stop when no line arrives for that long."""
        for row in self.ticking(pause, None):
            if row is None:
                return
            yield row

    def ticking(self, pause: float | None, tick: float | None) -> Iterator[Row | None]:
        """Records in order; ``None`` after ``pause`` seconds without a line (then stop),
        or every ``tick`` seconds without one (then go on waiting)."""
        import queue

        from acel.io.formats import BOM, json_line_row

        wait = pause if pause is not None else tick
        while not self.done:
            try:
                line = self.queue.get(timeout=wait) if wait is not None else self.queue.get()
            except queue.Empty:
                yield None
                if pause is not None:
                    return
                continue
            if line is None:
                self.done = True
                return
            self.index += 1
            if self.index == 1 and line.startswith(BOM):
                line = line[3:]
            if not line.strip():
                continue
            self.number += 1
            yield json_line_row(self.number, self.index, line)


def _private_reader(handle: IO[bytes]) -> IO[bytes]:
    """A reader of its own on ``handle``'s file descriptor, when it has one.

    The reading thread may be blocked inside ``readline`` when the run stops on an
    error while the pipe is still open; had it locked ``sys.stdin.buffer``, closing
    that at interpreter exit would abort the process (``_enter_buffered_busy``).
    """
    import io
    import os

    try:
        return os.fdopen(os.dup(handle.fileno()), "rb")
    except (AttributeError, OSError, io.UnsupportedOperation):
        return handle


class _Reorder:
    """A bounded reorder buffer: events wait until no earlier one can still arrive.

    An event may arrive up to ``max_delay`` time units after one with a later
    time; one that arrives later than that is reported with its line (never
    dropped or reordered silently).
    """

    def __init__(self, max_delay: float | None, source: str) -> None:
        import heapq

        self.heapq = heapq
        self.delay = 0 if max_delay is None else max_delay
        self.source = source
        self.heap: list[tuple[Any, int, Attrs]] = []
        self.seq = 0
        self.high: Any = None
        self.released: Any = None
        self.watermark: Any = None
        """Where quiet time moved event time (``--idle-advance``): no later event may be below."""

    def push(self, key: Any, attrs: Attrs, row: Row) -> list[Attrs]:
        if self.watermark is not None and key < self.watermark:
            raise DataError(
                f"{self.source}: {row.where()}: time {key!r} arrives after the input was quiet "
                f"and event time had moved on to {round(self.watermark, 3)!r} (--idle-advance); raise "
                "--max-delay or lower --idle-advance"
            )
        if self.released is not None and key < self.released:
            raise DataError(
                f"{self.source}: {row.where()}: time {key!r} arrives after events up to "
                f"{self.released!r} were already processed (more than --max-delay "
                f"{self.delay!r} late); raise --max-delay or sort the input"
            )
        self.heapq.heappush(self.heap, (key, self.seq, attrs))
        self.seq += 1
        if self.high is None or key > self.high:
            self.high = key
        out: list[Attrs] = []
        limit = self.high - self.delay
        while self.heap and self.heap[0][0] <= limit:
            k, _, item = self.heapq.heappop(self.heap)
            self.released = k
            out.append(item)
        return out

    def idle(self, quiet: float) -> Advance | None:
        """No line for ``quiet`` time units: the watermark moves to ``high − delay + quiet``,
        and the events at or below it leave the buffer (``None`` before the first event)."""
        if self.high is None:
            return None
        mark = self.high - self.delay + quiet
        if self.watermark is not None and mark <= self.watermark:
            return None
        self.watermark = mark
        out: list[Attrs] = []
        while self.heap and self.heap[0][0] <= mark:
            k, _, item = self.heapq.heappop(self.heap)
            self.released = k
            out.append(item)
        return Advance(out, mark)

    def drain(self) -> list[Attrs]:
        out = []
        while self.heap:
            k, _, item = self.heapq.heappop(self.heap)
            self.released = k
            out.append(item)
        return out
