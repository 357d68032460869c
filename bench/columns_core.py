"""Columns into the core (issue 23): ns per event of reading and of the native trend core,
attribute maps against typed columns, side by side in one process.

``python bench/columns_core.py [--sizes 100000,1000000] [--out DIR]`` writes the W0 stream
(bench/pipeline.py; with ``--keys`` 8 keys ``k`` for the PARTITION BY rows) to a JSON Lines
file and measures, CPU time (``process_time``), best of three:

* **schema pass**: ``open_events`` (the C scanner's first pass: shapes, order facts);
* **event pass, maps**: ``EventStream.batches()`` (one dict per event, as before);
* **event pass, columns**: ``EventStream.column_blocks(spec)`` (typed buffers, no object
  per event);
* **core, maps**: ``Runner.push_batch`` on the batches read beforehand (W0 RETURN);
* **core, columns**: ``Runner.push_columns`` on the blocks read beforehand;
* **keyed** (W0 RETURN PARTITION BY k, 8 keys): ``Runner.push`` per event (before this
  change the keyed path), ``push_batch`` (one C call a batch), ``push_columns``;
* **guarded** (W0 RETURN with single-event filters on ``b`` and ``c``: the core evaluates
  guards per event): ``push_batch`` and ``push_columns``.

Every pair must give the same rows (else the run fails).  Writes ``DIR/columns-core.json``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pipeline import W0_RETURN, w0_records, write_jsonl  # noqa: E402

KEYED = W0_RETURN.replace(" WITHIN", " PARTITION BY k WITHIN")
GUARDED = W0_RETURN.replace(
    " WITHIN", " FILTER b[v > 30 AND v != 77] AND c[v IN (1, 2, 3, 5, 8, 13, 21, 34, 55, 89) OR v < 50] WITHIN")


def best(run: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """The least CPU seconds of ``repeat`` calls, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        start = time.process_time()
        out = run()
        times.append(time.process_time() - start)
    return min(times), out


def measure(size: int, folder: Path) -> dict[str, Any]:
    """Every figure at one stream size (see the module doc)."""
    from acel.acea.engine import Runner

    from acel.io import open_events
    from acel.lang.parser import parse_query

    records = w0_records(size)
    keys = random.Random(7)
    for record in records:
        record["k"] = keys.randrange(8)
    path = folder / f"w0-{size}.jsonl"
    write_jsonl(records, path)
    out: dict[str, Any] = {"events": size}

    def per_event(seconds: float) -> float:
        return round(seconds / size * 1e9, 1)

    schema_s, stream = best(lambda: open_events(path))
    out["schema pass"] = per_event(schema_s)
    plain, keyed, guarded = parse_query(W0_RETURN), parse_query(KEYED), parse_query(GUARDED)
    spec = Runner(keyed, stream.schema, monotone=True).column_spec()
    assert spec is not None, "W0 must take columns"
    maps_s, batches = best(lambda: list(open_events(path).batches()))
    cols_s, blocks = best(lambda: list(open_events(path).column_blocks(spec) or []))
    out["event pass, maps"] = per_event(maps_s - schema_s)
    out["event pass, columns"] = per_event(cols_s - schema_s)

    def rows(query: Any, feed: str) -> list[Any]:
        runner = Runner(query, stream.schema, monotone=True)
        if feed == "push":
            for batch in batches:
                for attrs in batch:
                    runner.push(attrs)
        elif feed == "batch":
            for batch in batches:
                runner.push_batch(batch)
        else:
            for block in blocks:
                runner.push_batch(block) if isinstance(block, list) else runner.push_columns(block)
        return runner.finish()

    for label, query in (("core", plain), ("keyed", keyed), ("guarded", guarded)):
        figures = {}
        feeds = ("push", "batch", "columns") if label == "keyed" else ("batch", "columns")
        results = []
        for feed in feeds:
            seconds, result = best(functools.partial(rows, query, feed))
            figures[feed] = per_event(seconds)
            results.append(repr(result))
        if len(set(results)) != 1:
            raise RuntimeError(f"{label} at {size:,} events: the feeds disagree")
        out[label] = figures
    path.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated event counts")
    parser.add_argument("--out", default="bench-out", help="output folder (default bench-out/)")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="acel-columns-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(measure(size, Path(tmp)))
    for row in rows:
        print(f"{row['events']:,} events, CPU ns per event:")
        for key, value in row.items():
            if key != "events":
                print(f"  {key:<22} {value}")
    os.makedirs(args.out, exist_ok=True)
    report = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                          "load_average": os.getloadavg()}, "rows": rows}
    with open(os.path.join(args.out, "columns-core.json"), "w") as handle:
        json.dump(report, handle, indent=2)
    print(f"wrote {args.out}/columns-core.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
