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

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from acel.acea.engine.closures import CompiledAutomaton, CompiledTransition, TrendItem
from acel.acea.engine.cost import (
    MAX_CLASS_ENTRIES,
    MAX_CONFIGURATIONS,
    check_class_entries,
    check_configurations,
)
from acel.acea.engine.indexed import Classes, Group, IndexPlan
from acel.acea.engine.plan import index_plans
from acel.acea.engine.trend import Vec, identity_vector, vector_ops
from acel.acea.engine.unfold import events_needed
from acel.acea.engine.windows import Row, WindowRule

Config = tuple[int, tuple[Any, ...]]

Source = tuple[Config, Any]
"""A configuration ``(state, tau)`` and its value (a class map, or a vector)."""

AddFn = Callable[[dict[Config, Any], Config, Any, Any], None]
"""``add(new, key, value, contribution)``: runs into a configuration of the next step."""


class _Base:
    """What both propagators share: the automaton, the items, the indexes, the rows,
    and the one propagation loop (:meth:`_advance`).

    A subclass says what a configuration's value is: ``by_class`` (class maps
    or plain vectors), ``add`` (runs entering a configuration from an indexed
    group, with a transition's contribution) and ``merge_value`` (two values of
    one indexed key).
    """

    active: dict[Config, Any]
    by_class: bool
    """Values are class maps (``Classes``), else plain vectors (``Vec``)."""
    add: AddFn
    merge_value: Callable[[Any, Any], Any]

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
        self.need: tuple[int, ...] | None = need_pruning(ca, rule)
        """Per state, the events a run there still needs (:func:`need_pruning`); ``None``:
        classes expire only when their window has passed."""

    def has_work(self) -> bool:
        """Some run is alive (a configuration, or an indexed group)."""
        return bool(self.active) or any(bool(g) for g in self.groups.values())

    def exhausted(self) -> bool:
        """No run is alive and none may start: later events cannot change the rows."""
        return self.starts is not None and self.local >= self.starts.stop and not self.has_work()

    def _group(self, state: int, rest: tuple[Any, ...], merge: Any) -> Group:
        by_rest = self.groups[state]
        group = by_rest.get(rest)
        if group is None:
            group = by_rest[rest] = Group(self.seeds.get(state, ()), merge)
        return group


    def _base(self, coord: Any) -> Any:
        """With :attr:`need`: a class ``c`` entering state ``q`` after the event at ``coord``
        cannot end in time when ``c ≤ base + need[q]`` (else 0, unused)."""
        return coord - self.rule.within.size if self.need is not None else 0  # type: ignore[union-attr]

    def _filters(
        self, coord: Any
    ) -> tuple[Callable[[Any], Any] | None, Callable[[Any], bool] | None]:
        """``alive`` (drops a value's expired classes) and ``keep`` (a class test, so
        that a grown group may be rebuilt) at ``coord``; ``None``: nothing expires."""
        return None, None

    def _advance(
        self, sources: Iterable[Source], attrs: dict[str, Any], k: int, coord: Any, only: Row = None
    ) -> None:
        """The one propagation loop: every run reads one event (spec §6).

        Indexed groups first (:meth:`_from_groups`), then ``sources``: each
        transition that fires takes the source's value, raised by its
        contribution, into a configuration of the next step, where runs
        meeting add up.  Then :meth:`_settle`.  The merge is written out here
        for both kinds of value (it is the engine's innermost loop).
        """
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        new: dict[Config, Any] = {}
        filters: tuple[Any, Any] | None = None
        for q, by_rest in self.groups.items():
            if by_rest:
                if filters is None:
                    filters = self._filters(coord)
                self._from_groups(new, q, by_rest, attrs, k, cache, *filters)
        ready = self.ca.ready
        merge, extend = self.merge, self.extend
        by_class = self.by_class
        need = self.need if by_class else None
        base = self._base(coord)
        for (state, tau), value in sources:
            top = None
            for ct in ready(state, attrs, k, cache):
                if need is not None and need[ct.target]:
                    # every class would die there: not taken (core.c skips it alike)
                    if top is None:
                        top = max(value)
                    if top <= base + need[ct.target]:
                        continue
                res = ct.fire(tau, attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0])
                contrib = res[1]
                target = new.get(key)
                if not by_class:
                    v = value if contrib is None else extend(value, contrib)
                    new[key] = v if target is None else merge(target, v)
                elif target is None:
                    # first runs into this configuration: one copy, no merging
                    if contrib is None:
                        new[key] = dict(value)
                    else:
                        new[key] = {c: extend(vec, contrib) for c, vec in value.items()}
                else:
                    for c, vec in value.items():
                        v = vec if contrib is None else extend(vec, contrib)
                        old = target.get(c)
                        target[c] = v if old is None else merge(old, v)
        self._settle(new, coord, only)

    def _from_groups(
        self,
        new: dict[Config, Any],
        q: int,
        by_rest: dict[tuple[Any, ...], Group],
        attrs: dict[str, Any],
        k: int,
        cache: dict[int, tuple[CompiledTransition, ...]],
        alive: Callable[[Any], Any] | None,
        keep: Callable[[Any], bool] | None,
    ) -> None:
        """The runs waiting in the groups of indexed state ``q``, reading one event."""
        add = self.add
        iplan = self.plans[q]
        pos = iplan.position
        transitions = self.ca.ready(q, attrs, k, cache)
        for rest, group in by_rest.items():
            if keep is not None and group.inserted > group.rebuilt_size + 64:
                group.rebuild(keep)
            probe = rest[:pos] + (None,) + rest[pos:]
            answers: dict[tuple[Any, ...], Any] = {}
            for ct in transitions:
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
                    if found is not None:
                        add(new, (ct.target, res[0]), found if alive is None else alive(found), res[1])
                    continue
                for value, stored in group.entries.items():
                    fired = ct.fire(rest[:pos] + (value,) + rest[pos:], attrs, k)
                    if fired is not None:
                        add(new, (ct.target, fired[0]),
                            stored if alive is None else alive(stored), fired[1])

    def _settle(self, new: dict[Config, Any], coord: Any, only: Row = None) -> None:
        """The next step's configurations: finals fold into the rows (class maps: those
        of their classes; vectors: ``only``), indexed ones join their groups, the
        others stay active."""
        active: dict[Config, Any] = {}
        finals = self.ca.automaton.finals
        plans = self.plans
        rows, merge = self.rows, self.merge
        targets = self.rule.targets if self.by_class else None
        need = self.need if self.by_class else None
        base = self._base(coord)
        for key, value in new.items():
            state = key[0]
            if need is not None and need[state]:  # drop the classes that cannot end in time
                cut = base + need[state]
                value = {c: vec for c, vec in value.items() if c > cut}
                if not value:
                    continue
            if state in finals:  # fold into the rows it counts in
                if targets is None:
                    old = rows.get(only)
                    rows[only] = value if old is None else merge(old, value)
                else:
                    for c, vec in value.items():
                        for row in targets(c, coord):
                            old = rows.get(row)
                            rows[row] = vec if old is None else merge(old, vec)
            iplan = plans.get(state)
            if iplan is None:
                active[key] = value
                continue
            tau = key[1]
            pos = iplan.position
            self._group(state, tau[:pos] + tau[pos + 1 :], self.merge_value).add(tau[pos], value)
        if len(active) > MAX_CONFIGURATIONS:
            check_configurations(len(active), self.local)
        if self.by_class and len(active) * self.local > MAX_CLASS_ENTRIES:  # may be many
            check_class_entries(sum(len(classes) for classes in active.values()), self.local)
        self.active = active


class Propagator(_Base):
    """Class maps per configuration (overlapping windows, or one class per start)."""

    by_class = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.active: dict[Config, Classes] = {}
        self.max_class: Any = None
        self.min_class: Any = None
        """The oldest class that may still be in a class map (``None``: none yet)."""
        merge, extend = self.merge, self.extend

        def merge_classes(a: Classes, b: Classes) -> Classes:
            out = dict(a)
            for c, v in b.items():
                old = out.get(c)
                out[c] = v if old is None else merge(old, v)
            return out

        def add(new: dict[Config, Any], key: Config, classes: Classes, contrib: Any) -> None:
            target = new.get(key)
            if target is None:
                # first runs into this configuration: one copy, no merging
                if contrib is None:
                    new[key] = dict(classes)
                else:
                    new[key] = {c: extend(vec, contrib) for c, vec in classes.items()}
                return
            for c, vec in classes.items():
                v = vec if contrib is None else extend(vec, contrib)
                old = target.get(c)
                target[c] = v if old is None else merge(old, v)

        self.merge_classes = self.merge_value = merge_classes
        self.add = add

    def step(self, attrs: dict[str, Any], position: int, coord: Any) -> None:
        """Read one event at ``coord`` on the window axis."""
        local = self.local
        self.local = local + 1
        rule = self.rule
        prune = rule.windowed and rule.monotone
        sources = self._sources(local, coord, prune)
        groups = self.groups
        if (prune and groups and self.max_class is not None and any(groups.values())
                and not rule.class_alive(self.max_class, coord)):
            for by_rest in groups.values():  # every class has expired
                by_rest.clear()
        self._advance(sources, attrs, position, coord)

    def _filters(
        self, coord: Any
    ) -> tuple[Callable[[Any], Any] | None, Callable[[Any], bool] | None]:
        rule = self.rule
        if not (rule.windowed and rule.monotone):
            return None, None
        class_alive = rule.class_alive

        def keep(c: Any) -> bool:
            return class_alive(c, coord)

        def alive(classes: Classes) -> Classes:
            return {c: v for c, v in classes.items() if class_alive(c, coord)}

        return alive, keep

    def _sources(self, local: int, coord: Any, prune: bool) -> Iterable[Source]:
        """The active configurations (expired classes dropped) and a run starting here."""
        class_alive = self.rule.class_alive
        expired: list[Source] = []
        # classes only expire when the oldest one does: most steps filter nothing
        if prune and self.min_class is not None and not class_alive(self.min_class, coord):
            oldest = None
            for (state, tau), classes in self.active.items():
                classes = {c: v for c, v in classes.items() if class_alive(c, coord)}
                if not classes:
                    continue
                low = min(classes)
                if oldest is None or low < oldest:
                    oldest = low
                expired.append(((state, tau), classes))
            self.min_class = oldest
            sources: Iterable[Source] = expired
        else:
            sources = self.active.items()
        if self.starts is None or local in self.starts:
            c0 = self.rule.class_of(coord)
            if c0 is not None:
                if self.max_class is None or c0 > self.max_class:
                    self.max_class = c0
                if self.min_class is None or c0 < self.min_class:
                    self.min_class = c0
                return chain(sources, (((self.ca.automaton.initial, ()), {c0: self.unit}),))
        return sources



class TumblingPropagator(_Base):
    """Plain vectors when at most one start class is alive at a time."""

    by_class = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.active: dict[Config, Vec] = {}
        self.current: Any = 0
        merge, extend = self.merge, self.extend

        def add(new: dict[Config, Any], key: Config, vec: Vec, contrib: Any) -> None:
            v = vec if contrib is None else extend(vec, contrib)
            old = new.get(key)
            new[key] = v if old is None else merge(old, v)

        self.merge_value = merge
        self.add = add

    def step(self, attrs: dict[str, Any], position: int, coord: Any) -> None:
        """Read one event at ``coord`` on the window axis."""
        local = self.local
        self.local = local + 1
        if self.rule.windowed:
            window = self.rule.window_of(coord)
            if window != self.current:
                self.current = window
                self.active = {}
                for by_rest in self.groups.values():
                    by_rest.clear()
        if self.current is None:
            return
        sources: Iterable[Source] = self.active.items()
        if self.starts is None or local in self.starts:
            sources = chain(sources, (((self.ca.automaton.initial, ()), self.unit),))
        row = self.current if self.rule.windowed else None
        self._advance(sources, attrs, position, coord, row)



def need_pruning(ca: CompiledAutomaton, rule: WindowRule) -> tuple[int, ...] | None:
    """Per state, the fewest events a run there still reads before it accepts, when that
    lets a class die before its window has passed: ``WITHIN w EVENTS`` (each later event is
    one coordinate further) without SLIDE.  A run of class ``c`` in state ``q`` after the
    event at ``coord`` ends at ``coord + need[q]`` or later, so it counts nowhere when
    ``c ≤ coord + need[q] − w`` (issue 35: a counter needing more events than its window
    has left).  ``None`` when nothing can be dropped that expiry does not drop."""
    within = rule.within
    if type(rule) is not WindowRule:  # leading/trailing NOT: classes are not coordinates
        return None
    if within is None or within.attr is not None or rule.slide is not None or not rule.monotone:
        return None
    entry = _NEEDED.get(id(ca))
    if entry is None or entry[0] is not ca:  # once per automaton, not per partition
        if len(_NEEDED) > 256:
            _NEEDED.clear()
        need = events_needed(ca.automaton)
        entry = _NEEDED[id(ca)] = (ca, need if max(need, default=0) > 1 else None)
    return entry[1]


_NEEDED: dict[int, tuple[CompiledAutomaton, tuple[int, ...] | None]] = {}


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
