"""Structured Streaming throughput on two cores (issue 31: target 10^5 events/s).

    python bench/spark_streaming.py [--events 1000000] [--files 10] [--keys 8]
                                    [--formats jsonl,parquet] [--queries match,return]
                                    [--master 'local[2]'] [--conf KEY=VALUE ...]
                                    [--worker-only] [--work DIR] [--out FILE]

W0's stream (types A/B/C with probabilities 0.2/0.6/0.2, ``t`` the position, ``v``
in 0..99, a key ``k``) is written as ``--files`` files in a folder per format (JSON
Lines, the Kafka-like text case; Parquet, where the JVM's parsing is cheap), each
event with its position ``pos``, then an end row.  One warm session runs
``streaming.start`` on each folder with ``once`` (``Trigger.AvailableNow``: every
file, then stop), one file a micro-batch, for each of two queries (``--queries``):
``match``, ``A ; (B)+ ; C ; NOT A PARTITION BY k WITHIN 11 ON t`` (the trailing NOT
makes results wait for the watermark; the pure-Python engine), and ``return``, issue
31's headline W0 aggregation ``RETURN k, COUNT(*), SUM(b.v) PATTERN A ; (B)+ ; C
PARTITION BY k WITHIN 11 ON t`` (bench/spark_warm.py's query; the native core, each
key's runner restored from the state store every micro-batch); a warm-up run on a
small folder first.  Reported per format: events/s
over the whole run (wall, start to stop), the CPU of the process tree split into the
driver, the JVM and the Python workers (``psutil``, live processes and the ones
already reaped), the micro-batches' summed phases (``durationMs``), and whether the
results equal the single process's on the same events.  The single process's CPU
on the same events is reported beside it.  ``--worker-only``: no Spark; the per-key
step of the Python workers (``KeyStream``: restore, step, save) driven by the same
micro-batches and watermarks in this process, its CPU per event, the runner restored
on the native core against the pure-Python restore of before (interleaved A/B).  Not
part of the test suite; results in papers/spark.md ("Streaming throughput").
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

QUERIES = {
    "match": "A AS a ; (B AS b)+ ; C AS c ; NOT A PARTITION BY k WITHIN 11 ON t",
    "return": "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON t",
}
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


def _schema() -> Any:
    from acel.lang.schema import Schema

    attrs = ["t", "v", "k", "pos"]
    return Schema.of({t: attrs for t in "ABC"}, {a: "int" for a in attrs})


def run_stream(spark: Any, folder: Path, fmt: str, work: Path, name: str, query: str) -> dict[str, Any]:
    """One stream over ``folder`` to its end: wall seconds, results, summed batch phases."""
    from acel.spark_backend.streaming import plan_stream, read_results, start

    schema = _schema()
    reader = spark.readStream.schema(COLUMNS).option("maxFilesPerTrigger", 1)
    source = reader.parquet(str(folder)) if fmt == "parquet" else reader.json(str(folder))
    planned = plan_stream(query, source, schema=schema, time_col="t", delay=0)
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


def single(folder: Path, fmt: str, query: str) -> tuple[list[Any], float]:
    """Results of the single process on the folder's events (the end row left out) and
    its CPU seconds for the run (reading excluded)."""
    import acel
    from acel.io import open_events

    rows = []
    for path in sorted(folder.glob(f"part-*.{fmt}")):
        rows.extend(r for r in open_events(str(path)) if r["type"] != "#end")
    cpu = time.process_time()
    found = list(acel.run(query, rows, time_col="t"))
    return found, time.process_time() - cpu


def worker_batches(folder: Path, fmt: str) -> list[dict[Any, list[tuple[int, int, str]]]]:
    """Each file's rows grouped by key as the workers get them: ``(pos, et_ms, attributes'
    JSON text)`` (the text as Spark's ``to_json`` writes it: the columns in order, no
    spaces; the end row left out)."""
    from acel.spark_backend.event_time import SHIFT

    from acel.io import open_events

    batches = []
    for path in sorted(folder.glob(f"part-*.{fmt}")):
        keyed: dict[Any, list[tuple[int, int, str]]] = {}
        for r in open_events(str(path)):
            if r["type"] == "#end":
                continue
            text = json.dumps({c: r[c] for c in ("type", "t", "v", "k", "pos")}, separators=(",", ":"))
            keyed.setdefault(r["k"], []).append((r["pos"], r["t"] + SHIFT, text))
        batches.append(keyed)
    return batches


def worker_run(query: str, batches: list[dict[Any, list[tuple[int, int, str]]]],
               native_restore: bool) -> tuple[list[Any], float]:
    """The workers' per-key steps over the micro-batches (delay 0: the watermark is the
    largest event time of the batches before), then the end; results and CPU seconds.
    ``native_restore`` False: a restored runner continues in Python, as before this change
    (``Runner._reload_native`` patched out)."""
    import pyarrow as pa
    from acel.acea.engine import Runner
    from acel.spark_backend.event_time import END_MS
    from acel.spark_backend.executor import UnitSpec
    from acel.spark_backend.key_stream import KeyStream, StreamSpec

    from acel.lang.parser import parse_query

    parsed = parse_query(query)
    mode = "matches" if parsed.returns is None else "rows"
    unit = UnitSpec(parsed, _schema(), mode, (), ("k",), (), None, pa.schema([]))  # type: ignore[arg-type]
    spec = StreamSpec(unit, contiguous=False, axis=True, out_names=())
    reload = Runner._reload_native
    if not native_restore:
        def python_only(self: Any) -> None:
            self.native = self.keyed = None
        Runner._reload_native = python_only  # type: ignore[method-assign]
    try:
        states: dict[Any, bytes] = {}
        out: list[Any] = []
        watermark = 0
        cpu = time.process_time()
        for keyed in [*batches, {}]:
            ending = not keyed
            if ending:
                watermark = END_MS
            for key in sorted(set(keyed) | set(states)):
                stream = KeyStream(spec, states.get(key))
                out.extend(stream.step(keyed.get(key, []), watermark))
                if stream.done:
                    states.pop(key, None)
                else:
                    states[key] = stream.save()
            if not ending:
                watermark = max(watermark, *(et for rows in keyed.values() for _, et, _ in rows))
        return out, time.process_time() - cpu
    finally:
        Runner._reload_native = reload  # type: ignore[method-assign]


def worker_only(args: Any, folders: dict[str, tuple[Path, Path]], queries: list[str]) -> dict[str, Any]:
    """``--worker-only``: the workers' CPU per event, native restore against Python restore,
    interleaved (three rounds each), with the results compared with the single process's."""
    fmt = next(iter(folders))
    big = folders[fmt][1]
    batches = worker_batches(big, fmt)
    report: dict[str, Any] = {"events": args.events, "files": args.files, "keys": args.keys,
                              "load_before": round(os.getloadavg()[0], 1)}
    for name in queries:
        query = QUERIES[name]
        expected, single_cpu = single(big, fmt, query)
        times: dict[str, list[float]] = {"python_restore": [], "native_restore": []}
        same = True
        for _ in range(3):
            for label in times:
                got, cpu = worker_run(query, batches, label == "native_restore")
                times[label].append(cpu)
                same = same and sorted(map(repr, got)) == sorted(map(repr, expected))
        report[name] = {
            "single_us_per_event": round(single_cpu / args.events * 1e6, 2),
            **{label: round(min(v) / args.events * 1e6, 2) for label, v in times.items()},
            "same_as_single": same,
        }
        print(json.dumps({name: report[name]}), flush=True)
    report["load_after"] = round(os.getloadavg()[0], 1)
    return report


def main() -> None:
    import psutil

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--keys", type=int, default=8)
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument("--queries", default="match,return", help="of: " + ", ".join(QUERIES))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--conf", action="append", default=[],
                        help="a Spark setting KEY=VALUE for the session (repeatable)")
    parser.add_argument("--worker-only", action="store_true",
                        help="no Spark: the workers' per-key steps alone, native against Python restore")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="acel-stream-bench-"))
    formats = args.formats.split(",")
    queries = args.queries.split(",")
    folders = {}
    for fmt in formats:
        small, big = work / f"small-{fmt}", work / f"in-{args.events}-{args.files}-{args.keys}-{fmt}"
        if not small.exists():
            write_folder(small, 20_000, 2, args.keys, fmt)
        if not big.exists():
            write_folder(big, args.events, args.files, args.keys, fmt)
        folders[fmt] = (small, big)
    if args.worker_only:
        report = worker_only(args, folders, queries)
    else:
        report = spark_runs(args, folders, formats, queries, psutil.Process(), work)
    print(json.dumps(report), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


def spark_runs(args: Any, folders: dict[str, tuple[Path, Path]], formats: list[str],
               queries: list[str], me: Any, work: Path) -> dict[str, Any]:
    """Each query on each format's folder in one warm session (see the module doc)."""
    from acel.spark_backend import get_session

    extra = dict(c.split("=", 1) for c in args.conf)
    spark = get_session(args.master, extra=extra or None)
    report: dict[str, Any] = {"events": args.events, "files": args.files, "keys": args.keys,
                              "master": args.master, "conf": extra}
    for name in queries:
        query = QUERIES[name]
        expected, single_cpu = single(folders[formats[0]][1], formats[0], query)
        report[f"single_cpu_us_per_event_{name}"] = round(single_cpu / args.events * 1e6, 1)
        for fmt in formats:
            small, big = folders[fmt]
            run_stream(spark, small, fmt, work, f"warm-{fmt}-{name}", query)
            before, load = cpu_split(me), os.getloadavg()[0]
            got = run_stream(spark, big, fmt, work, f"run-{fmt}-{name}", query)
            after = cpu_split(me)
            cpu = {part: after[part] - before[part] for part in after}
            total = sum(cpu.values())
            label = f"{fmt}-{name}"
            report[label] = {
                "wall_s": round(got["wall"], 2), "events_per_s": round(args.events / got["wall"]),
                "tree_cpu_s": round(total, 2), "cpu_us_per_event": round(total / args.events * 1e6, 1),
                "cpu_s": {part: round(s, 2) for part, s in cpu.items()},
                "batches": got["batches"], "phases_ms": got["phases_ms"],
                "load_before": round(load, 1), "results": len(got["results"]),
                "same_as_single": sorted(map(repr, got["results"])) == sorted(map(repr, expected)),
            }
            print(json.dumps({label: report[label]}), flush=True)
    from acel.spark_backend.session import end_session

    end_session(spark)
    return report

if __name__ == "__main__":
    main()
