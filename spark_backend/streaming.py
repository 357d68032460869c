"""ACEL on Spark Structured Streaming: the engine's state in Spark's state store.

``stream(query, streaming_df, schema=...)`` returns a streaming DataFrame of
results with the columns of :func:`acel.spark_backend.run`; ``start`` writes it
to a file sink with a checkpoint, ``read_results`` reads a sink back.  Each
PARTITION BY key (the whole stream without PARTITION BY) is one group of
``applyInPandasWithState``; its state is the engine's incremental
:class:`~acel.acea.engine.Runner` saved as bytes (``Runner.save``) plus the
events that may not be evaluated yet.  See papers/spark.md, "Structured
Streaming".

What a stream must carry, and why:

* **Positions** (``pos_col``, default ``pos``): each event's 0-based position in
  the whole stream (spec §1: an event's time *is* its position), each position
  once.  Results name events by position, ``EVENTS`` windows and ``:`` count
  them, and the batch run on the same events numbers them so; a streaming
  source knows neither the input order of a micro-batch (Spark's file source
  splits and shuffles rows) nor how many events all other keys had before.
  The producer (a sequence number, a log offset) does.
* **Event time** (``time_col``; the positions when omitted): non-decreasing
  along positions, as after the sort by the time column (spec §12).  Spark's
  watermark (``max event time − delay``) says which events are complete: an
  event is evaluated once the watermark has passed it, in position order, so
  events may arrive up to ``delay`` late and out of order.  Later ones are
  dropped by Spark (``numRowsDroppedByWatermark`` in the query's progress).
  Without PARTITION BY an event is also evaluated as soon as every position
  before it has been, so a stream arriving in order waits for nothing.
  With ``WITHIN d ON time_col`` the watermark also closes windows: SLIDE rows
  and trailing-NOT results of keys that get no more events are emitted when
  the watermark passes their window (``Runner.advance``).
* **The end** (optional): a row whose type is ``#end`` (``END_TYPE``; no query
  can name it) ends the stream: Spark's watermark jumps past every event, every
  key evaluates what it holds and finishes (the RETURN rows without SLIDE,
  results waiting for a window that never closed).  Without it the stream
  never ends and such results stay in the state store.
* **Ticks** (optional): a row whose type is ``#tick`` (``TICK_TYPE``) carries
  only a time: it moves Spark's watermark like an event and is otherwise
  skipped (no position, never a result, never counted).  With
  ``idle_advance=RATE`` the driver writes such ticks itself while the stream
  is quiet (:class:`Ticker`): event time follows the wall clock from the last
  event's time at ``RATE`` units a second, so results waiting for a window to
  close (a trailing NOT, SLIDE rows) come out on time, as ``--idle-advance``
  does for a live standard input (:mod:`acel.io.watermark`).

Results are emitted once, when final; the state store and the sink's commit
log (a file sink with a checkpoint) make each micro-batch exactly once across
failures and restarts.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import acel.spark_backend.frames as frames

from acel.io.output_formats import spark_sink
from acel.lang.ast import Query
from acel.lang.checker import attribute_kinds
from acel.lang.clauses import Match, TrendRow, item_name
from acel.lang.errors import AcelError, DataError
from acel.lang.schema import Schema

from .event_time import (
    END_MS,
    ENDED_MS,
    SHIFT,
    TICK_EVERY,
    TICK_POS,
    TICK_TYPE,
    IdleTicks,
    TickClock,
    Ticker,
    data_rows,
    progress_ms,
)
from .executor import UnitSpec, item_columns
from .failures import spark_errors
from .key_stream import (
    ATTRS,
    ET,
    ET_MS,
    KEY,
    POS,
    STATE,
    KeyStream,
    StreamSpec,
    coordinate_of,
    decode_checkpoint,
    handler,
    timeout_of,
)
from .layout import _SPARK_OF, Layout, _window_kind, item_kind
from .run import _arrow, _query, _struct, results_of
from .session import prepare_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from .shaped import Counts

END_TYPE = "#end"
"""The type of the row that ends a stream (not an ACEL name, so no query sees it)."""



@dataclass(frozen=True)
class PlannedStream:
    """A planned stream: the streaming result frame and how to read its rows back."""

    frame: DataFrame
    query: Query
    layout: Layout
    schema: Schema
    ticks: IdleTicks | None = None
    kinds: dict[str, str] = dataclasses.field(default_factory=dict)
    """The value kind of each column of the stream (what :mod:`.shaped` types by)."""

    @property
    def stream(self) -> StreamEvents:
        """The events' kinds and types, as :func:`.shaped.shaped` reads them."""
        return StreamEvents(self.kinds, self.schema)


@dataclass(frozen=True)
class StreamEvents:
    """A stream's attribute kinds and event types (the batch run's ``Stream`` has both)."""

    kinds: dict[str, str]
    schema: Schema


# ------------------------------------------------------------------ planning


def plan_stream(
    query: Query | str,
    data: DataFrame,
    *,
    schema: Schema,
    pos_col: str = "pos",
    type_col: str = "type",
    time_col: str | None = None,
    delay: float = 0,
    idle_advance: float | None = None,
    ticks: str | None = None,
    tick_every: float = TICK_EVERY,
) -> PlannedStream:
    """The streaming result frame of ``query`` over the streaming DataFrame ``data``.

    ``schema``: the event types and attributes (a stream has no data to infer
    them from up front).  ``pos_col``: each event's 0-based stream position;
    ``time_col``: the event-time column the positions follow (default: the
    positions); ``delay``: how late, in that column's units, an event may arrive
    (Spark's watermark delay).  ``idle_advance``: while the stream is quiet,
    event time moves on at this many ``time_col`` units a second (ticks the
    driver writes to the folder ``ticks``, a new temporary one by default, once
    :func:`start` runs the query, one each ``tick_every`` seconds of quiet:
    each costs two micro-batches; papers/spark.md, "Deadlines on a quiet
    stream").  See the module doc.
    """
    if idle_advance is not None:
        if not (isinstance(idle_advance, (int, float)) and 0 < idle_advance < math.inf):
            raise AcelError(f"idle_advance must be a positive number of time units a second, "
                            f"not {idle_advance!r}")
        if time_col is None:
            raise AcelError("idle_advance needs the stream's time column (time_col): it moves "
                            "event time, not positions")
        if not (isinstance(tick_every, (int, float)) and 0 < tick_every < math.inf):
            raise AcelError(f"tick_every must be a positive number of seconds, not {tick_every!r}")
    with spark_errors():
        return _plan_stream(query, data, schema=schema, pos_col=pos_col, type_col=type_col,
                            time_col=time_col, delay=delay, idle_advance=idle_advance, ticks=ticks,
                            tick_every=tick_every)


def _plan_stream(
    query: Query | str,
    data: DataFrame,
    *,
    schema: Schema,
    pos_col: str,
    type_col: str,
    time_col: str | None,
    delay: float,
    idle_advance: float | None = None,
    ticks: str | None = None,
    tick_every: float = TICK_EVERY,
) -> PlannedStream:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    from pyspark.sql.streaming.state import GroupStateTimeout

    if not data.isStreaming:
        raise AcelError("stream() needs a streaming DataFrame (spark.readStream...); use run() for a batch")
    spark: SparkSession = data.sparkSession
    prepare_session(spark)
    if not (isinstance(delay, (int, float)) and delay >= 0 and math.isfinite(delay)):
        raise AcelError(f"the watermark delay must be a non-negative number, not {delay!r}")
    header = data.columns
    for column, what in ((type_col, "type"), (pos_col, "position"), (time_col, "time")):
        if column is not None and column not in header:
            raise DataError(
                f"the {what} column {column!r} is not in the stream (columns: {', '.join(header)})"
            )
    if type_col != "type" and "type" in header:
        raise DataError(f"a 'type' column clashes with the type column {type_col!r}")
    frame = frames.normalise(data, "<stream>")
    if type_col != "type":
        frame = frame.withColumnRenamed(type_col, "type")
        pos_col = "type" if pos_col == type_col else pos_col
        time_col = "type" if time_col == type_col else time_col
    frame = frame.withColumn("type", F.col("type").cast("string"))
    kinds = {f.name: k for f in frame.schema.fields if (k := frames._kind(f.dataType)) is not None}
    if kinds.get(pos_col) != "int":
        raise DataError(f"the position column {pos_col!r} must hold integers (0-based stream positions)")
    if time_col is not None and kinds.get(time_col) not in ("int", "float"):
        raise DataError(f"the time column {time_col!r} must be a number or a timestamp")
    parsed = _query(query, schema)
    keys = tuple(parsed.partition_by)
    for k in keys:
        if k not in frame.columns:
            raise DataError(f"PARTITION BY {k}: the stream has no column {k!r}")

    # Attributes travel as one JSON text per event: exact ints, floats, strings and
    # booleans (pandas would turn an integer column with a NULL into floats);
    # NULL (and NaN, as in acel.io) attributes are left out.
    attr_cols = []
    for field in frame.schema.fields:
        col = F.col(f"`{field.name}`")
        if isinstance(field.dataType, T.DoubleType):
            col = F.when(F.isnan(col), F.lit(None)).otherwise(col)
        attr_cols.append(col.alias(field.name))
    end = F.col("type") == F.lit(END_TYPE)
    tick = F.col("type") == F.lit(TICK_TYPE)
    source = F.col(f"`{time_col or pos_col}`").cast("double")
    et_ms = F.when(end, F.lit(END_MS)).otherwise(
        (F.floor(source) + F.lit(SHIFT)).cast("long")
    )
    # a tick row has no position: TICK_POS marks it for the keys to skip
    position = F.when(tick, F.lit(TICK_POS)).otherwise(F.col(f"`{pos_col}`")).cast("long")
    lowest, highest = -SHIFT, ENDED_MS - SHIFT - 1
    missing = F.when(
        ~end & (position.isNull() | source.isNull() | F.isnan(source)),
        F.raise_error(F.lit(f"an event lacks its position ({pos_col!r}) or its time "
                            f"({(time_col or pos_col)!r}); every event of a stream needs both")),
    ).when(
        # outside this range a time would read as the end row or break the watermark
        ~end & ((source < F.lit(lowest)) | (source >= F.lit(highest))),
        F.raise_error(F.lit(f"an event's time ({(time_col or pos_col)!r}) is outside "
                            f"{lowest:,}..{highest:,}, the range a stream's event time can "
                            "take (one unit is one millisecond of Spark's event time: use "
                            "seconds or milliseconds, not microseconds)")),
    )
    staged = frame.select(
        *[F.col(f"`{k}`") for k in keys],
        F.coalesce(position, F.lit(-1)).alias(POS),
        et_ms.alias(ET_MS),
        F.to_json(F.struct(*attr_cols)).alias(ATTRS),
        missing.alias("__acel_check"),
    )
    idle = None
    if idle_advance is not None:
        idle = IdleTicks(float(idle_advance), _tick_folder(ticks), math.ceil(delay), float(tick_every))
        staged = staged.unionByName(_tick_rows(spark, idle.folder, staged))
    if keys:
        # Events lacking a key attribute join no partition (spec §6): they are left
        # out before the watermark, the end row is kept (its key is NULL: a group of
        # its own that only moves the watermark).
        present = F.lit(True)
        for k in keys:
            col = F.col(f"`{k}`")
            present = present & col.isNotNull()
            if kinds.get(k) == "float":
                present = present & ~F.isnan(col)
        staged = staged.filter(present | (F.col(ET_MS) == F.lit(END_MS))
                               | (F.col(POS) == F.lit(TICK_POS)))
        group_cols = [F.col(f"`{k}`") for k in keys]
    else:
        staged = staged.withColumn(KEY, F.lit(0))
        group_cols = [F.col(KEY)]
    staged = staged.withColumn(ET, F.timestamp_millis(F.col(ET_MS))).withWatermark(
        ET, f"{math.ceil(delay)} milliseconds"
    )
    key_fields = [(k, frame.schema[k].dataType.simpleString()) for k in keys]
    mode = "matches" if parsed.returns is None else "rows"
    items = tuple(parsed.returns or ())
    shown = item_columns(items, keys)
    item_kinds = tuple(item_kind(items[i], attribute_kinds(parsed, kinds)) for i in shown)
    window_kind = _window_kind(parsed)
    if mode == "matches":
        fields = key_fields + [("start", "bigint"), ("end", "bigint"), ("vars", "string")]
    else:
        fields = list(key_fields)
        if window_kind is not None:
            fields += [("window_lo", _SPARK_OF[window_kind]), ("window_hi", _SPARK_OF[window_kind])]
        fields += [(item_name(items[i]), _SPARK_OF[k]) for i, k in zip(shown, item_kinds)]
    struct = _struct(fields)
    unit = UnitSpec(
        query=parsed, schema=schema, mode=mode,  # type: ignore[arg-type]
        attr_columns=tuple(frame.columns), key_names=keys, item_kinds=item_kinds,
        window_kind=window_kind, out_schema=_arrow(struct),
    )
    within = parsed.within
    axis = within is not None and within.attr is not None and within.attr == time_col
    spec = StreamSpec(unit, contiguous=not keys, axis=axis, out_names=tuple(n for n, _ in fields),
                      pos_col=pos_col)
    result = staged.groupBy(*group_cols).applyInPandasWithState(
        handler(spec), struct, STATE, "append", GroupStateTimeout.EventTimeTimeout
    )
    layout = Layout(mode, keys, items, item_kinds, window_kind)  # type: ignore[arg-type]
    return PlannedStream(result, parsed, layout, schema, idle, kinds)


def _tick_folder(ticks: str | None) -> str:
    """The folder the driver's ticks land in (made here; a temporary one by default)."""
    import tempfile
    from pathlib import Path

    if ticks is None:
        return tempfile.mkdtemp(prefix="acel-ticks-")
    Path(ticks).mkdir(parents=True, exist_ok=True)
    return str(Path(ticks).resolve())


def _tick_rows(spark: SparkSession, folder: str, staged: DataFrame) -> DataFrame:
    """The driver's tick files as staged rows (no key, no position, no attributes):
    a second source whose rows only move the watermark.  Read files are deleted."""
    from pyspark.sql import functions as F

    ticks = (spark.readStream.schema("ms long").option("cleanSource", "delete")
             .json(folder))
    columns = []
    for field in staged.schema.fields:
        if field.name == POS:
            columns.append(F.lit(TICK_POS).cast("long").alias(POS))
        elif field.name == ET_MS:
            columns.append(F.col("ms").cast("long").alias(ET_MS))
        else:
            columns.append(F.lit(None).cast(field.dataType).alias(field.name))
    return ticks.select(*columns)


def stream(
    query: Query | str,
    data: DataFrame,
    *,
    schema: Schema,
    pos_col: str = "pos",
    type_col: str = "type",
    time_col: str | None = None,
    delay: float = 0,
    vars: str = "struct",
    counts: Counts = "long",
) -> DataFrame:
    """Run an ACEL query on a streaming DataFrame: a streaming DataFrame of results.

    (``idle_advance`` needs the driver's ticks, which :func:`start` writes: use
    :func:`plan_stream` and :func:`start` for it.)

    The columns are those of ``acel.spark.run`` for the same query, shaped for people
    (:mod:`.shaped`: complex events as PARTITION BY columns, ``start``, ``end`` and
    ``vars`` one struct per variable, ``vars="json"`` the §12 text; RETURN rows as
    PARTITION BY columns, the SLIDE window, one column per item named without
    backticks, counts ``bigint`` unless ``counts="decimal"``).  Each result is
    emitted once, when final.  Write it with ``writeStream`` (append mode) and a
    checkpoint; :func:`start` writes the executors' own columns, which
    :func:`read_results` reads back.  See the module doc for what the stream must
    carry (positions, event time, the end row).
    """
    from .shaped import shaped

    planned = plan_stream(query, data, schema=schema, pos_col=pos_col, type_col=type_col,
                          time_col=time_col, delay=delay)
    if vars == "json" and planned.layout.mode == "matches":
        return planned.frame
    with spark_errors():
        return shaped(planned, counts)


def start(
    planned: PlannedStream,
    out: str,
    *,
    checkpoint: str,
    fmt: str = "parquet",
    once: bool = False,
    name: str | None = None,
) -> StreamingQuery:
    """Write a planned stream to a file sink (``parquet`` or ``jsonl``), exactly once.

    ``checkpoint``: the query's checkpoint folder (offsets, the state store,
    the sink's commits); restarting with the same folder resumes where the
    last committed micro-batch ended.  ``once``: process what is available and
    stop (``Trigger.AvailableNow``).
    """
    sink = spark_sink(fmt)  # the output registry's formats with a Spark sink
    with spark_errors():
        writer = (
            planned.frame.writeStream.format(sink)
            .outputMode("append")
            .option("checkpointLocation", checkpoint)
            .option("path", out)
        )
        if name:
            writer = writer.queryName(name)
        if once:
            writer = writer.trigger(availableNow=True)
        running = writer.start()
    if planned.ticks is not None and not once:
        ticker = Ticker(planned.ticks, running)
        ticker.clock.resume(checkpoint_watermark(checkpoint), time.time())
        ticker.start()
    return running


def checkpoint_watermark(checkpoint: str) -> int | None:
    """The watermark (ms) of the last micro-batch a checkpoint planned, ``None`` for a
    new checkpoint (Spark's offset log: a version line, then the batch's metadata)."""
    from pathlib import Path

    logs = [p for p in (Path(checkpoint) / "offsets").glob("*") if p.name.isdigit()]
    if not logs:
        return None
    try:
        lines = max(logs, key=lambda p: int(p.name)).read_text().splitlines()
        mark = json.loads(lines[1]).get("batchWatermarkMs")
    except (OSError, IndexError, ValueError, AttributeError):
        return None
    return mark if isinstance(mark, int) and mark > 0 else None


def read_results(
    planned: PlannedStream, out: str, fmt: str = "parquet", session: SparkSession | None = None
) -> list[Match] | list[TrendRow]:
    """The results a file sink holds (committed micro-batches only), sorted as spec §12."""
    from pyspark.sql import SparkSession

    spark = session or SparkSession.getActiveSession()
    assert spark is not None
    with spark_errors():
        reader = spark.read.schema(planned.frame.schema)
        frame = reader.format(spark_sink(fmt)).load(out)
        return results_of(planned, frame.collect())  # type: ignore[arg-type]


def end_row(columns: dict[str, Any] | None = None, *, type_col: str = "type") -> dict[str, Any]:
    """The row that ends a stream (other columns NULL unless given)."""
    return {**(columns or {}), type_col: END_TYPE}


def watermark_ms(progress: dict[str, Any] | None) -> int | None:
    """The watermark a micro-batch used (from ``StreamingQuery.lastProgress``), in ms."""
    return progress_ms(progress or {}, "watermark")


def ended(progress: dict[str, Any] | None) -> bool:
    """Whether a micro-batch ran after the end row: every key has finished."""
    mark = watermark_ms(progress)
    return mark is not None and mark >= ENDED_MS


def await_end(query: StreamingQuery, timeout: float = 600.0) -> None:
    """Wait until the stream's end row has been processed (all results out).

    ``processAllAvailable`` returns once the input is read; the keys finish in
    the micro-batch after the end row (when the watermark has moved past it).
    """
    import time

    with spark_errors():
        query.processAllAvailable()
        deadline = time.monotonic() + timeout
        while not ended(query.lastProgress):
            if query.exception() is not None or not query.isActive:
                query.awaitTermination(1)  # stopped: raises its error at once (pyspark 4 refuses 0)
                if not ended(query.lastProgress):
                    raise AcelError("the streaming query stopped before the end row was processed")
                return
            if time.monotonic() > deadline:
                raise AcelError(f"the end row was not processed within {timeout:.0f} s")
            time.sleep(0.1)


def follow(query: StreamingQuery, report: Any, *, stop_at_end: bool = True,
           ticks: IdleTicks | None = None) -> dict[str, int]:
    """Report each micro-batch as it completes (``report(line)``) until the query stops,
    or the end row has been processed (``stop_at_end``: then stop it).  Returns totals.

    Each line gives the batch, its input rows (``ticks``: the driver's ticks left
    out), the keys in the state store, the rows Spark dropped as later than the
    watermark, and how long the batch took (read to committed output).
    """
    import time

    totals = {"batches": 0, "events": 0, "dropped": 0}
    seen = -1
    while True:
        with spark_errors():
            active = query.isActive
            progress = query.recentProgress
        for p in progress:
            if p["batchId"] <= seen:
                continue
            seen = p["batchId"]
            operators = p.get("stateOperators") or [{}]
            dropped = int(operators[0].get("numRowsDroppedByWatermark", 0) or 0)
            rows = data_rows(p, ticks)
            totals["batches"] += 1
            totals["events"] += rows
            totals["dropped"] += dropped
            fix = "raise --delay" + (" or lower --idle-advance" if ticks is not None else "")
            late = f", {dropped:,} late rows dropped ({fix})" if dropped else ""
            report(f"batch {p['batchId']}: {rows:,} rows in, "
                   f"{int(operators[0].get('numRowsTotal', 0)):,} keys in state{late}, "
                   f"{p['durationMs'].get('triggerExecution', 0) / 1000:.2f} s")
        if stop_at_end and progress and ended(progress[-1]):
            with spark_errors():
                query.stop()
            return totals
        if not active:
            with spark_errors():
                query.awaitTermination(1)  # stopped: raises its error at once (pyspark 4 refuses 0)
            return totals
        time.sleep(0.2)


# ------------------------------------------------------------------ a folder of files


def _spark_formats() -> dict[str, str]:
    """File extension → Spark's file source, over the registered input formats."""
    from acel.io.readers import readers

    return {suffix: r.spark_format for r in readers() if r.spark_format for suffix in r.suffixes}


def folder_files(folder: str) -> list[str]:
    """The event files in ``folder`` (Spark's file source ignores names starting ``.`` or ``_``)."""
    from pathlib import Path

    formats = _spark_formats()
    return sorted(
        str(p) for p in Path(folder).iterdir()
        if p.is_file() and not p.name.startswith((".", "_")) and p.suffix.lower() in formats
    )


def folder_stream(
    spark: SparkSession,
    folder: str,
    *,
    type_col: str = "type",
    schema: Schema | None = None,
    files_per_batch: int | None = None,
) -> tuple[DataFrame, Schema]:
    """A streaming DataFrame of the event files landing in ``folder``, and its schema.

    The files present when it starts give Spark's column types and, unless
    ``schema`` is given, the event types and attributes (``acel.io`` reads them);
    later files must have the same columns.  Write each file elsewhere and move
    it in (a rename), so that Spark never reads half a file.
    """
    from pathlib import Path

    present = folder_files(folder)
    if not present:
        raise DataError(f"{folder}: no event files yet (.jsonl, .csv, .parquet): the stream's "
                        "columns are taken from the files present when it starts")
    suffixes = {Path(p).suffix.lower() for p in present}
    kinds = {_spark_formats()[x] for x in suffixes}
    if len(kinds) > 1:
        raise DataError(f"{folder}: files of several formats ({', '.join(sorted(suffixes))})")
    fmt = kinds.pop()
    with spark_errors():
        from acel.io.readers import reader_for

        reader = spark.read.format(fmt)
        for key, value in reader_for(present[0]).spark_options:
            reader = reader.option(key, value)
        columns = reader.load(present).schema
    if schema is None:
        from acel.io import open_events

        types: dict[str, list[str]] = {}
        value_kinds: dict[str, str] = {}
        for path in present:
            found = open_events(path, type_col=type_col).schema
            for name, attrs in found.types:
                if name not in (END_TYPE, TICK_TYPE):
                    types.setdefault(name, [])
                    types[name] += [a for a in attrs if a not in types[name]]
            value_kinds.update(dict(found.kinds))
        schema = Schema.of(types, value_kinds)
    with spark_errors():
        stream_reader = spark.readStream.schema(columns)
        if fmt == "csv":
            stream_reader = stream_reader.option("header", True)
        if files_per_batch:
            stream_reader = stream_reader.option("maxFilesPerTrigger", files_per_batch)
        return stream_reader.format(fmt).load(folder), schema


__all__ = ["ATTRS", "END_MS", "ENDED_MS", "ET_MS", "POS", "SHIFT", "StreamSpec", "coordinate_of",
           "timeout_of", "handler", "END_TYPE", "TICK_TYPE", "IdleTicks", "KeyStream", "decode_checkpoint", "PlannedStream", "TickClock", "Ticker",
           "await_end", "end_row", "ended", "folder_stream", "follow", "plan_stream", "read_results",
           "start", "stream", "watermark_ms"]
