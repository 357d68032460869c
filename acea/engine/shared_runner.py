"""A shared plan fed one event at a time: panes, bursts, window rows (:mod:`.shared`)."""

from __future__ import annotations

import math
from typing import Any

from acel.acea.engine.closures import TrendItem
from acel.acea.engine.shared_plan import Member, SharedPlan
from acel.acea.engine.shared_shapes import Struct

from acel.lang.ast import ReturnAgg
from acel.lang.clauses import Key, TrendAccumulator, TrendRow


class _Part:
    """One partition of a shared plan: its panes and its pending burst."""

    __slots__ = ("key", "n", "panes", "current", "pending", "params", "b", "boundary", "next_close")

    def __init__(self, key: Key, first_windows: list[int]) -> None:
        self.key = key
        self.n = 0
        self.panes: dict[int, list[Any]] = {}
        self.current: int | None = None
        self.pending: Struct | None = None
        self.params: tuple[Any, ...] = ()
        self.b = 0
        self.boundary = 0
        self.next_close = list(first_windows)
        """Per distinct WITHIN size: the next window index to close (at first the least
        ``k`` whose window ``[k·s, k·s + w)`` holds position 0, negative when ``w > s``)."""


class SharedRunner:
    """A :class:`SharedPlan` fed one event at a time (the incremental interface).

    :meth:`push` returns ``(query name, TrendRow)`` pairs final now (windows
    closed by the event's arrival); :meth:`finish` the rest.
    """

    def __init__(self, plan: SharedPlan) -> None:
        self.plan = plan
        self.partitions: dict[Key, _Part] = {}
        slide = plan.slide
        self.windowed = slide is not None
        sizes = sorted({m.window for m in plan.members if m.window is not None})
        self.sizes: list[int] = sizes
        self.by_size = [[m for m in plan.members if m.window == w] for w in sizes]
        self.w_max = max(sizes) if sizes else 0
        self.finished = False
        self.stats = {"events": 0, "bursts_shared": 0, "bursts_stepped": 0,
                      "events_shared": 0, "events_stepped": 0}
        """The dynamic decisions: bursts (and their events) propagated shared or stepped."""
        self.policy = "dynamic"
        """``dynamic`` (per burst, by the cost model), or always ``share`` / ``step``
        (static policies, for the benchmarks)."""

    # ------------------------------------------------------------ feeding

    def push(self, attrs: dict[str, Any], position: int) -> list[tuple[str, TrendRow]]:
        plan = self.plan
        if plan.partition_by:
            values = tuple(attrs.get(a) for a in plan.partition_by)
            if None in values:
                return []
            key: Key = tuple(zip(plan.partition_by, values))  # type: ignore[arg-type]
        else:
            key = ()
        part = self.partitions.get(key)
        if part is None:
            part = self.partitions[key] = self._new_part(key)
        v = part.n
        part.n = v + 1
        out: list[tuple[str, TrendRow]] = []
        if v >= part.boundary:
            self._flush(part)
            out = self._boundaries(part, v)
        sig = plan.signature(attrs, position)
        if sig is not None:
            struct, params = sig
            if struct is part.pending and params == part.params:
                part.b += 1
            else:
                if part.pending is not None:
                    self._flush(part)
                part.pending = struct
                part.params = params
                part.b = 1
        if v + 1 >= part.boundary:
            # windows whose last position is ``v`` are complete now (as in the Runner)
            self._flush(part)
            out.extend(self._boundaries(part, v + 1))
        return out

    def finish(self) -> list[tuple[str, TrendRow]]:
        if self.finished:
            return []
        self.finished = True
        plan = self.plan
        if not plan.partition_by and () not in self.partitions:
            self.partitions[()] = self._new_part(())
        out: list[tuple[str, TrendRow]] = []
        for part in self.partitions.values():
            self._flush(part)
            if not self.windowed:
                pane = part.panes[0]
                for m in plan.members:
                    out.append((m.name, _row(m, part.key, None, [pane])))
                continue
            for index, members in enumerate(self.by_size):
                k = part.next_close[index]
                while part.n and k * self.plan.slide <= part.n - 1:  # type: ignore[operator]
                    out.extend(self._rows(part, members, k))
                    k += 1
                part.next_close[index] = k
        return out

    # ------------------------------------------------------------ helpers

    def _new_part(self, key: Key) -> _Part:
        s = self.plan.slide
        firsts = [(-w) // s + 1 for w in self.sizes] if s is not None else [0] * len(self.sizes)
        part = _Part(key, firsts)
        if not self.windowed:
            part.panes[0] = [0] * self.plan.size
            part.current = 0
            part.boundary = math.inf  # type: ignore[assignment]
        return part

    def _flush(self, part: _Part) -> None:
        struct = part.pending
        if struct is None:
            return
        b = part.b
        params = part.params
        part.pending = None
        stats = self.stats
        stats["events"] += b
        current = part.current
        policy = self.policy
        if struct.ops_burst != math.inf and (
            policy == "share"
            or (policy == "dynamic" and b > 1 and struct.step_cost(b) > struct.burst_cost(params, b))
        ):
            stats["bursts_shared"] += 1
            stats["events_shared"] += b
            powers = struct.powers(params, b)
            for c, V in part.panes.items():
                (struct.burst if c == current else struct.burst0)(V, powers)
            return
        stats["bursts_stepped"] += 1
        stats["events_stepped"] += b
        for c, V in part.panes.items():
            fn = struct.step if c == current else struct.step0
            for _ in range(b):
                fn(V, params)

    def _boundaries(self, part: _Part, v: int) -> list[tuple[str, TrendRow]]:
        """The next event can be at ``v`` at the earliest: close the windows that end
        before it, drop the panes no window needs, open ``v``'s pane; the next boundary."""
        s = self.plan.slide
        assert s is not None
        out: list[tuple[str, TrendRow]] = []
        nxt = math.inf
        for index, w in enumerate(self.sizes):
            k = part.next_close[index]
            while k * s + w <= v:
                out.extend(self._rows(part, self.by_size[index], k))
                k += 1
            part.next_close[index] = k
            nxt = min(nxt, k * s + w)
        for c in [c for c in part.panes if c * s + self.w_max <= v]:
            del part.panes[c]
        c = v // s
        if v - c * s < self.w_max:
            part.current = c
            if c not in part.panes:
                part.panes[c] = [0] * self.plan.size
            nxt = min(nxt, c * s + self.w_max, (c + 1) * s)
        else:
            part.current = None
            nxt = min(nxt, (c + 1) * s)
        part.boundary = nxt  # type: ignore[assignment]
        return out

    def _rows(self, part: _Part, members: list[Member], k: int) -> list[tuple[str, TrendRow]]:
        s = self.plan.slide
        assert s is not None
        panes = [V for c, V in part.panes.items() if c >= k]
        out = []
        for m in members:
            assert m.window is not None
            out.append((m.name, _row(m, part.key, (k * s, k * s + m.window), panes)))
        return out


def _row(member: Member, key: Key, window: Any, panes: list[list[Any]]) -> TrendRow:
    """A query's row from the sum of its ``R`` entries over ``panes``."""
    values = [sum(V[e] for V in panes) for e in member.rows]
    vec: list[Any] = [values[0]]
    j = 1
    for kind in member.kinds:
        if kind is not None:
            vec.append(tuple(values[j:j + kind]))
            j += kind
        else:
            vec.append(values[j])
            j += 1
    query = member.query
    assert query.returns is not None
    acc = TrendAccumulator(query.returns)
    acc.count = vec[0]
    index = {item: n for n, item in enumerate(member.items, start=1)}
    for n, item in enumerate(query.returns):
        if isinstance(item, ReturnAgg):
            value = vec[index[TrendItem(item.func.upper(), item.var, item.attr)]]
            if value is not None:
                acc.accs[n] = value
    return acc.row(key, window)
