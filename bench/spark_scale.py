"""Scaling on Spark: `local[1]` against `local[2]`, balanced keys and one hot key (issue 31).

    python bench/spark_scale.py [--events 1000000] [--cases 8,1000,skew]
                                [--masters 'local[1];local[2]'] [--repeat 2] [--out FILE]

The cases of ``bench/spark_warm.py`` (a warm session per master, W0 from Parquet,
``RETURN k, COUNT(*), SUM(b.v) … PARTITION BY k WITHIN 11 ON ts``, CPU of the whole
process tree, the single process beside it, results compared), plus ``skew``: eight
keys of which key 0 holds 90 % of the events (the rest spread evenly over the other
seven), so that one key's stream is most of the work.  The load average before and
after is recorded: on a shared machine wall time says little, CPU is the figure to read.
Not part of the test suite; results in papers/spark.md ("Scaling and skew").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import spark_warm  # noqa: E402

HOT_SHARE = 0.9
"""Share of the events on the hot key in the ``skew`` case."""


def write_skewed(path: Path, n: int, keys: int = 8, seed: int = 1) -> None:
    """W0 whose key 0 holds ``HOT_SHARE`` of the events, the others evenly the rest."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    kinds = np.array(["A", "B", "C"])[rng.choice(3, size=n, p=[0.2, 0.6, 0.2])]
    hot = rng.random(n) < HOT_SHARE
    key = np.where(hot, 0, rng.integers(1, keys, n))
    table = pa.table({
        "type": pa.array(kinds, pa.string()),
        "ts": pa.array(np.arange(n, dtype=np.int64)),
        "v": pa.array(rng.integers(0, 100, n, dtype=np.int64)),
        "k": pa.array(key.astype(np.int64)),
    })
    pq.write_table(table, path, row_group_size=1 << 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="1000000")
    parser.add_argument("--cases", default="8,1000,skew")
    parser.add_argument("--masters", default="local[1];local[2]", help="separated by ;")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--work", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--input", choices=["frame", "file"], default="frame",
                        help="Spark gets spark.read.parquet(F) (frame) or the path F (file: the "
                             "driver's copy, read by the tasks themselves)")
    args = parser.parse_args()
    os.environ[spark_warm.INPUT_ENV] = args.input  # the Spark child reads it
    work = Path(args.work or tempfile.mkdtemp(prefix="acel-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    files: list[tuple[int, str, str]] = []
    for n in (int(s) for s in args.events.split(",")):
        for case in args.cases.split(","):
            target = work / f"w0-{n}-{case}.parquet"
            if not target.exists():
                if case == "skew":
                    write_skewed(target, n)
                else:
                    spark_warm.write_w0(target, n, int(case))
            files.append((n, case, str(target)))
    report: dict[str, Any] = {"input": args.input, "query": spark_warm.QUERY, "load_before": os.getloadavg(),
                              "cpus": os.cpu_count(), "single": {}, "spark": {}}
    for n, case, name in files:
        answer, wall, cpu = spark_warm._child(["--single-child", name])
        report["single"][f"{n}/{case}"] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 3), **answer}
        print("single", n, case, report["single"][f"{n}/{case}"], flush=True)
    for master in args.masters.split(";"):
        answers, wall, _ = spark_warm._child(
            ["--spark-child", master, str(args.repeat), *[p for _, _, p in files]])
        runs = {}
        for (n, case, _path), got in zip(files, answers):
            single = report["single"][f"{n}/{case}"]
            got["cpu_us_per_event"] = round(got["cpu_s"] / n * 1e6, 2)
            got["cpu_vs_single"] = round(got["cpu_s"] / single["cpu_s"], 2)
            got["equal_to_single"] = got["digest"] == single["digest"] and got["rows"] == single["rows"]
            runs[f"{n}/{case}"] = got
            print(master, n, case, got, flush=True)
        report["spark"][master] = {"session_process_wall_s": round(wall, 2), "runs": runs}
    report["load_after"] = os.getloadavg()
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
