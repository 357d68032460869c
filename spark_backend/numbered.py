"""A numbered stream on Spark, and the checks and summaries of its ``ON`` axes (spec §6).

Split from :mod:`acel.spark_backend.frames`, which builds the :class:`Stream`.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acel.lang.errors import DataError
from acel.lang.schema import Schema

from .executor import POS
from .names import MAX_EXAMPLES

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from .in_place import InPlace

_TEMPORARY: list[str] = []
"""Folders holding events read from a file, removed with their stream or at exit."""


def _remove(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if folder in _TEMPORARY:
        _TEMPORARY.remove(folder)


@dataclass(frozen=True)
class Stream:
    """A numbered stream on Spark: ``frame`` has the attribute columns plus ``POS``."""

    frame: DataFrame
    count: int
    columns: tuple[str, ...]
    kinds: dict[str, str]
    schema: Schema
    source: str
    persisted: tuple[DataFrame, ...] = ()
    flags: dict[str, int] | None = None
    """Counts of the extra checks ``prepare`` was asked for (``axis:<attr>``)."""
    key_sizes: list[tuple[tuple[Any, ...], int]] | None = None
    """Events per PARTITION BY key when ``prepare`` counted them (at most ``MAX_KEYS``)."""
    many_keys: bool = False
    """``prepare`` found more than ``MAX_KEYS`` keys (to be hashed over the tasks)."""
    folders: tuple[str, ...] = ()
    """Temporary folders holding the events read from a file (see :func:`read_file`)."""
    axes: dict[str, tuple[bool, float | None, float | None]] | None = None
    """Per ``ON`` axis, as :func:`axis_summary` gives it, when known without a job (files)."""
    in_place: InPlace | None = None
    """A Parquet file the slices' tasks read themselves (no copy; ``frame`` is then empty
    and never read: :mod:`acel.spark_backend.in_place`)."""
    lazy: bool = False
    """Numbered inside the plan (``acel.spark_backend.lazy``): ``count`` is unknown (0), the
    frame carries the total in ``TOTAL`` and its checks fail the first action."""

    def release(self) -> None:
        """Drop the cached numbered frames (after the results are collected)."""
        for frame in self.persisted:
            frame.unpersist()
        for folder in self.folders:
            _remove(folder)


def check_axis(stream: Stream, attr: str, keys: Sequence[str]) -> None:
    """``WITHIN/SLIDE ... ON attr`` needs a number on every event the formula sees."""
    from pyspark.sql import functions as F

    kind = stream.kinds.get(attr)
    if attr not in stream.columns or kind not in ("int", "float"):
        found = "no such column" if attr not in stream.columns else f"a {kind or 'non-value'} column"
        raise DataError(
            f"{stream.source}: WITHIN/SLIDE ... ON {attr} needs a numeric attribute {attr!r} "
            f"({found})"
        )
    if stream.lazy:
        return  # missing values fail the first action (``lazy.number`` counts them)
    counted = (stream.flags or {}).get(f"axis:{attr}")
    if counted == 0:
        return  # counted while the file was read: no frame to analyse (a second on a cold JVM)
    scope = stream.frame
    for key in keys:
        scope = scope.filter(_present(stream, key))
    col = F.col(f"`{attr}`")
    bad = col.isNull() | F.isnan(col.cast("double"))
    count = scope.filter(bad).count() if counted is None else counted
    if count:
        rows = scope.filter(bad).orderBy(POS).limit(MAX_EXAMPLES).collect()
        shown = ", ".join(str(r[POS]) for r in rows)
        raise DataError(
            f"{stream.source}: {count} event(s) have no numeric {attr!r}, which "
            f"WITHIN/SLIDE ... ON {attr} needs (stream positions {shown}"
            f"{', ...' if count > len(rows) else ''})"
        )


def _present(stream: Stream, column: str) -> Column:
    """The column holds a value (not NULL, not NaN): the event has the attribute."""
    from pyspark.sql import functions as F

    if column not in stream.columns:
        return F.lit(False)
    col = F.col(f"`{column}`")
    if stream.kinds.get(column) == "float":
        return col.isNotNull() & ~F.isnan(col)
    return col.isNotNull()


def present(stream: Stream, columns: Sequence[str]) -> Column:
    """Rows holding every column of ``columns`` (PARTITION BY drops the others)."""
    from pyspark.sql import functions as F

    cond = F.lit(True)
    for column in columns:
        cond = cond & _present(stream, column)
    return cond


def axis_summary(stream: Stream, attr: str) -> tuple[bool, float | None, float | None]:
    """Whether ``attr`` is non-decreasing along positions, and its (min, max)
    (from the driver's count when the stream came from a file: no job)."""
    if stream.axes is not None and attr in stream.axes:
        return stream.axes[attr]
    return order_summary(stream.frame, POS, attr)


def order_summary(
    frame: DataFrame, order_col: str, value_col: str
) -> tuple[bool, float | None, float | None]:
    """Whether ``value_col`` is non-decreasing along ``order_col``, and its first and last value.

    One pass with ``mapInArrow`` (no shuffle, no sort): each Arrow batch, in the
    order of its partition's rows, reports its first and last order value and
    value and whether it is sorted inside; the driver checks the seams between
    consecutive batches.  ``order_col`` must grow along each partition's rows.
    """
    import pyarrow as pa

    out = pa.schema(
        [("lo", pa.int64()), ("hi", pa.int64()), ("first", pa.float64()),
         ("last", pa.float64()), ("ok", pa.bool_())]
    )

    def summarise(batches: Any) -> Any:
        return order_batches(batches, out)

    from pyspark.sql.pandas.types import from_arrow_schema

    rows = (
        frame.select(f"`{order_col}`", f"`{value_col}`")
        .mapInArrow(summarise, from_arrow_schema(out))
        .collect()
    )
    rows.sort(key=lambda r: r["lo"])
    if not rows:
        return True, None, None
    ok = all(r["ok"] for r in rows)
    for a, b in zip(rows, rows[1:]):
        if a["hi"] >= b["lo"] or a["last"] > b["first"]:
            ok = False
    return ok, rows[0]["first"], rows[-1]["last"]


def order_batches(batches: Any, out: Any) -> Any:
    """Per Arrow batch of (order, value): first and last order and value, and whether both
    grow inside the batch (the values never decrease, the order strictly increases)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in batches:
        if batch.num_rows == 0:
            continue
        order = batch.column(0)
        values = pc.cast(batch.column(1), pa.float64())
        ok = True
        if batch.num_rows > 1:
            ok = not (
                pc.any(pc.less(values.slice(1), values.slice(0, batch.num_rows - 1))).as_py()
                or pc.any(pc.less_equal(order.slice(1), order.slice(0, batch.num_rows - 1))).as_py()
            )
        yield pa.RecordBatch.from_pydict(
            {"lo": [order[0].as_py()], "hi": [order[-1].as_py()],
             "first": [values[0].as_py()], "last": [values[-1].as_py()], "ok": [ok]},
            schema=out,
        )
