"""What runs inside an executor: one Arrow table (a unit of work) in, results out.

A unit is the events of one PARTITION BY key, one time slice, or the whole
stream, each row carrying its global position (``POS``) and, for slices,
whether the slice owns it (``OWN``).  Its rows go straight into the engine's
incremental :class:`~acel.acea.engine.Runner` at their global positions (the
slice's owned starts only): as typed column blocks built by Arrow when the native
trend core reads them (no Python object per event), else as attribute maps; the
results come back as Arrow columns.  No Python code runs row by row through Spark: every function here
gets a whole table.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import signal
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from acel.io.results import event_json
from acel.lang import aggregates
from acel.lang.ast import CountStar, Query, ReturnAgg, ReturnAttr, ReturnItem
from acel.lang.clauses import (
    Match,
    TrendAccumulator,
    TrendRow,
    in_window,
    window_bounds,
    window_value,
    windows_of,
)
from acel.lang.errors import DataError
from acel.lang.events import Event, OptValue, Value
from acel.lang.schema import Schema

from .keyed_slices import starts_lookup
from .unit_order import in_order, unit_monotone

POS = "__acel_pos"
"""Global stream position (0-based, spec §1) of an input row."""
OWN = "__acel_own"
"""True when the row's slice owns it (complex events starting there are reported)."""
SLICE = "__acel_slice"
"""The unit (time slice or key bucket) a row was copied into."""
STATE = "__acel_state"
"""A pickled list of partial monoid states (one per RETURN item)."""
WINDOW_LO = "window_lo"
WINDOW_HI = "window_hi"

Mode = Literal["matches", "rows", "partial"]
ValueKind = Literal["decimal", "double", "long", "string", "bool", "json"]

# ------------------------------------------------------------------ engine


def _engine_run(
    query: Query, stream: Sequence[Event], schema: Schema, start_positions: range | None
) -> list[Match] | list[TrendRow]:
    """The batch engine on a unit's events numbered from 0 (the slices' user-defined
    aggregates, which fold complex events here; everything else runs :func:`unit_run`).

    ``start_positions`` keeps only complex events (or trend contributions)
    whose start lies in the range of local positions.
    """
    from acel.acea import engine

    return engine.run(query, stream, schema, start_positions=start_positions)


def _accumulate(
    query: Query, stream: Sequence[Event], matches: Sequence[Match]
) -> list[tuple[tuple[Any, Any], TrendAccumulator]]:
    """RETURN accumulators (monoid states, not finished) per window of one key.

    ``matches`` already satisfy WITHIN and the start filter; windows are those
    of ``acel.lang.clauses.trend_rows`` on the unit's own (local) coordinates.
    """
    assert query.returns is not None
    key = matches[0].key if matches else ()
    if query.slide is None:
        acc = TrendAccumulator(query.returns)
        for m in matches:
            acc.add(m.event)
        return [((key, None), acc)]
    assert query.within is not None
    ks = windows_of(query.within, query.slide, stream)
    accs = {k: TrendAccumulator(query.returns) for k in ks}
    for m in matches:
        lo_v = window_value(query.within, stream, m.event.start)
        hi_v = window_value(query.within, stream, m.event.end)
        for k in ks:
            bounds = window_bounds(query.within, query.slide, k)
            if in_window(bounds, lo_v) and in_window(bounds, hi_v):
                accs[k].add(m.event)
    return [((key, window_bounds(query.within, query.slide, k)), accs[k]) for k in ks]


# ------------------------------------------------------------------ units


@dataclass(frozen=True)
class UnitSpec:
    """Everything an executor needs for one kind of unit (pickled once per task)."""

    query: Query
    schema: Schema
    mode: Mode
    attr_columns: tuple[str, ...]
    key_names: tuple[str, ...]
    item_kinds: tuple[ValueKind, ...]
    window_kind: ValueKind | None
    out_schema: pa.Schema
    sliced: bool = False
    shift_windows: bool = False
    fault: str = ""
    """Test-only fault injection (``session.FAULT_CONF``); empty: none."""
    native: str = ""
    """The driver's ``ACEL_NATIVE`` (``acel.io.native_switch``), applied in every task so that
    executors take the path the driver asked for; empty: the executor's own setting."""
    trace: str = ""
    """The driver's ``ACEL_SPARK_TRACE`` (:data:`TRACE_ENV`); empty: the executor's own."""


def inject_fault(fault: str) -> None:
    """Make this task fail as the fault-tolerance tests ask (``session.FAULT_CONF``).

    ``true``/``raise``: every task's first attempt raises.  ``kill:<path>``:
    the one task that first creates the marker file ``<path>`` kills its own
    Python worker with SIGKILL, as a crash or an out-of-memory kill would (the
    marker makes it exactly one worker, even across processes on one machine).
    ``raise-always``/``kill-always``: every attempt, so the job fails.  ``hold:<seconds>``:
    every task waits that long first, so a job on a few events is still running when a
    test signals the driver (the Ctrl-C and SIGTERM tests).
    """
    if not fault:
        return
    if fault.startswith("hold:"):
        time.sleep(float(fault[len("hold:"):]))
        return
    from pyspark import TaskContext

    context = TaskContext.get()
    first = context is not None and context.attemptNumber() == 0
    if fault in ("true", "raise") and first:
        raise RuntimeError("acel: injected fault on a first task attempt (test only)")
    if fault == "raise-always":
        raise RuntimeError("acel: injected fault on every task attempt (test only)")
    if fault.startswith("kill:"):
        try:
            os.close(os.open(fault[len("kill:"):], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return  # another task was the one killed
        _kill_this_worker()
    if fault == "kill-always":
        _kill_this_worker()


def _kill_this_worker() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _clean(value: object) -> OptValue:
    """An Arrow scalar as an event value: NaN is NULL, as in ``acel.io``."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value  # type: ignore[return-value]


def unit_stream(table: pa.Table, spec: UnitSpec) -> tuple[list[Event], list[int], range | None]:
    """The unit's events numbered from 0, their global positions and the owned range."""
    table = in_order(table, [POS])
    positions: list[int] = table.column(POS).to_pylist()
    # Attribute names sorted once, so each event's items are built already in order.
    names = sorted(c for c in spec.attr_columns if c in table.column_names)
    columns = []
    for name in names:
        column = table.column(name)
        if pa.types.is_floating(column.type):
            values = [_clean(v) for v in column.to_pylist()]
        else:
            values = column.to_pylist()
        columns.append(values)
    events = [
        Event(i, tuple((n, v) for n, v in zip(names, row) if v is not None))
        for i, row in enumerate(zip(*columns))
    ] if columns else [Event(i, ()) for i in range(len(positions))]
    owned: range | None = None
    if spec.sliced:
        flags: list[bool] = table.column(OWN).to_pylist()
        local = [i for i, flag in enumerate(flags) if flag]
        owned = range(local[0], local[-1] + 1) if local else range(0)
        if len(local) != len(owned):
            raise AssertionError("a slice's owned events must be contiguous")
    return events, positions, owned


def evaluate_unit(table: pa.Table, spec: UnitSpec) -> pa.Table:
    """Run one unit and return its results as an Arrow table of ``spec.out_schema``."""
    if spec.mode == "partial" and not decomposable(spec.query.returns or ()):
        events, numbers, slice_owned = unit_stream(table, spec)
        if not events or (slice_owned is not None and not slice_owned):
            return spec.out_schema.empty_table()
        return _partial_table(spec, events, numbers, slice_owned)
    table = in_order(table, [POS])
    positions: list[int] = table.column(POS).to_pylist()
    owned = _owned(table, spec)
    if not positions or (owned is not None and not owned):
        return spec.out_schema.empty_table()
    if spec.mode == "matches":
        found = unit_run(spec.query, spec, table, positions, owned)
        return pa.Table.from_pydict(
            match_columns(spec, [m for m in found if isinstance(m, Match)]), schema=spec.out_schema
        )
    if spec.mode == "rows":
        found = unit_run(spec.query, spec, table, positions, owned)
        return _rows_table(spec, [r for r in found if isinstance(r, TrendRow)])
    return _partial_states_table(spec, table, positions, owned)


def _owned(table: pa.Table, spec: UnitSpec) -> range | None:
    """A slice's owned rows (local indices, contiguous); ``None`` for other units."""
    if not spec.sliced:
        return None
    flags = np.asarray(table.column(OWN).to_numpy(zero_copy_only=False), dtype=bool)
    local = np.flatnonzero(flags)
    if not len(local):
        return range(0)
    owned = range(int(local[0]), int(local[-1]) + 1)
    if len(local) != len(owned):
        raise AssertionError("a slice's owned events must be contiguous")
    return owned


def _without_nan(column: Any) -> Any:
    """A column with NaN as NULL, as ``acel.io`` reads it (other columns unchanged)."""
    import pyarrow.compute as pc

    if pa.types.is_floating(column.type) and pc.any(pc.is_nan(column)).as_py():
        return pc.if_else(pc.is_nan(column), pa.scalar(None, column.type), column)
    return column


def unit_records(table: pa.Table, spec: UnitSpec) -> list[dict[str, Any]]:
    """The unit's events as attribute maps, in position order (NaN is NULL, as in ``acel.io``).

    Arrow's ``to_pylist`` builds them in C; NULL attributes stay as ``None``,
    which the engine reads as missing.  (Building ``Event`` objects first and
    maps from them again cost about as much as the engine on the demo.)  Units the
    native core reads as columns skip them (:func:`unit_blocks`).
    """
    names = [c for c in spec.attr_columns if c in table.column_names]
    columns = [_without_nan(table.column(name)) for name in names]
    return pa.Table.from_arrays(columns, names=names).to_pylist() if names else [{} for _ in range(table.num_rows)]


def unit_run(
    query: Query, spec: UnitSpec, table: pa.Table, positions: list[int], owned: range | None
) -> list[Any]:
    """The engine's incremental runner over one unit (the single switch point of the executors).

    Events are pushed with their global positions, so complex events come out
    at stream positions; ``owned`` (local indices) keeps the complex events, or
    trend contributions, that start in the slice.  A trend query in the native
    core's fragment (issue 23) is fed its typed columns (``Runner.push_columns`` on
    :func:`unit_blocks`, as the single process feeds Parquet), else runs of attribute
    maps (``Runner.push_batch``), keyed units too (the core routes each run's events to
    their keys' cores in one call).  The path taken is counted in :data:`PATHS`, the
    feed in :data:`FEEDS`.
    """
    from acel.acea.engine import PROGRESS_EVERY, Runner, paused_gc

    runner = Runner(query, spec.schema, monotone=unit_monotone(table, query, POS),
                    start_positions=owned, positions_given=True,
                    starts_of=starts_lookup(table, spec.key_names, owned))
    blocks = unit_blocks(table, runner, PROGRESS_EVERY if owned is not None else COLUMN_BLOCK,
                         0 if owned is None else owned.stop)
    records = unit_records(table, spec) if blocks is None else []
    # a slice stops once past its owned rows with no run alive (a key not seen yet may
    # still own starts before that: the runner knows only the keys it has met)
    stop = None if owned is None else owned.stop
    out: list[Any] = []
    read = 0
    with paused_gc():
        if blocks is not None:
            # typed columns straight into the core, no Python object per event (issue 31)
            for block in blocks:
                found = runner.push_batch(block) if isinstance(block, list) else runner.push_columns(block)
                read += len(block)
                if found:
                    out.extend(found)
                if stop is not None and read >= stop and runner.exhausted():
                    break
        elif runner.native is not None:
            # positions do not reach the trend core, keyed or not: only runs of events count
            for a in range(0, len(records), PROGRESS_EVERY):
                found = runner.push_batch(records[a:a + PROGRESS_EVERY])
                if found:
                    out.extend(found)
                if stop is not None and a + PROGRESS_EVERY >= stop and runner.exhausted():
                    break
        else:
            for k, (attrs, position) in enumerate(zip(records, positions)):
                found = runner.push(attrs, position)
                if found:
                    out.extend(found)
                if (stop is not None and k % PROGRESS_EVERY == PROGRESS_EVERY - 1 and k >= stop
                        and runner.exhausted()):
                    break
        out.extend(runner.finish())
    PATHS[unit_path(runner)] += 1
    FEEDS["columns" if blocks is not None else "maps" if runner.native is not None else "events"] += 1
    return out


COLUMN_BLOCK = 1 << 16
"""Rows of a unit's column block when no slice's end is watched (``exhausted``)."""

FEEDS: Counter[str] = Counter()
"""Units run in this Python worker, per feed: ``columns`` (Arrow columns into the native
core, :func:`unit_blocks`), ``maps`` (attribute maps into the core), ``events`` (one
``Runner.push`` per event); the trace reports them."""


def unit_blocks(table: pa.Table, runner: Any, rows: int, whole: int = 0) -> Iterator[Any] | None:
    """The unit's events as the native core's typed column blocks (``acel.io.columns``),
    ``rows`` at a time after the first ``whole`` rows (those :data:`COLUMN_BLOCK` at a time:
    a slice's owned rows, all read anyway, in blocks of the usual size; small blocks only
    where the slice may stop early), built column-wise by Arrow from the task's own batches:
    the path the single process takes for Parquet (``EventStream.column_blocks``).  ``None``
    when the runner takes attribute maps only (no native core, SLIDE, a string attribute
    read).  A block's size changes no result (the core reads events one by one), only
    the per-block cost: a keyed slice's cores are synced once a block (issue 31)."""
    from acel.io.columns import arrow_blocks

    spec = runner.column_spec() if runner.native is not None else None
    if spec is None:
        return None
    n = table.num_rows
    present = set(table.column_names)
    columns = [_without_nan(table.column(name)) if name in present else pa.nulls(n, pa.int64())
               for name in spec.names]
    chosen = pa.Table.from_arrays(columns, names=list(spec.names))
    whole = min(whole, n) if rows < COLUMN_BLOCK else 0
    batches = [*chosen.slice(0, whole).to_batches(max_chunksize=COLUMN_BLOCK),
               *chosen.slice(whole).to_batches(max_chunksize=rows)]
    return arrow_blocks(spec, [batch for batch in batches if batch.num_rows])


PATHS: Counter[str] = Counter()
"""Units run in this Python worker, per path (:func:`unit_path`); the trace reports them."""


def unit_path(runner: Any) -> str:
    """How a unit ran: ``native`` (the C trend core throughout), ``handed-over`` (it began
    there and went on in exact Python ints), or ``python``."""
    from acel.acea.engine.native_trend import NativePropagator

    if runner.native is None:
        return "python"
    evaluators = [p.evaluator for p in runner.partitions.values()]
    if any(isinstance(e, NativePropagator) and e.python is not None for e in evaluators):
        return "handed-over"
    return "native" if all(isinstance(e, NativePropagator) for e in evaluators) else "python"


@contextmanager
def native_mode(value: str) -> Iterator[None]:
    """``ACEL_NATIVE`` set to the driver's ``value`` while a task runs (empty: left as it is)."""
    from acel.io.native_switch import VARIABLE

    if not value:
        yield
        return
    before = os.environ.get(VARIABLE)
    os.environ[VARIABLE] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before


TRACE_ENV = "ACEL_SPARK_TRACE"
"""A file each task appends one JSON line of timings to (benchmarks: papers/spark.md)."""

_LOADED = time.time()
"""When this Python worker imported the executor (unpickling its first task)."""


def evaluate_task(batches: Iterable[pa.RecordBatch], spec: UnitSpec) -> Iterator[pa.RecordBatch]:
    """Run every unit (``SLICE`` value) of one Spark task's rows; their results in turn."""
    trace = spec.trace or os.environ.get(TRACE_ENV)
    started, cpu = time.time(), time.process_time()
    received = list(batches)
    if not received or not any(batch.num_rows for batch in received):
        return
    inject_fault(spec.fault)
    arrived = time.time()
    before, fed = Counter(PATHS), Counter(FEEDS)
    table = in_order(pa.Table.from_batches(received), [SLICE, POS])
    units = table.column(SLICE).to_numpy()
    cuts = [0, *(np.flatnonzero(units[1:] != units[:-1]) + 1).tolist(), len(units)]
    with native_mode(spec.native):
        for a, b in zip(cuts, cuts[1:]):
            yield from evaluate_unit(table.slice(a, b - a), spec).to_batches()
    if trace:
        _trace(trace, {"pid": os.getpid(), "rows": table.num_rows, "units": len(cuts) - 1,
                       "paths": dict(PATHS - before), "feeds": dict(FEEDS - fed),
                       "process_start": _process_start(), "module_loaded": _LOADED,
                       "started": started, "input_s": arrived - started,
                       "work_s": time.time() - arrived, "cpu_s": time.process_time() - cpu,
                       "ended": time.time()})


def copy_task(
    batches: Iterable[pa.RecordBatch], spec: UnitSpec, target: str, key_table: pa.Table
) -> Iterator[pa.RecordBatch]:
    """One key bucket's task read straight from a file's Parquet copy (no shuffle).

    The task's input is its bucket number (one row of ``spark.range``); it reads
    the copy (``frames.copy_file``: attribute columns and ``POS``, in stream order)
    itself, keeps the rows whose PARTITION BY key ``key_table`` places in that
    bucket (Arrow ``is_in``, or a join for several key attributes: NULL and NaN keys
    never match, as PARTITION BY drops them) and runs them as :func:`evaluate_task`
    runs a shuffled bucket.
    """
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    wanted = [int(v) for batch in batches for v in batch.column(0).to_pylist()]
    chosen = key_table.filter(pc.is_in(key_table.column(SLICE), value_set=pa.array(wanted, pa.int64())))
    if not chosen.num_rows:
        return
    columns = [*spec.attr_columns, POS]
    keys = [name for name in key_table.column_names if name != SLICE]
    kept: list[pa.RecordBatch] = []
    # batch by batch: a task holds its own buckets' rows, never the whole copy
    for batch in pq.ParquetFile(target).iter_batches(batch_size=COPY_BATCH, columns=columns):
        table = pa.Table.from_batches([batch])
        if len(keys) == 1 and len(wanted) == 1:  # the usual task: one bucket, one key attribute
            table = table.filter(pc.is_in(table.column(keys[0]), value_set=chosen.column(keys[0])))
            table = table.append_column(SLICE, pa.array(np.full(table.num_rows, wanted[0], np.int64)))
        else:
            table = table.join(chosen, keys=keys, join_type="inner").select([*columns, SLICE])
        kept.extend(table.to_batches())
    yield from evaluate_task(kept, spec)


COPY_BATCH = 1 << 16
"""Rows of the copy read at a time by :func:`copy_task`."""


def _process_start() -> float | None:
    """This process's start (the Python worker's fork), from ``/proc`` (Linux)."""
    try:
        return os.stat(f"/proc/{os.getpid()}").st_ctime
    except OSError:
        return None


def _trace(path: str, record: dict[str, Any]) -> None:
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is not None:
            record.update(stage=context.stageId(), partition=context.partitionId())
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    except OSError:
        pass


def vars_json(match: Match) -> str:
    """``vars`` of spec §12 as compact JSON text with sorted keys."""
    obj = {name: [event_json(e) for e in bag] for name, bag in match.event.vars}
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def match_columns(spec: UnitSpec, matches: Sequence[Match]) -> dict[str, list[Any]]:
    """Complex events (at global positions) as the output columns' values."""
    out: dict[str, list[Any]] = {name: [] for name in spec.out_schema.names}
    for g in matches:
        key = dict(g.key)
        for name in spec.key_names:
            out[name].append(key.get(name))
        out["start"].append(g.event.start)
        out["end"].append(g.event.end)
        out["vars"].append(vars_json(g))
    return out


# ------------------------------------------------------------------ RETURN values


def typed_value(kind: ValueKind, value: OptValue, name: str) -> Any:
    """A RETURN value in its DataFrame column kind (exact integers as DECIMAL(38,0))."""
    if value is None:
        return None
    if kind == "json":
        from acel.io.lines import value_json

        return value_json(value).decode()  # integers of any size (json.dumps stops at 4,300 digits)
    if kind == "decimal":
        if isinstance(value, bool) or not isinstance(value, int):
            raise DataError(f"{name}: expected an integer, found {value!r}")
        if abs(value) >= 10**38:
            from acel.io.values import int_text

            text = int_text(value)
            shown = text if len(text) <= 60 else f"{text[:12]}…{text[-6:]} ({len(text):,} digits)"
            raise DataError(
                f"{name} = {shown} does not fit the DataFrame column DECIMAL(38,0); "
                "use the single-process engine for such counts (--engine optimized)"
            )
        return Decimal(value)
    if kind == "double":
        return float(value)  # type: ignore[arg-type]
    return value


def python_value(kind: ValueKind, value: Any) -> OptValue:
    """The inverse of :func:`typed_value` (for ``run_to_results``)."""
    if value is None:
        return None
    if kind == "json":
        from acel.io.values import int_from_digits

        return json.loads(value, parse_int=int_from_digits)  # type: ignore[no-any-return]
    if kind == "decimal":
        try:
            return int(Decimal(value))
        except InvalidOperation:
            raise DataError(f"not an integer: {value!r}") from None
    if kind == "double":
        return float(value)
    return value  # type: ignore[no-any-return]


def item_columns(items: Sequence[ReturnItem], key_names: Sequence[str]) -> list[int]:
    """Indices of the RETURN items that get their own column (key attributes do not)."""
    return [
        i
        for i, item in enumerate(items)
        if not (isinstance(item, ReturnAttr) and item.name in key_names)
    ]


def _rows_table(spec: UnitSpec, rows: Sequence[TrendRow]) -> pa.Table:
    return pa.Table.from_pydict(rows_columns(spec, rows), schema=spec.out_schema)


def rows_columns(spec: UnitSpec, rows: Sequence[TrendRow]) -> dict[str, list[Any]]:
    """RETURN rows as the output columns' values (key columns, window, items)."""
    assert spec.query.returns is not None
    items = spec.query.returns
    shown = item_columns(items, spec.key_names)
    names = spec.out_schema.names
    out: dict[str, list[Any]] = {name: [] for name in names}
    for row in rows:
        key = dict(row.key)
        for name in spec.key_names:
            out[name].append(key.get(name))
        if spec.query.slide is not None:
            assert row.window is not None
            out[WINDOW_LO].append(row.window[0])
            out[WINDOW_HI].append(row.window[1])
        column = len(spec.key_names) + (2 if spec.query.slide is not None else 0)
        for index, kind in zip(shown, spec.item_kinds):
            value = row.values[index][1]
            out[names[column]].append(typed_value(kind, value, row.values[index][0]))
            column += 1
    return out


# ------------------------------------------------------------------ partial RETURN


def decomposable(items: Sequence[ReturnItem]) -> bool:
    """Whether the engine's RETURN rows may carry every item's monoid state (``Aggregate.mergeable``)."""
    for item in items:
        if isinstance(item, ReturnAgg):
            agg = aggregates.lookup(item.func)
            if agg is None or not agg.mergeable:
                return False
    return True


SELF_STATED = ("COUNT", "SUM", "MIN", "MAX")
"""Built-in aggregates whose finished value is their monoid state (``finish`` is the
identity): their items need no state twin, so the native core computes a slice's states."""


def state_items(items: Sequence[ReturnItem]) -> tuple[tuple[ReturnItem, ...], list[list[int]]]:
    """RETURN items whose finished values are monoid states, and where each original lives.

    ``F(X.a)`` becomes its state twin ``F.STATE(X.a)`` (``aggregates.state_twin``),
    whose finished value is F's monoid state; every item keeps its place.  The built-in
    COUNT, SUM, MIN and MAX stay as they are (:data:`SELF_STATED`), so a slice of a query
    with only those runs on the native trend core.
    """
    out: list[ReturnItem] = []
    for item in items:
        if isinstance(item, ReturnAgg) and not _self_stated(item.func):
            out.append(ReturnAgg(item.func.upper() + aggregates.STATE_SUFFIX, item.var, item.attr))
        else:
            out.append(item)
    return tuple(out), [[i] for i in range(len(out))]


def _self_stated(func: str) -> bool:
    """The built-in aggregate ``func`` finishes with its state (not a user's of that name)."""
    name = func.upper()
    return name in SELF_STATED and aggregates.lookup(name) is getattr(aggregates, name)


def _partial_states_table(
    spec: UnitSpec, table: pa.Table, positions: list[int], owned: range | None
) -> pa.Table:
    """Per-window partial states of one slice from the engine's RETURN rows (built-in
    mergeable aggregates: their state twins' finished values are monoid states)."""
    query = spec.query
    assert query.returns is not None
    items, where = state_items(query.returns)
    states: list[tuple[Any, Any, list[Any]]] = []
    for row in unit_run(replace(query, returns=items), spec, table, positions, owned):
        assert isinstance(row, TrendRow)
        values = [v for _, v in row.values]
        per_item = [values[idx[0]] for idx in where]
        states.append((row.key, row.window, per_item))
    return _states_table(spec, states, positions)


def _partial_table(
    spec: UnitSpec, events: list[Event], positions: list[int], owned: range | None
) -> pa.Table:
    """Per-window partial states of one slice for other aggregates: its complex events
    (starting in it only), enumerated and folded here."""
    query = spec.query
    assert query.returns is not None
    states: list[tuple[Any, Any, list[Any]]] = []
    bare = replace(query, returns=None, slide=None)
    matches = [m for m in _engine_run(bare, events, spec.schema, owned) if isinstance(m, Match)]
    for (_, window), acc in _accumulate(query, events, matches):
        per_item = [
            acc.count if isinstance(item, CountStar) else state
            for item, state in zip(query.returns, acc.accs)
        ]
        states.append(((), window, per_item))
    return _states_table(spec, states, positions)


def _states_table(spec: UnitSpec, states: list[tuple[Any, Any, list[Any]]], positions: list[int]) -> pa.Table:
    """A slice's partial states, one row per (PARTITION BY key, window)."""
    shift = positions[0] if spec.shift_windows else 0
    keys: dict[str, list[Any]] = {name: [] for name in spec.key_names}
    lo: list[Any] = []
    hi: list[Any] = []
    blobs: list[bytes] = []
    for key, window, per_item in states:
        values = dict(key)
        for name in spec.key_names:
            keys[name].append(values.get(name))
        lo.append(None if window is None else window[0] + shift)
        hi.append(None if window is None else window[1] + shift)
        blobs.append(pickle.dumps(per_item))
    return pa.Table.from_pydict(
        {**keys, WINDOW_LO: lo, WINDOW_HI: hi, STATE: blobs}, schema=spec.out_schema
    )


def combine_states(items: Sequence[ReturnItem], left: list[Any], right: list[Any]) -> list[Any]:
    """Merge two partial states item by item (counts and sums add, min/max combine)."""
    out: list[Any] = []
    for item, a, b in zip(items, left, right):
        if isinstance(item, CountStar):
            out.append(a + b)
        elif isinstance(item, ReturnAgg):
            agg = aggregates.lookup(item.func)
            assert agg is not None
            out.append(agg.combine(a, b))
        else:
            out.append(None)
    return out


def finish_states(items: Sequence[ReturnItem], states: list[Any]) -> list[tuple[str, OptValue]]:
    """The RETURN values of merged states, named as in spec §12."""
    from acel.lang.clauses import item_name

    out: list[tuple[str, OptValue]] = []
    for item, state in zip(items, states):
        if isinstance(item, ReturnAgg):
            agg = aggregates.lookup(item.func)
            assert agg is not None
            out.append((item_name(item), agg.finish(state)))
        else:
            out.append((item_name(item), state))
    return out


def merge_partials(table: pa.Table, spec: UnitSpec) -> pa.Table:
    """One (PARTITION BY key, window)'s partial states from every slice, merged and finished."""
    query = spec.query
    assert query.returns is not None
    blobs = table.column(STATE).to_pylist()
    if not blobs:
        return spec.out_schema.empty_table()
    state: list[Any] = pickle.loads(blobs[0])
    for blob in blobs[1:]:
        state = combine_states(query.returns, state, pickle.loads(blob))
    window = None
    if query.slide is not None:
        window = (table.column(WINDOW_LO)[0].as_py(), table.column(WINDOW_HI)[0].as_py())
    key = tuple((name, table.column(name)[0].as_py()) for name in spec.key_names)
    row = TrendRow(key, window, tuple(finish_states(query.returns, state)))
    return _rows_table(spec, [row])


def identity_row(items: Sequence[ReturnItem]) -> list[tuple[str, OptValue]]:
    """The RETURN values over no complex event (COUNT 0, SUM 0, MIN/MAX/AVG NULL)."""
    acc = TrendAccumulator(tuple(items))
    return list(acc.row((), None).values)


def as_value(value: Any) -> Value | None:
    """Identity with a type for mypy (values read back from Spark rows)."""
    return value  # type: ignore[no-any-return]
