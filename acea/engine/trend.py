"""Trend aggregation without enumeration (spec §6; GRETA seed 000, HAMLET seed 003).

GRETA propagates, along a graph of events, the number of trends ending at
each event and the sums over them; here the same propagation runs along the
*configurations* of any compiled ACEA.  Every configuration carries, per start
class (:mod:`acea.windows`), a vector

    [n, acc_1, ..., acc_m]

with ``n`` the number of partial runs reaching it and ``acc_i`` the monoid
sum, over those runs, of what they emitted for RETURN item ``i``.  A
transition emitting ``c_i`` maps it to ``[n, acc_i ⊕ c_i^n]``, where ``c^n``
is ``n·c`` for SUM/COUNT/AVG and ``c`` for the idempotent MIN/MAX; runs
meeting in one configuration add their vectors.  At a final configuration
the vector is folded into every row (window) its start class counts in.

For additive aggregates and COUNT(*) this counts runs, which is counting
complex events only for unambiguous automata (:mod:`acea.ambiguity`); the
engine checks that before choosing this mode.  Each aggregate declares its
power (``Aggregate.power`` in :mod:`acel.lang.aggregates`); one without it
(a user-registered aggregate, unless it declares one) makes the engine enumerate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from acel.acea.engine.closures import TrendItem
from acel.acea.engine.identity_memo import IdentityMemo

from acel.lang import aggregates
from acel.lang.aggregates import Aggregate

Vec = tuple[Any, ...]


def aggregate_of(item: TrendItem) -> Aggregate:
    """The registered aggregate of a trend item (the checker made sure it exists)."""
    agg = aggregates.lookup(item.func)
    if agg is None:
        raise ValueError(f"unknown aggregate function {item.func!r}")
    return agg


def supported(items: Sequence[TrendItem]) -> bool:
    """Whether every item has a known power (so propagation is possible)."""
    for item in items:
        agg = aggregates.lookup(item.func)
        if agg is None or agg.power is None:
            return False
    return True


def needs_unambiguity(items: Sequence[TrendItem], count_star: bool) -> bool:
    """Idempotent powers ignore the number of runs; additive ones need one run per complex event."""
    return count_star or any(aggregate_of(item).needs_unambiguity for item in items)


def identity_vector(items: Sequence[TrendItem], count: int) -> Vec:
    """``[count, 1_F1, ..., 1_Fm]``: ``count`` runs that emitted nothing yet."""
    return (count, *(aggregate_of(item).identity for item in items))


def _ops_source(agg: Aggregate, n: int, namespace: dict[str, Any]) -> tuple[str, str]:
    """Source of ``merge`` and ``extend`` for component ``n`` (``v[n]``, contribution ``c``)."""
    c = f"c[{n - 1}]"
    v, w = f"v[{n}]", f"w[{n}]"
    if agg.power == "additive":
        if agg.width is None:
            return f"{v} + {w}", f"({v} if {c} is None else {v} + v[0] * {c})"
        parts = range(agg.width)
        merge = "(" + "".join(f"{v}[{k}] + {w}[{k}], " for k in parts) + ")"
        extend = "(" + "".join(f"{v}[{k}] + v[0] * {c}[{k}], " for k in parts) + ")"
        return merge, f"({v} if {c} is None else {extend})"
    if agg.prefer is not None:
        op = agg.prefer
        return (
            f"({w} if {v} is None else {v} if {w} is None else ({w} if {w} {op} {v} else {v}))",
            f"({v} if {c} is None else {c} if {v} is None else ({c} if {c} {op} {v} else {v}))",
        )
    namespace[f"_combine{n}"] = agg.combine  # idempotent: c^n = c
    return f"_combine{n}({v}, {w})", f"({v} if {c} is None else _combine{n}({v}, {c}))"


def vector_ops(
    items: Sequence[TrendItem],
) -> tuple[Callable[[Vec, Vec], Vec], Callable[[Vec, tuple[Any, ...]], Vec]]:
    """Generated ``merge(v, w)`` and ``extend(v, contributions)`` for these items.

    ``extend`` applies one transition's contributions (``None`` entries are
    the identity) to a vector; ``merge`` adds the vectors of two run sets.
    """
    aggs = tuple(aggregate_of(item) for item in items)
    return _VECTOR_OPS.get(aggs, tuple(items), lambda: _vector_ops(items))


_VECTOR_OPS: IdentityMemo[Any] = IdentityMemo()
""":func:`vector_ops` by items and their aggregates' identities (held, so never reused):
each propagator made compiles them, and a Spark stream makes one per key and micro-batch
(issue 31)."""


def _vector_ops(
    items: Sequence[TrendItem],
) -> tuple[Callable[[Vec, Vec], Vec], Callable[[Vec, tuple[Any, ...]], Vec]]:
    namespace: dict[str, Any] = {}
    merge_parts = ["v[0] + w[0]"]
    extend_parts = ["v[0]"]
    for n, item in enumerate(items, start=1):
        merge, extend = _ops_source(aggregate_of(item), n, namespace)
        merge_parts.append(merge)
        extend_parts.append(extend)
    source = (
        "def merge(v, w):\n    return (" + ", ".join(merge_parts) + ",)\n"
        "def extend(v, c):\n    return (" + ", ".join(extend_parts) + ",)\n"
    )
    exec(compile(source, "<trend vector ops>", "exec"), namespace)  # noqa: S102
    return namespace["merge"], namespace["extend"]
