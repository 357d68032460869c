"""A workload (spec §6.1) on Spark: one job over one numbered DataFrame.

The stream is loaded, checked and numbered once (``frames.prepare``).  The
queries are grouped by their PARTITION BY attributes; each group is one
*plan* that a task runs with :class:`~acel.acea.engine.workload.WorkloadRunner`
(shared trend plans, prefix groups, lone runners), exactly as the
single-process engine does:

* a group with PARTITION BY: its rows (those that have every key attribute)
  are cut into a few buckets per core by key, each bucket a unit: all the
  group's queries run on the bucket's keys in one pass (keys never share a
  run, so a bucket is exact, as for one query: ``papers/spark.md``);
* the group without PARTITION BY: the whole stream is one unit (one task):
  queries over the whole stream are not sliced in a workload (slicing is
  per window size and per query; the simplest exact plan is one ordered
  pass, documented in ``papers/engine.md``).

Each group's rows are one copy of the stream (tagged with the unit), the
copies are one DataFrame (a union), and one ``mapInArrow`` runs every unit:
a single Spark job.  Results travel pickled (exact integers, the engine's own
objects) with the query's name, and are sorted per query on the driver.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import acel.spark_backend.frames as frames
import numpy as np
import pyarrow as pa

from acel.lang.ast import Query
from acel.lang.clauses import Match, TrendRow
from acel.lang.schema import Schema

from .executor import POS, SLICE, _clean, inject_fault
from .failures import spark_errors
from .progress import Report, watch
from .run import UNITS_PER_CORE, _bucketed
from .session import FAULT_CONF, get_session, prepare_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

STRIDE = 1 << 20
"""Unit ids: ``group · STRIDE + bucket``."""

QUERY = "query"
RESULT = "result"
OUT = pa.schema([(QUERY, pa.string()), (RESULT, pa.binary())])


@dataclass(frozen=True)
class WorkloadSpec:
    """What every task needs (pickled once per task)."""

    groups: tuple[tuple[tuple[str, Query], ...], ...]
    """The queries of each group (by PARTITION BY)."""
    schema: Schema
    attr_columns: tuple[str, ...]
    fault: str = ""


def plan_groups(queries: Sequence[tuple[str, Query]]) -> list[list[tuple[str, Query]]]:
    """The workload's queries grouped by PARTITION BY (first appearance order)."""
    groups: dict[tuple[str, ...], list[tuple[str, Query]]] = {}
    for name, query in queries:
        groups.setdefault(tuple(query.partition_by), []).append((name, query))
    return list(groups.values())


# ------------------------------------------------------------------ executors


def _unit_events(table: pa.Table, columns: Sequence[str]) -> tuple[list[dict[str, Any]], list[int]]:
    table = table.sort_by(POS)
    positions: list[int] = table.column(POS).to_pylist()
    names = [c for c in columns if c in table.column_names]
    values = [[_clean(v) for v in table.column(n).to_pylist()] for n in names]
    events = [
        {n: v for n, v in zip(names, row) if v is not None} for row in zip(*values)
    ] if names else [{} for _ in positions]
    return events, positions


def run_unit(
    queries: Sequence[tuple[str, Query]],
    events: Sequence[dict[str, Any]],
    positions: Sequence[int],
    schema: Schema,
) -> list[tuple[str, Any]]:
    """One unit: the group's queries in one pass over its events (global positions)."""
    from acel.acea.engine import _monotone, paused_gc
    from acel.acea.engine.workload import WorkloadRunner

    from acel.lang.events import Event

    monotone: dict[str, bool | None] = {}
    for name, query in queries:
        if query.within is not None and query.within.attr is not None:
            by_key: dict[Any, list[Event]] = {}
            for attrs in events:
                key = tuple(attrs.get(a) for a in query.partition_by)
                by_key.setdefault(key, []).append(Event(0, tuple(sorted(attrs.items()))))
            monotone[name] = _monotone(query.within, list(by_key.values()))
    runner = WorkloadRunner(queries, schema, monotone=monotone, positions_given=True)
    out: list[tuple[str, Any]] = []
    with paused_gc():
        for attrs, position in zip(events, positions):
            found = runner.push(attrs, position)
            if found:
                out.extend(found)
        out.extend(runner.finish())
    return out


def evaluate_workload_task(batches: Iterable[pa.RecordBatch], spec: WorkloadSpec) -> Iterator[pa.RecordBatch]:
    """Every unit of one task's rows: ``(query, pickled result)`` rows."""
    inject_fault(spec.fault)
    received = list(batches)
    if not received or not any(batch.num_rows for batch in received):
        return
    table = pa.Table.from_batches(received).sort_by([(SLICE, "ascending"), (POS, "ascending")])
    units = table.column(SLICE).to_numpy()
    cuts = [0, *(np.flatnonzero(units[1:] != units[:-1]) + 1).tolist(), len(units)]
    for a, b in zip(cuts, cuts[1:]):
        unit = int(units[a])
        group = spec.groups[unit // STRIDE]
        events, positions = _unit_events(table.slice(a, b - a), spec.attr_columns)
        found = run_unit(group, events, positions, spec.schema)
        if found:
            yield pa.RecordBatch.from_arrays(
                [pa.array([n for n, _ in found], pa.string()),
                 pa.array([pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL) for _, r in found],
                          pa.binary())],
                schema=OUT,
            )


# ------------------------------------------------------------------ driver


def plan_workload(
    queries: Sequence[tuple[str, Query]],
    stream: frames.Stream,
    spark: Any,
    partitions: int | None = None,
) -> tuple[DataFrame, str]:
    """The lazy result frame of a workload on a numbered stream, and the plan in words."""
    from pyspark.sql import functions as F

    n_parts = partitions or spark.sparkContext.defaultParallelism
    fault = spark.conf.get(FAULT_CONF, "") or ""
    groups = plan_groups(queries)
    copies = []
    said = []
    units = 0
    for index, group in enumerate(groups):
        keys = tuple(group[0][1].partition_by)
        frame = stream.frame
        for k in keys:
            if k not in stream.columns:
                frame = frame.withColumn(k, F.lit(None).cast("string"))
        base = index * STRIDE
        if keys:
            buckets = UNITS_PER_CORE * n_parts
            scoped = frame.filter(frames.present(stream, keys))
            tagged = _bucketed(spark, scoped, keys, buckets)
            tagged = tagged.withColumn(SLICE, F.col(SLICE) + F.lit(base))
            said.append(f"{len(group)} queries by {', '.join(keys)} in {buckets} key buckets")
            units += buckets
        else:
            tagged = frame.withColumn(SLICE, F.lit(base).cast("long"))
            said.append(f"{len(group)} queries over the whole stream in one ordered unit")
            units += 1
        copies.append(tagged.select(*stream.frame.columns, SLICE))
    union = copies[0]
    for other in copies[1:]:
        union = union.unionByName(other)
    spec = WorkloadSpec(
        tuple(tuple(g) for g in groups), stream.schema, stream.columns,
        "" if fault == "false" else fault,
    )
    tasks = max(1, min(units, UNITS_PER_CORE * n_parts))
    # units of every group spread over the tasks by a hash of the unit id
    task = F.pmod(F.xxhash64(F.col(SLICE)), F.lit(tasks)).cast("int")

    def run_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return evaluate_workload_task(batches, spec)

    from pyspark.sql import types as T

    struct = T.StructType([T.StructField(QUERY, T.StringType()), T.StructField(RESULT, T.BinaryType())])
    result = union.repartitionById(tasks, task).mapInArrow(run_task, struct)
    return result, "one job: " + "; ".join(said)


def run_workload_to_results(
    queries: Sequence[tuple[str, Query]],
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    session: Any = None,
    master: str | None = None,
    partitions: int | None = None,
    progress: Report | None = None,
    check: Callable[[Schema], None] | None = None,
) -> dict[str, list[Match] | list[TrendRow]]:
    """Every query's results (sorted as spec §12 says), from one Spark job.

    ``queries``: ``(name, Query)`` pairs, checked against the stream's schema
    by ``check(schema)`` (the command line's, with file names and carets), by
    default with :func:`acel.lang.checker.check_query`.
    """
    from acel.acea.engine import sort_matches

    from acel.lang.checker import check_query

    named = list(queries)
    with spark_errors():
        spark = session or get_session(master)
        prepare_session(spark)
    with watch(spark, progress):
        with spark_errors():
            stream = frames.prepare(spark, data, type_col=type_col, time_col=time_col, schema=schema)
        try:
            if check is not None:
                check(stream.schema)
            else:
                for _, query in named:
                    check_query(query, stream.schema)
            pairs = named
            for _, query in pairs:
                for window in (query.within, query.slide):
                    if window is not None and window.attr is not None:
                        frames.check_axis(stream, window.attr, tuple(query.partition_by))
            frame, said = plan_workload(pairs, stream, spark, partitions)
            if progress is not None:
                progress(f"{stream.count:,} events numbered; {said}")
            with spark_errors():
                rows = frame.collect()
        finally:
            stream.release()
    found: dict[str, list[Any]] = {name: [] for name, _ in named}
    for row in rows:
        found[row[QUERY]].append(pickle.loads(row[RESULT]))  # noqa: S301 - our own executors
    out: dict[str, list[Any]] = {}
    for name, query in named:
        results = found[name]
        if query.returns is None:
            out[name] = sort_matches(results)
        else:
            if not results and not query.partition_by and query.slide is None:
                results = _empty_row(query, stream.schema)
            out[name] = sorted(results, key=TrendRow.sort_key)
    return out


def _empty_row(query: Query, schema: Schema) -> list[Any]:
    """The one RETURN row of an empty stream (COUNT 0, SUM 0, MIN/MAX/AVG NULL)."""
    from acel.acea.engine import Runner

    return list(Runner(query, schema).finish())


__all__ = ["WorkloadSpec", "evaluate_workload_task", "plan_workload", "run_unit",
           "run_workload_to_results"]
