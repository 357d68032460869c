"""The query clauses of spec §6 around any formula evaluator.

``run_query`` splits the stream by PARTITION BY, renumbers each sub-stream
from 0 (``:`` and ``EVENTS`` windows count inside it), asks an engine for the
formula's complex events on the sub-stream, keeps those within WITHIN, and
either reports them at global positions or aggregates them for RETURN, per
SLIDE window.  Leading and trailing negation (spec §3.1) depend on the window,
so they are applied here too: the same evaluator computes the body and each
negated formula on the same sub-stream (:class:`Negations`).  The oracle and
the naive automaton use it as is; faster engines reuse its pieces
(``split_partitions``, ``windows_of``, ``TrendAccumulator``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from acel.lang import aggregates
from acel.lang.ast import (
    CountStar,
    Formula,
    Query,
    ReturnAgg,
    ReturnAttr,
    ReturnItem,
    Window,
    top_negation,
)
from acel.lang.errors import AcelCheckError, DataError
from acel.lang.events import ComplexEvent, Event, OptValue, Value, value_sort_key
from acel.lang.selection import select, skip_filter

Key = tuple[tuple[str, Value], ...]
"""A partition key as ``(attribute, value)`` pairs in PARTITION BY order."""

FormulaEvaluator = Callable[[Formula, Sequence[Event]], Iterable[ComplexEvent]]
"""Complex events of a formula (the query's body or a negated ``ψ``) on a
stream numbered from 0."""


@dataclass(frozen=True)
class Match:
    """One output complex event at global positions, with its partition key."""

    key: Key
    event: ComplexEvent

    def sort_key(self) -> tuple[object, ...]:
        return (self.event.sort_key(), key_sort_key(self.key))


@dataclass(frozen=True)
class TrendRow:
    """One RETURN row: a key, a window ``(lo, hi)`` (with SLIDE) and the items."""

    key: Key
    window: tuple[int | float, int | float] | None
    values: tuple[tuple[str, OptValue], ...]

    def sort_key(self) -> tuple[object, ...]:
        return (key_sort_key(self.key), self.window or ())

    def value(self, name: str) -> OptValue:
        return dict(self.values)[name]


def key_sort_key(key: Key) -> tuple[object, ...]:
    return tuple((name, value_sort_key(value)) for name, value in key)


@dataclass(frozen=True)
class Partition:
    """A sub-stream renumbered from 0, with the global position of each event."""

    key: Key
    events: tuple[Event, ...]
    positions: tuple[int, ...]


def split_partitions(stream: Sequence[Event], attrs: Sequence[str]) -> list[Partition]:
    """Split by the PARTITION BY attributes (events lacking one are left out).

    Without attributes the whole stream is one partition with the empty key.
    Either way event ``k`` of a partition has time ``k`` (spec §1).
    Partitions come in order of first appearance.
    """
    if not attrs:
        events = tuple(e if e.time == k else e.at(k) for k, e in enumerate(stream))
        return [Partition((), events, tuple(range(len(stream))))]
    groups: dict[Key, tuple[list[Event], list[int]]] = {}
    for position, event in enumerate(stream):
        values = [event.get(a) for a in attrs]
        if any(v is None for v in values):
            continue
        key: Key = tuple((a, v) for a, v in zip(attrs, values) if v is not None)
        local, globals_ = groups.setdefault(key, ([], []))
        local.append(event.at(len(local)))
        globals_.append(position)
    return [Partition(k, tuple(ev), tuple(pos)) for k, (ev, pos) in groups.items()]


def window_value(window: Window, events: Sequence[Event], position: int) -> int | float:
    """The coordinate of a position on a window's axis (position or attribute)."""
    if window.attr is None:
        return position
    value = events[position].get(window.attr)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise DataError(
            f"event at position {position} has no numeric {window.attr!r}, "
            f"which WITHIN/SLIDE ... ON {window.attr} needs (found {value!r})"
        )
    return value


def check_window_attribute(window: Window | None, events: Sequence[Event]) -> None:
    """Reject a stream where an ``ON attr`` window cannot place some event."""
    if window is not None and window.attr is not None:
        for position in range(len(events)):
            window_value(window, events, position)


def within(window: Window | None, events: Sequence[Event], ce: ComplexEvent) -> bool:
    """WITHIN: the span of ``ce`` on the window's axis is below its size."""
    if window is None:
        return True
    span = window_value(window, events, ce.end) - window_value(window, events, ce.start)
    return span < window.size


def windows_of(within_: Window, slide: Window, events: Sequence[Event]) -> list[int]:
    """The window indices ``k`` (``[k·s, k·s + w)``) holding at least one event.

    ``k`` ranges over every integer, negative too (spec §6): with ``w > s`` the
    first events also sit in windows that start before 0.
    """
    ks: set[int] = set()
    size, step = within_.size, slide.size
    for position in range(len(events)):
        v = window_value(within_, events, position)
        k_max = math.floor(v / step)
        k_min = math.floor((v - size) / step) + 1
        ks.update(range(k_min, k_max + 1))
    return sorted(ks)


def window_bounds(within_: Window, slide: Window, k: int) -> tuple[int | float, int | float]:
    """``[lo, hi)`` of window ``k``."""
    lo = k * slide.size
    return (lo, lo + within_.size)


def in_window(bounds: tuple[int | float, int | float], value: int | float) -> bool:
    return bounds[0] <= value < bounds[1]


def item_name(item: ReturnItem) -> str:
    """The name of a RETURN item as written in canonical text (spec §12)."""
    if isinstance(item, CountStar):
        return "COUNT(*)"
    if isinstance(item, ReturnAttr):
        return item.name
    target = item.var if item.attr is None else f"{item.var}.{item.attr}"
    return f"{item.func.upper()}({target})"


@dataclass
class TrendAccumulator:
    """Running monoid values of the RETURN items over a set of complex events."""

    items: tuple[ReturnItem, ...]
    count: int = 0
    accs: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.accs = [self._identity(item) for item in self.items]

    @staticmethod
    def _identity(item: ReturnItem) -> Any:
        if isinstance(item, ReturnAgg):
            return _aggregate(item).identity
        return None

    def add(self, ce: ComplexEvent) -> None:
        """Count one complex event and fold its bags into the items."""
        self.count += 1
        for index, item in enumerate(self.items):
            if isinstance(item, ReturnAgg):
                agg = _aggregate(item)
                for event in ce.bag(item.var):
                    value = 1 if item.attr is None else event.get(item.attr)
                    if value is not None:
                        self.accs[index] = agg.combine(self.accs[index], agg.lift(value))

    def row(self, key: Key, window: tuple[int | float, int | float] | None) -> TrendRow:
        values: list[tuple[str, OptValue]] = []
        key_map = dict(key)
        for item, acc in zip(self.items, self.accs):
            if isinstance(item, CountStar):
                values.append((item_name(item), self.count))
            elif isinstance(item, ReturnAttr):
                values.append((item.name, key_map.get(item.name)))
            else:
                values.append((item_name(item), _aggregate(item).finish(acc)))
        return TrendRow(key, window, tuple(values))


def _aggregate(item: ReturnAgg) -> aggregates.Aggregate:
    agg = aggregates.lookup(item.func)
    if agg is None:
        raise ValueError(f"unknown aggregate function {item.func!r}")
    return agg


Span = tuple[int, int]
"""``(start(N), end(N))`` of a complex event of a negated formula (local positions)."""


@dataclass(frozen=True)
class Negations:
    """The leading and trailing ``ψ`` matches of one partition (spec §3.1).

    Only their intervals matter.  ``window`` is the query's WITHIN and
    ``events`` the partition, whose positions and ``ON attr`` values place
    everything on the window's axis.
    """

    window: Window
    events: Sequence[Event]
    leading: frozenset[Span]
    trailing: frozenset[Span]

    def _value(self, position: int) -> int | float:
        return window_value(self.window, self.events, position)

    def blocks(self, ce: ComplexEvent) -> bool:
        """Without SLIDE: some ``N`` lies after ``C`` (trailing) with the span from
        ``start(C)`` to ``end(N)`` below ``w``, or before ``C`` (leading) with the
        span from ``start(N)`` to ``end(C)`` below ``w``."""
        size = self.window.size
        first, last = self._value(ce.start), self._value(ce.end)
        for start, end in self.trailing:
            if ce.end < start and self._value(end) - first < size:
                return True
        for start, end in self.leading:
            if end < ce.start and last - self._value(start) < size:
                return True
        return False

    def blocks_in(self, ce: ComplexEvent, bounds: tuple[int | float, int | float]) -> bool:
        """With SLIDE: some ``N`` after (trailing) or before (leading) ``C`` lies in
        the window ``[lo, hi)`` too: both its ends fall in it."""

        def inside(span: Span) -> bool:
            return in_window(bounds, self._value(span[0])) and in_window(
                bounds, self._value(span[1])
            )

        return any(ce.end < s[0] and inside(s) for s in self.trailing) or any(
            s[1] < ce.start and inside(s) for s in self.leading
        )


def negations_of(
    query: Query, events: Sequence[Event], evaluate: FormulaEvaluator
) -> Negations | None:
    """The leading/trailing ``ψ`` matches of a query on one partition, if it has any."""
    top = top_negation(query.formula)
    if not top.negated:
        return None
    if query.within is None:
        raise AcelCheckError(
            "NOT at the start or the end of the pattern (leading/trailing negation) needs "
            "WITHIN: ψ is looked for inside each complex event's window (spec §3.1)"
        )

    def spans(formulas: Sequence[Formula]) -> frozenset[Span]:
        return frozenset((n.start, n.end) for psi in formulas for n in evaluate(psi, events))

    return Negations(query.within, events, spans(top.leading), spans(top.trailing))


def trend_rows(
    query: Query,
    partition: Partition,
    matches: Iterable[ComplexEvent],
    negations: Negations | None = None,
) -> list[TrendRow]:
    """RETURN rows of one partition from its complex events (local positions).

    ``matches`` must already satisfy WITHIN.  Without SLIDE, one row; with
    SLIDE, one row per window holding an event of the partition, each complex
    event counted in every window that holds both its ends and, with
    ``negations``, no leading/trailing ``ψ`` match (spec §3.1: so a complex
    event can count in one window and not in another).  Without SLIDE the
    caller has already dropped the complex events that ``negations`` blocks,
    and applied the strategy and the skip; with SLIDE both are applied here,
    in each window among that window's complex events (spec §6.2, §6.3).
    """
    assert query.returns is not None
    events = partition.events
    if query.slide is None:
        acc = TrendAccumulator(query.returns)
        for ce in matches:
            acc.add(ce)
        return [acc.row(partition.key, None)]
    assert query.within is not None, "SLIDE needs WITHIN"
    ks = windows_of(query.within, query.slide, events)
    accs = {k: TrendAccumulator(query.returns) for k in ks}
    placed = [
        (ce, window_value(query.within, events, ce.start), window_value(query.within, events, ce.end))
        for ce in matches
    ]
    for k in ks:
        bounds = window_bounds(query.within, query.slide, k)
        inside = [
            ce for ce, lo_v, hi_v in placed if in_window(bounds, lo_v) and in_window(bounds, hi_v)
        ]
        inside = select(query.select, inside)
        if negations is not None:
            inside = [ce for ce in inside if not negations.blocks_in(ce, bounds)]
        for ce in skip_filter(query.skip, inside):
            accs[k].add(ce)
    return [accs[k].row(partition.key, window_bounds(query.within, query.slide, k)) for k in ks]


def run_query(
    query: Query, stream: Sequence[Event], evaluate: FormulaEvaluator
) -> list[Match] | list[TrendRow]:
    """Evaluate a query's clauses around ``evaluate`` (spec §6), outputs sorted (§12).

    Per partition: the formula's complex events, WITHIN, the selection strategy
    (§6.2, among those that pass WITHIN and end at one position), leading/trailing
    negation, the after-match skip (§6.3, in start order), then RETURN or the
    complex events.  With SLIDE the strategy, the negation and the skip apply in
    each window (:func:`trend_rows`).

    ``evaluate`` gets the body of the query's formula (the formula itself
    when it has no leading or trailing negation) and, on the same partition,
    each leading/trailing ``ψ`` (spec §3.1).
    """
    body = top_negation(query.formula).body
    partitions = split_partitions(stream, query.partition_by)
    for partition in partitions:
        check_window_attribute(query.within, partition.events)
    rows: list[TrendRow] = []
    out: list[Match] = []
    for partition in partitions:
        events = partition.events
        negations = negations_of(query, events, evaluate)
        kept = [ce for ce in evaluate(body, events) if within(query.within, events, ce)]
        if query.slide is not None:  # strategy, negation and skip per window
            assert query.returns is not None, "SLIDE needs RETURN"
            rows.extend(trend_rows(query, partition, kept, negations))
            continue
        kept = select(query.select, kept)
        if negations is not None:
            kept = [ce for ce in kept if not negations.blocks(ce)]
        if query.skip is not None:
            kept = skip_filter(query.skip, kept)
        if query.returns is not None:
            rows.extend(trend_rows(query, partition, kept, negations))
        else:
            out.extend(Match(partition.key, ce.relabel(partition.positions)) for ce in kept)
    if query.returns is not None:
        return sorted(rows, key=TrendRow.sort_key)
    return sorted(out, key=Match.sort_key)
