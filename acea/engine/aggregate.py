"""Trend mode, one event at a time: counts and sums propagated along configurations.

Every configuration of one partition carries, per start class
(:mod:`acel.acea.engine.windows`), the vector ``[n, acc…]`` of
:mod:`acel.acea.engine.trend`; a final configuration folds its vectors into
the rows (windows) its classes count in.  :class:`Propagator` keeps class
maps; :class:`TumblingPropagator` keeps plain vectors when at most one class
can be alive (no WITHIN, or tumbling windows) and resets everything when the
axis enters another window.  Configurations of indexed states
(:mod:`acel.acea.engine.indexed`) persist in per-group Fenwick indexes; all
others are rebuilt at every step.  Rows are read (and removed) by the
caller when their window is final.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from acel.acea.engine.closures import CompiledAutomaton, CompiledTransition, TrendItem
from acel.acea.engine.indexed import Classes, Group, IndexPlan
from acel.acea.engine.plan import index_plans
from acel.acea.engine.trend import Vec, identity_vector, vector_ops
from acel.acea.engine.windows import Row, WindowRule

Config = tuple[int, tuple[Any, ...]]


class _Base:
    """What both propagators share: the automaton, the items, the indexes, the rows."""

    def __init__(
        self,
        ca: CompiledAutomaton,
        items: Sequence[TrendItem],
        rule: WindowRule,
        *,
        starts: range | None = None,
        use_index: bool = True,
        seeds: Mapping[int, Sequence[Any]] | None = None,
    ) -> None:
        self.ca = ca
        self.items = tuple(items)
        self.rule = rule
        self.starts = starts
        self.merge, self.extend = vector_ops(items)
        self.unit = identity_vector(items, 1)
        self.rows: dict[Row, Vec] = {}
        self.plans: dict[int, IndexPlan] = index_plans(ca, self.items) if use_index else {}
        self.seeds: dict[int, Sequence[Any]] = dict(seeds or {})
        self.groups: dict[int, dict[tuple[Any, ...], Group]] = {q: {} for q in self.plans}
        self.local = 0

    def has_work(self) -> bool:
        return bool(self.active) or any(bool(g) for g in self.groups.values())  # type: ignore[attr-defined]

    def exhausted(self) -> bool:
        """No run is alive and none may start: later events cannot change the rows."""
        return self.starts is not None and self.local >= self.starts.stop and not self.has_work()

    def _group(self, state: int, rest: tuple[Any, ...], merge: Any) -> Group:
        by_rest = self.groups[state]
        group = by_rest.get(rest)
        if group is None:
            group = by_rest[rest] = Group(self.seeds.get(state, ()), merge)
        return group


class Propagator(_Base):
    """Class maps per configuration (overlapping windows, or one class per start)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.active: dict[Config, Classes] = {}
        self.max_class: Any = None
        self.min_class: Any = None
        """The oldest class that may still be in a class map (``None``: none yet)."""
        merge = self.merge

        def merge_classes(a: Classes, b: Classes) -> Classes:
            out = dict(a)
            for c, v in b.items():
                old = out.get(c)
                out[c] = v if old is None else merge(old, v)
            return out

        self.merge_classes = merge_classes

    def step(self, attrs: dict[str, Any], position: int, coord: Any) -> None:
        """Read one event at ``coord`` on the window axis."""
        k = position
        local = self.local
        self.local = local + 1
        ca = self.ca
        ready = ca.ready
        merge, extend = self.merge, self.extend
        rule = self.rule
        prune = rule.windowed and rule.monotone
        class_alive = rule.class_alive
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        new: dict[Config, Classes] = {}
        sources: list[tuple[int, tuple[Any, ...], Classes]] = []
        # classes only expire when the oldest one does: most steps filter nothing
        expiring = prune and self.min_class is not None and not class_alive(self.min_class, coord)
        if expiring:
            oldest = None
            for (state, tau), classes in self.active.items():
                classes = {c: v for c, v in classes.items() if class_alive(c, coord)}
                if not classes:
                    continue
                low = min(classes)
                if oldest is None or low < oldest:
                    oldest = low
                sources.append((state, tau, classes))
            self.min_class = oldest
        else:
            sources = [(state, tau, classes) for (state, tau), classes in self.active.items()]
        if self.starts is None or local in self.starts:
            c0 = rule.class_of(coord)
            if c0 is not None:
                sources.append((ca.automaton.initial, (), {c0: self.unit}))
                if self.max_class is None or c0 > self.max_class:
                    self.max_class = c0
                if self.min_class is None or c0 < self.min_class:
                    self.min_class = c0
        # indexed states: range transitions query the index, others scan the group
        for q, by_rest in self.groups.items():
            if not by_rest:
                continue
            if prune and self.max_class is not None and not class_alive(self.max_class, coord):
                by_rest.clear()
                continue
            iplan = self.plans[q]
            pos = iplan.position
            for rest, group in by_rest.items():
                if prune and group.inserted > group.rebuilt_size + 64:
                    group.rebuild(lambda c, _v=coord: class_alive(c, _v))
                probe = rest[:pos] + (None,) + rest[pos:]
                for ct in ready(q, attrs, k, cache):
                    if ct.index in iplan.identity:
                        continue
                    rt = iplan.ranged.get(ct.index)
                    if rt is not None:
                        res = rt.parts(probe, attrs, k)
                        if res is None:
                            continue
                        found = group.query(rt.op, res[2], res[3], res[4], res[5])
                        if found is None:
                            continue
                        if prune:
                            found = {c: v for c, v in found.items() if class_alive(c, coord)}
                        sources_here = [(res[0], res[1], found)]
                    else:
                        sources_here = []
                        for value, classes in group.entries.items():
                            tau = rest[:pos] + (value,) + rest[pos:]
                            fired = ct.fire(tau, attrs, k)
                            if fired is not None:
                                if prune:
                                    classes = {
                                        c: v for c, v in classes.items() if class_alive(c, coord)
                                    }
                                sources_here.append((fired[0], fired[1], classes))
                    for ntau, contrib, classes in sources_here:
                        key = (ct.target, ntau)
                        target = new.get(key)
                        if target is None:
                            target = new[key] = {}
                        for c, vec in classes.items():
                            v = vec if contrib is None else extend(vec, contrib)
                            old = target.get(c)
                            target[c] = v if old is None else merge(old, v)
        for state, tau, classes in sources:
            for ct in ready(state, attrs, k, cache):
                res = ct.fire(tau, attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0])
                contrib = res[1]
                target = new.get(key)
                if target is None:
                    # first runs into this configuration: one copy, no merging
                    if contrib is None:
                        new[key] = dict(classes)
                    else:
                        new[key] = {c: extend(vec, contrib) for c, vec in classes.items()}
                    continue
                for c, vec in classes.items():
                    v = vec if contrib is None else extend(vec, contrib)
                    old = target.get(c)
                    target[c] = v if old is None else merge(old, v)
        active: dict[Config, Classes] = {}
        finals = ca.automaton.finals
        rows = self.rows
        plans = self.plans
        for key, classes in new.items():
            state = key[0]
            if state in finals:
                for c, vec in classes.items():
                    for row in rule.targets(c, coord):
                        old = rows.get(row)
                        rows[row] = vec if old is None else merge(old, vec)
            iplan = plans.get(state)
            if iplan is None:
                active[key] = classes
                continue
            tau = key[1]
            pos = iplan.position
            self._group(state, tau[:pos] + tau[pos + 1 :], self.merge_classes).add(
                tau[pos], classes
            )
        self.active = active


class TumblingPropagator(_Base):
    """Plain vectors when at most one start class is alive at a time."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.active: dict[Config, Vec] = {}
        self.current: Any = 0

    def step(self, attrs: dict[str, Any], position: int, coord: Any) -> None:
        """Read one event at ``coord`` on the window axis."""
        k = position
        local = self.local
        self.local = local + 1
        rule = self.rule
        windowed = rule.windowed
        if windowed:
            window = rule.window_of(coord)
            if window != self.current:
                self.current = window
                self.active = {}
                for by_rest in self.groups.values():
                    by_rest.clear()
        if self.current is None:
            return
        ca = self.ca
        ready = ca.ready
        merge, extend = self.merge, self.extend
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        new: dict[Config, Vec] = {}
        for q, by_rest in self.groups.items():
            iplan = self.plans[q]
            pos = iplan.position
            for rest, group in by_rest.items():
                probe = rest[:pos] + (None,) + rest[pos:]
                answers: dict[tuple[Any, ...], Any] = {}
                for ct in ready(q, attrs, k, cache):
                    if ct.index in iplan.identity:
                        continue
                    rt = iplan.ranged.get(ct.index)
                    if rt is not None:
                        res = rt.parts(probe, attrs, k)
                        if res is None:
                            continue
                        question = (rt.op, res[2], res[3], res[4], res[5])
                        if question in answers:
                            found = answers[question]
                        else:
                            found = answers[question] = group.query(*question)
                        if found is None:
                            continue
                        key = (ct.target, res[0])
                        v = found if res[1] is None else extend(found, res[1])
                        old = new.get(key)
                        new[key] = v if old is None else merge(old, v)
                        continue
                    for value, vec in group.entries.items():
                        tau = rest[:pos] + (value,) + rest[pos:]
                        fired = ct.fire(tau, attrs, k)
                        if fired is None:
                            continue
                        key = (ct.target, fired[0])
                        v = vec if fired[1] is None else extend(vec, fired[1])
                        old = new.get(key)
                        new[key] = v if old is None else merge(old, v)
        sources = list(self.active.items())
        if self.starts is None or local in self.starts:
            sources.append(((ca.automaton.initial, ()), self.unit))
        for (state, tau), vec in sources:
            for ct in ready(state, attrs, k, cache):
                res = ct.fire(tau, attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0])
                v = vec if res[1] is None else extend(vec, res[1])
                old = new.get(key)
                new[key] = v if old is None else merge(old, v)
        active: dict[Config, Vec] = {}
        row = self.current if windowed else None
        finals = ca.automaton.finals
        rows = self.rows
        plans = self.plans
        for key, vec in new.items():
            state = key[0]
            if state in finals:
                old = rows.get(row)
                rows[row] = vec if old is None else merge(old, vec)
            iplan = plans.get(state)
            if iplan is None:
                active[key] = vec
                continue
            tau = key[1]
            pos = iplan.position
            self._group(state, tau[:pos] + tau[pos + 1 :], merge).add(tau[pos], vec)
        self.active = active


def propagator_for(
    ca: CompiledAutomaton,
    items: Sequence[TrendItem],
    rule: WindowRule,
    *,
    starts: range | None = None,
    use_index: bool = True,
    seeds: Mapping[int, Sequence[Any]] | None = None,
) -> Propagator | TumblingPropagator:
    """The cheaper propagator the window rule allows."""
    kind = TumblingPropagator if rule.single_class() else Propagator
    return kind(ca, items, rule, starts=starts, use_index=use_index, seeds=seeds)


def seeds_of(
    ca: CompiledAutomaton, items: Sequence[TrendItem], attrs: Sequence[dict[str, Any]]
) -> dict[int, list[Any]]:
    """Every value each indexed state's key can take on a stream held in memory."""
    return {q: p.universe_values(attrs) for q, p in index_plans(ca, tuple(items)).items()}
