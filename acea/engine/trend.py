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

For SUM/COUNT/AVG/COUNT(*) this counts runs, which is counting complex
events only for unambiguous automata (:mod:`acea.ambiguity`); the engine
checks that before choosing this mode.  Only these five aggregates have a
known power ``c^n``; a user-registered aggregate makes the engine enumerate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from acel.acea.engine.closures import TrendItem

Vec = tuple[Any, ...]

KINDS = {"SUM": "add", "COUNT": "add", "AVG": "avg", "MIN": "min", "MAX": "max"}


def supported(items: Sequence[TrendItem]) -> bool:
    """Whether every item has a known power (so propagation is possible)."""
    return all(item.func.upper() in KINDS for item in items)


def needs_unambiguity(items: Sequence[TrendItem], count_star: bool) -> bool:
    """MIN/MAX are idempotent; counts and sums need one run per complex event."""
    return count_star or any(KINDS[item.func.upper()] in ("add", "avg") for item in items)


def identity_vector(items: Sequence[TrendItem], count: int) -> Vec:
    """``[count, 1_F1, ..., 1_Fm]``: ``count`` runs that emitted nothing yet."""
    accs: list[Any] = []
    for item in items:
        kind = KINDS[item.func.upper()]
        accs.append(0 if kind == "add" else (0, 0) if kind == "avg" else None)
    return (count, *accs)


def vector_ops(
    items: Sequence[TrendItem],
) -> tuple[Callable[[Vec, Vec], Vec], Callable[[Vec, tuple[Any, ...]], Vec]]:
    """Generated ``merge(v, w)`` and ``extend(v, contributions)`` for these items.

    ``extend`` applies one transition's contributions (``None`` entries are
    the identity) to a vector; ``merge`` adds the vectors of two run sets.
    """
    merge_parts = ["v[0] + w[0]"]
    extend_parts = ["v[0]"]
    for n, item in enumerate(items, start=1):
        kind = KINDS[item.func.upper()]
        c = f"c[{n - 1}]"
        if kind == "add":
            merge_parts.append(f"v[{n}] + w[{n}]")
            extend_parts.append(f"(v[{n}] if {c} is None else v[{n}] + v[0] * {c})")
        elif kind == "avg":
            merge_parts.append(f"(v[{n}][0] + w[{n}][0], v[{n}][1] + w[{n}][1])")
            extend_parts.append(
                f"(v[{n}] if {c} is None else "
                f"(v[{n}][0] + v[0] * {c}[0], v[{n}][1] + v[0] * {c}[1]))"
            )
        else:
            op = "<" if kind == "min" else ">"
            merge_parts.append(
                f"(w[{n}] if v[{n}] is None else v[{n}] if w[{n}] is None "
                f"else (w[{n}] if w[{n}] {op} v[{n}] else v[{n}]))"
            )
            extend_parts.append(
                f"(v[{n}] if {c} is None else {c} if v[{n}] is None "
                f"else ({c} if {c} {op} v[{n}] else v[{n}]))"
            )
    source = (
        "def merge(v, w):\n    return (" + ", ".join(merge_parts) + ",)\n"
        "def extend(v, c):\n    return (" + ", ".join(extend_parts) + ",)\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, "<trend vector ops>", "exec"), namespace)  # noqa: S102
    return namespace["merge"], namespace["extend"]
