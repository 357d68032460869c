"""A warm Spark session against the single process on W0 from Parquet (issue 31), in one run.

    python bench/spark_warm.py [--events 1000000,10000000] [--keys 8,1000] [--repeat 2]
                               [--masters 'local[1];local[2]'] [--work DIR] [--out FILE]

W0 (``bench/pipeline.py``'s stream: types A/B/C with probabilities 0.2/0.6/0.2,
``ts`` the position, ``v`` in 0..99) with a key ``k`` of ``--keys`` values is
written to Parquet once per size.  The query is W0's trend aggregation per key,
``RETURN k, COUNT(*), SUM(b.v) … PARTITION BY k WITHIN 11 ON ts``.

* **Single process**: ``acel.run`` on the Parquet file in a fresh Python process;
  wall and CPU of that whole process (imports and reading included).
* **Spark, warm**: one process per master starts one session, warms it up on a small
  file (the Python workers start), then per size and key count builds
  ``acel.spark.run(spark.read.parquet(…), query, schema=…)`` (no job may start:
  counted with a job group) and collects it, every case ``--repeat`` times (the last
  reported: the JVM compiles each new plan's code); wall of build + collect, and the CPU
  of the whole process tree (driver, JVM, Python workers; ``psutil``, live
  processes and the ones already reaped) over the same span.

Both report CPU per event, and whether Spark's rows equal the single process's.
Not part of the test suite; results in papers/spark.md ("Warm session").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DAEMONS_ENV = "ACEL_BENCH_DAEMONS"
"""Comma-separated pids of a standalone cluster's daemons (``bench/spark_scale.py``):
their trees (executors, their Python workers) count in the Spark child's CPU and memory."""

INPUT_ENV = "ACEL_BENCH_INPUT"
"""``frame`` or ``file``: what the Spark child hands ``acel.spark.run`` (``--input``)."""

QUERY = "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON ts"


def write_w0(path: Path, n: int, keys: int, seed: int = 1) -> None:
    """W0 with a key ``k`` as Parquet (numpy-generated, so 10^7 events take seconds)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    kinds = np.array(["A", "B", "C"])[rng.choice(3, size=n, p=[0.2, 0.6, 0.2])]
    table = pa.table({
        "type": pa.array(kinds, pa.string()),
        "ts": pa.array(np.arange(n, dtype=np.int64)),
        "v": pa.array(rng.integers(0, 100, n, dtype=np.int64)),
        "k": pa.array(rng.integers(0, keys, n, dtype=np.int64)),
    })
    pq.write_table(table, path, row_group_size=1 << 20)


def digest(rows: list[tuple[int, ...]]) -> str:
    import hashlib

    return hashlib.sha256(repr(sorted(rows)).encode()).hexdigest()[:16]


# ------------------------------------------------------------------ children


def single_child(path: str) -> None:
    """The single process: ``acel.run`` on the Parquet file (this whole process timed)."""
    import resource

    import acel

    rows = [tuple(int(v) for _, v in r.values)  # type: ignore[union-attr, arg-type]
            for r in acel.run(QUERY, path)]  # RETURN rows; k is an item
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"rows": len(rows), "digest": digest(rows),
                      "self_cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
                      "peak_rss_mib": round(usage.ru_maxrss / 1024)}))  # KiB on Linux


def spark_child(master: str, repeat: int, files: list[str]) -> None:
    """One warm session: every file in turn, ``repeat`` times, timed from build to collected
    rows (the last run of each is reported; the earlier ones' figures beside it)."""
    import psutil
    from spark_procs import TreeWatch
    from spark_procs import tree_cpu as trees_cpu

    import acel
    import acel.spark

    me = psutil.Process()
    daemons = [psutil.Process(int(p)) for p in os.environ.get(DAEMONS_ENV, "").split(",") if p]
    roots = [me, *daemons]
    watch = TreeWatch([p.pid for p in roots], driver=me.pid).__enter__()
    spark = acel.spark.session(master)
    if master.startswith("spark://"):
        # a standalone cluster on this machine: its executors see the driver's files, so
        # they read the Parquet file in place as local[N]'s tasks do (papers/spark.md)
        spark.conf.set("spark.acel.sharedFiles", "true")
    context = spark.sparkContext
    schema = acel.Schema.of({t: ["ts", "v", "k"] for t in "ABC"}, {"ts": "int", "v": "int", "k": "int"})
    warm = files[0] + ".warm.parquet"
    import pyarrow.parquet as pq

    # the first row group only: reading a 10^8-event file whole would inflate the driver's RSS
    pq.write_table(pq.ParquetFile(files[0]).read_row_group(0).slice(0, 5000), warm)
    acel.spark.run(QUERY, spark.read.parquet(warm), schema=schema).collect()
    out: list[dict[str, Any]] = []
    for index, path in enumerate(files * repeat):
        group = f"acel-warm-{index}"
        time.sleep(1.0)  # let the warm-up's or the last run's tasks settle
        watch.take()  # peaks of this case only
        cpu, cost, started = trees_cpu(roots), watch.cost_s, time.perf_counter()
        as_file = os.environ.get(INPUT_ENV) == "file"
        # a frame: Spark reads the footer (a job of the user's); a file: the driver copies it
        data = path if as_file else spark.read.parquet(path)
        context.setJobGroup(group, group)
        frame = acel.spark.run(QUERY, data, schema=schema)
        jobs = len(context.statusTracker().getJobIdsForGroup(group))
        context.setJobGroup(group + "-action", group)
        got = frame.collect()
        wall = time.perf_counter() - started
        sampler = watch.cost_s - cost  # the memory sampler's own CPU, left out
        used = trees_cpu(roots) - cpu - sampler
        peaks = watch.take()
        rows = [tuple(int(v) for v in r) for r in got]
        out.append({"file": path, "wall_s": round(wall, 2), "cpu_s": round(used, 2),
                    "jobs_before_action": jobs, "rows": len(rows), "digest": digest(rows),
                    "peak_rss": peaks, "sampler_cpu_s": round(sampler, 3)})
        print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    last = out[-len(files):]
    for run in last:
        run["earlier"] = [(r["wall_s"], r["cpu_s"]) for r in out[:-len(files)] if r["file"] == run["file"]]
    print(json.dumps(last))
    spark.stop()
    watch.__exit__()


# ------------------------------------------------------------------ driver


def _child(args: list[str], env: dict[str, str] | None = None) -> tuple[Any, float, float]:
    """A child of this script: its JSON answer, wall and CPU (its whole reaped tree)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          check=False, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{args[0]} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout.strip().splitlines()[-1]), wall, cpu


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--single-child":
        single_child(sys.argv[2])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--spark-child":
        spark_child(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="1000000")
    parser.add_argument("--keys", default="8,1000")
    parser.add_argument("--masters", default="local[1];local[2]", help="separated by ;")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each case in the session")
    parser.add_argument("--work", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--input", choices=["frame", "file"], default="frame",
                        help="Spark gets spark.read.parquet(F) (frame) or the path F (file: the "
                             "driver's copy, read by the tasks themselves)")
    args = parser.parse_args()
    os.environ[INPUT_ENV] = args.input  # the Spark child reads it
    work = Path(args.work or tempfile.mkdtemp(prefix="acel-warm-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.events.split(",")]
    keys = [int(k) for k in args.keys.split(",")]
    files: list[tuple[int, int, str]] = []
    for n in sizes:
        for k in keys:
            target = work / f"w0-{n}-{k}.parquet"
            if not target.exists():
                write_w0(target, n, k)
            files.append((n, k, str(target)))
    report: dict[str, Any] = {"input": args.input, "query": QUERY, "load_before": os.getloadavg(), "cpus": os.cpu_count(),
                              "single": {}, "spark": {}}
    for n, k, name in files:
        answer, wall, cpu = _child(["--single-child", name])
        report["single"][f"{n}/{k}"] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 3),
                                        "cpu_us_per_event": round(cpu / n * 1e6, 2), **answer}
        print("single", n, k, report["single"][f"{n}/{k}"], flush=True)
    for master in args.masters.split(";"):
        answers, wall, _cpu = _child(["--spark-child", master, str(args.repeat), *[p for _, _, p in files]])
        runs = {}
        for (n, k, _path), got in zip(files, answers):
            single = report["single"][f"{n}/{k}"]
            got["cpu_us_per_event"] = round(got["cpu_s"] / n * 1e6, 2)
            got["cpu_vs_single"] = round(got["cpu_s"] / single["cpu_s"], 2)
            got["wall_vs_single"] = round(got["wall_s"] / single["wall_s"], 2)
            got["equal_to_single"] = got["digest"] == single["digest"] and got["rows"] == single["rows"]
            runs[f"{n}/{k}"] = got
            print(master, n, k, got, flush=True)
        # (the JVM is not this script's child: its CPU is in the runs' tree figures only)
        report["spark"][master] = {"session_process_wall_s": round(wall, 2), "runs": runs}
    report["load_after"] = os.getloadavg()
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
