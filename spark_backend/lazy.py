"""A caller's DataFrame numbered and checked inside the plan: no Spark job before an action.

``acel.spark.run`` returns a lazy DataFrame (issue 25 §4).  The eager planner
(:func:`acel.spark_backend.frames.prepare`) runs a scan job to number the
stream, check bad rows and count keys before it builds the result frame; here
each of those becomes part of the result frame's own plan (papers/spark.md, "A
plan without jobs"):

* positions: rows per input partition are counted by a grouped aggregate, and a
  window over those few rows gives each partition's offset; joined back as a
  broadcast table, ``POS = offset + (id & (2^33 − 1))`` as in ``frames``;
* bad rows (spec §9) and missing ``WITHIN/SLIDE … ON`` values: the same
  aggregate sums them, and a filter on the offsets table raises one line
  (``raise_error``, read back as a ``DataError`` by ``failures.spark_errors``)
  when any is found, so the first action fails before the engine runs;
* the ``ON`` axis' order and range, for time slices: one ``mapInArrow`` summary
  per partition, combined by a window over the summaries, joined as one row.

The only job left is schema inference when no schema is given (which event types
hold which attributes decides the automaton: NEXT ranges over every type).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import acel.spark_backend.frames as frames
import pyarrow as pa

from acel.lang.errors import DataError
from acel.lang.schema import Schema

from .executor import POS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

TOTAL = "__acel_total"
"""Events in the whole stream (every row carries it)."""
PART = "__acel_part"
OFFSET = "__acel_offset"
COUNT = "__acel_n"
AX_OK = "__acel_axis_ok"
"""The ``ON`` axis never decreases along positions (time slices are exact)."""
AX_LO = "__acel_axis_lo"
AX_HI = "__acel_axis_hi"
HELPERS = (TOTAL, AX_OK, AX_LO, AX_HI)
"""Planning columns a lazily numbered frame may carry besides the attributes and ``POS``."""
MARKER = ("acel.lang.errors.DataError", ": ")
"""Prefix of the raised text, so that ``failures.spark_errors`` gives back a ``DataError``
(two literals, so that a plan printed in some other error never holds the marker whole)."""


def number(
    spark: SparkSession,
    data: DataFrame,
    *,
    type_col: str,
    time_col: str | None,
    schema: Schema | None,
    axes: Sequence[str] = (),
    keys: Sequence[str] = (),
) -> frames.Stream:
    """The numbered, checked stream of a DataFrame as a lazy plan (module docstring).

    With a time column the rows are sorted by (time, input order), a stable sort;
    the eager planner skips that sort when a scan finds them in order, which a
    plan without jobs cannot know.
    """
    from pyspark.sql import functions as F

    frame, source = frames.load(spark, data)
    frame, time_col, columns, kinds = frames.shaped(frame, source, type_col, time_col)
    base = frame.withColumn(frames.IN, F.monotonically_increasing_id())
    if time_col is not None:
        base = base.withColumn(frames.TKEY, frames._time_key(base, time_col))
    if schema is None:
        schema = _inferred(base, columns, kinds, source)
    floats = [c for c in columns if kinds.get(c) == "float"]
    conditions = frames._bad_conditions(time_col, floats)
    for attr in axes:
        if attr in columns and kinds.get(attr) in ("int", "float"):
            conditions[f"axis:{attr}"] = frames._keyed(columns, kinds, keys) & frames._missing(attr)
    if time_col is None:
        ordered, id_col = base, frames.IN
    else:
        ordered = (
            base.orderBy(F.col(frames.TKEY), F.col(frames.IN))
            .withColumn(frames.ID, F.monotonically_increasing_id())
        )
        id_col = frames.ID
    offsets = _offsets(ordered, id_col, conditions)
    failing = _failing(conditions, source, type_col, time_col, floats)
    part = F.shiftrightunsigned(F.col(id_col), frames.LOW_BITS)
    low = F.col(id_col).bitwiseAND(F.lit((1 << frames.LOW_BITS) - 1))
    numbered = (
        ordered.join(F.broadcast(offsets.filter(failing)), part == F.col(PART))
        .withColumn(POS, (F.col(OFFSET) + low).cast("long"))
        .select(*[F.col(f"`{c}`") for c in columns], F.col(POS), F.col(TOTAL))
    )
    return frames.Stream(numbered, 0, columns, kinds, schema, source, (), {},
                         None, bool(keys), (), None, lazy=True)


def _inferred(base: DataFrame, columns: Sequence[str], kinds: dict[str, str], source: str) -> Schema:
    """The schema from the data: one job (per type, the columns holding a value)."""
    others = [c for c in columns if c != "type"]
    summary = frames.summarise(base, frames.IN, None, others)
    if not sum(summary.counts.values()):
        raise DataError(
            f"{source}: the data holds no events, so there is no schema to check the query "
            "against (give a schema to run it on an empty stream)"
        )
    return frames.infer_schema(summary.present, kinds)


def _flag(n: int) -> str:
    return f"__acel_flag{n}"


def _offsets(ordered: DataFrame, id_col: str, conditions: dict[str, Column]) -> DataFrame:
    """Per id partition: its first position (``OFFSET``), the stream's ``TOTAL`` and the
    stream's sum of each condition (a few rows, one per input partition)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    part = F.shiftrightunsigned(F.col(id_col), frames.LOW_BITS)
    sums = [
        F.sum(F.coalesce(c.cast("boolean"), F.lit(False)).cast("long")).alias(_flag(n))
        for n, c in enumerate(conditions.values())
    ]
    parts = ordered.groupBy(part.alias(PART)).agg(F.count(F.lit(1)).alias(COUNT), *sums)
    before = Window.orderBy(PART).rowsBetween(Window.unboundedPreceding, -1)
    every = Window.orderBy(PART).rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    return parts.select(
        F.col(PART),
        F.coalesce(F.sum(COUNT).over(before), F.lit(0)).alias(OFFSET),
        F.sum(COUNT).over(every).alias(TOTAL),
        *[F.sum(_flag(n)).over(every).alias(_flag(n)) for n in range(len(conditions))],
    )


def _failing(
    conditions: dict[str, Column],
    source: str,
    type_col: str,
    time_col: str | None,
    floats: Sequence[str],
) -> Column:
    """True, or the first action fails with one line counting the bad rows (spec §9)."""
    from pyspark.sql import functions as F

    from acel.io.records import infinity_message

    infinity = infinity_message(float("inf")).replace("value +infinity is", "it is")
    texts = {
        "bad_type": f" row(s) with a NULL or empty type (column {type_col!r})",
        "bad_time": f" row(s) with a NULL or unreadable time (column {time_col!r}; "
                    "a number or an ISO 8601 date is needed)",
        "bad_infinity": f" row(s) with ±infinity in a float column ({', '.join(floats)}): {infinity}",
    }
    verdict: Column = F.lit(True)
    for n, name in reversed(list(enumerate(conditions))):
        count = F.col(_flag(n))
        if name.startswith("axis:"):
            attr = name[len("axis:"):]
            head = f"{MARKER[1]}{source}: "
            tail = f" event(s) have no numeric {attr!r}, which WITHIN/SLIDE ... ON {attr} needs"
        else:
            head = f"{MARKER[1]}{source}: bad input rows, nothing was run: "
            tail = texts[name]
        message = F.concat(F.lit(MARKER[0]), F.lit(head), count.cast("string"), F.lit(tail))
        verdict = F.when(count > 0, F.raise_error(message)).otherwise(verdict)
    return verdict


def with_axis(frame: DataFrame, attr: str) -> DataFrame:
    """``frame`` with ``AX_OK``, ``AX_LO``, ``AX_HI``: whether ``attr`` never decreases along
    ``POS`` and its first and last value (``frames.order_summary``, as a plan)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    out = pa.schema(
        [("lo", pa.int64()), ("hi", pa.int64()), ("first", pa.float64()),
         ("last", pa.float64()), ("ok", pa.bool_())]
    )

    def summarise(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return frames.order_batches(batches, out)

    summaries = frame.select(F.col(POS), F.col(f"`{attr}`")).mapInArrow(
        summarise, from_arrow_schema(out)
    )
    by_lo = Window.orderBy("lo")
    seams = summaries.select(
        "*", F.lag("hi").over(by_lo).alias("ph"), F.lag("last").over(by_lo).alias("pl")
    )
    fine = (
        F.col("ok")
        & F.coalesce(F.col("ph") < F.col("lo"), F.lit(True))
        & F.coalesce(F.col("pl") <= F.col("first"), F.lit(True))
    )
    one = seams.agg(
        F.coalesce(F.min(fine.cast("int")) == F.lit(1), F.lit(True)).alias(AX_OK),
        F.min_by("first", "lo").alias(AX_LO),
        F.max_by("last", "lo").alias(AX_HI),
    )
    return frame.crossJoin(F.broadcast(one))


def identity_unless_rows(result: DataFrame, identity: DataFrame, numbered: DataFrame) -> DataFrame:
    """``result``, plus ``identity`` when the stream is empty (a RETURN without PARTITION BY
    or SLIDE has one row even then, as ``acel.lang.clauses.trend_rows`` gives)."""
    from pyspark.sql import functions as F

    counted = numbered.agg(F.count(F.lit(1)).alias(COUNT))
    empty = identity.crossJoin(counted).filter(F.col(COUNT) == F.lit(0)).drop(COUNT)
    return result.union(empty)  # by position: both have the result's struct


def drop_helpers(frame: DataFrame) -> DataFrame:
    """``frame`` without the planning columns (before the engine's Arrow input)."""
    return frame.drop(*[c for c in HELPERS if c in frame.columns])

