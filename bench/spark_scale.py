"""Scaling on Spark: `local[1]`, `local[2]`, standalone clusters, balanced keys and one hot key (issue 31).

    python bench/spark_scale.py [--events 1000000] [--cases 8,1000,skew]
                                [--masters 'local[1],local[2],cluster1,cluster2'] [--repeat 2]
                                [--cold] [--huge 100000000] [--out FILE] [--markdown FILE]

Every figure of issue 31 but streaming in one run (papers/spark.md, "One run for every
figure of issue 31"):

    .venv/bin/python bench/spark_scale.py --input file --events 10000000 --repeat 1 \
        --masters 'local[1],local[2],cluster1,cluster2' --cold --huge 100000000 \
        --out issue31.json --markdown issue31.md

The cases of ``bench/spark_warm.py`` (a warm session per master, W0 from Parquet,
``RETURN k, COUNT(*), SUM(b.v) … PARTITION BY k WITHIN 11 ON ts``, CPU of the whole
process tree, the single process beside it, results compared, peak RSS of every process
of the tree by role), plus ``skew``: eight
keys of which key 0 holds 90 % of the events (the rest spread evenly over the other
seven), so that one key's stream is most of the work.  ``clusterN``: a standalone
cluster of N one-core workers on this machine (``bench/spark_clusters.py``), its daemons'
and executors' CPU and memory counted.  ``--cold``: a fresh ``acel run --engine spark``
against a fresh ``acel run`` on the 8-key file of the largest ``--events``
(``bench/spark_cold.py``).  ``--huge N``: N events, 8 keys, single process against
``--huge-masters`` (rows compared, peak RSS per process).  The load average before and
after is recorded: on a shared machine wall time says little, CPU is the figure to read.
Not part of the test suite; results in papers/spark.md ("Scaling and skew").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import spark_warm  # noqa: E402
from spark_clusters import master_env, split_masters  # noqa: E402
from spark_procs import brief  # noqa: E402

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


def write_w0_chunked(path: Path, n: int, keys: int, chunk: int = 10_000_000, seed: int = 1) -> None:
    """W0 as ``spark_warm.write_w0`` writes it, generated ``chunk`` events at a time (10^8
    events in one table would take ~5 GB here); ``ts`` keeps counting across chunks."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for index, start in enumerate(range(0, n, chunk)):
            size = min(chunk, n - start)
            rng = np.random.default_rng([seed, index])
            table = pa.table({
                "type": pa.array(np.array(["A", "B", "C"])[rng.choice(3, size=size, p=[0.2, 0.6, 0.2])]),
                "ts": pa.array(np.arange(start, start + size, dtype=np.int64)),
                "v": pa.array(rng.integers(0, 100, size, dtype=np.int64)),
                "k": pa.array(rng.integers(0, keys, size, dtype=np.int64)),
            })
            writer = writer or pq.ParquetWriter(path, table.schema)
            writer.write_table(table, row_group_size=1 << 20)
    finally:
        if writer is not None:
            writer.close()


def data_file(work: Path, n: int, case: str) -> str:
    """The Parquet file of one case, written once per work folder."""
    target = work / f"w0-{n}-{case}.parquet"
    if not target.exists():
        if case == "skew":
            write_skewed(target, n)
        elif n > 20_000_000:
            write_w0_chunked(target, n, int(case))
        else:
            spark_warm.write_w0(target, n, int(case))
    return str(target)


def run_single(files: list[tuple[int, str, str]]) -> dict[str, Any]:
    """The single process on every file (a fresh process each)."""
    out = {}
    for n, case, name in files:
        answer, wall, cpu = spark_warm._child(["--single-child", name])
        out[f"{n}/{case}"] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 3), **answer}
        print("single", n, case, out[f"{n}/{case}"], flush=True)
    return out


def run_master(master: str, files: list[tuple[int, str, str]], single: dict[str, Any], repeat: int,
               work: Path) -> dict[str, Any]:
    """One warm session on ``master`` (a cluster started and stopped around it), every file."""
    with master_env(master, work) as (url, env):
        answers, wall, _ = spark_warm._child(
            ["--spark-child", url, str(repeat), *[p for _, _, p in files]], env=env)
    runs = {}
    for (n, case, _path), got in zip(files, answers):
        one = single[f"{n}/{case}"]
        got["cpu_us_per_event"] = round(got["cpu_s"] / n * 1e6, 2)
        got["cpu_vs_single"] = round(got["cpu_s"] / one["cpu_s"], 2)
        got["equal_to_single"] = got["digest"] == one["digest"] and got["rows"] == one["rows"]
        runs[f"{n}/{case}"] = got
        print(master, n, case, {k: v for k, v in got.items() if k != "peak_rss"}, brief(got["peak_rss"]),
              flush=True)
    return {"session_process_wall_s": round(wall, 2), "runs": runs}


def throughput_ratios(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per case, ``local[2]`` over ``local[1]`` and ``cluster2`` over ``cluster1``: wall of one ÷ wall
    of two (the same events, so the throughput ratio)."""
    spark = report["spark"]
    out: dict[str, dict[str, float]] = {}
    for one, two in (("local[1]", "local[2]"), ("cluster1", "cluster2")):
        if one in spark and two in spark:
            out[f"{two}/{one}"] = {case: round(spark[one]["runs"][case]["wall_s"] / run["wall_s"], 2)
                                   for case, run in spark[two]["runs"].items()}
    return out


def cold_case(work: Path, data: str, master: str) -> dict[str, Any]:
    """``bench/spark_cold.py`` in its own process (it makes itself a subreaper)."""
    import subprocess

    done = subprocess.run([sys.executable, str(HERE / "spark_cold.py"), data, "--master", master,
                           "--work", str(work)], capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"the cold case failed:\n{done.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print("cold", {k: v for k, v in answer.items() if k not in ("single", "spark")}, flush=True)
    return answer


def attempt(errors: dict[str, str], name: str, step: Callable[..., dict[str, Any]],
            *args: Any) -> dict[str, Any] | None:
    """One part of the bench; a failure is recorded (its last lines) and the rest still runs:
    an hour's run should not lose its other figures to one case."""
    try:
        return step(*args)
    except Exception as error:  # noqa: BLE001 - any failure of a part is reported, not raised
        errors[name] = "\n".join(str(error).splitlines()[-12:])
        print(f"{name} FAILED:", errors[name], file=sys.stderr, flush=True)
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="1000000")
    parser.add_argument("--cases", default="8,1000,skew")
    parser.add_argument("--masters", default="local[1],local[2]",
                        help="local[N], clusterN (N one-core standalone workers); commas or ;")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--work", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--markdown", default=None, help="also write the tables to this file")
    parser.add_argument("--input", choices=["frame", "file"], default="frame",
                        help="Spark gets spark.read.parquet(F) (frame) or the path F (file: the "
                             "driver's copy, read by the tasks themselves)")
    parser.add_argument("--cold", action="store_true",
                        help="also a cold acel run --engine spark against acel run (8 keys)")
    parser.add_argument("--cold-master", default="local[2]")
    parser.add_argument("--huge", type=int, default=0, help="also N events, 8 keys (e.g. 100000000)")
    parser.add_argument("--huge-masters", default="local[2]")
    args = parser.parse_args()
    started = time.perf_counter()
    os.environ[spark_warm.INPUT_ENV] = args.input  # the Spark child reads it
    work = Path(args.work or tempfile.mkdtemp(prefix="acel-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.events.split(",")]
    files = [(n, case, data_file(work, n, case)) for n in sizes for case in args.cases.split(",")]
    report: dict[str, Any] = {"input": args.input, "query": spark_warm.QUERY, "load_before": os.getloadavg(),
                              "cpus": os.cpu_count(), "repeat": args.repeat, "single": run_single(files),
                              "spark": {}}
    errors: dict[str, str] = {}
    for master in split_masters(args.masters):
        done = attempt(errors, master, run_master, master, files, report["single"], args.repeat, work)
        if done is not None:
            report["spark"][master] = done
    report["throughput_ratios"] = throughput_ratios(report)
    if args.huge:
        huge = [(args.huge, "8", data_file(work, args.huge, "8"))]
        single = attempt(errors, f"{args.huge} events, one process", run_single, huge) or {}
        report["huge"] = {"single": single, "spark": {}}
        for master in split_masters(args.huge_masters) if single else []:
            done = attempt(errors, f"{args.huge} events on {master}", run_master, master, huge, single, 1, work)
            if done is not None:
                report["huge"]["spark"][master] = done
    if args.cold:
        done = attempt(errors, "cold", cold_case, work, data_file(work, max(sizes), "8"), args.cold_master)
        if done is not None:
            report["cold"] = done
    report["errors"] = errors
    report["load_after"] = os.getloadavg()
    report["bench_wall_s"] = round(time.perf_counter() - started)  # data files included
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    from spark_tables import markdown

    tables = markdown(report)
    if args.markdown:
        Path(args.markdown).write_text(tables + "\n")
    print(tables)


if __name__ == "__main__":
    main()
