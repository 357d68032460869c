"""``acel.spark.run`` in a long-lived session (a notebook's case) against one process.

    python bench/spark_lazy_bench.py W0.jsonl [--master 'local[2,4]'] [--out lazy.json]

The file is W0 with a key ``k`` (``bench/spark_cli_bench.py w0`` writes it).  One
process: ``acel.run`` on the JSON Lines file.  Spark, in one session started
and warmed up once (a small run starts the Python workers): the time to build
``acel.spark.run``'s frame (no job may run: counted with a job group) and to
collect it, from the JSON Lines path (read on the driver) and from a Spark
DataFrame of the same events in Parquet (numbered inside the plan), next to
the eager planner (``acel.spark.collect``) on the same DataFrame.  Not part of
the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUERIES = {
    "return": "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON ts",
    "match": "A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 11 ON ts",
}


def timed(label: str, out: dict[str, Any], fn: Any) -> Any:
    started = time.perf_counter()
    value = fn()
    out[label] = round(time.perf_counter() - started, 2)
    print(label, out[label], flush=True)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data")
    parser.add_argument("--master", default="local[2,4]")
    parser.add_argument("--out", default=None)
    parser.add_argument("--query", choices=sorted(QUERIES), default="return")
    parser.add_argument("--path-only", action="store_true",
                        help="only the eager runs on the file (the command line's planner), twice")
    args = parser.parse_args()
    query = QUERIES[args.query]
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    import acel
    import acel.spark

    out: dict[str, Any] = {"query": query, "master": args.master, "load_before": os.getloadavg()[0]}
    single = timed("single process acel.run (s)", out, lambda: list(acel.run(query, args.data)))
    folder = Path(tempfile.mkdtemp(prefix="acel-lazy-"))
    spark = timed("session start (s)", out, lambda: acel.spark.session(args.master))
    context = spark.sparkContext
    small = folder / "small.jsonl"
    with open(args.data, encoding="utf-8") as src, open(small, "w", encoding="utf-8") as dst:
        for _, line in zip(range(2000), src):
            dst.write(line)
    timed("warm-up (s)", out, lambda: acel.spark.run(query, str(small), vars="json").collect())
    schema = acel.Schema.of({t: ["ts", "v", "k"] for t in "ABC"})

    def lazy(name: str, data: Any, **kw: Any) -> None:
        context.setJobGroup(name, name)
        built = timed(f"{name}: build (s)", out, lambda: acel.spark.run(query, data, vars="json", **kw))
        out[f"{name}: jobs before the action"] = len(context.statusTracker().getJobIdsForGroup(name))
        context.setJobGroup(name + "-action", name)
        rows = timed(f"{name}: collect (s)", out, built.collect)
        out[f"{name}: rows"] = len(rows)

    for run in (1, 2):  # the command line's planner on the file, in a warm session
        on_path = timed(f"eager acel.spark.collect, JSON Lines path, run {run} (s)", out,
                        lambda: acel.spark.collect(query, args.data))
        out[f"path run {run} equals single"] = _in_order(on_path) == _in_order(single)
    if args.path_only:
        _report(out, args.out)
        spark.stop()
        return
    parquet = folder / "w0.parquet"
    pq.write_table(pj.read_json(args.data), parquet)
    frame = spark.read.parquet(str(parquet))
    lazy("lazy, JSON Lines path", args.data)
    lazy("lazy, Parquet DataFrame", frame, schema=schema)
    got = timed("eager acel.spark.collect, Parquet DataFrame (s)", out,
                lambda: acel.spark.collect(query, frame, schema=schema))
    out["eager equals single"] = _in_order(got) == _in_order(single)
    _report(out, args.out)
    spark.stop()


def _in_order(results: list[Any]) -> list[Any]:
    """Results in spec §12's order (``acel.run`` gives complex events as they become final)."""
    return sorted(results, key=lambda r: r.sort_key())


def _report(out: dict[str, Any], path: str | None) -> None:
    out["load_after"] = os.getloadavg()[0]
    text = json.dumps(out, indent=2)
    if path:
        Path(path).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
