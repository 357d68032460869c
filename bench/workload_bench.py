"""The workload benchmark (issue 14): HAMLET's synthetic workload, shared vs one by one.

``python bench/workload_bench.py [--quick] [--out DIR]`` (also the
``workload`` part of ``bench/run.py`` and so of ``acel bench``):

* **speed**: ``n`` queries of :mod:`workload_gen` (default HAMLET parameters:
  14 types in bursts of 4, the shared Kleene type in bursts of 20, patterns of
  3 to 10 elements, ``WITHIN 40000 EVENTS SLIDE 40000 EVENTS``) over one
  window of 40,000 events, ``n`` = 10, 25, 50, 100: the optimized engine on
  each query alone (a ``Runner`` per query, the stream read ``n`` times) and
  the workload runner (one pass, shared plan); rows compared line for line;
* **no sharing**: the same workload in one pass with ``share=False`` (one
  runner per query, each fed only the types it reads);
* **decisions**: bursts of the shared type of 1, 2, 5 and 20 events, the
  dynamic optimizer against the static policies "always share" and "never
  share" (HAMLET's Figures 11–12 question);
* **memory**: the engine's peak Python heap (``tracemalloc``, input generated
  lazily in a subprocess) for the largest single query, the 50-query workload
  shared, and unshared.

Engine time is wall (``perf_counter``) and CPU (``process_time``) of the
pass over events held in memory; compiling (the plan, each query's automaton)
is timed apart and done once beforehand, as in ``bench/run.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from acel.acea.engine import Runner, paused_gc  # noqa: E402
from acel.acea.engine.workload import WorkloadRunner  # noqa: E402
from workload_gen import Params, schema, stream, workload  # noqa: E402

from acel.lang.parser import parse_query  # noqa: E402


def _timed(fn: Any) -> tuple[Any, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def alone(queries: list[tuple[str, Any]], events: list[dict[str, Any]], sch: Any) -> tuple[dict[str, list[Any]], list[float], list[float]]:
    """Each query on its own runner over the whole stream: results, wall and CPU per query."""
    results: dict[str, list[Any]] = {}
    walls, cpus = [], []
    for name, query in queries:
        Runner(query, sch).push(dict(events[0]), 0)  # compile outside the timing
        fresh = Runner(query, sch)

        def one(runner: Runner = fresh) -> list[Any]:
            out: list[Any] = []
            with paused_gc():
                for k, attrs in enumerate(events):
                    out.extend(runner.push(attrs, k))
                out.extend(runner.finish())
            return out

        found, wall, cpu = _timed(one)
        results[name] = found
        walls.append(wall)
        cpus.append(cpu)
    return results, walls, cpus


def shared(queries: list[tuple[str, Any]], events: list[dict[str, Any]], sch: Any, *, share: bool = True) -> dict[str, Any]:
    """The workload in one pass: compile (plan + a warm-up on 2,000 events) and run, timed apart."""
    def build() -> WorkloadRunner:
        warm = WorkloadRunner(queries, sch, share=share)
        for k, attrs in enumerate(events[:2000]):
            warm.push(attrs, k)
        return warm

    warm, compile_wall, compile_cpu = _timed(build)

    runner = WorkloadRunner(queries, sch, share=share)  # plans cached: no compiling here

    def run() -> tuple[dict[str, list[Any]], WorkloadRunner]:
        out: dict[str, list[Any]] = {name: [] for name, _ in queries}
        with paused_gc():
            for k, attrs in enumerate(events):
                for name, result in runner.push(attrs, k):
                    out[name].append(result)
            for name, result in runner.finish():
                out[name].append(result)
        return out, runner

    (found, runner), wall, cpu = _timed(run)
    stats: dict[str, int] = {}
    for part in runner.shared:
        for key, value in part.stats.items():
            stats[key] = stats.get(key, 0) + value
    entries = sum(plan.size for plan in runner.plans)
    scalars = sum(plan.scalars for plan in runner.plans)
    del warm
    return {
        "results": found, "wall": wall, "cpu": cpu, "compile_wall": compile_wall,
        "compile_cpu": compile_cpu, "stats": stats, "entries": entries, "scalars": scalars,
    }


def speed_part(quick: bool) -> list[dict[str, Any]]:
    sizes = [5, 10] if quick else [10, 25, 50, 100]
    base = Params(events=4_000) if quick else Params()
    sch = schema(base.types)
    top = replace(base, queries=max(sizes))
    texts = workload(top)
    queries_all = [(name, parse_query(text)) for name, text in texts]
    events = stream(top)
    solo, walls, cpus = alone(queries_all, events, sch)
    rows = []
    for n in sizes:
        queries = queries_all[:n]
        got = shared(queries, events, sch)
        agree = all(got["results"][name] == solo[name] for name, _ in queries)
        row = {
            "queries": n,
            "events": len(events),
            "alone_wall_s": sum(walls[:n]),
            "alone_cpu_s": sum(cpus[:n]),
            "shared_wall_s": got["wall"],
            "shared_cpu_s": got["cpu"],
            "compile_cpu_s": got["compile_cpu"],
            "speed_up": sum(walls[:n]) / max(got["wall"], 1e-9),
            "agree": agree,
            "scalars": got["scalars"],
            "entries": got["entries"],
            "bursts_shared": got["stats"].get("bursts_shared", 0),
            "bursts_stepped": got["stats"].get("bursts_stepped", 0),
        }
        if n == sizes[-1] // 2 or (quick and n == sizes[0]):
            unshared = shared(queries, events, sch, share=False)
            row["unshared_one_pass_wall_s"] = unshared["wall"]
            row["unshared_one_pass_cpu_s"] = unshared["cpu"]
            row["unshared_agree"] = all(
                unshared["results"][name] == solo[name] for name, _ in queries
            )
        rows.append(row)
        _print_row("workload", row)
    by_n = {r["queries"]: r for r in rows}
    if 50 in by_n and 100 in by_n:
        ratio = by_n[100]["shared_cpu_s"] / max(by_n[50]["shared_cpu_s"], 1e-9)
        print(f"[workload] 100 queries / 50 queries (CPU): {ratio:.2f}", flush=True)
    return rows


# ------------------------------------------------------------------ decisions


def decisions_part(quick: bool) -> list[dict[str, Any]]:
    """HAMLET's dynamic vs static sharing: bursts of the shared type of length 1 to 20,
    the dynamic optimizer against always sharing and never sharing bursts."""
    base = Params(events=4_000) if quick else Params(events=20_000)
    rows = []
    for burst in (1, 2, 5, 20):
        p = replace(base, shared_burst=burst, unshared_burst=1 if burst == 1 else base.unshared_burst)
        sch = schema(p.types)
        queries = [(name, parse_query(text)) for name, text in workload(p)]
        events = stream(p)
        row: dict[str, Any] = {"shared_burst": burst, "unshared_burst": p.unshared_burst,
                               "queries": len(queries), "events": len(events)}
        results = {}
        for policy in ("dynamic", "share", "step"):
            warm = WorkloadRunner(queries, sch)
            for k, attrs in enumerate(events[:1000]):
                warm.push(attrs, k)
            runner = WorkloadRunner(queries, sch)
            for part in runner.shared:
                part.policy = policy

            def go(runner: WorkloadRunner = runner, events: list[Any] = events) -> list[Any]:
                out: list[Any] = []
                with paused_gc():
                    for k, attrs in enumerate(events):
                        out.extend(runner.push(attrs, k))
                    out.extend(runner.finish())
                return out

            found, wall, cpu = _timed(go)
            results[policy] = sorted((n, r.values) for n, r in found)
            row[f"{policy}_cpu_s"] = cpu
            if policy == "dynamic":
                stats = runner.shared[0].stats
                row["bursts_shared"] = stats["bursts_shared"]
                row["bursts_stepped"] = stats["bursts_stepped"]
        row["agree"] = results["dynamic"] == results["share"] == results["step"]
        rows.append(row)
        _print_row("workload-decisions", row)
    return rows


# ------------------------------------------------------------------ memory


def memory_child(mode: str, queries: int, events: int) -> None:
    """Run in a subprocess: the engine's peak heap on a lazily generated stream."""
    import tracemalloc

    p = replace(Params(), queries=queries, events=events)
    sch = schema(p.types)
    texts = workload(p)
    named = [(name, parse_query(text)) for name, text in texts]
    if mode == "largest":
        # the longest pattern: the most states (ties: the first)
        named = [max(named, key=lambda nq: len(str(nq[1].formula)))]
    all_events = stream(p)
    share = mode == "shared"  # the largest query alone runs on its Runner, as on its own
    # compile outside the measurement: plans are cached, so a warm-up on one cycle of
    # the stream generates the code the measured runner uses
    warm = WorkloadRunner(named, sch, share=share)
    for k in range(min(2_000, len(all_events))):
        warm.push(dict(all_events[k]), k)
    del warm
    runner = WorkloadRunner(named, sch, share=share)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    count = 0
    with paused_gc():
        for k in range(len(all_events)):
            count += len(runner.push(dict(all_events[k]), k))
        count += len(runner.finish())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"mode": mode, "queries": len(named), "events": events,
                      "peak_heap_kib": (peak - before) / 1024, "results": count}))


def memory_part(quick: bool) -> list[dict[str, Any]]:
    queries, events = (10, 4_000) if quick else (50, 40_000)
    rows = []
    for mode in ("largest", "shared", "unshared"):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", mode, str(queries), str(events)],
            capture_output=True, text=True, check=True,
        )
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        _print_row("workload-memory", row)
    return rows


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _print_row(part: str, row: dict[str, Any]) -> None:
    print(f"[{part}] " + "  ".join(f"{k}={_fmt(v)}" for k, v in row.items()), flush=True)


def plot(rows: Sequence[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [r["queries"] for r in rows]
    ax.plot(xs, [r["alone_cpu_s"] for r in rows], "s--", label="each query alone (optimized engine)")
    ax.plot(xs, [r["shared_cpu_s"] for r in rows], "o-", label="workload, shared plan (one pass)")
    ax.set_xlabel("queries in the workload")
    ax.set_ylabel("engine CPU seconds")
    ax.set_yscale("log")
    ax.set_title(f"HAMLET workload, {rows[0]['events']:,} events per window")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(quick: bool, out: str) -> dict[str, Any]:
    report = {
        "speed": speed_part(quick),
        "decisions": decisions_part(quick),
        "memory": memory_part(quick),
    }
    os.makedirs(out, exist_ok=True)
    plot(report["speed"], os.path.join(out, "workload.png"))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--memory-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        mode, queries, events = args.memory_child
        memory_child(mode, int(queries), int(events))
        return 0
    report = run(args.quick, args.out)
    with open(os.path.join(args.out, "workload-bench.json"), "w") as handle:
        json.dump(report, handle, indent=2)
    print(f"wrote {args.out}/workload-bench.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
