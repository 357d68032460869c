"""A Parquet file read in place by the slices' tasks: the driver writes no copy (issue 31).

For a query cut into time slices on ``WITHIN d ON a`` (papers/spark.md, Pipeline
steps 2 and 4), a Parquet file of plain columns already in stream order needs no
copy: the driver runs the single-process reader's column-wise check over it
(:func:`acel.io.open_events`: every check, message, schema and kind is that reader's;
it reads the columns and writes nothing), counting the planning facts of the PARTITION
BY and ``ON`` columns from the batches that check reads (:class:`FileFacts`,
``file_facts.Tally``: one read of the file on the driver), and each engine task reads its
slices' row groups from the user's file and converts them batch by batch as the
reader does (``arrow_source.event_columns``), adding ``POS`` (the row index, which is
the stream position since the file needs no sort).  Anything else (another format, a
nested or timestamp column, rows out of time order, ints beyond 64 bits, a query not
sliced, a cluster) keeps the driver's copy.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acel.lang.schema import Schema

from .file_facts import AxisIndex, FileFacts, Tally, event_layout

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import SparkSession

IN_PLACE_ENV = "ACEL_SPARK_IN_PLACE"
"""``0``: always write the driver's copy (as before issue 31's in-place reading)."""

ONE_READ_ENV = "ACEL_SPARK_ONE_READ"
"""``0``: count the key and ``ON`` facts in a second read of the file (as before the
check's own batches were counted; for A/B measurements and tests)."""

SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class InPlace:
    """Where a task reads a file's events in place, and how it lays them out."""

    path: str
    type_col: str
    layout: Any
    """The events' Arrow columns (``file_facts.event_layout``), without ``POS``."""
    index: dict[str, AxisIndex] = field(default_factory=dict, compare=False, repr=False)
    """The ``ON`` axes' marks, counted in the check's read (the driver's, not shipped)."""

    def file_column(self, name: str) -> str:
        """The file's column holding an event column (``type`` is the type column)."""
        return self.type_col if name == "type" else name


@dataclass(frozen=True)
class Checked:
    """A file the driver checked for reading in place: its events' schema and facts."""

    place: InPlace
    schema: Schema
    count: int
    facts: FileFacts


def candidate(path: str) -> bool:
    """Whether a file may be read in place at all: Parquet, every column of a plain
    type (the reader's column-wise path), not turned off."""
    import pyarrow.parquet as pq

    from acel.io.arrow_source import plain_type

    if os.environ.get(IN_PLACE_ENV, "1") == "0" or not path.lower().endswith(SUFFIXES):
        return False
    if not Path(path).is_file():
        return False
    try:
        schema = pq.read_schema(path)
    except Exception:  # noqa: BLE001 - the reader reports an unreadable file itself
        return False
    return all(plain_type(field.type) for field in schema)


def check(
    path: str, *, type_col: str, time_col: str | None, schema: Schema | None,
    keys: Sequence[str], axes: Sequence[str],
) -> Checked | None:
    """The single-process reader's check of the file (its errors raised word for word)
    and the planning facts over the key and axis columns; ``None`` when the file must
    be copied after all (out of time order, not column-wise, ints beyond 64 bits, empty)."""
    from acel.io import open_events
    from acel.io.options import SourceOptions

    tally = Tally(type_col, keys, axes) if os.environ.get(ONE_READ_ENV, "1") != "0" else None
    options = SourceOptions(type_col=type_col, time_col=time_col, schema=schema, observe=tally)
    stream = open_events(path, options=options)
    facts = stream.facts
    if (stream.sort or facts is None or not facts.int64 or not facts.count
            or getattr(stream, "_arrow", None) is None):
        return None
    layout = event_layout(stream.schema)
    kinds = dict(stream.schema.kinds)
    counted = tally.facts(layout, kinds) if tally is not None else None
    place = InPlace(path, type_col, layout, tally.index() if counted is not None and tally is not None else {})
    if counted is None:  # counted again: a column the check's types do not give as counted
        counted = FileFacts(tuple(keys), tuple(axes), {} if keys else None)
        wanted = [n for n in dict.fromkeys([*keys, *axes]) if n in layout.names]
        if wanted:
            _count_facts(place, wanted, counted, kinds)
    return Checked(place, stream.schema, facts.count, counted)


def _count_facts(place: InPlace, wanted: list[str], facts: FileFacts, kinds: dict[str, str]) -> None:
    """Count the key and axis columns into ``facts``, row group by row group, as the copy
    counts them (the same converted columns)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from acel.io.arrow_source import event_columns

    target = pa.schema([place.layout.field(n) for n in wanted])
    handle = pq.ParquetFile(place.path)
    columns = list(dict.fromkeys(place.file_column(n) for n in wanted))
    for group in range(handle.num_row_groups):
        table = handle.read_row_group(group, columns=columns)
        batches = [event_columns(b, place.type_col, target) for b in table.to_batches()]
        if batches:
            facts.add(pa.Table.from_batches(batches, target), kinds)


def convert(table: Any, place: InPlace, names: Sequence[str], first: int) -> Any:
    """Rows of the user's file (``first`` the position of the first) as the copy holds
    them: the event columns ``names`` converted as the reader converts them, and ``POS``."""
    import numpy as np
    import pyarrow as pa

    from acel.io.arrow_source import event_columns

    from .executor import POS

    target = pa.schema([place.layout.field(n) for n in names])
    batches = [event_columns(b, place.type_col, target) for b in table.to_batches()]
    out = pa.Table.from_batches(batches, target) if batches else target.empty_table()
    positions = pa.array(np.arange(first, first + out.num_rows, dtype=np.int64))
    return out.append_column(pa.field(POS, pa.int64()), positions)


# ------------------------------------------------------------------ started early

PENDING: dict[tuple[Any, ...], Future[Checked | None]] = {}
"""Checks started by :func:`prefetch`, taken by :func:`take` with the same arguments."""


def _key(path: str, type_col: str, time_col: str | None, schema: Schema | None,
         keys: Sequence[str], axes: Sequence[str]) -> tuple[Any, ...]:
    return (os.path.abspath(path), type_col, time_col, schema, tuple(keys), tuple(sorted(axes)))


def prefetch(path: str, *, type_col: str, time_col: str | None, schema: Schema | None,
             keys: Sequence[str], axes: Sequence[str]) -> None:
    """Start :func:`check` in a background thread (overlapping the JVM's start, as the
    copy's prefetch does); :func:`take` waits for it and raises its errors unchanged."""
    key = _key(path, type_col, time_col, schema, keys, axes)
    if key in PENDING:
        return
    pending: Future[Checked | None] = Future()
    pending.set_running_or_notify_cancel()

    def work() -> None:
        try:
            pending.set_result(check(path, type_col=type_col, time_col=time_col, schema=schema,
                                     keys=keys, axes=axes))
        except BaseException as error:  # handed to take, which raises it
            pending.set_exception(error)

    PENDING[key] = pending
    threading.Thread(target=work, name="acel-check", daemon=True).start()


def take(
    spark: SparkSession, path: str, *, type_col: str, time_col: str | None,
    schema: Schema | None, keys: Sequence[str], axes: Sequence[str], sliced_on: str | None,
) -> Checked | None:
    """The checked file when its slices' tasks may read it in place: the query sliced on
    ``sliced_on``, a local session, a candidate file in stream order whose ``ON`` axis
    never decreases; else ``None`` (the caller copies it)."""
    from .shipping import files_shared

    key = _key(path, type_col, time_col, schema, keys, axes)
    pending = PENDING.pop(key, None)
    if sliced_on is None or not files_shared(spark):
        return None
    if pending is not None:
        checked = pending.result()
    elif candidate(path):
        checked = check(path, type_col=type_col, time_col=time_col, schema=schema, keys=keys, axes=axes)
    else:
        return None
    if checked is None or sliced_on not in checked.place.layout.names:
        return None
    monotone = (checked.facts.axis or {}).get(sliced_on, (False, None, None))[0]
    missing = any((checked.facts.missing or {}).values())  # refused: the copy names the rows
    return checked if monotone and not missing else None


__all__ = ["IN_PLACE_ENV", "ONE_READ_ENV", "Checked", "InPlace", "candidate", "check", "convert",
           "prefetch", "take"]
