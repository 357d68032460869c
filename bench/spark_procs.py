"""Every process of a Spark run, watched: peak resident memory per process and tree CPU (issue 31).

A Spark run is a tree of processes (the Python driver, its gateway JVM, the JVM's
Python daemon and the workers it forks; on a standalone cluster also the master and
worker JVMs, each worker's executor JVM and its Python daemon and workers), and the
issue's memory target is *per process* (under 2 GiB each at 10^8 events).
:class:`TreeWatch` samples the trees under a few root processes every ``interval``
seconds with psutil and keeps each pid's largest RSS with its role; :func:`tree_cpu`
adds the CPU of trees, live and reaped.  Shared by ``bench/spark_warm.py``'s Spark
child, ``bench/spark_scale.py`` and ``bench/spark_cold.py``.  Not part of the test suite.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

MIB = 2**20

ROLE_MARKS = (
    ("deploy.master.Master", "master JVM"),
    ("deploy.worker.Worker", "worker JVM"),
    ("CoarseGrainedExecutorBackend", "executor JVM"),
    ("launcher.Main", "launcher JVM"),  # spark-class's short-lived command builder
    ("SparkSubmit", "driver JVM"),
)
"""Command-line marks of Spark's JVMs (``java`` processes), first match wins."""


def role_of(proc: Any, driver: int | None = None) -> str:
    """What a process of a Spark run is, from its command line (and its parent's)."""
    import psutil

    if proc.pid == driver:
        return "driver"
    try:
        line = " ".join(proc.cmdline())
        if "pyspark.daemon" in line or "pyspark/daemon" in line:
            parent = proc.parent()
            forked = parent is not None and "pyspark.daemon" in " ".join(parent.cmdline())
            return "Python worker" if forked else "Python daemon"
        name = str(proc.name())
        if name == "java":
            return next((role for mark, role in ROLE_MARKS if mark in line), "JVM")
        if "pyspark.worker" in line:
            return "Python worker"
        return "Spark scripts" if "spark-class" in line or "spark-submit" in line else name
    except psutil.Error:
        return "gone"


def tree(roots: Iterable[Any]) -> list[Any]:
    """The root processes and all their live descendants (each once), from one scan of the
    process table (``children(recursive=True)`` would scan it once per root)."""
    import psutil

    kids: dict[int, list[Any]] = {}
    for p in psutil.process_iter(["ppid"]):
        kids.setdefault(p.info["ppid"], []).append(p)
    seen: dict[int, Any] = {}
    todo = [r for r in roots if r.is_running()]
    while todo:
        p = todo.pop()
        if p.pid not in seen:
            seen[p.pid] = p
            todo.extend(kids.get(p.pid, []))
    return list(seen.values())


def tree_cpu(roots: Iterable[Any]) -> float:
    """CPU seconds of the trees under ``roots``: live processes, and the children they reaped."""
    import psutil

    total = 0.0
    for p in tree(roots):
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


class TreeWatch:
    """Peak RSS of every process under ``roots``, sampled every ``interval`` s in a thread
    (the trees' members found again every ``rescan`` s, and by every ``take``).

    ``take()`` returns the peaks seen since the last ``take()`` (or the start) and starts
    over: one call per measured case.  The sampler's own CPU (a process-table scan per
    sample, about 2 ms here) is counted in ``cost_s`` (its thread's CPU time), so that a
    tree CPU figure taken in the same process can leave it out.
    """

    def __init__(self, roots: Iterable[int], interval: float = 0.25, driver: int | None = None) -> None:
        import psutil

        self.roots = [psutil.Process(pid) for pid in roots]
        self.interval = interval
        self.driver = driver
        self._peaks: dict[int, tuple[str, int]] = {}
        self._roles: dict[tuple[int, str], str] = {}  # by pid and name: spark-class execs java
        self.cost_s = 0.0
        self.rescan = max(1.0, interval)
        self._members: list[Any] = []
        self._scanned = float("-inf")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tree-watch", daemon=True)

    def __enter__(self) -> TreeWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def sample(self) -> None:
        """One look at every process (also called once by ``take`` so short cases count)."""
        import time

        import psutil

        now = time.monotonic()
        if now - self._scanned >= self.rescan:  # who is in the trees: a process-table scan
            self._members, self._scanned = tree(self.roots), now
        for p in self._members:
            try:
                if p.status() == psutil.STATUS_ZOMBIE:  # ended, not yet reaped: no memory
                    continue
                rss, name = p.memory_info().rss, p.name()
            except psutil.Error:
                continue
            role = self._roles.get((p.pid, name))
            if role is None:
                role = self._roles[(p.pid, name)] = role_of(p, self.driver)
            with self._lock:
                old = self._peaks.get(p.pid, (role, 0))[1]
                self._peaks[p.pid] = (role, max(old, rss))

    def _loop(self) -> None:
        import time

        while not self._stop.wait(self.interval):
            started = time.thread_time()
            self.sample()
            with self._lock:
                self.cost_s += time.thread_time() - started

    def take(self) -> dict[str, Any]:
        """Peaks since the last call: the largest process, and per role the largest and how many."""
        self._scanned = float("-inf")
        self.sample()
        with self._lock:
            peaks, self._peaks = self._peaks, {}
        return summarise(peaks)


def summarise(peaks: dict[int, tuple[str, int]]) -> dict[str, Any]:
    """``{"max_mib": .., "max_role": .., "roles": {role: [largest MiB, processes]}}``."""
    roles: dict[str, list[int]] = {}
    for role, rss in peaks.values():
        entry = roles.setdefault(role, [0, 0])
        entry[0] = max(entry[0], round(rss / MIB))
        entry[1] += 1
    top = max(roles.items(), key=lambda item: item[1][0], default=("none", [0, 0]))
    return {"max_mib": top[1][0], "max_role": top[0], "roles": roles}


def brief(peaks: dict[str, Any]) -> str:
    """``1234 MiB (driver JVM)``: a table cell."""
    return f"{peaks['max_mib']} MiB ({peaks['max_role']})"
