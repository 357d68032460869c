"""What a run tells its user on stderr, and how its results are written as they come.

Shared by ``acel run`` on one query (:mod:`acel.app.cli`) and on a workload
(:mod:`acel.app.workload_cmd`): progress lines (at most one a second, none
after the last line), the final summary, the memory guard, and
:func:`write_groups`, which writes each group of final results and reports an
interruption in one line (papers/io.md, "Output and interruption").
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from acel.lang.errors import AcelError

RATE_MIN_EVENTS = 1000
"""A summary shows events per second only from this many events on: below, the time
is start-up (reading, compiling), and a rate such as "4 events/s" means nothing."""
RATE_MIN_SECONDS = 0.1
EVERY = 1.0
"""Seconds between two progress lines..."""
FIRST_AFTER = 3.0
"""...and before the first: a run of a few seconds needs none (and a small run slowed
down by a loaded machine does not print one between its output and its summary)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C, so that a run ends the same way:
    partial output kept and said, temporary files (Spark's copy of the events) removed
    (issue 24 item 11: the default action killed the process before any clean-up)."""


EXIT_TERMINATED = 143
"""128 + SIGTERM, what a shell reports for a process SIGTERM ended."""


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While this holds, SIGTERM raises :class:`Terminated` in the main thread (elsewhere,
    where no handler can be installed, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: Any) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def spark_session(master: str | None) -> Iterator[Any]:
    """The Spark session of a run, where Ctrl-C ends the run in one line (issue 24 item 10).

    PySpark's own SIGINT handler cancels the jobs through py4j from inside the
    py4j call the main thread is waiting on, which fails ("reentrant call"), and
    py4j logs each failed call with its traceback on the root logger: 4 tracebacks,
    55 lines.  Here Ctrl-C (and SIGTERM) raise in Python only, the JVM ending with the
    process (a run that finishes waits for the JVM it started: ``session.end_session``);
    py4j's log lines are dropped while the run lasts; and when the
    clean-up of an interrupted call fails in turn ("Answer from Java side is
    empty"), the run still ends as interrupted (or terminated), not as a Spark error.
    """
    import logging

    from acel.spark_backend import get_session

    caught: list[type[KeyboardInterrupt]] = []

    def on_signal(signum: int, frame: Any) -> None:
        kind = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        caught.append(kind)
        raise kind

    root = logging.getLogger()
    quiet = logging.NullHandler()  # a handler: no automatic basicConfig to stderr
    root.addHandler(quiet)
    main = threading.current_thread() is threading.main_thread()
    previous = [(sig, signal.getsignal(sig)) for sig in (signal.SIGINT, signal.SIGTERM)] if main else []
    from acel.spark_backend.session import end_session, owns_no_session

    started = owns_no_session()  # a caller's session (tests) stays theirs
    try:
        session = get_session(master)  # PySpark installs its SIGINT handler here
        for sig, _ in previous:
            signal.signal(sig, on_signal)
        yield session
    except BaseException as error:
        if caught and not isinstance(error, caught[0]):
            raise caught[0]() from None  # an interrupted call's clean-up failed
        raise
    finally:
        try:  # no JVM outlives the run (issue 31); an interrupted one's JVM ends with the
            # process as before (ended early, it logged its tasks' failures after the one line)
            if started and not caught:
                end_session()
        except Exception:  # noqa: BLE001 - ending is best effort; the run's own error wins
            pass
        for sig, handler in previous:
            if handler is not None:
                signal.signal(sig, handler)
        root.removeHandler(quiet)


def stopped_word(error: BaseException) -> str:
    """How a run that did not finish ended: ``terminated`` or ``interrupted``."""
    return "terminated" if isinstance(error, Terminated) else "interrupted"


def eprint(message: str) -> None:
    """One line on stderr, flushed at once (it may be the last thing the process says)."""
    print(message, file=sys.stderr, flush=True)


class Progress:
    """Progress lines on stderr, at most one a second, none in the first three seconds.

    After :meth:`finish` it says nothing more, so no late progress line (from a
    generator closed after an interruption, a timer) follows the last line.
    """

    def __init__(self, prefix: str = "acel run") -> None:
        self.prefix = prefix
        self.start = time.perf_counter()
        self.last = self.start
        self.finished = False

    def note(self, message: str, *, force: bool = False) -> None:
        """Print ``message`` if a second has passed since the last line (or ``force``)."""
        if self.finished:
            return
        now = time.perf_counter()
        if force or (now - self.last >= EVERY and now - self.start >= FIRST_AFTER):
            eprint(f"{self.prefix}: {message} ({now - self.start:.1f} s)")
            self.last = now

    def finish(self) -> None:
        """No progress line from now on: the run's last line follows."""
        self.finished = True

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.start


class RunReport:
    """The progress line of a run over ``stream`` (``progress(done, found)`` of
    :mod:`acel.engines.running`), remembering how many events were fed."""

    def __init__(self, progress: Progress, stream: Any, max_events: int | None, engine: Any) -> None:
        total = stream.facts.count if stream.facts is not None else None
        if total is not None and max_events is not None:
            total = min(total, max_events)
        self.progress, self.total, self.engine = progress, total, engine
        self.fed = 0

    def __call__(self, done: int, found: int) -> None:
        self.fed = done
        if not self.engine.incremental:  # one call over the whole stream: no count to show
            self.progress.note(f"the {self.engine.name} engine is running on {done:,} events "
                               "(its results come at the end)")
            return
        of = f" of {self.total:,}" if self.total else ""
        speed = rate(done, self.progress.elapsed())
        self.progress.note(f"{done:,}{of} events read, {found:,} results so far"
                           + (f", {speed}" if speed else ""))


def write_groups(writer: Any, groups: Iterable[Any], add: Callable[[Any], None],
                 progress: Progress | None = None) -> int | None:
    """Write each group of results as it comes (``add`` then flush; Ctrl-C waits for whole
    lines); the count written, or None when interrupted (the partial file is kept).

    The run (``groups``) is closed before the last line is printed, so that its own
    last progress report cannot come after it (issue 24 item 14)."""
    from acel.io.results import interrupts_between_writes

    try:
        with interrupts_between_writes():
            for group in groups:
                add(group)
                writer.flush()
                if writer.full:
                    break
            return int(writer.close())
    except KeyboardInterrupt as error:
        _end(groups, progress)
        eprint(f"acel run: {stopped_word(error)}; {writer.abort()}")
        if isinstance(error, Terminated):
            raise SystemExit(EXIT_TERMINATED) from None  # said in the line above
        return None
    except BaseException:
        _end(groups, progress)
        eprint(f"acel run: stopped; {writer.abort()}")
        raise
    finally:
        _end(groups, progress)


def _end(groups: Iterable[Any], progress: Progress | None) -> None:
    """Silence the progress line, then close the run's generator (its ``finally`` runs now,
    not when it is collected, which may be after the summary)."""
    if progress is not None:
        progress.finish()
    close = getattr(groups, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # noqa: BLE001 - closing a run that already failed
            pass


def rate(n_events: int | None, seconds: float) -> str | None:
    """``"12,345 events/s"``, or ``None`` when the run is too small for a rate to mean
    anything (issue 25 §6: "4 events/s" measured start-up, not the engine)."""
    if n_events is None or n_events < RATE_MIN_EVENTS or seconds < RATE_MIN_SECONDS:
        return None
    return f"{n_events / seconds:,.0f} events/s"


def summary(args: argparse.Namespace, progress: Progress, n_events: int | None, written: str) -> None:
    """The last line on stderr: events, results, time, rate (when it means something),
    peak memory, output."""
    progress.finish()
    seconds = progress.elapsed()
    parts = []
    if n_events is not None:
        parts.append(f"{n_events:,} events read")
    parts.append(written)
    parts.append(f"{seconds:.2f} s")
    speed = rate(n_events, seconds)
    if speed is not None:
        parts.append(speed)
    parts.append(f"peak RSS {peak_rss_mib():,.0f} MiB")
    eprint(f"acel run [{args.engine}]: " + ", ".join(parts) + (f" -> {args.out}" if args.out else ""))


def peak_rss_mib() -> float:
    """This process's peak resident memory, in MiB (Linux ``VmHWM``, else ``ru_maxrss``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class MemoryGuard:
    """Stops a run whose memory passes a limit, with a message instead of the kernel's kill.

    The limit is ``--max-memory`` MiB, by default three quarters of the memory
    this process may use: the machine's, or its container's (cgroup) limit when
    lower, which is the one the kernel's out-of-memory killer enforces.
    """

    def __init__(self, limit_mib: float | None) -> None:
        if limit_mib is None:
            try:
                total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except (ValueError, OSError, AttributeError):
                total = None
            cgroup = _cgroup_limit()
            if cgroup is not None and (total is None or cgroup < total):
                total = cgroup
            limit_mib = 0.75 * total / 2**20 if total else float("inf")
        self.limit = limit_mib
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def current_mib(self) -> float:
        """This process's resident memory now, in MiB."""
        try:
            with open("/proc/self/statm", encoding="ascii") as handle:
                return int(handle.read().split()[1]) * self.page / 2**20
        except (OSError, ValueError, IndexError):
            return peak_rss_mib()

    def check(self) -> None:
        """Raise a one-line error when the run uses more than the limit."""
        used = self.current_mib()
        if used > self.limit:
            raise AcelError(
                f"memory limit reached: the run uses {used:,.0f} MiB (limit {self.limit:,.0f} MiB); "
                "a query without WITHIN keeps every run alive, and per-match output can be "
                "exponential: add WITHIN, use RETURN, or raise --max-memory"
            )


def _cgroup_limit() -> int | None:
    """The memory limit of this process's container in bytes (cgroup v2 or v1), if any."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as handle:
                text = handle.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # v1 writes a huge number for "none"
            return int(text)
    return None
