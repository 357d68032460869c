"""Where a Spark run's time goes, from Spark's event log (issue 16, "Cost at scale").

Spark writes one JSON object a line (``spark.eventLog.enabled``; zstd-compressed
by default, read here through the ``zstd`` tool or uncompressed with
``spark.eventLog.compress=false``).  This script turns it into a timeline:

* the application's start (``spark.app.submitTime``: the JVM is up and the
  SparkContext is being built) and the first job;
* every job: its submission and end, its stages, their task count, the sum of
  the tasks' run time, CPU time, deserialization and GC time, rows read and
  shuffle bytes, and the longest and shortest task (skew);
* the gaps between jobs (driver work: planning, Python on the driver, py4j).

    python bench/spark_eventlog.py EVENT_LOG_DIR_OR_FILE [--json]

``tasks(path)`` returns every task's stage, launch, finish and run time: the
per-task costs ``bench/spark_scaling.py`` simulates more cores with.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _lines(path: Path) -> Iterator[str]:
    files = sorted(p for p in path.iterdir() if p.name.startswith("events_")) if path.is_dir() else [path]
    for f in files:
        if f.suffix in (".zstd", ".zst"):
            text = subprocess.run(["zstd", "-dc", str(f)], check=True, capture_output=True).stdout
            yield from text.decode("utf-8").splitlines()
        else:
            yield from f.read_text(encoding="utf-8").splitlines()


def events(path: str | Path) -> Iterator[dict[str, Any]]:
    """The event log's records (a rolling log's directory or one file)."""
    for line in _lines(Path(path)):
        if line.strip():
            yield json.loads(line)


@dataclass
class Stage:
    stage_id: int
    name: str
    tasks: int = 0
    submitted: int = 0
    completed: int = 0
    run_ms: int = 0
    cpu_ms: float = 0.0
    deserialize_ms: int = 0
    gc_ms: int = 0
    records_in: int = 0
    shuffle_read: int = 0
    shuffle_write: int = 0
    task_ms: list[int] = field(default_factory=list)


@dataclass
class Job:
    job_id: int
    submitted: int
    ended: int = 0
    stages: list[int] = field(default_factory=list)
    description: str = ""


@dataclass
class Task:
    stage_id: int
    launch: int
    finish: int
    run_ms: int
    cpu_ms: float


def parse(path: str | Path) -> tuple[dict[str, Any], dict[int, Job], dict[int, Stage], list[Task]]:
    app: dict[str, Any] = {}
    jobs: dict[int, Job] = {}
    stages: dict[int, Stage] = {}
    tasks: list[Task] = []
    for e in events(path):
        kind = e["Event"]
        if kind == "SparkListenerApplicationStart":
            app["start"] = e["Timestamp"]
        elif kind == "SparkListenerApplicationEnd":
            app["end"] = e["Timestamp"]
        elif kind == "SparkListenerEnvironmentUpdate":
            props = dict(e.get("Spark Properties", {}))
            app["submit"] = int(props.get("spark.app.submitTime", 0)) or None
            app["master"] = props.get("spark.master")
        elif kind == "SparkListenerJobStart":
            job = Job(e["Job ID"], e["Submission Time"], stages=list(e["Stage IDs"]))
            props = e.get("Properties") or {}
            job.description = props.get("spark.job.description") or props.get("callSite.short") or ""
            for info in e["Stage Infos"]:
                stages.setdefault(info["Stage ID"], Stage(info["Stage ID"], info["Stage Name"]))
                if not job.description:
                    job.description = info["Stage Name"]
            jobs[job.job_id] = job
        elif kind == "SparkListenerJobEnd":
            jobs[e["Job ID"]].ended = e["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            stage = stages.setdefault(info["Stage ID"], Stage(info["Stage ID"], info["Stage Name"]))
            stage.submitted = info.get("Submission Time", 0)
            stage.completed = info.get("Completion Time", 0)
        elif kind == "SparkListenerTaskEnd":
            metrics = e.get("Task Metrics") or {}
            info = e["Task Info"]
            stage = stages.setdefault(e["Stage ID"], Stage(e["Stage ID"], "?"))
            run = int(metrics.get("Executor Run Time", 0))
            cpu = metrics.get("Executor CPU Time", 0) / 1e6
            stage.tasks += 1
            stage.run_ms += run
            stage.cpu_ms += cpu
            stage.deserialize_ms += int(metrics.get("Executor Deserialize Time", 0))
            stage.gc_ms += int(metrics.get("JVM GC Time", 0))
            stage.records_in += int((metrics.get("Input Metrics") or {}).get("Records Read", 0))
            read = metrics.get("Shuffle Read Metrics") or {}
            stage.shuffle_read += int(read.get("Local Bytes Read", 0)) + int(read.get("Remote Bytes Read", 0))
            stage.shuffle_write += int((metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0))
            stage.task_ms.append(info["Finish Time"] - info["Launch Time"])
            tasks.append(Task(e["Stage ID"], info["Launch Time"], info["Finish Time"], run, cpu))
    return app, jobs, stages, tasks


def summary(path: str | Path) -> dict[str, Any]:
    """The timeline as data (seconds from the application's submission)."""
    app, jobs, stages, _ = parse(path)
    t0 = app.get("submit") or app.get("start") or min(j.submitted for j in jobs.values())
    out_jobs = []
    previous_end = app.get("start", t0)
    driver_gaps = 0.0
    for job in sorted(jobs.values(), key=lambda j: j.submitted):
        gap = max(0, job.submitted - previous_end) / 1000
        driver_gaps += gap
        previous_end = max(previous_end, job.ended)
        rows = []
        for sid in job.stages:
            s = stages.get(sid)
            if s is None or s.tasks == 0:
                continue  # skipped (its output was cached or shuffled before)
            rows.append({
                "stage": sid, "name": s.name.split(" at ")[0], "tasks": s.tasks,
                "wall_s": (s.completed - s.submitted) / 1000,
                "task_sum_s": s.run_ms / 1000, "cpu_s": s.cpu_ms / 1000,
                "deserialize_s": s.deserialize_ms / 1000, "gc_s": s.gc_ms / 1000,
                "max_task_s": max(s.task_ms) / 1000, "min_task_s": min(s.task_ms) / 1000,
                "records_in": s.records_in, "shuffle_read": s.shuffle_read,
                "shuffle_write": s.shuffle_write,
            })
        out_jobs.append({
            "job": job.job_id, "what": job.description.split(" at ")[0],
            "from_s": (job.submitted - t0) / 1000, "wall_s": (job.ended - job.submitted) / 1000,
            "driver_gap_before_s": gap, "stages": rows,
        })
    end = app.get("end") or max(j.ended for j in jobs.values())
    return {
        "master": app.get("master"),
        "context_start_s": (app.get("start", t0) - t0) / 1000,
        "first_job_s": (min(j.submitted for j in jobs.values()) - t0) / 1000 if jobs else None,
        "jobs_wall_s": sum(j["wall_s"] for j in out_jobs),
        "driver_gaps_s": driver_gaps,
        "application_s": (end - t0) / 1000,
        "jobs": out_jobs,
    }


def tasks(path: str | Path) -> list[Task]:
    """Every task of the log (stage, launch, finish, run and CPU time)."""
    return parse(path)[3]


def show(data: dict[str, Any]) -> str:
    lines = [
        f"master {data['master']}: SparkContext up {data['context_start_s']:.1f} s after submission, "
        f"first job at {data['first_job_s']:.1f} s; jobs {data['jobs_wall_s']:.1f} s, driver between "
        f"jobs {data['driver_gaps_s']:.1f} s, application {data['application_s']:.1f} s",
    ]
    for job in data["jobs"]:
        lines.append(
            f"job {job['job']:>2} at {job['from_s']:6.1f} s, {job['wall_s']:5.1f} s "
            f"(driver gap {job['driver_gap_before_s']:.1f} s): {job['what']}"
        )
        for s in job["stages"]:
            lines.append(
                f"    stage {s['stage']:>2} {s['name'][:28]:<28} {s['tasks']:>3} tasks, wall {s['wall_s']:5.1f} s, "
                f"task sum {s['task_sum_s']:5.1f} s (cpu {s['cpu_s']:5.1f}, deser {s['deserialize_s']:.1f}, "
                f"gc {s['gc_s']:.1f}), task max/min {s['max_task_s']:.1f}/{s['min_task_s']:.1f} s, "
                f"rows in {s['records_in']:,}, shuffle {s['shuffle_read'] / 1e6:.1f}/{s['shuffle_write'] / 1e6:.1f} MB"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = summary(args.path)
    print(json.dumps(data, indent=2) if args.json else show(data))


if __name__ == "__main__":
    main()
