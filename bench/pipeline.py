"""End-to-end benchmarks of the streaming pipeline (issue 12) and of negation (issue 13).

``python bench/pipeline.py [--quick] [--out DIR]`` (``acel bench --parts pipeline``)
measures what a user sees — ``acel run`` from file to file in a fresh process:
reading, engine, writing, peak RSS — next to the engine alone on the same input:

* **w0**: the W0 stream (types A/B/C with probabilities 0.2/0.6/0.2, ``ts`` =
  position, ``v`` uniform 0..99) with ``A AS a ; (B AS b)+ ; C AS c WITHIN 11
  ON ts``, per-match to a JSON Lines file, and with ``RETURN COUNT(*),
  SUM(b.v)``;
* **reading**: events per CPU-second (and per second) from Parquet, CSV and JSON
  Lines (both passes without a schema, one pass with ``--schema``), as the dicts the
  engine reads and as Arrow columns, native readers and pure Python side by side;
* **memory**: Example 3.2 ``WITHIN 50 EVENTS`` over 10^6 and 10^7 generated
  events streamed from Parquet files: peak RSS of the two runs;
* **flights**: the demo's query (``examples/flights/delay_propagation.acel``)
  on its 362,891 events, single process;
* **negation**: a trend query with a middle negation against the same query
  without it, engine only, at 10^5 events per window.

Every figure comes from one run on this machine; ratios compare runs made
back to back.  The table is printed and written to ``DIR/pipeline.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
W0 = "A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
W0_RETURN = "RETURN COUNT(*), SUM(b.v) PATTERN " + W0
W0_RELATE = "A AS a ; (B AS b)+ ; C AS c FILTER b[v > a.v] WITHIN 11 ON ts"
"""W0 with a filter relating events (spec §5.1, issue 21): per match against W0."""
EXAMPLE_3_2 = (
    "(SELL AS msft ; SELL AS intel ; SELL AS amzn) FILTER msft[name = 'MSFT' AND price > 100] "
    "AND intel[name = 'INTL'] AND amzn[name = 'AMZN' AND price < 2000] WITHIN 50 EVENTS"
)


# ------------------------------------------------------------------ data


def w0_records(n: int, seed: int = 1) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    kinds = rnd.choices("ABC", [0.2, 0.6, 0.2], k=n)
    return [{"type": t, "ts": k, "v": rnd.randrange(100)} for k, t in enumerate(kinds)]


def write_jsonl(records: Sequence[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")


def write_sell_parquet(n: int, path: Path, seed: int = 11) -> None:
    """Example 3.2's SELL stream (7 companies, 3 % BUY), in Parquet, in pieces."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = ["MSFT", "INTL", "AMZN", "AAPL", "GOOG", "ORCL", "IBM"]
    weights = [6, 6, 6, 20, 20, 21, 21]
    base = {"MSFT": 101, "INTL": 80, "AMZN": 1900, "AAPL": 150, "GOOG": 1200, "ORCL": 60, "IBM": 130}
    rnd = random.Random(seed)
    prices = dict(base)
    writer = None
    step = 500_000
    for start in range(0, n, step):
        size = min(step, n - start)
        types, companies, values = [], [], []
        for name in rnd.choices(names, weights, k=size):
            prices[name] = max(1, prices[name] + rnd.choice((-2, -1, 1, 2)))
            types.append("BUY" if rnd.random() < 0.03 else "SELL")
            companies.append(name)
            values.append(prices[name])
        table = pa.table({"type": types, "name": companies, "price": values})
        if writer is None:
            writer = pq.ParquetWriter(str(path), table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()


# ------------------------------------------------------------------ runs


def acel_run(args: Sequence[str]) -> dict[str, Any]:
    """``acel run ARGS`` in a fresh process: wall and CPU seconds, peak RSS (its summary line)."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "acel", "run", *args],
        capture_output=True, text=True, cwd=REPO,
    )
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise RuntimeError(f"acel run {' '.join(args)} failed: {done.stderr[-2000:]}")
    summary = [line for line in done.stderr.splitlines() if line.startswith("acel run [")][-1]
    rss = re.search(r"peak RSS ([\d,]+) MiB", summary)
    written = re.search(r"([\d,]+) (?:complex events|rows) written", summary)
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round((after.children_user - before.children_user)
                       + (after.children_system - before.children_system), 3),
        "peak_rss_mib": int(rss.group(1).replace(",", "")) if rss else None,
        "results": int(written.group(1).replace(",", "")) if written else None,
    }


def engine_only(query_text: str, path: Path, **options: Any) -> dict[str, Any]:
    """The incremental engine alone on events read beforehand (CPU and wall seconds)."""
    from acel.acea.engine import Runner, paused_gc

    from acel.io import open_events
    from acel.lang.parser import parse_query

    stream = open_events(path)
    events = [attrs for batch in stream.batches() for attrs in batch]
    query = parse_query(query_text)
    runner = Runner(query, stream.schema, monotone=True, **options)
    found = 0
    with paused_gc():
        cpu, wall = time.process_time(), time.perf_counter()
        for attrs in events:
            found += len(runner.push(attrs))
        found += len(runner.finish())
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"events": len(events), "results": found, "engine_cpu_s": round(cpu, 3),
            "engine_wall_s": round(wall, 3)}


def reading(path: Path, schema: Path | None = None, *, arrow: bool = False) -> dict[str, Any]:
    """Events per CPU-second (user + sys, all threads) and per second from a file: both
    passes without a schema, one with.  ``arrow``: as ``EventStream.arrow_batches()``
    gives them (or, where it declines, as the ``from_pylist`` adapter over the dicts)."""
    from acel.acea.engine import paused_gc

    from acel.io import open_events, read_schema
    from acel.io.columns import arrow_schema, as_record_batches

    before, wall = os.times(), time.perf_counter()
    view = "dicts"
    with paused_gc():  # as acel run reads (acel.engines.running)
        stream = open_events(path, schema=read_schema(schema) if schema else None)
        if arrow:
            columns = stream.arrow_batches()
            view = "arrow_batches"
            if columns is None:
                view = "from_pylist adapter"
                columns = as_record_batches(stream.batches(), arrow_schema(stream.schema))
            count = sum(batch.num_rows for batch in columns)
        else:
            count = sum(len(batch) for batch in stream.batches())
    after, wall = os.times(), time.perf_counter() - wall
    cpu = (after.user - before.user) + (after.system - before.system)
    return {"view": view, "events": count, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "events_per_cpu_s": round(count / max(cpu, 1e-9)),
            "events_per_s": round(count / max(wall, 1e-9))}


# ------------------------------------------------------------------ parts


def part_w0(folder: Path, quick: bool) -> list[dict[str, Any]]:
    n = 20_000 if quick else 100_000
    data = folder / "w0.jsonl"
    write_jsonl(w0_records(n), data)
    rows = []
    for name, query in (("w0 per-match", W0), ("w0 RETURN", W0_RETURN),
                        ("w0 per-match, b[v > a.v]", W0_RELATE)):
        row = {"part": "w0", "what": name, "events": n, **acel_run([query, "--data", str(data),
               "--out", str(folder / "out.jsonl")])}
        engine = engine_only(query, data)
        row.update({k: v for k, v in engine.items() if k.startswith("engine")})
        row["results"] = engine["results"]
        rows.append(row)
    plain, relate = rows[0], rows[2]
    for key in ("wall_s", "engine_wall_s"):
        if plain.get(key) and relate.get(key) and plain["results"] and relate["results"]:
            per_match = (relate[key] / relate["results"]) / (plain[key] / plain["results"])
            relate[f"per_match_ratio_{key}"] = round(per_match, 2)
    return rows


def part_reading(folder: Path, quick: bool) -> list[dict[str, Any]]:
    """The W0 stream from Parquet, CSV and JSON Lines, as dicts and as Arrow columns, on
    the native readers (``ACEL_NATIVE=auto``) and on pure Python (``ACEL_NATIVE=0``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from acel.io import open_events, write_schema

    n = 100_000 if quick else 1_000_000
    records = w0_records(n, seed=3)
    jsonl = folder / "read.jsonl"
    write_jsonl(records, jsonl)
    csv = folder / "read.csv"
    with open(csv, "w", encoding="utf-8") as handle:
        handle.write("type,ts,v\n")
        handle.writelines(f"{r['type']},{r['ts']},{r['v']}\n" for r in records)
    parquet = folder / "read.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    del records  # a million live dictionaries would make every collection scan them
    schema = folder / "schema.json"
    write_schema(open_events(parquet).schema, schema)
    rows = []
    saved = os.environ.get("ACEL_NATIVE")
    try:
        for mode in ("auto", "0"):
            os.environ["ACEL_NATIVE"] = mode
            for what, path, given in (
                ("Parquet", parquet, None),
                ("Parquet, --schema", parquet, schema),
                ("CSV", csv, None),
                ("CSV, --schema", csv, schema),
                ("JSON Lines", jsonl, None),
                ("JSON Lines, --schema", jsonl, schema),
            ):
                for arrow in (False, True):
                    rows.append({"part": "reading", "what": what, "ACEL_NATIVE": mode,
                                 **reading(path, given, arrow=arrow)})
    finally:
        if saved is None:
            os.environ.pop("ACEL_NATIVE", None)
        else:
            os.environ["ACEL_NATIVE"] = saved
    return rows


def part_memory(folder: Path, quick: bool) -> list[dict[str, Any]]:
    sizes = [100_000, 1_000_000] if quick else [1_000_000, 10_000_000]
    rows = []
    for n in sizes:
        path = folder / f"sell-{n}.parquet"
        write_sell_parquet(n, path)
        rows.append({"part": "memory", "what": "Example 3.2 WITHIN 50 EVENTS", "events": n,
                     **acel_run([EXAMPLE_3_2, "--data", str(path), "--out", str(folder / "m.jsonl")])})
    return rows


def part_flights(folder: Path, quick: bool) -> list[dict[str, Any]]:
    from acel.app.datasets import flights_stream

    frame = flights_stream(limit_days=5 if quick else None)
    path = folder / "flights.parquet"
    frame.to_parquet(path, index=False)
    query = str(REPO / "examples" / "flights" / "delay_propagation.acel")
    return [{"part": "flights", "what": "delay_propagation.acel", "events": len(frame),
             **acel_run([query, "--data", str(path), "--time-col", "ts",
                         "--out", str(folder / "f.jsonl")])}]


def part_negation(folder: Path, quick: bool) -> list[dict[str, Any]]:
    """GRETA's SEQ(A+, NOT E, B) against SEQ(A+, B): the cost of a middle negation."""
    n = 20_000 if quick else 100_000
    rnd = random.Random(5)
    records = [{"type": t, "v": rnd.randrange(100)}
               for t in rnd.choices("ABCE", [0.45, 0.25, 0.25, 0.05], k=n)]
    path = folder / "neg.jsonl"
    write_jsonl(records, path)
    window = f"WITHIN {n} EVENTS SLIDE {n} EVENTS"
    rows = []
    for what, pattern in (
        ("without NOT", "(A AS a)+ ; B"),
        ("with NOT E", "(A AS a)+ ; NOT E ; B"),
    ):
        query = f"RETURN COUNT(*), SUM(a.v) PATTERN {pattern} {window}"
        rows.append({"part": "negation", "what": what, "events_per_window": n,
                     **engine_only(query, path)})
    rows[1]["ratio"] = round(rows[1]["engine_cpu_s"] / max(rows[0]["engine_cpu_s"], 1e-9), 2)
    return rows


PARTS = {
    "w0": part_w0,
    "reading": part_reading,
    "memory": part_memory,
    "flights": part_flights,
    "negation": part_negation,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/pipeline.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--out", default="bench-out", help="output folder (default bench-out/)")
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated: " + ",".join(PARTS))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="acel-bench-") as tmp:
        for name in args.parts.split(","):
            for row in PARTS[name](Path(tmp), args.quick):
                print(json.dumps(row), flush=True)
                rows.append(row)
    report = {"machine": {"cpus": os.cpu_count(), "load_before": load, "load_after": os.getloadavg(),
                          "python": sys.version.split()[0]}, "rows": rows}
    (out / "pipeline.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
