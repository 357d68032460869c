"""The cold command line: ``acel run --engine spark`` against ``acel run``, file to file (issue 31).

    python bench/spark_cold.py DATA.parquet [--master 'local[2]'] [--work DIR]

Each run is a fresh ``acel run QUERY --data DATA --out OUT.jsonl`` process (W0's keyed
query of ``bench/spark_warm.py``): JVM start, imports, reading and shutdown included.
Measured per run: wall time; CPU of the whole process tree, exact: this process becomes
a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``), so every descendant, orphaned
or not, is reaped into this process's ``RUSAGE_CHILDREN``; and peak RSS per process
(``spark_procs.TreeWatch``, every 0.1 s).  Outputs compared byte for byte.  Prints one
JSON object.  Run by ``bench/spark_scale.py --cold``; not part of the test suite.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from spark_procs import TreeWatch  # noqa: E402
from spark_warm import QUERY  # noqa: E402

ACEL = str(Path(sys.executable).with_name("acel"))
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphaned descendants (a JVM's Python workers) are reparented here, not to init."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return False
    return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def reap_all(timeout: float = 60.0) -> int:
    """Wait for every remaining descendant (now children of this process); how many there were."""
    reaped, deadline = 0, time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            time.sleep(0.05)
        else:
            reaped += 1
    raise RuntimeError(f"descendants still running {timeout:.0f} s after the run ended")


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(argv: list[str]) -> dict[str, Any]:
    """One ``acel run`` process tree: wall, tree CPU, peak RSS per process."""
    cpu = cpu_of_children()
    started = time.perf_counter()
    proc = subprocess.Popen([ACEL, "run", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with TreeWatch([proc.pid], interval=0.1, driver=proc.pid) as watch:
        err = proc.communicate()[1]
        wall = time.perf_counter() - started
        peaks = watch.take()
    late = reap_all()
    if proc.returncode != 0:
        raise RuntimeError(f"acel run {' '.join(argv)} failed:\n{err[-3000:]}")
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu_of_children() - cpu, 2), "peak_rss": peaks,
            "orphans_reaped": late}


def cold(data: Path, master: str, work: Path) -> dict[str, Any]:
    """The single process and a cold Spark run on ``data``, results compared."""
    query = work / "w0-keyed.acel"
    query.write_text(QUERY)
    single, spark = work / "cold-single.jsonl", work / "cold-spark.jsonl"
    out: dict[str, Any] = {"data": str(data), "query": QUERY, "master": master,
                           "subreaper": become_subreaper(), "load_before": os.getloadavg()}
    out["single"] = measure([str(query), "--data", str(data), "--out", str(single)])
    out["spark"] = measure([str(query), "--data", str(data), "--engine", "spark", "--master", master,
                            "--out", str(spark)])
    out["spark"]["equal_to_single"] = single.read_bytes() == spark.read_bytes()
    out["results"] = sum(1 for _ in single.open())
    out["wall_vs_single"] = round(out["spark"]["wall_s"] / out["single"]["wall_s"], 2)
    out["cpu_vs_single"] = round(out["spark"]["cpu_s"] / max(out["single"]["cpu_s"], 1e-9), 2)
    out["load_after"] = os.getloadavg()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="acel-cold-"))
    work.mkdir(parents=True, exist_ok=True)
    print(json.dumps(cold(Path(args.data), args.master, work)))


if __name__ == "__main__":
    main()
