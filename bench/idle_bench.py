"""Deadlines on a quiet Spark stream (issue 25 §5): how late after its deadline a
trailing-NOT result comes out with ``idle_advance``, and what the quiet costs.

Rounds: one file lands holding an unpaid order (and a paid one), then the stream
is quiet for ``--quiet`` seconds.  Event time (``ts``, seconds) follows the
producer's clock: each file's times are the last ones plus the wall seconds since
(plus one), so no event is late.  The query is ``ORDER AS o ; NOT PAY PARTITION BY
id WITHIN W ON ts`` with ``idle_advance=RATE``: the unpaid order's window closes
``W/RATE`` seconds of quiet after the micro-batch that read its file started (its
start, from the query's progress, is when the quiet begins for the driver).  For
each result: the time from that moment to the result's file appearing in the
sink.  Also: micro-batches a minute while quiet, the load average, and whether
the sink equals the batch engine's results.

    python bench/idle_bench.py [--rounds 4] [--quiet 10] [--window 900] [--rate 300] [--out idle.json]

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any


def land(folder: Path, index: int, rows: list[dict[str, Any]]) -> float:
    name = f"part-{index:05d}.jsonl"
    scratch = folder.parent / f".{name}"
    scratch.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.rename(scratch, folder / name)
    return time.time()


def watch(out: Path, seen: dict[int, float], stop: threading.Event) -> None:
    """Record when each result's order id first shows in the sink's files."""
    while not stop.is_set():
        for p in out.glob("part-*"):
            for line in p.read_text().splitlines():
                if line:
                    seen.setdefault(json.loads(line)["id"], time.time())
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--quiet", type=float, default=10.0)
    parser.add_argument("--window", type=int, default=900)
    parser.add_argument("--rate", type=float, default=300.0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from datetime import datetime

    from acel.acea import engine
    from acel.spark_backend import get_session
    from acel.spark_backend.streaming import data_rows, end_row, plan_stream, read_results, start

    from acel.io.results import to_json_lines
    from acel.lang.events import Event
    from acel.lang.parser import parse_query
    from acel.lang.schema import Schema

    query = f"ORDER AS o ; NOT PAY PARTITION BY id WITHIN {args.window} ON ts"
    schema = Schema.of({"ORDER": ["id", "ts", "pos"], "PAY": ["id", "ts", "pos"]},
                       {"id": "int", "ts": "int", "pos": "int"})
    work = Path(tempfile.mkdtemp(prefix="acel-idle-bench-"))
    folder, out = work / "in", work / "out.jsonl"
    folder.mkdir()
    spark = get_session("local[2,2]", shuffle_partitions=2)
    events: list[dict[str, Any]] = []
    ts, landed = 0, None
    rows: list[dict[str, Any]] = []

    def round_rows(r: int) -> list[dict[str, Any]]:
        nonlocal ts
        if landed is not None:
            ts += math.ceil(args.rate * (time.time() - landed)) + int(args.rate)
        pos = len(events)
        made = [{"type": "ORDER", "id": 2 * r, "ts": ts, "pos": pos},
                {"type": "ORDER", "id": 2 * r + 1, "ts": ts, "pos": pos + 1},
                {"type": "PAY", "id": 2 * r + 1, "ts": ts, "pos": pos + 2}]
        events.extend(made)
        return made

    rows = round_rows(0)
    landed = land(folder, 0, rows)
    source = spark.readStream.schema("type string, id long, ts long, pos long").json(str(folder))
    planned = plan_stream(query, source, schema=schema, time_col="ts", idle_advance=args.rate)
    seen: dict[int, float] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(out, seen, stop), daemon=True)
    watcher.start()
    running = start(planned, str(out), checkpoint=str(work / "ck"), fmt="jsonl")
    quiet_batches, quiet_seconds = 0, 0.0
    for r in range(args.rounds):
        if r:
            rows = round_rows(r)
            landed = land(folder, r, rows)
        time.sleep(args.quiet)
        progress = list(running.recentProgress)
        read = [p for p in progress if data_rows(p, planned.ticks)]
        if read:
            after = [p for p in progress if p["batchId"] > read[-1]["batchId"]]
            quiet_batches += len(after)
            quiet_seconds += time.time() - datetime.fromisoformat(
                read[-1]["timestamp"].replace("Z", "+00:00")).timestamp()
    land(folder, args.rounds, [end_row()])
    from acel.spark_backend.streaming import await_end

    await_end(running)
    running.stop()
    stop.set()
    watcher.join()
    starts: dict[int, float] = {}
    for p in running.recentProgress:
        if data_rows(p, planned.ticks):
            begun = datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()
            starts.setdefault(len(starts), begun)
    due = args.window / args.rate
    late = [seen[2 * r] - (starts[r] + due) for r in range(args.rounds) if r in starts and 2 * r in seen]
    want = engine.run(parse_query(query), [Event.make(i, e) for i, e in enumerate(events)], schema)
    got = read_results(planned, str(out), "jsonl")
    report = {
        "query": query, "rate": args.rate, "quiet_s": args.quiet, "rounds": args.rounds,
        "after_deadline_s": [round(x, 2) for x in late],
        "after_deadline_median_s": round(statistics.median(late), 2) if late else None,
        "quiet_batches_per_min": round(60 * quiet_batches / quiet_seconds, 1) if quiet_seconds else None,
        "load": os.getloadavg(),
        "equal_to_batch": to_json_lines(got) == to_json_lines(want),
        "results": len(got),
    }
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
