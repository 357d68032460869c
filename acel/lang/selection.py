"""Selection strategies (spec §6.2) and the after-match skip, as pure filters.

``select(strategy, ces)`` keeps the complex events a strategy chooses among
those of one sub-stream (or one SLIDE window) that pass WITHIN (spec §6.2, amended);
``skip_filter(skip, ces)`` walks them in start order (spec §6.3: start, end, then
the order of §12, as SQL and Flink CEP) and drops those that start before the
point the last kept one skips to.  ``papers/semantics.md`` ("Selection
strategies", "After-match skip") gives the definitions and worked examples;
``acel.lang.clauses.run_query`` applies both, so the oracle, the naive runs and
the optimized engine's batch path share them, and the incremental runner
(``acel.acea.engine.runner``) applies the same functions step by step.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from acel.lang.ast import Skip
from acel.lang.events import ComplexEvent

Positions = frozenset[int]


def positions(ce: ComplexEvent) -> Positions:
    """``D(C)``: the times of the events in ``C``'s bags (multiplicities ignored).

    This is the set of positions CEL's strategies compare (Grez, Riveros, Ugarte,
    Vansummeren, TODS 2021); ACEL's bags count each position once here.
    """
    return frozenset(e.time for _, bag in ce.vars for e in bag)


def _next_key(d: Positions) -> tuple[float, ...]:
    """Least key = NEXT's choice: the first position where two sets differ is in it."""
    return (*sorted(d), math.inf)


def _last_key(d: Positions) -> tuple[float, ...]:
    """Greatest key = LAST's choice: the last position where two sets differ is in it."""
    return (*sorted(d, reverse=True), -math.inf)


def is_strict(ce: ComplexEvent) -> bool:
    """STRICT: ``C``'s events fill every position from ``start(C)`` to ``end(C)``."""
    return positions(ce) == frozenset(range(ce.start, ce.end + 1))


def select_at_end(strategy: str, ces: Sequence[ComplexEvent]) -> list[ComplexEvent]:
    """The complex events a strategy keeps among ``ces``, which all end at one position.

    ``ALL`` keeps all; ``STRICT`` the contiguous ones; ``MAX`` those whose
    position set no other one strictly contains; ``NEXT`` (``LAST``) those
    whose position set wins against every other one at the earliest (latest)
    position where they differ.  Ties (same position set) are all kept.
    """
    if strategy == "ALL" or not ces:
        return list(ces)
    if strategy == "STRICT":
        return [ce for ce in ces if is_strict(ce)]
    sets = [positions(ce) for ce in ces]
    if strategy == "MAX":
        distinct = set(sets)
        return [ce for ce, d in zip(ces, sets) if not any(d < other for other in distinct)]
    if strategy == "NEXT":
        best = min(sets, key=_next_key)
    elif strategy == "LAST":
        best = max(sets, key=_last_key)
    else:
        raise ValueError(f"unknown selection strategy {strategy!r}")
    return [ce for ce, d in zip(ces, sets) if d == best]


def select(strategy: str, ces: Iterable[ComplexEvent]) -> list[ComplexEvent]:
    """``select_at_end`` applied to each group of complex events sharing an end."""
    if strategy == "ALL":
        return list(ces)
    groups: dict[int, list[ComplexEvent]] = {}
    for ce in ces:
        groups.setdefault(ce.end, []).append(ce)
    out: list[ComplexEvent] = []
    for end in sorted(groups):
        out.extend(select_at_end(strategy, groups[end]))
    return out


def start_order_key(ce: ComplexEvent) -> tuple[object, ...]:
    """The order AFTER MATCH SKIP takes complex events in (spec §6.3): start, end, then §12."""
    return (ce.start, ce.end, ce.sort_key())


def skip_point(skip: Skip, ce: ComplexEvent) -> int | None:
    """Where the next kept complex event may start at the earliest, after ``ce`` is
    kept (``None``: anywhere, as Flink's NO_SKIP when ``X`` has no event)."""
    if skip.kind == "TO_NEXT_ROW":
        return ce.start + 1
    if skip.kind == "PAST_LAST_ROW":
        return ce.end + 1
    assert skip.var is not None
    times = [e.time for e in ce.bag(skip.var)]
    if not times:
        return None
    return min(times) if skip.kind == "TO_FIRST" else max(times)


class Skipper:
    """The after-match skip of one sub-stream (or window), fed complex events in start
    order (:func:`start_order_key`)."""

    __slots__ = ("skip", "resume")

    def __init__(self, skip: Skip) -> None:
        self.skip = skip
        self.resume = -math.inf
        """Complex events starting before this position are dropped."""

    def keeps(self, ce: ComplexEvent) -> bool:
        """Whether ``ce`` (the next in start order) is kept; moves the resume point."""
        if ce.start < self.resume:
            return False
        point = skip_point(self.skip, ce)
        if point is not None and point > self.resume:
            self.resume = point
        return True


def skip_filter(skip: Skip | None, ces: Iterable[ComplexEvent]) -> list[ComplexEvent]:
    """The complex events of one sub-stream (or window) that an after-match skip keeps,
    in output order (spec §12); the skip itself walks them in start order (§6.3)."""
    if skip is None:
        return sorted(ces, key=ComplexEvent.sort_key)
    skipper = Skipper(skip)
    kept = [ce for ce in sorted(ces, key=start_order_key) if skipper.keeps(ce)]
    return sorted(kept, key=ComplexEvent.sort_key)
