"""The native trend core's candidates on W0 (issue 23, ``papers/engine.md`` "Native core").

``python bench/native_core.py [--events 100000]`` measures, on the W0 stream held in
memory (``bench/pipeline.py``), CPU nanoseconds per event of:

* the pure-Python propagator (``ACEL_NATIVE=0``, ``Runner.push`` per event);
* candidate (b), guards evaluated inside C from a small predicate program over the
  event dicts: per event (``Runner.push``) and per batch (``Runner.push_batch``);
* the column-wise front half of candidate (a): building an Arrow batch from the
  dicts, and the W0 guards as masks with ``pyarrow.compute`` (the C loop after it
  would cost what (b)'s propagation costs).

Best of three runs each; one process, side by side.

``--end-to-end 100000,1000000`` instead runs, per size, on one JSON Lines file and side by
side: ``acel run`` of W0 RETURN with ``ACEL_NATIVE=0`` and ``=1`` and the C programme
``bench/c/w0_trend.c`` (CPU of each child, as ``bench/native_limit.py``; outputs must be
identical), and prints the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline import W0_RETURN, w0_records  # noqa: E402


def best(fn: Callable[[], Any], rounds: int = 3) -> float:
    """The least CPU seconds of ``rounds`` calls."""
    out = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        fn()
        out = min(out, time.process_time() - start)
    return out


def engine(records: list[dict[str, Any]], native: str, batch: bool) -> Callable[[], Any]:
    """One W0 RETURN run over ``records`` with ``ACEL_NATIVE=native``."""
    from acel.acea.engine import Runner, paused_gc

    from acel.lang.parser import parse_query
    from acel.lang.schema import Schema

    schema = Schema.of({"A": ["ts", "v"], "B": ["ts", "v"], "C": ["ts", "v"]})

    def go() -> Any:
        os.environ["ACEL_NATIVE"] = native
        runner = Runner(parse_query(W0_RETURN), schema, monotone=True)
        with paused_gc():
            if batch:
                runner.push_batch(records)
            else:
                for attrs in records:
                    runner.push(attrs)
            return runner.finish()

    return go


def end_to_end(sizes: list[int]) -> None:
    """``acel run`` pure Python, ``acel run`` native and the C programme, side by side."""
    import tempfile

    from native_limit import build, measured
    from pipeline import write_jsonl

    with tempfile.TemporaryDirectory(prefix="acel-native-core-") as tmp:
        folder = Path(tmp)
        binary = build(folder)["w0_trend"]
        print(f"{'events':>10} {'python s':>9} {'native s':>9} {'C s':>7} {'python/C':>9} {'native/C':>9}")
        for size in sizes:
            data = folder / f"w0-{size}.jsonl"
            write_jsonl(w0_records(size), data)
            cpu: dict[str, float] = {}
            outputs = []
            for name, flag in (("python", "0"), ("native", "1")):
                out = folder / f"{name}.jsonl"
                os.environ["ACEL_NATIVE"] = flag
                cpu[name] = measured([sys.executable, "-m", "acel", "run", W0_RETURN, "--data", str(data),
                                      "--out", str(out)], None, None)["cpu_s"]
                outputs.append(out.read_bytes())
            c_out = folder / "c.jsonl"
            cpu["c"] = max(measured([str(binary)], data, c_out)["cpu_s"], 1e-3)
            if not outputs[0] == outputs[1] == c_out.read_bytes():
                raise RuntimeError(f"different rows at {size:,} events")
            print(f"{size:>10,} {cpu['python']:>9.2f} {cpu['native']:>9.2f} {cpu['c']:>7.3f} "
                  f"{cpu['python'] / cpu['c']:>8.0f}x {cpu['native'] / cpu['c']:>8.0f}x")
            data.unlink()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--end-to-end", default="", help="comma-separated sizes: acel run vs C")
    args = parser.parse_args(argv)
    if args.end_to_end:
        end_to_end([int(s) for s in args.end_to_end.split(",")])
        return 0
    import pyarrow as pa
    import pyarrow.compute as pc

    n = args.events
    records = w0_records(n)
    rows = [
        ("pure Python, Runner.push", engine(records, "0", False)),
        ("(b) C guards, Runner.push", engine(records, "1", False)),
        ("(b) C guards, Runner.push_batch", engine(records, "1", True)),
    ]
    batch = pa.RecordBatch.from_pylist(records)

    def masks() -> Any:
        kinds = batch.column("type")
        found = [pc.equal(kinds, t).to_numpy(zero_copy_only=False) for t in "ABC"]
        return found, batch.column("v").to_numpy(), batch.column("ts").to_numpy()

    rows.append(("(a) Arrow batch from the dicts", lambda: pa.RecordBatch.from_pylist(records)))
    rows.append(("(a) guard masks, pyarrow.compute", masks))
    for name, fn in rows:
        print(f"{name:36s} {best(fn) / n * 1e9:8.0f} ns/event")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
