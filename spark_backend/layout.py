"""How results sit in a Spark output DataFrame: the columns and their kinds, to write
them from the executors and read them back exactly (split from ``run``, issue 34).

Complex events are the PARTITION BY columns, ``start``, ``end`` and ``vars`` (§12 JSON
text); RETURN rows the PARTITION BY columns, the SLIDE window and one column per item
named as in spec §12.  ``shaped`` renames and retypes them for people.
"""

from __future__ import annotations

from dataclasses import dataclass

import acel.spark_backend.frames as frames

from acel.lang import aggregates
from acel.lang.ast import CountStar, Query, ReturnAttr, ReturnItem
from acel.lang.checker import attribute_kinds
from acel.lang.clauses import item_name

from .executor import WINDOW_HI, WINDOW_LO, Mode, ValueKind, item_columns


@dataclass(frozen=True)
class Layout:
    """How results sit in the output DataFrame (to read them back exactly)."""

    mode: Mode
    key_names: tuple[str, ...]
    items: tuple[ReturnItem, ...]
    item_kinds: tuple[ValueKind, ...]
    window_kind: ValueKind | None



_SPARK_OF = {
    "decimal": "decimal(38,0)",
    "double": "double",
    "long": "bigint",
    "string": "string",
    "json": "string",
    "bool": "boolean",
}
_VALUE_OF_KIND: dict[str | None, ValueKind] = {
    "int": "long",
    "float": "double",
    "str": "string",
    "bool": "bool",
}


def item_kind(item: ReturnItem, kinds: dict[str, str]) -> ValueKind:
    """The DataFrame column kind of a RETURN item (exact for integers).

    From the aggregate's ``result_kind``: an ``int`` result is DECIMAL(38,0)
    (counts and sums outgrow 64 bits) unless the aggregate ``selects`` one
    of its inputs (MIN/MAX keep the input's column); no kind or ``mixed``: JSON.
    """
    if isinstance(item, CountStar):
        return "decimal"
    if isinstance(item, ReturnAttr):
        return _VALUE_OF_KIND.get(kinds.get(item.name), "json")
    agg = aggregates.lookup(item.func)
    if agg is None:
        return "json"
    kind = agg.result_kind(kinds.get(item.attr) if item.attr is not None else None)
    if kind == "int" and not agg.selects:
        return "decimal"
    return _VALUE_OF_KIND.get(kind, "json")


def _window_kind(query: Query) -> ValueKind | None:
    if query.slide is None or query.within is None:
        return None
    sizes = (query.within.size, query.slide.size)
    return "long" if all(isinstance(s, int) for s in sizes) else "double"


def result_layout(query: Query, kinds: dict[str, str]) -> Layout:
    """How a query's results sit in the output DataFrame: complex events or RETURN rows,
    and each shown item's column kind (:func:`item_kind`)."""
    keys = tuple(query.partition_by)
    items = tuple(query.returns or ())
    seen = attribute_kinds(query, kinds)
    item_kinds = tuple(item_kind(items[i], seen) for i in item_columns(items, keys))
    mode: Mode = "matches" if query.returns is None else "rows"
    return Layout(mode, keys, items, item_kinds, _window_kind(query))


def result_fields(layout: Layout, stream: frames.Stream) -> list[tuple[str, str]]:
    """The output columns (name, Spark type): keys, then ``start, end, vars`` or the
    SLIDE window and one column per shown RETURN item (named as in spec §12)."""
    fields = [
        (k, stream.frame.schema[k].dataType.simpleString() if k in stream.columns else "string")
        for k in layout.key_names
    ]
    if layout.mode == "matches":
        return fields + [("start", "bigint"), ("end", "bigint"), ("vars", "string")]
    if layout.window_kind is not None:
        fields += [(WINDOW_LO, _SPARK_OF[layout.window_kind]), (WINDOW_HI, _SPARK_OF[layout.window_kind])]
    shown = item_columns(layout.items, layout.key_names)
    return fields + [(item_name(layout.items[i]), _SPARK_OF[k]) for i, k in zip(shown, layout.item_kinds)]


__all__ = ["Layout", "item_kind", "result_fields", "result_layout"]
