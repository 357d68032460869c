"""Progress of a running Spark job, read from the status tracker (no Spark UI needed).

``watch`` polls ``SparkContext.statusTracker()`` in a daemon thread while the
driver waits for a job, and reports the active stages' task counts through a
callback (the command line prints them at most once a second).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Report = Callable[[str], None]


def describe_stages(session: SparkSession) -> str | None:
    """``3 of 8 tasks done, 2 running`` over the active stages (None when idle),
    with ``, 1 failed attempt (retried)`` when tasks failed and Spark tries them again."""
    tracker = session.sparkContext.statusTracker()
    total = done = running = failed = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is None:
            continue
        total += info.numTasks
        done += info.numCompletedTasks
        running += info.numActiveTasks
        failed += info.numFailedTasks
    if total == 0:
        return None
    line = f"Spark: {done} of {total} tasks done, {running} running"
    if failed:
        line += f", {failed} failed attempt{'s' if failed > 1 else ''} (retried)"
    return line


@contextmanager
def watch(session: SparkSession, report: Report | None, every: float = 1.0) -> Iterator[None]:
    """Report the active stages every ``every`` seconds while the body runs."""
    if report is None:
        yield
        return
    stop = threading.Event()

    def poll() -> None:
        last = None
        while not stop.wait(every):
            try:
                line = describe_stages(session)
            except Exception:  # the context is stopping: progress is best effort
                return
            if line is not None and line != last:
                report(line)
                last = line

    thread = threading.Thread(target=poll, name="acel-spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=every + 1.0)
