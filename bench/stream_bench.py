"""Structured Streaming latency (issue 16): files land in a folder, results come out.

Files of ``--per-file`` events (the synthetic stream of ``bench/spark_bench.py``
with a position column) land in a folder every ``--every`` seconds, written
beside it and renamed in; ``acel.spark_backend.streaming`` runs each query on
the folder with a file sink and a checkpoint (``local[2,4]``, one file per
micro-batch).  For every result the sink commits, its latency is the time from
the landing of the file holding its last event to the commit of the
micro-batch that wrote it (``checkpoint/commits/<batch>``'s modification time):
input to committed output, end to end.  Per micro-batch: rows read and
Spark's own duration.  After the end row the results are checked against the
batch engine on the same events.

    python bench/stream_bench.py [--files 12] [--per-file 5000] [--every 3] [--out stream.json]

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

QUERIES = {
    # one key per state: events are evaluated when the watermark (positions) reaches them
    "partition": "A AS a ; B AS b FILTER a[x < 10] PARTITION BY k WITHIN 20 EVENTS",
    # the whole stream is one key: evaluated as soon as every earlier position was
    "whole": "A AS a ; B AS b FILTER a[x < 2] AND b[x > 97] WITHIN 20 EVENTS",
}


def events(n: int, seed: int = 7) -> list[dict[str, Any]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    types = np.array(["A", "B", "C"])[rng.integers(0, 3, n)]
    keys, xs = rng.integers(0, 100, n), rng.integers(0, 100, n)
    return [{"type": str(t), "k": int(k), "x": int(x), "pos": i} for i, (t, k, x) in enumerate(zip(types, keys, xs))]


def land(folder: Path, index: int, rows: list[dict[str, Any]]) -> float:
    name = f"part-{index:05d}.jsonl"
    scratch = folder.parent / f".{name}"
    scratch.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.rename(scratch, folder / name)
    return time.time()


def measure(name: str, query: str, rows: list[dict[str, Any]], files: int, every: float, work: Path) -> dict[str, Any]:
    from acel.acea import engine
    from acel.spark_backend import get_session
    from acel.spark_backend.streaming import await_end, end_row, plan_stream, read_results, start

    from acel.io.results import to_json_lines
    from acel.lang.events import Event
    from acel.lang.parser import parse_query
    from acel.lang.schema import Schema

    spark = get_session("local[2,4]")
    folder = work / name / "in"
    folder.mkdir(parents=True)
    out, ck = work / name / "out", work / name / "ck"
    schema = Schema.of({t: ["k", "x", "pos"] for t in "ABC"}, {"k": "int", "x": "int", "pos": "int"})
    frame = spark.readStream.schema("type string, k long, x long, pos long").option(
        "maxFilesPerTrigger", 1).json(str(folder))
    planned = plan_stream(query, frame, schema=schema)
    size = len(rows) // files
    chunks = [rows[i * size:(i + 1) * size] for i in range(files)]
    landed: list[float] = []
    first = land(folder, 0, chunks[0])
    landed.append(first)
    running = start(planned, str(out), checkpoint=str(ck))

    def feed() -> None:
        for i in range(1, files):
            time.sleep(every)
            landed.append(land(folder, i, chunks[i]))
        time.sleep(every)
        land(folder, files, [end_row()])

    feeder = threading.Thread(target=feed)
    feeder.start()
    feeder.join()
    await_end(running)
    progress = running.recentProgress
    running.stop()
    # latency of every result: its end event's file landing -> its batch's commit
    owner = {}
    for i, chunk in enumerate(chunks):
        for r in chunk:
            owner[r["pos"]] = i
    latencies: list[float] = []
    per_batch = []
    logs = [p for p in (out / "_spark_metadata").iterdir() if p.name.split(".")[0].isdigit()]
    for meta in sorted(logs, key=lambda p: int(p.name.split(".")[0])):  # not .crc files
        batch = int(meta.name.split(".")[0])
        committed = (ck / "commits" / str(batch)).stat().st_mtime
        paths = [json.loads(line)["path"] for line in meta.read_text().splitlines()[1:] if line.startswith("{")]
        ends = []
        for path in paths:
            import pyarrow.parquet as pq

            ends += pq.read_table(path.removeprefix("file://"), columns=["end"]).column("end").to_pylist()
        lat = [committed - landed[owner[e]] for e in ends]
        latencies += lat
        per_batch.append({"batch": batch, "results": len(ends),
                          "median_latency_s": round(statistics.median(lat), 2) if lat else None})
    batches = [{"batch": p["batchId"], "rows": p["numInputRows"],
                "duration_s": p["durationMs"].get("triggerExecution", 0) / 1000} for p in progress]
    got = read_results(planned, str(out))
    want = engine.run(parse_query(query), [Event.make(i, r) for i, r in enumerate(rows)], schema)
    return {
        "query": query, "files": files, "events_per_file": size, "every_s": every,
        "results": len(got), "same_as_batch": to_json_lines(got) == to_json_lines(want),
        "latency_s": {"median": round(statistics.median(latencies), 2), "max": round(max(latencies), 2),
                      "min": round(min(latencies), 2)} if latencies else None,
        "batch_duration_s": {"median": round(statistics.median(b["duration_s"] for b in batches if b["rows"]), 2),
                             "max": round(max(b["duration_s"] for b in batches), 2)},
        "batches": batches, "per_batch_latency": per_batch,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--per-file", type=int, default=5000)
    parser.add_argument("--every", type=float, default=3.0)
    parser.add_argument("--queries", default="whole,partition")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rows = events(args.files * args.per_file)
    report: dict[str, Any] = {"load_before": os.getloadavg()[0], "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="acel-stream-bench-") as tmp:
        for name in args.queries.split(","):
            report[name] = measure(name, QUERIES[name], rows, args.files, args.every, Path(tmp))
            print(json.dumps({name: {k: v for k, v in report[name].items() if k not in ("batches", "per_batch_latency")}}),
                  flush=True)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text, file=sys.stderr)


if __name__ == "__main__":
    main()
