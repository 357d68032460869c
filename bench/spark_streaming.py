"""Structured Streaming throughput on two cores (issue 31: target 10^5 events/s).

    python bench/spark_streaming.py [--events 1000000] [--files 10] [--keys 8]
                                    [--master 'local[2]'] [--work DIR] [--out FILE]

W0's stream (types A/B/C with probabilities 0.2/0.6/0.2, ``t`` the position, ``v``
in 0..99, a key ``k``) is written as ``--files`` JSON Lines files in a folder, each
event with its position ``pos``.  One warm session runs ``streaming.start`` on the
folder with ``once`` (``Trigger.AvailableNow``: every file, then stop), one file a
micro-batch, the query ``A ; (B)+ ; C PARTITION BY k WITHIN 11 ON t`` with a
trailing NOT (``NOT C``) so that results wait for the watermark; a warm-up run on
a small folder first.  Reported: events/s over the whole run (wall, start to
stop), the CPU of the process tree (this process, the JVM, Python workers; psutil)
and whether the results equal the single process's on the same events.  Not part
of the test suite; results in papers/spark.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from spark_warm import tree_cpu  # noqa: E402

QUERY = "A AS a ; (B AS b)+ ; C AS c ; NOT A PARTITION BY k WITHIN 11 ON t"
COLUMNS = "type string, t long, v long, k long, pos long"


def write_folder(folder: Path, n: int, files: int, keys: int, seed: int = 1) -> None:
    """W0 in ``files`` JSON Lines files of consecutive events (Spark's file order: mtime)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    kinds = np.array(["A", "B", "C"])[rng.choice(3, size=n, p=[0.2, 0.6, 0.2])]
    values = rng.integers(0, 100, n)
    key = rng.integers(0, keys, n)
    folder.mkdir(parents=True, exist_ok=True)
    size = -(-n // files)
    for f in range(files):
        lo, hi = f * size, min(n, (f + 1) * size)
        path = folder / f"part-{f:04d}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(
                f'{{"type":"{kinds[i]}","t":{i},"v":{values[i]},"k":{key[i]},"pos":{i}}}\n'
                for i in range(lo, hi))
        os.utime(path, (1_000_000_000 + f, 1_000_000_000 + f))
    end = folder / f"part-{files:04d}.jsonl"
    end.write_text(json.dumps({"type": "#end", "t": n + 100, "pos": n}) + "\n")
    os.utime(end, (1_000_000_000 + files, 1_000_000_000 + files))


def run_stream(spark: Any, folder: Path, work: Path, name: str) -> tuple[float, int]:
    """One stream over ``folder`` to its end: wall seconds and results written."""
    from acel.spark_backend.streaming import plan_stream, read_results, start

    from acel.lang.schema import Schema

    attrs = ["t", "v", "k", "pos"]
    schema = Schema.of({t: attrs for t in "ABC"}, {a: "int" for a in attrs})
    source = spark.readStream.schema(COLUMNS).option("maxFilesPerTrigger", 1).json(str(folder))
    planned = plan_stream(QUERY, source, schema=schema, time_col="t", delay=0)
    out, ck = work / f"{name}.out", work / f"{name}.ck"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(ck, ignore_errors=True)
    started = time.perf_counter()
    running = start(planned, str(out), checkpoint=str(ck), once=True)
    running.awaitTermination()
    wall = time.perf_counter() - started
    return wall, len(read_results(planned, str(out)))


def single_count(folder: Path) -> int:
    """Results of the single process on the folder's events (the end row left out)."""
    import acel
    from acel.io import open_events

    rows = []
    for path in sorted(folder.glob("part-*.jsonl")):
        rows.extend(r for r in open_events(str(path)) if r["type"] != "#end")
    return len(list(acel.run(QUERY, rows, time_col="t")))


def main() -> None:
    import psutil

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--keys", type=int, default=8)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="acel-stream-bench-"))
    small, big = work / "small", work / f"in-{args.events}-{args.files}-{args.keys}"
    if not small.exists():
        write_folder(small, 20_000, 2, args.keys)
    if not big.exists():
        write_folder(big, args.events, args.files, args.keys)
    from acel.spark_backend import get_session

    spark = get_session(args.master)
    me = psutil.Process()
    run_stream(spark, small, work, "warm")
    cpu0, load = tree_cpu(me), os.getloadavg()[0]
    wall, found = run_stream(spark, big, work, "run")
    cpu = tree_cpu(me) - cpu0
    report = {"events": args.events, "files": args.files, "keys": args.keys, "master": args.master,
              "wall_s": round(wall, 2), "events_per_s": round(args.events / wall),
              "tree_cpu_s": round(cpu, 2), "load_before": round(load, 1), "results": found}
    from acel.spark_backend.session import end_session

    end_session(spark)
    report["same_count_as_single"] = found == single_count(big)
    print(json.dumps(report), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
