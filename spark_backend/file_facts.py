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


def _arrow_keyed(table: Any, keys: Sequence[str], kinds: dict[str, str]) -> Any:
    """Rows of an Arrow table holding every ``keys`` attribute (not NULL, not NaN)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = pa.array([True] * table.num_rows, pa.bool_())
    for key in keys:
        if key not in table.column_names:
            return pa.array([False] * table.num_rows, pa.bool_())
        column = table.column(key)
        held = pc.is_valid(column)
        if kinds.get(key) == "float":
            held = pc.and_(held, pc.invert(pc.fill_null(pc.is_nan(column), True)))
        mask = pc.and_(mask, held)
    return mask


__all__ = ["FileFacts", "event_layout"]
