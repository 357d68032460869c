"""What the driver learns of a file's events while reading them for Spark (no Spark job).

Split from :mod:`acel.spark_backend.frames` so that a file read in place
(:mod:`acel.spark_backend.in_place`) counts the same facts the copy counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from acel.lang.schema import Schema

from .scan import MAX_KEYS

_ARROW_OF_KIND = {"int": "int64", "float": "float64", "str": "string", "bool": "bool"}


def event_layout(schema: Schema) -> Any:
    """The Arrow columns of a file's events on Spark: ``type``, then the attributes in
    order of first appearance over the types, one column type per attribute kind (an
    attribute never holding a value: string).  The copy holds them (plus ``POS``), and a
    file read in place is converted to them in the tasks."""
    import pyarrow as pa

    kinds = dict(schema.kinds)
    order: dict[str, None] = {}
    for type_name in schema.type_names():
        order.update(dict.fromkeys(schema.attributes(type_name)))
    names = ["type"] + [a for a in order if a != "type"]
    return pa.schema([
        pa.field(n, pa.string() if n == "type" else pa.type_for_alias(_ARROW_OF_KIND.get(kinds.get(n) or "str", "string")))
        for n in names
    ])


@dataclass
class FileFacts:
    """Planning facts gathered on the driver while a file's events are written for Spark.

    The copy carries each event's position (``POS``), so numbering needs no job; the
    events per PARTITION BY key, the missing ``WITHIN/SLIDE … ON`` values and the axes'
    order and range are counted batch by batch with Arrow compute (papers/spark.md,
    "A plan without jobs").
    """

    keys: tuple[str, ...] = ()
    axes: tuple[str, ...] = ()
    sizes: dict[tuple[Any, ...], int] | None = None
    missing: dict[str, int] | None = None
    axis: dict[str, tuple[bool, float | None, float | None]] | None = None

    def add(self, table: Any, kinds: dict[str, str]) -> None:
        """Count one Arrow table of events (in stream order) into the facts."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        keyed = _arrow_keyed(table, self.keys, kinds)
        if self.keys and self.sizes is not None:
            chosen = table.filter(keyed)
            if chosen.num_rows:
                counted = chosen.group_by(list(self.keys)).aggregate([([], "count_all")])
                cols = [counted.column(k).to_pylist() for k in self.keys]
                for key, c in zip(zip(*cols), counted.column("count_all").to_pylist()):
                    self.sizes[key] = self.sizes.get(key, 0) + int(c)
                if len(self.sizes) > MAX_KEYS:
                    self.sizes = None
        for attr in self.axes:
            if attr not in table.column_names or kinds.get(attr) not in ("int", "float"):
                continue
            column = pc.cast(table.column(attr), pa.float64())
            absent = pc.or_kleene(pc.is_null(column), pc.is_nan(column))
            missing = self.missing if self.missing is not None else {}
            missing[attr] = missing.get(attr, 0) + int(
                pc.sum(pc.cast(pc.and_(pc.fill_null(absent, True), keyed), "int64")).as_py() or 0
            )
            self.missing = missing
            values = pc.drop_null(column).to_numpy(zero_copy_only=False)
            axis = self.axis if self.axis is not None else {}
            ok, first, last = axis.get(attr, (True, None, None))
            if len(values):
                if (last is not None and values[0] < last) or bool(np.any(values[1:] < values[:-1])):
                    ok = False
                first = float(values[0]) if first is None else first
                last = float(values[-1])
            axis[attr] = (ok, first, last)
            self.axis = axis


AXIS_STEP = 8192
"""Rows between two marks of an :class:`AxisIndex` (10^8 events: 12k marks)."""


@dataclass(frozen=True)
class AxisIndex:
    """A never-decreasing ``ON`` axis's carried value before every ``AXIS_STEP``-th row
    (``values[j]`` the largest value of rows ``[0, rows[j])``, ``-inf`` before row 0;
    the last mark is the row count): the driver brackets each slice's rows with it, and
    the task reading them finds the exact rows in what it reads anyway
    (``direct_read.slice_task``), so the driver reads the column no second time."""

    rows: Any
    values: Any

    def bracket(self, starts: Any, ends: Any) -> tuple[Any, Any]:
        """Per slice, rows ``[lo, hi)`` holding every row whose carried value is in
        ``[start, end]`` (the exact cut lies within)."""
        import numpy as np

        before = np.searchsorted(self.values, starts, "left") - 1  # the last mark below start
        after = np.searchsorted(self.values, ends, "right")  # the first mark above end
        return self.rows[before], self.rows[np.minimum(after, len(self.rows) - 1)]


class Tally:
    """The key and ``ON`` facts counted from the batches the reader's check reads
    (``SourceOptions.observe``): a file read in place is read once on the driver, not
    twice (issue 31).  Each batch is converted as a task converts it
    (``arrow_source.event_columns``) to the column types its Arrow types give, and
    counted a million rows at a time; :meth:`facts` hands the counts over only when
    the checked schema gives those same column types (else ``None``: count again)."""

    ROWS = 1 << 20
    """Rows converted and counted at once (as a row group of 2^20 rows was)."""

    def __init__(self, type_col: str, keys: Sequence[str], axes: Sequence[str]) -> None:
        self.type_col = type_col
        self.names = list(dict.fromkeys([*keys, *axes]))
        self.counted = FileFacts(tuple(keys), tuple(axes), {} if keys else None)
        self.target: Any = None
        self.usable = True
        self.pending: list[Any] = []
        self.rows = 0
        self.seen = 0
        self.marks: dict[str, list[Any]] = {a: [] for a in dict.fromkeys(axes)}
        self.carry: dict[str, float] = {}

    def column(self, name: str) -> str:
        return self.type_col if name == "type" else name

    def __call__(self, batch: Any) -> None:
        """One clean batch of the reader's pass (NaN already NULL), in stream order."""
        if not self.usable:
            return
        if self.target is None:
            self.target = self._target(batch.schema)
            if self.target is None:
                self.usable = False
                return
        if len(self.target):  # the counted columns only: the others' buffers are let go
            self.pending.append(batch.select(list(dict.fromkeys(self.column(f.name) for f in self.target))))
            self.rows += batch.num_rows
            if self.rows >= self.ROWS:
                self._flush()

    def _target(self, schema: Any) -> Any:
        """The converted columns for the file's key and axis columns (``None``: a column
        of no attribute kind, e.g. all NULL: left to the second count)."""
        import pyarrow as pa

        from acel.io.arrow_source import arrow_kind

        fields = []
        for name in self.names:
            column = self.column(name)
            if column not in schema.names:
                continue
            kind = "str" if name == "type" else arrow_kind(schema.field(column).type)
            if kind is None:
                return None
            fields.append(pa.field(name, pa.type_for_alias(_ARROW_OF_KIND[kind])))
        return pa.schema(fields)

    def _flush(self) -> None:
        import pyarrow as pa

        from acel.io.arrow_source import event_columns

        if not self.pending:
            return
        batches = [event_columns(b, self.type_col, self.target) for b in self.pending]
        self.pending, self.rows = [], 0
        table = pa.Table.from_batches(batches, self.target)
        kinds = self._kinds()
        self.counted.add(table, kinds)
        for attr in list(self.marks):
            if attr in table.column_names and kinds.get(attr) in ("int", "float"):
                self._mark(attr, table.column(attr))
            else:
                del self.marks[attr]
        self.seen += table.num_rows

    def _mark(self, attr: str, column: Any) -> None:
        """Every :data:`AXIS_STEP`-th row's carried ``ON`` value (the largest up to it, a
        missing value taking the one before, as ``direct_read.slice_cuts`` counts):
        while the axis never decreases, enough to bracket each slice's rows without
        reading the column again (``AxisIndex``)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        if not (self.counted.axis or {}).get(attr, (False,))[0]:
            del self.marks[attr]  # out of order: not read in place, no index needed
            return
        values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
        carry = self.carry.get(attr, -np.inf)
        if column.null_count:  # a missing value takes the last one before it
            values = np.maximum(np.maximum.accumulate(np.where(np.isnan(values), -np.inf, values)), carry)
        # else the values never decrease and start at or above the carry: already carried
        if not len(values):
            return
        first = -self.seen % AXIS_STEP or AXIS_STEP  # rows into this table of the next mark
        at = np.arange(first, len(values) + 1, AXIS_STEP)
        self.marks[attr].append((self.seen + at, values[at - 1]))
        self.carry[attr] = float(values[-1])

    def index(self) -> dict[str, AxisIndex]:
        """The axes' indexes (after :meth:`facts`): the marks, from row 0 to the last."""
        import numpy as np

        out = {}
        for attr, marks in self.marks.items():
            rows = np.concatenate([np.zeros(1, np.int64), *[r for r, _ in marks],
                                   np.array([self.seen], np.int64)])
            values = np.concatenate([np.full(1, -np.inf), *[v for _, v in marks],
                                     np.array([self.carry.get(attr, -np.inf)])])
            out[attr] = AxisIndex(rows.astype(np.int64), values.astype(np.float64))
        return out

    def _kinds(self) -> dict[str, str]:
        """The kinds of the counted columns: those of their converted types."""
        import pyarrow as pa

        return {f.name: k for f in self.target for k, t in _ARROW_OF_KIND.items()
                if pa.type_for_alias(t) == f.type}

    def facts(self, layout: Any, kinds: dict[str, str]) -> FileFacts | None:
        """The facts, when the checked events' layout holds exactly the counted columns,
        with the types and kinds they were counted with; else ``None``."""
        if not self.usable or self.target is None:
            return None
        wanted = [n for n in self.names if n in layout.names]
        if [f.name for f in self.target] != wanted or any(
                layout.field(f.name).type != f.type for f in self.target):
            return None
        counted_kinds = self._kinds()
        if any(kinds.get(n) != counted_kinds.get(n) for n in wanted if n != "type"):
            return None
        self._flush()
        return self.counted


def _arrow_keyed(table: Any, keys: Sequence[str], kinds: dict[str, str]) -> Any:
    """Rows of an Arrow table holding every ``keys`` attribute (not NULL, not NaN)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = pa.array(np.ones(table.num_rows, dtype=np.bool_))
    for key in keys:
        if key not in table.column_names:
            return pa.array(np.zeros(table.num_rows, dtype=np.bool_))
        column = table.column(key)
        held = pc.is_valid(column)
        if kinds.get(key) == "float":
            held = pc.and_(held, pc.invert(pc.fill_null(pc.is_nan(column), True)))
        mask = pc.and_(mask, held)
    return mask


__all__ = ["AXIS_STEP", "AxisIndex", "FileFacts", "Tally", "event_layout"]
