"""Where a stream of events comes from: :func:`open_events` (spec §1, §9).

:func:`open_events` gives an :class:`~acel.io.stream.EventStream` over a file (its
format's registered reader, :mod:`acel.io.readers`), standard input
(:mod:`acel.io.live`), a list of dictionaries, a pandas DataFrame or a pyarrow
Table.  The options travel as one :class:`~acel.io.options.SourceOptions`.

Without a given schema, a file is read twice: a first pass infers the schema
(and checks every row: all problems are reported before any work starts,
spec §9), notes whether the time column is already sorted and whether the
attributes a window reads never decrease; the second pass streams the events
(:mod:`acel.io.row_passes`, :mod:`acel.io.arrow_source`).  With a given schema a
file is read once, and the rows are checked as they stream.  Sorting by a time
column is stable and bounded in memory (:mod:`acel.io.sorting`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acel.io.arrow_source import arrow_stream
from acel.io.formats import BATCH
from acel.io.live import _Reorder, stdin_stream
from acel.io.options import SourceOptions
from acel.io.readers.registry import BY_SUFFIX, reader_for
from acel.io.records import memory_row, with_time_column
from acel.io.row_passes import require_columns, rows_stream
from acel.io.sorting import DEFAULT_CHUNK
from acel.io.stream import STDIN, EventStream, Facts
from acel.lang.errors import DataError
from acel.lang.schema import Schema

__all__ = ["STDIN", "EventStream", "Facts", "SourceOptions", "_Reorder", "open_events", "with_time_column"]


def open_events(
    data: Any,
    *,
    type_col: str = "type",
    time_col: str | None = None,
    schema: Schema | None = None,
    watch: Sequence[str] = (),
    max_delay: float | None = None,
    infer_lines: int = 1000,
    chunk: int = DEFAULT_CHUNK,
    idle_advance: float | None = None,
    options: SourceOptions | None = None,
) -> EventStream:
    """An :class:`EventStream` over a path, ``"-"`` (standard input), a list of
    dictionaries, a pandas DataFrame or a pyarrow Table.

    ``options`` (or the keywords, when it is not given; see :class:`SourceOptions`):
    ``watch``, attributes whose order the caller needs (``WITHIN … ON attr``);
    ``max_delay`` (standard input with a time column): how far, in time-column
    units, an event may arrive after a later one; ``infer_lines`` (standard input
    without a schema): how many first lines fix the schema; ``idle_advance``
    (standard input with a time column): while no line arrives, event time moves
    on at this many time units a second (:mod:`acel.io.watermark`).
    """
    if options is None:
        options = SourceOptions(type_col, time_col, schema, tuple(watch), chunk, max_delay, infer_lines,
                                idle_advance)
    if isinstance(data, (str, Path)):
        if str(data) == STDIN:
            return stdin_stream(sys.stdin.buffer, options)
        return open_file(Path(data), options)
    return _memory_stream(data, options)


def open_file(path: Path, options: SourceOptions) -> EventStream:
    """An event file through its format's registered reader (by extension; an unknown one
    is :func:`reader_for`'s error)."""
    reader = BY_SUFFIX.get(path.suffix.lower()) or reader_for(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if path.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(path))
    return reader.open(path, options)


def _memory_stream(data: Any, options: SourceOptions) -> EventStream:
    """Events held in memory: dictionaries, an Arrow table or batch, a DataFrame."""
    if isinstance(data, list):
        rows = [memory_row(n, dict(r)) for n, r in enumerate(data, start=1)]
        return rows_stream("<records>", lambda: iter([rows]), options)
    table = _as_arrow(data)
    if table is not None:
        source = "<table>" if not _is_pandas(data) else "<DataFrame>"
        return arrow_stream(source, lambda: iter(table.to_batches(BATCH)), list(table.column_names), options)
    if _is_pandas(data):
        columns = [str(c) for c in data.columns]
        require_columns("<DataFrame>", columns, options)
        frame_rows = [
            memory_row(n, {c: v for c, v in zip(columns, values) if not _is_missing(v)})
            for n, values in enumerate(data.itertuples(index=False, name=None), start=1)
        ]
        return rows_stream("<DataFrame>", lambda: iter([frame_rows]), options)
    raise DataError(
        f"cannot read events from a {type(data).__name__}: give a file path, '-', a list of "
        "dictionaries, a pandas DataFrame or a pyarrow Table"
    )
def _is_pandas(data: Any) -> bool:
    return type(data).__module__.startswith("pandas") and hasattr(data, "itertuples")


def _as_arrow(data: Any) -> Any:
    """A pyarrow Table for a Table, RecordBatch or a DataFrame Arrow can hold, else None."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if _is_pandas(data):
        try:
            return pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError):
            return None
    return None


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NaTType", "NAType")

