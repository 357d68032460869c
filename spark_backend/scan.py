"""The one scan job the driver runs before it plans, and the bad-row report (spec §9).

Split from :mod:`acel.spark_backend.frames`: one pass over the numbered input
(Arrow batches, no shuffle) gives rows per input partition, the bad-row flag
sums, per type the columns holding a value (schema inference), whether the time
key is already in order, and the events per PARTITION BY key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acel.lang.errors import DataError
from acel.lang.schema import Schema

from .executor import POS
from .names import IN, LOW_BITS, MAX_EXAMPLES, TKEY

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


@dataclass(frozen=True)
class Summary:
    """What one pass over the numbered frame tells the driver."""

    counts: dict[int, int]
    """Rows per id partition (the high bits of the id)."""
    flags: dict[str, int]
    """How many rows meet each flag condition."""
    present: dict[str, tuple[str, ...]]
    """Per event type, the columns holding a value on at least one of its events."""


def summarise(
    frame: DataFrame,
    id_col: str,
    flags: dict[str, Column] | None = None,
    columns: Sequence[str] | None = None,
) -> Summary:
    """One job: rows per id partition, flag sums and, per type, the non-NULL ``columns``.

    ``columns=None`` skips the per-type part (the schema is known).

    Grouping by (partition, type) gives all three at once: the numbering, the
    bad-row check and schema inference cost one pass over the data, not three
    (each Spark job also costs a round of scheduling on the driver).
    """
    from pyspark.sql import functions as F

    part = F.shiftrightunsigned(F.col(id_col), LOW_BITS).alias("p")
    sums = [F.sum(c.cast("long")).alias(name) for name, c in (flags or {}).items()]
    present = [F.count(F.col(f"`{c}`")).alias(f"c{i}") for i, c in enumerate(columns or ())]
    group = [part] if columns is None else [part, F.col("type")]
    rows = frame.groupBy(*group).agg(F.count(F.lit(1)).alias("n"), *sums, *present).collect()
    counts: dict[int, int] = {}
    for row in rows:
        counts[int(row["p"])] = counts.get(int(row["p"]), 0) + int(row["n"])
    totals = {name: sum(int(row[name] or 0) for row in rows) for name in (flags or {})}
    seen: dict[str, set[str]] = {}
    for row in rows if columns is not None else ():
        if row["type"] is None:
            continue
        held = seen.setdefault(str(row["type"]), set())
        held.update(c for i, c in enumerate(columns or ()) if row[f"c{i}"])
    by_type = {t: tuple(c for c in columns or () if c in held) for t, held in seen.items()}
    return Summary(counts, totals, by_type)


MAX_KEYS = 100_000
"""Up to this many PARTITION BY keys are counted (to place them by size); more are hashed."""


@dataclass(frozen=True)
class Scan:
    """What the one pass of :func:`scan` tells the driver."""

    summary: Summary
    in_order: bool | None
    """Whether the time key never decreases along the input (None: no time column)."""
    key_sizes: list[tuple[tuple[Any, ...], int]] | None
    """Events per PARTITION BY key (None: not asked, or more than ``MAX_KEYS``)."""
    many_keys: bool = False
    """More than ``MAX_KEYS`` keys: they are hashed over the tasks."""


def _count_present(batch: Any, n_present: int, by_type: dict[Any, list[int]]) -> None:
    """Add, per type, the rows of ``batch`` where each inferred column ``p<n>`` holds a value."""
    import pyarrow as pa

    table = pa.Table.from_batches([batch]).select(["t", *[f"p{n}" for n in range(n_present)]])
    for n in range(n_present):
        table = table.set_column(n + 1, f"p{n}", table.column(n + 1).cast(pa.int64()))
    grouped = table.group_by("t").aggregate([(f"p{n}", "sum") for n in range(n_present)])
    types = grouped.column("t").to_pylist()
    for n in range(n_present):
        for t, v in zip(types, grouped.column(f"p{n}_sum").to_pylist()):
            by_type.setdefault(t, [0] * n_present)[n] += int(v or 0)


def _count_keys(batch: Any, n_keys: int, sizes: dict[tuple[Any, ...], int]) -> bool:
    """Add the events per PARTITION BY key of ``batch`` (rows where ``kk`` holds) to ``sizes``;
    False once there are more than ``MAX_KEYS`` keys (they will be hashed instead)."""
    import pyarrow as pa

    chosen = pa.Table.from_batches([batch]).filter(batch.column(batch.schema.names.index("kk")))
    if chosen.num_rows:
        counted = chosen.group_by([f"k{n}" for n in range(n_keys)]).aggregate([([], "count_all")])
        key_cols = [counted.column(f"k{n}").to_pylist() for n in range(n_keys)]
        for key, c in zip(zip(*key_cols), counted.column("count_all").to_pylist()):
            sizes[key] = sizes.get(key, 0) + int(c)
    return len(sizes) <= MAX_KEYS


def scan(
    frame: DataFrame,
    id_col: str,
    flags: dict[str, Column],
    columns: Sequence[str] | None,
    order_col: str | None = None,
    keys: Sequence[str] = (),
    keyed: Column | None = None,
) -> Scan:
    """One job, one pass over the input (Arrow batches, no shuffle) for everything the
    driver needs before it plans: rows per input partition, the flag sums, per type the
    ``columns`` holding a value (schema inference), whether ``order_col`` never decreases
    along ``id_col`` (then no sort is needed), and the events per PARTITION BY key
    (rows where ``keyed`` holds), up to ``MAX_KEYS`` keys.

    The conditions are evaluated in the JVM and cross as booleans; each task sums its
    partition and sends one pickled summary, so the driver receives a few rows.  It
    replaces a grouped count (two stages with a shuffle), a pass checking the order
    and a job counting keys: on the demo, three Spark jobs fewer (papers/spark.md).
    """
    import pickle

    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    flag_names = list(flags)
    present = list(columns or ())
    selected = [F.col(f"`{id_col}`").alias("i"), F.col("type").alias("t")]
    selected += [F.coalesce(c.cast("boolean"), F.lit(False)).alias(f"f{n}") for n, c in enumerate(flags.values())]
    selected += [F.col(f"`{c}`").isNotNull().alias(f"p{n}") for n, c in enumerate(present)]
    if order_col is not None:
        selected.append(F.col(f"`{order_col}`").cast("double").alias("o"))
    if keys:
        selected += [F.col(f"`{k}`").alias(f"k{n}") for n, k in enumerate(keys)]
        selected.append((keyed if keyed is not None else F.lit(True)).alias("kk"))
    out = pa.schema([("blob", pa.binary())])
    n_flags, n_present, n_keys, ordered = len(flag_names), len(present), len(keys), order_col is not None
    infer = columns is not None

    def summarise_task(batches: Any) -> Any:
        import numpy as np
        import pyarrow.compute as pc

        rows = 0
        part = None
        sums = [0] * n_flags
        by_type: dict[Any, list[int]] = {}
        first = last = None
        in_order = True
        sizes: dict[tuple[Any, ...], int] | None = {} if n_keys else None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if part is None:
                part = int(batch.column(0)[0].as_py()) >> LOW_BITS
            rows += batch.num_rows
            names = batch.schema.names
            for n in range(n_flags):
                sums[n] += int(pc.sum(batch.column(names.index(f"f{n}")).cast(pa.int64())).as_py() or 0)
            if infer and not n_present:
                for t in pc.unique(batch.column(names.index("t"))).to_pylist():
                    by_type.setdefault(t, [])
            if n_present:
                _count_present(batch, n_present, by_type)
            if ordered:
                values = batch.column(names.index("o"))
                arr = values.to_numpy(zero_copy_only=False)
                if len(arr):
                    if first is None:
                        first = float(arr[0])
                    if (last is not None and arr[0] < last) or bool(np.any(arr[1:] < arr[:-1])):
                        in_order = False
                    last = float(arr[-1])
            if sizes is not None and not _count_keys(batch, n_keys, sizes):
                sizes = None
        if part is None:
            return
        report = {"part": part, "rows": rows, "flags": sums, "types": by_type,
                  "first": first, "last": last, "in_order": in_order,
                  "sizes": None if sizes is None else list(sizes.items()), "too_many": n_keys > 0 and sizes is None}
        yield pa.RecordBatch.from_pydict({"blob": [pickle.dumps(report)]}, schema=out)

    reports = [
        pickle.loads(r["blob"])
        for r in frame.select(*selected).mapInArrow(summarise_task, from_arrow_schema(out)).collect()
    ]
    return _merged(reports, flag_names, present, ordered, bool(keys))


def _merged(
    reports: list[dict[str, Any]], flag_names: list[str], present: list[str], ordered: bool,
    keyed: bool,
) -> Scan:
    """The driver's sum of the tasks' reports (:func:`scan`), in input partition order."""
    reports.sort(key=lambda r: r["part"])
    counts: dict[int, int] = {}
    totals = dict.fromkeys(flag_names, 0)
    seen: dict[str, set[str]] = {}
    for r in reports:
        counts[r["part"]] = counts.get(r["part"], 0) + r["rows"]
        for name, v in zip(flag_names, r["flags"]):
            totals[name] += v
        for t, held in r["types"].items():
            if t is None:
                continue
            seen.setdefault(str(t), set()).update(c for c, v in zip(present, held) if v)
    by_type = {t: tuple(c for c in present if c in held) for t, held in seen.items()}
    in_order: bool | None = None
    if ordered:
        in_order = all(r["in_order"] for r in reports) and all(
            a["last"] is None or b["first"] is None or a["last"] <= b["first"]
            for a, b in zip(reports, reports[1:])
        )
    key_sizes: list[tuple[tuple[Any, ...], int]] | None = None
    if keyed and not any(r["too_many"] for r in reports):
        merged: dict[tuple[Any, ...], int] = {}
        for r in reports:
            for key, c in r["sizes"]:
                merged[key] = merged.get(key, 0) + c
        key_sizes = None if len(merged) > MAX_KEYS else sorted(merged.items(), key=lambda kv: repr(kv[0]))
    many = keyed and key_sizes is None
    return Scan(Summary(counts, totals, by_type), in_order, key_sizes, many)


def _with_positions(frame: DataFrame, id_col: str, counts: dict[int, int]) -> DataFrame:
    """Exact 0-based ranks of ``monotonically_increasing_id`` values as ``POS``.

    ``frame`` must be persisted, so that the ids are fixed for every later job;
    ``counts`` are its rows per id partition.
    """
    from pyspark.sql import functions as F

    if not counts:
        return frame.withColumn(POS, F.lit(0).cast("long"))
    offsets: list[int] = []
    total = 0
    for p in range(max(counts) + 1):
        offsets.append(total)
        total += counts.get(p, 0)
    part = F.shiftrightunsigned(F.col(id_col), LOW_BITS)
    table = F.array(*[F.lit(o).cast("long") for o in offsets])
    low = F.col(id_col).bitwiseAND(F.lit((1 << LOW_BITS) - 1))
    position = F.element_at(table, (part + 1).cast("int")) + low
    return frame.withColumn(POS, position.cast("long"))


def _examples(frame: DataFrame, condition: Column, columns: Sequence[str]) -> list[str]:
    """The first few rows meeting ``condition``, by 1-based input row (``frame`` has POS)."""
    rows = frame.filter(condition).orderBy(POS).limit(MAX_EXAMPLES).collect()
    out = []
    for row in rows:
        values = ", ".join(f"{c}={row[c]!r}" for c in columns)
        out.append(f"row {row[POS] + 1}: {values}")
    return out


def _bad_conditions(time_col: str | None, floats: Sequence[str] = ()) -> dict[str, Column]:
    from pyspark.sql import functions as F

    bad_type = F.col("type").isNull() | (F.col("type") == F.lit(""))
    bad_time = F.col(TKEY).isNull() if time_col is not None else F.lit(False)
    conditions = {"bad_type": bad_type, "bad_time": bad_time}
    if floats:
        infinite = F.lit(False)
        for name in floats:
            value = F.col(f"`{name}`")
            infinite = infinite | F.coalesce(
                (value == F.lit(float("inf"))) | (value == F.lit(float("-inf"))), F.lit(False)
            )
        conditions["bad_infinity"] = infinite
    return conditions


def report_bad_rows(
    frame: DataFrame,
    sums: dict[str, int],
    source: str,
    type_col: str,
    time_col: str | None,
    floats: Sequence[str] = (),
) -> None:
    """Null types, unreadable times and ±infinity are reported with counts and examples
    (spec §9).

    ``frame`` is persisted and has the input-order id ``IN``; rows are named
    by their 1-based input row.
    """
    if not sums.get("bad_type") and not sums.get("bad_time") and not sums.get("bad_infinity"):
        return
    counts = summarise(frame, IN).counts
    frame = _with_positions(frame.drop(POS), IN, counts)
    conditions = _bad_conditions(time_col, floats)
    shown = ["type"] + ([time_col] if time_col is not None and time_col != "type" else [])
    problems: list[str] = []
    if sums.get("bad_type"):
        problems.append(
            f"{sums['bad_type']} row(s) with a NULL or empty type (column {type_col!r}), e.g.:\n    "
            + "\n    ".join(_examples(frame, conditions["bad_type"], shown))
        )
    if sums.get("bad_time"):
        problems.append(
            f"{sums['bad_time']} row(s) with a NULL or unreadable time (column {time_col!r}; "
            "a number or an ISO 8601 date is needed), e.g.:\n    "
            + "\n    ".join(_examples(frame, conditions["bad_time"], shown))
        )
    if sums.get("bad_infinity"):
        from acel.io.records import infinity_message

        problems.append(
            f"{sums['bad_infinity']} row(s) with ±infinity in a float column: "
            + infinity_message(float("inf")).replace("value +infinity is", "it is")
            + ", e.g.:\n    "
            + "\n    ".join(_examples(frame, conditions["bad_infinity"], ["type", *floats]))
        )
    raise DataError(f"{source}: bad input rows, nothing was run:\n  " + "\n  ".join(problems))


def infer_schema(present: dict[str, tuple[str, ...]], kinds: dict[str, str]) -> Schema:
    """Per type, the columns with a non-NULL value; kinds from the column types."""
    types = {t: list(columns) for t, columns in present.items()}
    return Schema.of(types, {c: k for c, k in kinds.items() if c != "type"})
