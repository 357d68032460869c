"""Complex-event mode, one event at a time: the configurations of one partition.

The set of configurations ``(state, τ)`` is kept per step; runs reaching the
same configuration are merged and their pasts live in the shared DAG of
:mod:`acel.acea.engine.dag`.  :meth:`Enumerator.step` reads one event and
returns the complex events that end at it (deduplicated: the semantics is a
set), already labelled with global stream positions: the engine passes each
event's global position as its time, so emitted events carry it and nothing
has to be relabelled.

A run's start is recorded in the DAG as its global position (an ``int``
edge).  Its window coordinate is the position itself when the partition is
the whole stream and the window counts events; otherwise a small table maps
the starts still inside the window to their coordinate (expired ones are
dropped as the axis moves on, when it is monotone).
"""

from __future__ import annotations

import importlib
from collections import deque
from collections.abc import Callable
from typing import Any

from acel.acea.engine.closures import CompiledAutomaton, CompiledTransition
from acel.acea.engine.cost import MAX_CONFIGURATIONS, check_configurations
from acel.acea.engine.dag import (
    INF,
    Builder,
    Edge,
    Node,
    compact,
    enumerate_within,
    least_start_from,
    make_node,
)
from acel.acea.engine.native_protocol import WATCH_EVERY
from acel.acea.engine.windows import WindowRule

from acel.io.native_switch import wanted

Config = tuple[Any, ...]
"""``(state, τ)``; ``(state, τ, start)`` for SELECT NEXT/LAST under WITHIN (:attr:`Enumerator.by_start`)."""

EMPTY_RANK = 1 << 62
"""SELECT NEXT/LAST pruning: the rank of the empty position set (the worst), the same
for a new run and for a node whose runs have taken nothing yet."""

EXPIRED = float("-inf")
"""The coordinate of a start that has left the window (compares below every threshold)."""

# WATCH_EVERY (native_protocol): how often, in complex events of one step, Enumerator.watch is called.
WATCH_MASK = WATCH_EVERY - 1

NativeLines = Callable[..., None]
"""``_native_enum.lines(node, end, threshold, coords, builder, make, out, watch, seen)``."""


def native_lines() -> NativeLines | None:
    """The C walk of ``acea/engine/native/enumerate.c`` (issue 23), or ``None`` when it
    was not built (the pure-Python walk of :mod:`acel.acea.engine.dag` is the reference)."""
    try:  # by name: a ``from`` import of the package would be an import cycle
        _native_enum = importlib.import_module("acel.acea.engine._native_enum")
    except ImportError:
        return None
    _native_enum.init(Node)
    lines: NativeLines = _native_enum.lines
    return lines


def choose_native(build: Builder | None) -> NativeLines | None:
    """The native walk when ``ACEL_NATIVE`` wants it and the builder writes §12 text
    (it says how with a ``native_make``, :class:`acel.io.lines.LineBuilder`): complex
    events built as objects always take the pure-Python walk."""
    if getattr(build, "native_make", None) is None:
        return None
    lines = native_lines()
    if not wanted(lines is not None, "the extension acel.acea.engine._native_enum is not built "
                  "(pip install -e . with a C compiler)"):
        return None
    return lines


class Enumerator:
    """The configurations of one partition and the DAG of their pasts."""

    __slots__ = (
        "ca",
        "rule",
        "dedupe",
        "active",
        "coords",
        "recent",
        "since_compaction",
        "period",
        "local",
        "starts",
        "build",
        "prepare",
        "watch",
        "native",
        "prune",
        "by_start",
    )

    def __init__(
        self,
        ca: CompiledAutomaton,
        rule: WindowRule,
        *,
        dedupe: bool = True,
        identity_coords: bool = False,
        starts: range | None = None,
        build: Builder | None = None,
        watch: Callable[[int], None] | None = None,
        prune: str | None = None,
    ) -> None:
        self.ca = ca
        self.prune = prune
        self.by_start = prune in ("NEXT", "LAST") and rule.windowed
        """SELECT NEXT/LAST under WITHIN: one configuration per ``(state, τ, start)``.
        The window expires runs by their start, so a worse run from a later start may
        outlive the best one; runs with one start and one configuration share their
        future and their expiry, so only the best of them can ever be chosen
        (:meth:`_pruned` keeps those).  Each node then holds the runs of one start
        (its ``first``), and a step costs the configurations times the starts in the
        window."""
        """``STRICT``, ``NEXT`` or ``LAST``: keep only the runs the strategy may choose
        (:meth:`_pruned`), so a step costs the configurations, not the complex events."""
        self.build = build
        """What a run becomes (default: a :class:`~acel.lang.events.ComplexEvent`)."""
        self.watch = watch
        """Called with the count so far every :data:`WATCH_EVERY` complex events of one
        step (one event can end 2^n of them): a memory guard, progress lines."""
        self.prepare = getattr(build, "prepare", None)
        """The builder's form of an emission, made once when the transition fires
        (so a run's builder reads it as many times as runs go through it)."""
        self.rule = rule
        self.dedupe = dedupe
        self.active: dict[Config, Node] = {}
        self.coords: dict[int, Any] | None = None if identity_coords or not rule.windowed else {}
        """Start position → coordinate, for starts still in the window (``None``: the
        coordinate of a start is its position)."""
        self.recent: deque[int] = deque()
        self.since_compaction = 0
        self.period = 64
        self.local = 0
        self.starts = starts
        self.native = choose_native(build)
        """The C walk that writes each run's §12 text (``None``: the pure-Python one)."""

    def exhausted(self) -> bool:
        """No run is alive and none may start: later events cannot change the output."""
        return self.starts is not None and self.local >= self.starts.stop and not self.active

    def first_live_start(self, threshold: Any = None, resume: Any = None) -> int | None:
        """The least start position of a live run (``None``: none is alive); no complex
        event found later starts before it (a run starting later starts after).
        ``threshold``: runs whose starts all lie at or below it are dead (the axis has
        moved on); ``resume``: only starts at or after it count (an after-match skip
        drops what starts before its resume point, spec §6.3)."""
        first: Any = None
        for node in self.active.values():
            if threshold is not None and node.best <= threshold:
                continue
            start = node.first
            if resume is not None and start < resume:
                if first is not None and node.after is not None and node.after >= first:
                    continue  # cached: nothing here starts before the least found so far
                start = least_start_from(node, resume)
            if first is None or start < first:
                first = start
        return None if first is None or first == INF else first

    def last_blocking_start(self, before: int, resume: Any = None) -> Any:
        """The largest start coordinate (``Node.best``) of the live runs that hold back a
        complex event starting at position ``before`` in :meth:`first_live_start`: those
        with a start at or after ``resume`` and before ``before`` (``None``: no such run).
        Once ``threshold`` reaches it they are all dead (the axis deadline of an
        after-match skip, :meth:`acel.acea.engine.skip_order.SkipOrder.deadline`)."""
        last: Any = None
        for node in self.active.values():
            start = node.first
            if start >= before:
                continue  # every run through it starts at or after ``before``
            if resume is not None and start < resume:
                start = least_start_from(node, resume)
                if start >= before:
                    continue
            if last is None or node.best > last:
                last = node.best
        return last

    def coord_of(self, position: int) -> Any:
        """The window coordinate of a start still in the window (``EXPIRED`` otherwise)."""
        coords = self.coords
        return position if coords is None else coords.get(position, EXPIRED)

    def step(self, attrs: dict[str, Any], position: int, coord: Any) -> list[Any]:
        """Read one event (``coord`` on the window axis); the complex events ending at it."""
        k = position
        local = self.local
        self.local = local + 1
        ca = self.ca
        ready = ca.ready
        active = self.active
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        pending: dict[Config, list[Edge]] = {}
        by_start = self.by_start
        for config, node in active.items():
            state = config[0]
            transitions = cache.get(state)
            if transitions is None:
                transitions = ready(state, attrs, k, cache)
            for ct in transitions:
                if ct.identity:
                    # a skip loop: same configuration, nothing emitted
                    edges = pending.get(config)
                    if edges is None:
                        pending[config] = [(node, None)]
                    else:
                        edges.append((node, None))
                    continue
                res = ct.fire(config[1], attrs, k)
                if res is None:
                    continue
                key = (ct.target, res[0], config[2]) if by_start else (ct.target, res[0])
                emission = res[1]
                if emission is not None and self.prepare is not None:
                    emission = self.prepare(emission)
                edges = pending.get(key)
                if edges is None:
                    pending[key] = [(node, emission)]
                else:
                    edges.append((node, emission))
        if self.starts is None or local in self.starts:
            self._start(pending, attrs, k, coord, cache)
        coords = self.coords
        if len(pending) > MAX_CONFIGURATIONS:
            check_configurations(len(pending), self.local)
        rule = self.rule
        windowed = rule.windowed
        monotone = windowed and rule.monotone
        threshold = rule.threshold(coord) if windowed else None
        if monotone and coords is not None:
            recent = self.recent
            while recent and coords[recent[0]] <= threshold:
                del coords[recent.popleft()]
        prune = self.prune
        ranks: dict[Config, tuple[int, int]] | None = None
        if prune is not None:
            pending, ranks = self._pruned(pending, prune, windowed)
        new_active, ends = self._nodes(pending, coord, threshold if monotone else None)
        self.active = new_active
        if ranks is not None and prune is not None:
            self._rank(new_active, ranks, prune)
            if ends and prune in ("NEXT", "LAST"):
                if windowed and not monotone:
                    ends = [node for node in ends if node.best > threshold]
                if ends:
                    best = min(node.rank for node in ends)
                    ends = [node for node in ends if node.rank == best]
        out = self._emit(ends, k, threshold) if ends else []
        if monotone:
            self.since_compaction += 1
            if self.since_compaction >= self.period:
                self._compact(threshold)
        return out

    def _start(
        self,
        pending: dict[Config, list[Edge]],
        attrs: dict[str, Any],
        k: int,
        coord: Any,
        cache: dict[int, tuple[CompiledTransition, ...]],
    ) -> None:
        """The runs starting at position ``k`` (an ``int`` edge), added to ``pending``."""
        ca = self.ca
        coords = self.coords
        prepare = self.prepare
        started = False
        for ct in ca.ready(ca.automaton.initial, attrs, k, cache):
            res = ct.fire((), attrs, k)
            if res is None:
                continue
            started = True
            key = (ct.target, res[0], k) if self.by_start else (ct.target, res[0])
            emission = res[1]
            if prepare is not None and emission is not None:
                emission = prepare(emission)
            edges = pending.get(key)
            if edges is None:
                pending[key] = [(k, emission)]
            else:
                edges.append((k, emission))
        if started and coords is not None:
            coords[k] = coord
            self.recent.append(k)

    def _nodes(
        self, pending: dict[Config, list[Edge]], coord: Any, threshold: Any
    ) -> tuple[dict[Config, Node], list[Node]]:
        """This step's configurations and their nodes (dropping those whose every start
        is at or below ``threshold``, a monotone window's), and the final ones' nodes."""
        finals = self.ca.automaton.finals
        new_active: dict[Config, Node] = {}
        ends: list[Node] = []
        shared: dict[Any, Node] | None = {} if self.prune == "MAX" else None
        for key, edges in pending.items():
            sig = _signature(edges) if shared is not None else None
            node: Node | None = shared.get(sig) if shared is not None and sig is not None else None
            if node is not None:
                pass
            elif len(edges) == 1:
                # make_node inlined for the common single edge
                pred, emission = edges[0]
                if isinstance(pred, Node):
                    node = pred if emission is None else Node(edges, pred.best, pred.first)
                else:
                    node = Node(edges, coord, pred)
            else:
                # identical edges are two runs with one complex event: impossible when
                # the automaton is unambiguous (then nothing needs deduplicating)
                node = make_node(_dedupe(edges) if self.dedupe else edges, self.coord_of)
            if shared is not None and sig is not None:
                shared[sig] = node
            if threshold is not None and node.best <= threshold:
                continue
            new_active[key] = node
            if key[0] in finals and (shared is None or not any(node is e for e in ends)):
                ends.append(node)
        return new_active, ends

    @staticmethod
    def _pruned(
        pending: dict[Config, list[Edge]], prune: str, windowed: bool
    ) -> tuple[dict[Config, list[Edge]], dict[Config, tuple[int, int]]]:
        """The edges a strategy may still choose, and each configuration's key.

        ``D(C)``, the positions a run takes (papers/semantics.md), grows by this event
        exactly when the edge emits.  STRICT drops every edge that does not (a run
        that skips an event of its sub-stream is never contiguous).  NEXT and LAST
        compare position sets in an order that extending two runs alike preserves
        (the first, resp. last, position where they differ decides), so at one
        configuration only the best runs can ever be chosen: with the previous
        step's dense rank ``r`` of a run's set (the empty set, a new run's, always
        :data:`EMPTY_RANK`, the worst), NEXT ranks an edge ``(r, 0 if it emits else 1)`` and LAST
        ``(0 if it emits else 1, r)``; the least key wins, ties are all kept (equal
        keys: equal sets).  Under WITHIN a window may drop the best run's start and
        leave a worse one in, so there each configuration is split by start first
        (:attr:`Enumerator.by_start`) and the best runs of each start are kept.  MAX drops only
        runs whose set another run into the same configuration strictly contains
        (:func:`_max_edges`).
        """
        keys: dict[Config, tuple[int, int]] = {}
        out: dict[Config, list[Edge]] = {}
        worst = EMPTY_RANK
        for key, edges in pending.items():
            if prune == "MAX":
                out[key], keys[key] = _max_edges(edges, windowed)
                continue
            if prune == "STRICT":
                kept = [edge for edge in edges if edge[1]]
                if kept:
                    out[key] = kept
                    keys[key] = (0, 0)
                continue
            best: tuple[int, int] | None = None
            kept = []
            for edge in edges:
                pred, emission = edge
                r = pred.rank if isinstance(pred, Node) else worst
                took = 0 if emission else 1
                k = (r, took) if prune == "NEXT" else (took, r)
                if best is None or k < best:
                    best = k
                    kept = [edge]
                elif k == best:
                    kept.append(edge)
            assert best is not None
            out[key] = kept
            keys[key] = best
        return out, keys

    @staticmethod
    def _rank(active: dict[Config, Node], keys: dict[Config, tuple[int, int]], prune: str) -> None:
        """Dense ranks of this step's configurations from their keys (0: the best set);
        for MAX the code of :func:`_max_edges`."""
        if prune == "MAX":
            for config, node in active.items():
                node.rank = keys[config][0]
            return
        empty = (EMPTY_RANK, 1) if prune == "NEXT" else (1, EMPTY_RANK)
        order = {k: n for n, k in enumerate(sorted(set(keys[c] for c in active)))}
        for config, node in active.items():
            key = keys[config]
            node.rank = EMPTY_RANK if key == empty else order[key]

    def _emit(self, ends: list[Node], k: int, threshold: Any) -> list[Any]:
        """The complex events of the runs ending at position ``k`` (spec §2), each once."""
        build = self.build
        watch = self.watch
        coords = self.coords
        out: list[Any] = []
        if self.native is not None:
            self._emit_native(self.native, ends, k, threshold, out)
        elif self.dedupe:
            seen: set[Any] = set()
            for node in ends:
                for ce in enumerate_within(node, k, threshold, coords, build):
                    if ce not in seen:
                        seen.add(ce)
                        out.append(ce)
                        if watch is not None and not len(out) & WATCH_MASK:
                            watch(len(out))
        elif watch is not None:
            for node in ends:
                for ce in enumerate_within(node, k, threshold, coords, build):
                    out.append(ce)
                    if not len(out) & WATCH_MASK:
                        watch(len(out))
        else:
            for node in ends:
                out.extend(enumerate_within(node, k, threshold, coords, build))
        return out

    def _emit_native(
        self, native: NativeLines, ends: list[Node], k: int, threshold: Any, out: list[Any]
    ) -> None:
        """:meth:`_emit` by the C walk: the same complex events, in the same order, each
        the builder's :class:`~acel.io.lines.PreparedEvent` (same dedupe, same watch)."""
        build = self.build
        make = build.native_make  # type: ignore[union-attr]
        unique: set[Any] | None = set() if self.dedupe else None
        for node in ends:
            native(node, k, threshold, self.coords, build, make, out, self.watch, unique)

    def _compact(self, threshold: Any) -> None:
        """Drop the expired parts of the run graph; the next compaction's period."""
        active = self.active
        live = compact(list(active.values()), _above(threshold), self.coord_of)
        self.period = max(64, live // max(1, len(active)))
        self.since_compaction = 0


def _max_edges(edges: list[Edge], windowed: bool) -> tuple[list[Edge], tuple[int, int]]:
    """SELECT MAX: the edges into one configuration whose runs may be maximal, and the
    node's code: ``-1`` no run has taken an event, ``0`` some has, ``s + 1`` some run
    has taken every event of the sub-stream since its start ``s``.

    Dropped (each run strictly contained in a kept run with the same future):
    a non-emitting edge whose predecessor also emits into this configuration;
    without WITHIN (which could expire the larger, earlier run first) a run starting
    here when a run that has taken an event takes this one too, and a non-emitting
    edge whose runs all start at or after some run that took every event since its
    start and takes this one (``D`` of the first lies in that run's span, which now
    also holds this event).
    """

    def full(pred: Any, emission: Any) -> int | None:
        if not emission:
            return None
        if isinstance(pred, Node):
            return int(pred.rank) - 1 if pred.rank > 0 else None
        return int(pred)

    def ident(pred: Any) -> tuple[bool, int]:
        return (True, id(pred)) if isinstance(pred, Node) else (False, int(pred))

    takers = {ident(pred) for pred, emission in edges if emission}
    larger = not windowed and any(
        emission and isinstance(pred, Node) and pred.rank >= 0 for pred, emission in edges
    )
    fulls = [f for f in (full(p, e) for p, e in edges if isinstance(p, Node)) if f is not None]
    least = min(fulls) if fulls and not windowed else None
    kept = [
        (pred, emission)
        for pred, emission in edges
        if (emission or ident(pred) not in takers)
        and not (larger and not isinstance(pred, Node))
        and not (
            not emission and least is not None and isinstance(pred, Node) and least <= pred.first
        )
    ]
    taken = any(emission or (isinstance(pred, Node) and pred.rank >= 0) for pred, emission in kept)
    starts = [f for f in (full(p, e) for p, e in kept) if f is not None]
    code = min(starts) + 1 if starts else (0 if taken else -1)
    return kept, (code, 0)


def _signature(edges: list[Edge]) -> Any:
    """SELECT MAX: configurations reached by the same edges share one node (the same
    runs), so a run skipping into one is seen emitting into the other as the same
    predecessor and dropped (:func:`_max_edges`); ``None`` when unhashable."""
    sig = tuple(
        ((True, id(pred)) if isinstance(pred, Node) else (False, pred), emission)
        for pred, emission in edges
    )
    try:
        hash(sig)
    except TypeError:
        return None
    return sig


def _above(threshold: Any) -> Callable[[Any], bool]:
    return lambda best: bool(best > threshold)


def _dedupe(edges: list[Edge]) -> list[Edge]:
    """Identical edges (same predecessor, same emission) stand for one run."""
    if len(edges) < 2:
        return edges
    seen: set[tuple[int, Any]] = set()
    out: list[Edge] = []
    for pred, emission in edges:
        marker = (id(pred) if isinstance(pred, Node) else -1 - pred, emission)
        if marker not in seen:
            seen.add(marker)
            out.append((pred, emission))
    return out
