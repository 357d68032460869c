"""A JSON Lines / CSV file through ``acel run --engine spark``: the driver's Parquet copy
against the executors' data source (issue 31), cold command-line runs, in one run.

    python bench/spark_file_read.py [--events 1000000] [--keys 8] [--formats jsonl,csv]
                                    [--master 'local[2]'] [--work DIR] [--out FILE]

W0 with a key ``k`` (``bench/spark_warm.py``'s stream) is written as JSON Lines and
CSV.  Each case is one ``acel run`` process: ``--engine optimized`` (the single
process), and ``--engine spark`` with ``ACEL_SPARK_FILE_READ=copy`` (the driver
reads the file and writes Parquet) or ``source`` (the driver checks it, the
executors read it: ``spark_backend/datasource.py``).  Wall time and the CPU of the
whole reaped process tree (driver, JVM, Python workers: the run waits for its
JVM, ``session.end_session``), and whether the output equals the single
process's byte for byte.  Not part of the test suite; results in papers/spark.md.
"""

from __future__ import annotations

import argparse
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

from spark_warm import QUERY, write_w0  # noqa: E402

ACEL = str(Path(sys.executable).with_name("acel"))


def write_files(work: Path, n: int, keys: int, formats: list[str]) -> dict[str, Path]:
    """W0 as Parquet, then as each of ``formats`` (numbers only: one line per event)."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    parquet = work / f"w0-{n}-{keys}.parquet"
    if not parquet.exists():
        write_w0(parquet, n, keys)
    table = pq.read_table(parquet)
    out: dict[str, Path] = {}
    for fmt in formats:
        path = work / f"w0-{n}-{keys}.{fmt}"
        if not path.exists():
            if fmt == "csv":
                pcsv.write_csv(table, path, pcsv.WriteOptions(quoting_style="none"))
            else:
                with open(path, "w", encoding="utf-8") as handle:
                    for batch in table.to_batches(1 << 16):
                        cols = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
                        for t, ts, v, k in zip(*cols):
                            handle.write(f'{{"type":"{t}","ts":{ts},"v":{v},"k":{k}}}\n')
        out[fmt] = path
    return out


def timed(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One process: wall, CPU of its reaped tree, the load average before."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run([ACEL, *args], capture_output=True, text=True, env={**os.environ, **env},
                          check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"acel {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_before": round(load, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=8)
    parser.add_argument("--formats", default="jsonl,csv")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="acel-file-read-"))
    work.mkdir(parents=True, exist_ok=True)
    files = write_files(work, args.events, args.keys, args.formats.split(","))
    rows = []
    for fmt, path in files.items():
        single_out = work / f"single-{fmt}.jsonl"
        single = timed(["run", QUERY, "--data", str(path), "--out", str(single_out)], {})
        rows.append({"format": fmt, "engine": "single", **single})
        print(json.dumps(rows[-1]), flush=True)
        for mode in ("copy", "source"):
            out = work / f"spark-{mode}-{fmt}.jsonl"
            got = timed(["run", QUERY, "--data", str(path), "--engine", "spark", "--master",
                         args.master, "--out", str(out)], {"ACEL_SPARK_FILE_READ": mode})
            same = out.read_bytes() == single_out.read_bytes()
            rows.append({"format": fmt, "engine": f"spark {mode}", **got, "same": same})
            print(json.dumps(rows[-1]), flush=True)
    report = {"events": args.events, "keys": args.keys, "master": args.master,
              "cpus": os.cpu_count(), "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
