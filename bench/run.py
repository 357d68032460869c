"""Benchmarks of the optimized engine (issue 6): ``python bench/run.py [--quick] [--out DIR]``.

Three parts, each printed as a table and written to ``DIR/engine-bench.json``
(plus ``DIR/trend.png``, a log-log plot of time against window size):

* **trend**: ``RETURN COUNT(*), SUM(s.price) PATTERN (STOCK AS s)+ FILTER
  s[DEC(price)] PARTITION BY company WITHIN w EVENTS SLIDE w EVENTS`` (GRETA's
  Q1 style) on a random-walk stock stream of 3 companies with ``w`` events
  each, ``w`` doubling from 8: the two-step SASE+ baseline
  (``acel.reference.sase.two_step_trend``) until it takes over the time limit
  (60 s), and the optimized engine alone up to 100,000 events per window;
* **complex events**: the spec's Examples 3.2 and 5.1 with ``WITHIN 50
  EVENTS`` on a synthetic SELL stream, optimized engine against naive ACEA
  runs (``acel.acea.engine.naive.run``) on a prefix naive runs finish, then the
  engine alone on 100,000 events;
* **memory**: peak RSS of the engine enumerating Example 3.2 ``WITHIN 50
  EVENTS`` on 10^5 and 10^6 events, one subprocess per size;
* **workload**: HAMLET's synthetic workload, shared plan vs each query
  alone (``bench/workload_bench.py``; plot ``DIR/workload.png``);
* **select**: Example 3.2 under each selection strategy (spec §6.2) and
  after-match skip: the engine's time against ``SELECT ALL`` on the same stream
  (strategies filter the complex events of each step; NEXT, LAST and MAX choose
  before WITHIN, so the engine keeps every start: their streams are shorter).

Every time is wall-clock (``time.perf_counter``) and CPU (``time.process_time``)
of the evaluation only (streams are built beforehand).  ``--quick`` keeps
every part under a minute in total, for a CI smoke test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from acel.lang.events import Event
from acel.lang.schema import Schema

STOCK_SCHEMA = Schema.of({"STOCK": ["company", "price"]})
SELL_SCHEMA = Schema.of({"SELL": ["name", "price"], "BUY": ["name", "price"]})

TREND_QUERY = (
    "RETURN COUNT(*), SUM(s.price) PATTERN (STOCK AS s)+ FILTER s[DEC(price)] "
    "PARTITION BY company WITHIN {w} EVENTS SLIDE {w} EVENTS"
)
EXAMPLE_3_2 = """(SELL AS msft ; SELL AS intel ; SELL AS amzn)
  FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL']
     AND amzn[name = 'AMZN' AND price < 2000]
  WITHIN 50 EVENTS"""
EXAMPLE_5_1 = """AGG m[max_price := MAX(intel.price)](
  (SELL AS msft ; (SELL AS intel)+ ; SELL AS amzn)
    FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL']
       AND amzn[name = 'AMZN' AND price < 2000])
  WITHIN 50 EVENTS"""


# ----------------------------------------------------------------- streams


def stock_stream(per_company: int, companies: int = 3, seed: int = 7) -> list[Event]:
    """Random-walk integer prices; company ``c`` gets ``per_company`` events, interleaved."""
    rnd = random.Random(seed)
    prices = [100 + 10 * c for c in range(companies)]
    order = [c for c in range(companies) for _ in range(per_company)]
    rnd.shuffle(order)
    out = []
    for k, c in enumerate(order):
        prices[c] += rnd.choice((-3, -2, -1, 1, 2, 3))
        out.append(Event.make(k, {"type": "STOCK", "company": f"C{c}", "price": prices[c]}))
    return out


NAMES = ("MSFT", "INTL", "AMZN", "IBM", "GOOG", "AAPL", "ORCL")
WEIGHTS = (0.06, 0.06, 0.06, 0.2, 0.2, 0.21, 0.21)
BASE = {"MSFT": 101, "INTL": 80, "AMZN": 1900, "IBM": 140, "GOOG": 1200, "AAPL": 170, "ORCL": 60}


def sell_stream(n: int, seed: int = 11) -> list[Event]:
    """SELL events (3% BUY) of 7 companies; MSFT/INTL/AMZN are 6% each, prices wander."""
    rnd = random.Random(seed)
    prices = dict(BASE)
    out = []
    for k in range(n):
        name = rnd.choices(NAMES, WEIGHTS)[0]
        prices[name] = max(1, prices[name] + rnd.choice((-2, -1, 1, 2)))
        kind = "BUY" if rnd.random() < 0.03 else "SELL"
        out.append(Event.make(k, {"type": kind, "name": name, "price": prices[name]}))
    return out


# ----------------------------------------------------------------- timing


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``(result, wall seconds, cpu seconds)``."""
    w0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - w0, time.process_time() - c0


def machine() -> dict[str, Any]:
    model = platform.processor() or platform.machine()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


# ------------------------------------------------------------ the parts


def trend_part(quick: bool, limit: float) -> list[dict[str, Any]]:
    """Window sizes doubling from 8: baseline while under ``limit`` s, engine to 100,000."""
    from acel.acea import engine
    from acel.reference.sase import two_step_trend

    from acel.lang.parser import parse_query

    sizes = [8 * 2**i for i in range(14)] + [100_000]
    if quick:
        sizes = [8, 16, 32, 1024, 8192]  # the baseline only up to 16 (2^w growth)
    rows: list[dict[str, Any]] = []
    baseline_alive = True
    warm = parse_query(TREND_QUERY.format(w=8))
    engine.run(warm, stock_stream(8), STOCK_SCHEMA)  # compile once, outside the timings
    two_step_trend(warm, stock_stream(8), STOCK_SCHEMA)
    for w in sizes:
        query = parse_query(TREND_QUERY.format(w=w))
        stream = stock_stream(w)
        got, wall, cpu = timed(partial(engine.run, query, stream, STOCK_SCHEMA))
        row: dict[str, Any] = {
            "window": w,
            "events": len(stream),
            "engine_s": wall,
            "engine_cpu_s": cpu,
            "count": sum(int(r.values[0][1]) for r in got),  # type: ignore[union-attr, arg-type]
        }
        if baseline_alive and (not quick or w <= 16):
            base, bwall, bcpu = timed(partial(two_step_trend, query, stream, STOCK_SCHEMA))
            row.update(baseline_s=bwall, baseline_cpu_s=bcpu, ratio=bwall / max(wall, 1e-9))
            row["agree"] = base == got
            baseline_alive = bwall <= limit
        rows.append(row)
        _print_row("trend", row)
    return rows


def complex_part(quick: bool) -> list[dict[str, Any]]:
    """Examples 3.2 and 5.1 WITHIN 50 EVENTS: engine vs naive runs, then engine alone."""
    from acel.acea import engine
    from acel.acea.engine import naive

    from acel.lang.parser import parse_query

    rows: list[dict[str, Any]] = []
    large = 10_000 if quick else 100_000
    # naive runs of 5.1 keep one run per subset of INTL sales: they blow up
    # past a few hundred events, so they get a shorter prefix
    cases = (
        ("example 3.2", EXAMPLE_3_2, 300 if quick else 2_000),
        ("example 5.1", EXAMPLE_5_1, 100 if quick else 150),
    )
    for name, text, small in cases:
        query = parse_query(text)
        warm = sell_stream(20)
        engine.run(query, warm, SELL_SCHEMA)  # compile once, outside the timings
        naive.run(query, warm, SELL_SCHEMA)
        stream = sell_stream(small)
        fast, wall, cpu = timed(partial(engine.run, query, stream, SELL_SCHEMA))
        slow, nwall, ncpu = timed(partial(naive.run, query, stream, SELL_SCHEMA))
        row = {
            "query": name,
            "events": small,
            "matches": len(fast),
            "engine_s": wall,
            "engine_cpu_s": cpu,
            "naive_s": nwall,
            "naive_cpu_s": ncpu,
            "ratio": nwall / max(wall, 1e-9),
            "agree": fast == slow,
        }
        rows.append(row)
        _print_row("complex", row)
        stream = sell_stream(large)
        fast, wall, cpu = timed(partial(engine.run, query, stream, SELL_SCHEMA))
        row = {
            "query": name,
            "events": large,
            "matches": len(fast),
            "engine_s": wall,
            "engine_cpu_s": cpu,
            "events_per_s": large / max(wall, 1e-9),
            "events_per_cpu_s": large / max(cpu, 1e-9),
        }
        rows.append(row)
        _print_row("complex", row)
    return rows


def select_part(quick: bool) -> list[dict[str, Any]]:
    """Example 3.2 WITHIN 50 EVENTS under SELECT s / AFTER MATCH SKIP k, against ALL."""
    from acel.acea import engine

    from acel.lang.parser import parse_query

    rows: list[dict[str, Any]] = []
    clauses = [("SELECT STRICT", ""), ("", "AFTER MATCH SKIP PAST LAST ROW"),
               ("", "AFTER MATCH SKIP TO NEXT ROW"), ("SELECT NEXT", ""), ("SELECT LAST", ""),
               ("SELECT MAX", "")]
    for select, skip in clauses:
        widened = select in ("SELECT NEXT", "SELECT LAST", "SELECT MAX")
        n = (500 if quick else 2_000) if widened else (10_000 if quick else 100_000)
        stream = sell_stream(n)
        base = parse_query(EXAMPLE_3_2)
        query = parse_query(f"{select}\n{EXAMPLE_3_2}\n{skip}")
        engine.run(query, sell_stream(20), SELL_SCHEMA)  # compile outside the timings
        everything, all_wall, _ = timed(partial(engine.run, base, stream, SELL_SCHEMA))
        kept, wall, cpu = timed(partial(engine.run, query, stream, SELL_SCHEMA))
        row = {
            "clause": (select + " " + skip).strip(),
            "events": n,
            "matches_all": len(everything),
            "matches": len(kept),
            "all_s": all_wall,
            "engine_s": wall,
            "engine_cpu_s": cpu,
            "ratio": wall / max(all_wall, 1e-9),
        }
        rows.append(row)
        _print_row("select", row)
    return rows


def memory_child(n: int) -> None:
    """Run in a subprocess: enumerate Example 3.2 on ``n`` events, print peak RSS (bytes)."""
    import resource

    from acel.acea.engine import Runner

    from acel.lang.parser import parse_query

    query = parse_query(EXAMPLE_3_2)
    runner = Runner(query, SELL_SCHEMA)
    count = 0
    w0 = time.perf_counter()
    for event in _LazyStream(n):
        count += len(runner.push(dict(event.attrs)))
    wall = time.perf_counter() - w0
    # VmHWM is this process's own peak (ru_maxrss may carry the parent's over exec)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    peak_kib = int(line.split()[1])
    except OSError:
        pass
    print(json.dumps({"events": n, "matches": count, "peak_rss_mib": peak_kib / 1024, "engine_s": wall}))


class _LazyStream:
    """A stream generated on the fly, so that the input does not dominate memory."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Any:
        rnd = random.Random(11)
        prices = dict(BASE)
        for k in range(self.n):
            name = rnd.choices(NAMES, WEIGHTS)[0]
            prices[name] = max(1, prices[name] + rnd.choice((-2, -1, 1, 2)))
            kind = "BUY" if rnd.random() < 0.03 else "SELL"
            yield Event.make(k, {"type": kind, "name": name, "price": prices[name]})


def memory_part(quick: bool) -> list[dict[str, Any]]:
    sizes = [10_000, 100_000] if quick else [100_000, 1_000_000]
    rows = []
    for n in sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(n)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        _print_row("memory", row)
    return rows


# ------------------------------------------------------------------ output


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int) and value > 10**12:
        return f"{float(value):.3e}" if value < 10**300 else f"~10^{len(str(value)) - 1}"
    return str(value)


def _print_row(part: str, row: dict[str, Any]) -> None:
    print(f"[{part}] " + "  ".join(f"{k}={_fmt(v)}" for k, v in row.items()), flush=True)


def plot(trend: Sequence[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog([r["window"] for r in trend], [r["engine_s"] for r in trend], "o-", label="optimized engine")
    base = [r for r in trend if "baseline_s" in r]
    if base:
        ax.loglog([r["window"] for r in base], [r["baseline_s"] for r in base], "s--", label="two-step SASE+ baseline")
    ax.set_xlabel("events per window (w)")
    ax.set_ylabel("seconds")
    ax.set_title("DEC trend COUNT(*), SUM, tumbling windows")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acel bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run under a minute")
    parser.add_argument("--out", default="bench-out", help="output folder (default bench-out/)")
    parser.add_argument("--limit", type=float, default=60.0, help="baseline time limit (s)")
    parser.add_argument(
        "--parts", default="trend,complex,memory,pipeline,workload,select",
        help="comma-separated: trend,complex,memory,pipeline,workload,native,peers,select (bench/pipeline.py: "
             "acel run end to end, reading, memory at 10^6/10^7, the flights query, negation; "
             "bench/workload_bench.py: HAMLET's workload, shared vs each query alone; "
             "bench/native_limit.py: acel run against exact C programmes on W0; "
             "bench/peers.py: acel run, CORE and C side by side on W0)",
    )
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child)
        return 0
    parts = set(args.parts.split(","))
    os.makedirs(args.out, exist_ok=True)
    report: dict[str, Any] = {"machine": machine(), "quick": args.quick}
    if "trend" in parts:
        report["trend"] = trend_part(args.quick, args.limit)
        plot(report["trend"], os.path.join(args.out, "trend.png"))
    if "complex" in parts:
        report["complex"] = complex_part(args.quick)
    if "memory" in parts:
        report["memory"] = memory_part(args.quick)
    if "pipeline" in parts:
        import pipeline  # bench/pipeline.py, next to this file

        pipeline.main((["--quick"] if args.quick else []) + ["--out", args.out])
        with open(os.path.join(args.out, "pipeline.json")) as fh:
            report["pipeline"] = json.load(fh)["rows"]
    if "workload" in parts:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from workload_bench import run as workload_run

        report["workload"] = workload_run(args.quick, args.out)
    if "native" in parts:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import native_limit

        native_limit.main((["--sizes", "20000"] if args.quick else []) + ["--out", args.out])
        with open(os.path.join(args.out, "native-limit.json")) as fh:
            report["native"] = json.load(fh)["rows"]
    if "peers" in parts:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import peers

        peers.main((["--sizes", "20000"] if args.quick else []) + ["--out", args.out])
        with open(os.path.join(args.out, "peers.json")) as fh:
            report["peers"] = json.load(fh)
    if "select" in parts:
        report["select"] = select_part(args.quick)
    report["machine"]["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    with open(os.path.join(args.out, "engine-bench.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"wrote {args.out}/engine-bench.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
