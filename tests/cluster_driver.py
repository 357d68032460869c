"""A driver process for the cluster tests (``tests/test_spark_cluster.py``).

``python cluster_driver.py <master> <report.json> <marker file>`` starts a
session against ``master`` with shipping turned off, shows that the workers'
Python lacks acel (a task importing it fails with ``No module named 'acel'``),
ships the package, and runs ``CASES`` and a run in which one Python worker is
killed.
It writes what it saw as JSON: results as spec §12 JSON Lines, which the test
compares with the single-process engine's.  Run as its own process: a Python
process holds one SparkContext, and the test process has a local one.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from acel.lang.events import Event
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["k", "g", "x", "t"], "B": ["k", "g", "x", "t"]})

CASES: dict[str, tuple[str, int | None, str]] = {
    # name: (query, slice_size, the strategy the backend must choose)
    "partition": ("(A AS a)+ ; B AS b FILTER a[x < 3] PARTITION BY k WITHIN 5 EVENTS", None,
                  "partition"),
    "slices": ("(A AS a)+ ; B AS b FILTER a[x < 3] WITHIN 4 EVENTS", 3, "slice"),
    "returns": ("RETURN COUNT(*), SUM(a.x), MAX(b.x) PATTERN (A AS a)+ ; B AS b "
                "WITHIN 6 EVENTS SLIDE 2 EVENTS", 4, "slice"),
    # Keyed slices (issue 31): PARTITION BY under WITHIN d ON t, cut by time with every
    # key in every slice; slices of 3 time units, so a key's complex events cross edges.
    "keyed_slices": ("RETURN g, COUNT(*), SUM(a.x), MAX(b.x) PATTERN (A AS a)+ ; B AS b "
                     "PARTITION BY g WITHIN 5 ON t", 3, "slice"),
}
KEYED_CASE = "keyed_slices"
"""The keyed-slices case, checked by its own test (every key's row)."""
KILLED_CASE = "returns"
"""The case run again while one Python worker kills itself mid-job."""


def stream(n: int = 40) -> list[Event]:
    """A and B events with ``x`` = position mod 4, two keys ``k``, five keys ``g`` (one RETURN
    row each) and a time ``t`` rising by 0 or 1 (ties included): matches cross slice edges."""
    return [
        Event.make(i, {"type": "AB"[i % 3 == 2], "x": i % 4, "k": i % 2, "g": i % 5,
                       "t": (3 * i) // 4})
        for i in range(n)
    ]


IN_PLACE = "in_place"
"""The keyed-slices case on a Parquet file the executors read themselves
(``spark.acel.sharedFiles``: one machine's cluster sees the driver's paths)."""


def in_place(spark: Any, folder: Path) -> dict[str, Any]:
    """The keyed-slices case planned on a Parquet file with ``spark.acel.sharedFiles`` set:
    its strategy, rows, and the copy folders written beside the file (none: read in place)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from acel.spark_backend import plan
    from acel.spark_backend.run import _collect, results_of
    from acel.spark_backend.shipping import SHARED_FILES_CONF

    from acel.io.results import to_json_lines

    data = folder / "in-place" / "events.parquet"
    data.parent.mkdir(exist_ok=True)
    rows = [dict(e.attrs) for e in stream()]
    pq.write_table(pa.Table.from_pylist(rows), data)
    text, slice_size, _ = CASES[KEYED_CASE]
    spark.conf.set(SHARED_FILES_CONF, "true")
    try:
        planned = plan(text, str(data), schema=SCHEMA, session=spark, slice_size=slice_size)
        copies = sorted(p.name for p in data.parent.iterdir() if p.name.startswith(".acel-spark"))
        try:
            lines = to_json_lines(results_of(planned, _collect(planned.frame)))
        finally:
            planned.stream.release()
    finally:
        spark.conf.unset(SHARED_FILES_CONF)
    return {"kind": planned.strategy.kind, "rows": lines, "copies": copies}


def _import_acel(_: Any) -> str:
    """Runs on an executor: import acel, failing the task if it is not there."""
    import importlib

    return str(importlib.import_module("acel").__file__)


def _where_acel_comes_from(_: Any) -> list[Any]:
    """Runs on an executor: its interpreter, whether site was skipped, acel's file."""
    import sys as worker_sys

    try:
        import acel

        found = str(acel.__file__)
    except ImportError as error:
        found = f"ImportError: {error}"
    return [worker_sys.executable, bool(worker_sys.flags.no_site), found]


def main(argv: list[str]) -> int:
    master, report_path, marker = argv
    warnings.simplefilter("ignore")
    from acel.spark_backend import get_session, plan
    from acel.spark_backend.failures import spark_errors
    from acel.spark_backend.frames import events_frame
    from acel.spark_backend.run import _collect, results_of
    from acel.spark_backend.session import FAULT_CONF
    from acel.spark_backend.shipping import SHIP_CONF, ship

    from acel.io.results import to_json_lines
    from acel.lang.errors import AcelError

    report: dict[str, Any] = {"seconds": {}}
    clock = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        report["seconds"][name] = round(now - clock[0], 2)
        clock[0] = now

    # Two attempts per task: enough for the killed worker, and the negative control's
    # doomed tasks are not tried four times each.
    spark = get_session(master, extra={SHIP_CONF: "false", "spark.task.maxFailures": "2"})
    lap("session")
    context = spark.sparkContext
    report["master"] = context.master
    report["python"] = context.pythonExec
    report["parallelism"] = context.defaultParallelism
    events = stream()

    def run(text: str, slice_size: int | None) -> tuple[str, list[str]]:
        planned = plan(text, events_frame(spark, events), schema=SCHEMA, session=spark,
                       slice_size=slice_size)
        try:
            return planned.strategy.kind, to_json_lines(results_of(planned, _collect(planned.frame)))
        finally:
            planned.stream.release()

    # Negative control: nothing shipped, so a task that imports acel fails (and the
    # failure reaches the driver as a short AcelError).
    try:
        with spark_errors():
            context.parallelize([0], 1).map(_import_acel).collect()
        report["without_shipping"] = "ran"
    except AcelError as error:
        report["without_shipping"] = str(error)
    lap("without_shipping")
    report["zip"] = str(ship(spark))
    report["worker"] = context.parallelize([0], 1).map(_where_acel_comes_from).collect()[0]
    lap("ship")
    for name, (text, slice_size, _) in CASES.items():
        report[name] = run(text, slice_size)
        lap(name)
    report[IN_PLACE] = in_place(spark, Path(report_path).parent)
    lap(IN_PLACE)
    spark.conf.set(FAULT_CONF, f"kill:{marker}")
    try:
        report["killed"] = run(*CASES[KILLED_CASE][:2])
    finally:
        spark.conf.unset(FAULT_CONF)
    lap("killed")
    report["marker"] = Path(marker).exists()
    Path(report_path).write_text(json.dumps(report, indent=1))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
