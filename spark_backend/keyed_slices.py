"""Keyed time slices in an executor: each PARTITION BY key's own owned start range.

A keyed slice holds every key's events with ``ON`` values in its data range, in
stream order; the rows it owns are one contiguous block ``owned`` of the unit
(ownership is by the ``ON`` value, which never decreases along the stream).  The
engine counts start positions inside each key's sub-stream, so each key gets the
range of its own events inside that block (papers/spark.md, Strategy 2, "Keyed
slices").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from acel.lang.clauses import Key

NONE_OWNED = range(0)
"""The start range of a key with no event in the slice's owned block."""


def key_counts(table: pa.Table, keys: Sequence[str]) -> dict[Key, int]:
    """Events per PARTITION BY key (as the engine spells a key: ``((name, value), …)``)."""
    if not table.num_rows:
        return {}
    counted = table.select(list(keys)).group_by(list(keys)).aggregate([([], "count_all")])
    columns: list[list[Any]] = [counted.column(k).to_pylist() for k in keys]
    totals: list[int] = counted.column("count_all").to_pylist()
    return {tuple(zip(keys, values)): n for *values, n in zip(*columns, totals)}


def key_starts(table: pa.Table, keys: Sequence[str], owned: range) -> dict[Key, range]:
    """Each key's owned start range, as indices in its sub-stream inside the unit
    (``table`` in stream order, rows lacking a key already dropped)."""
    before = key_counts(table.slice(0, owned.start), keys)
    inside = key_counts(table.slice(owned.start, len(owned)), keys)
    return {key: range(before.get(key, 0), before.get(key, 0) + n) for key, n in inside.items()}


def starts_lookup(table: pa.Table, keys: Sequence[str], owned: range | None) -> Callable[[Key], range] | None:
    """``Runner(starts_of=…)`` for a keyed slice; ``None`` for other units."""
    if owned is None or not keys:
        return None
    starts = key_starts(table, keys, owned)
    return lambda key: starts.get(key, NONE_OWNED)
