"""Structured Streaming throughput on two cores (issue 31: target 10^5 events/s).

    python bench/spark_streaming.py [--events 1000000] [--files 10] [--keys 8]
                                    [--formats jsonl,parquet] [--master 'local[2]']
                                    [--conf KEY=VALUE ...]
                                    [--work DIR] [--out FILE]

W0's stream (types A/B/C with probabilities 0.2/0.6/0.2, ``t`` the position, ``v``
in 0..99, a key ``k``) is written as ``--files`` files in a folder per format (JSON
Lines, the Kafka-like text case; Parquet, where the JVM's parsing is cheap), each
event with its position ``pos``, then an end row.  One warm session runs
``streaming.start`` on each folder with ``once`` (``Trigger.AvailableNow``: every
file, then stop), one file a micro-batch, the query ``A ; (B)+ ; C ; NOT A
PARTITION BY k WITHIN 11 ON t`` (the trailing NOT makes results wait for the
watermark); a warm-up run on a small folder first.  Reported per format: events/s
over the whole run (wall, start to stop), the CPU of the process tree split into the
driver, the JVM and the Python workers (``psutil``, live processes and the ones
already reaped), the micro-batches' summed phases (``durationMs``), and whether the
results equal the single process's on the same events.  The single process's CPU
on the same events is reported beside it.  Not part of the test suite; results in
papers/spark.md ("Streaming throughput").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

QUERY = "A AS a ; (B AS b)+ ; C AS c ; NOT A PARTITION BY k WITHIN 11 ON t"
COLUMNS = "type string, t long, v long, k long, pos long"


def w0(n: int, keys: int, seed: int = 1) -> dict[str, Any]:
    """W0's columns (numpy arrays) with a key and the positions."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return {
        "type": np.array(["A", "B", "C"])[rng.choice(3, size=n, p=[0.2, 0.6, 0.2])],
        "t": np.arange(n, dtype=np.int64),
        "v": rng.integers(0, 100, n, dtype=np.int64),
        "k": rng.integers(0, keys, n, dtype=np.int64),
        "pos": np.arange(n, dtype=np.int64),
    }


def write_folder(folder: Path, n: int, files: int, keys: int, fmt: str = "jsonl") -> None:
    """W0 in ``files`` files of consecutive events, then the end row's file (Spark's file
    order: modification time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = w0(n, keys)
    folder.mkdir(parents=True, exist_ok=True)
    size = -(-n // files)
    for f in range(files + 1):
        lo, hi = f * size, min(n, (f + 1) * size)
        path = folder / f"part-{f:04d}.{fmt}"
        if f == files:  # the end row
            part = {"type": ["#end"], "t": [n + 100], "v": [None], "k": [None], "pos": [n]}
        else:
            part = {name: column[lo:hi] for name, column in data.items()}
        if fmt == "parquet":
            table = pa.table({name: pa.array(part[name], pa.string() if name == "type" else pa.int64())
                              for name in ("type", "t", "v", "k", "pos")})
            pq.write_table(table, path)
        else:
            with open(path, "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps({c: (None if part[c][i] is None else
                                                  str(part[c][i]) if c == "type" else int(part[c][i]))
                                              for c in part}) + "\n"
                                  for i in range(len(part["type"])))
        os.utime(path, (1_000_000_000 + f, 1_000_000_000 + f))


def cpu_split(me: Any) -> dict[str, float]:
    """CPU seconds of the driver, the JVM and the Python workers (live or reaped)."""
    import psutil

    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            name = p.name()
        except psutil.Error:
            continue
        total = t.user + t.system + t.children_user + t.children_system
        out["driver" if p.pid == me.pid else "jvm" if "java" in name else "workers"] += total
    return out


def run_stream(spark: Any, folder: Path, fmt: str, work: Path, name: str) -> dict[str, Any]:
    """One stream over ``folder`` to its end: wall seconds, results, summed batch phases."""
    from acel.spark_backend.streaming import plan_stream, read_results, start

    from acel.lang.schema import Schema

    attrs = ["t", "v", "k", "pos"]
    schema = Schema.of({t: attrs for t in "ABC"}, {a: "int" for a in attrs})
    reader = spark.readStream.schema(COLUMNS).option("maxFilesPerTrigger", 1)
    source = reader.parquet(str(folder)) if fmt == "parquet" else reader.json(str(folder))
    planned = plan_stream(QUERY, source, schema=schema, time_col="t", delay=0)
    out, ck = work / f"{name}.out", work / f"{name}.ck"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(ck, ignore_errors=True)
    started = time.perf_counter()
    running = start(planned, str(out), checkpoint=str(ck), once=True)
    running.awaitTermination()
    wall = time.perf_counter() - started
    phases: dict[str, int] = {}
    batches = running.recentProgress
    for p in batches:
        for phase, ms in (p.get("durationMs") or {}).items():
            phases[phase] = phases.get(phase, 0) + int(ms)
    return {"wall": wall, "results": read_results(planned, str(out)), "batches": len(batches),
            "phases_ms": phases}


def single(folder: Path, fmt: str) -> tuple[list[Any], float]:
    """Results of the single process on the folder's events (the end row left out) and
    its CPU seconds for the run (reading excluded)."""
    import acel
    from acel.io import open_events

    rows = []
    for path in sorted(folder.glob(f"part-*.{fmt}")):
        rows.extend(r for r in open_events(str(path)) if r["type"] != "#end")
    cpu = time.process_time()
    found = list(acel.run(QUERY, rows, time_col="t"))
    return found, time.process_time() - cpu


def main() -> None:
    import psutil

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--keys", type=int, default=8)
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--conf", action="append", default=[],
                        help="a Spark setting KEY=VALUE for the session (repeatable)")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="acel-stream-bench-"))
    formats = args.formats.split(",")
    folders = {}
    for fmt in formats:
        small, big = work / f"small-{fmt}", work / f"in-{args.events}-{args.files}-{args.keys}-{fmt}"
        if not small.exists():
            write_folder(small, 20_000, 2, args.keys, fmt)
        if not big.exists():
            write_folder(big, args.events, args.files, args.keys, fmt)
        folders[fmt] = (small, big)
    from acel.spark_backend import get_session

    extra = dict(c.split("=", 1) for c in args.conf)
    spark = get_session(args.master, extra=extra or None)
    me = psutil.Process()
    report: dict[str, Any] = {"events": args.events, "files": args.files, "keys": args.keys,
                              "master": args.master, "conf": extra}
    expected, single_cpu = single(folders[formats[0]][1], formats[0])
    report["single_cpu_us_per_event"] = round(single_cpu / args.events * 1e6, 1)
    for fmt in formats:
        small, big = folders[fmt]
        run_stream(spark, small, fmt, work, f"warm-{fmt}")
        before, load = cpu_split(me), os.getloadavg()[0]
        got = run_stream(spark, big, fmt, work, f"run-{fmt}")
        after = cpu_split(me)
        cpu = {part: after[part] - before[part] for part in after}
        total = sum(cpu.values())
        report[fmt] = {
            "wall_s": round(got["wall"], 2), "events_per_s": round(args.events / got["wall"]),
            "tree_cpu_s": round(total, 2), "cpu_us_per_event": round(total / args.events * 1e6, 1),
            "cpu_s": {part: round(s, 2) for part, s in cpu.items()},
            "batches": got["batches"], "phases_ms": got["phases_ms"],
            "load_before": round(load, 1), "results": len(got["results"]),
            "same_as_single": sorted(map(repr, got["results"])) == sorted(map(repr, expected)),
        }
        print(json.dumps({fmt: report[fmt]}), flush=True)
    from acel.spark_backend.session import end_session

    end_session(spark)
    print(json.dumps(report), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
