"""The shared DAG of run pasts, and duplicate-free enumeration of complex events.

A :class:`Node` stands for the set of partial runs that reached one
configuration ``(state, τ)`` at one step.  Its ``edges`` say how: each edge is
``(pred, emission)`` where ``pred`` is the node of the previous step (or an
``int``, the start position of a run that began with this transition) and
``emission`` the ``(variable, event)`` pairs the transition emitted (``None``
when it emitted nothing).  ``best`` is the largest start coordinate (position
or ``ON attr`` value) of any run through the node: a window prunes a whole
sub-DAG with one comparison.  ``first`` is the least start position of a run
through it: AFTER MATCH SKIP releases a held complex event once no live run
starts before it (spec §6.3).

A configuration reached by a single non-emitting edge shares its
predecessor's node (no allocation; chains of skips cost nothing), so a path
in the DAG only visits nodes where something was emitted or runs merged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Union

from acel.acea.engine.closures import Emission

from acel.lang.events import ComplexEvent, Event

Pred = Union["Node", int]
Edge = tuple[Pred, Union[Emission, None]]


class Node:
    """A configuration's past: the union of its incoming edges."""

    __slots__ = ("edges", "best", "first", "rank", "after")

    def __init__(self, edges: list[Edge], best: Any, first: int, rank: int = 0) -> None:
        self.edges = edges
        self.best = best
        self.first = first
        self.rank = rank
        self.after: Any = None
        """AFTER MATCH SKIP: the least start of a run through the node at or after the
        skip's last resume point asked (``inf``: none; ``None``: not asked yet), a
        cache of :func:`least_start_from` (resume points only grow)."""
        """SELECT NEXT/LAST pruning (:class:`~acel.acea.engine.enumeration.Enumerator`):
        the rank of the position set of the runs through the node at its step (0 best)."""


def make_node(edges: list[Edge], coord: Callable[[int], Any]) -> Node:
    """The node for a configuration reached by ``edges`` (shares a lone skip's node)."""
    if len(edges) == 1:
        pred, emission = edges[0]
        if emission is None and isinstance(pred, Node):
            return pred
    best: Any = None
    first: Any = None
    for pred, _ in edges:
        if isinstance(pred, Node):
            b, f = pred.best, pred.first
        else:
            b, f = coord(pred), pred
        if best is None or b > best:
            best = b
        if first is None or f < first:
            first = f
    return Node(edges, best, first)


INF = float("inf")


def least_start_from(node: Node, resume: Any) -> Any:
    """The least start position ``>= resume`` of a run through ``node`` (``inf``: none).

    A run starting before an after-match skip's resume point gives only complex events
    the skip drops, so it does not hold back the ones after it (spec §6.3, as Flink
    prunes such partial matches).  Iterative and cached on each node
    (:attr:`Node.after`), so a step asks only about the nodes whose cached answer the
    resume point has passed.
    """
    if node.first >= resume:
        return node.first
    cached = node.after
    if cached is not None and cached >= resume:
        return cached
    stack: list[tuple[Node, Iterator[Edge], Any]] = [(node, iter(node.edges), INF)]
    while stack:
        current, edges, least = stack[-1]
        descend: Node | None = None
        for pred, _ in edges:
            if isinstance(pred, Node):
                if pred.first >= resume:
                    value = pred.first
                else:
                    value = pred.after
                    if value is None or value < resume:
                        descend = pred
                        break
            elif pred >= resume:
                value = pred
            else:
                continue
            if value < least:
                least = value
        if descend is not None:
            stack[-1] = (current, edges, least)
            stack.append((descend, iter(descend.edges), INF))
            continue
        current.after = least
        stack.pop()
        if stack:
            parent, parent_edges, parent_least = stack[-1]
            if least < parent_least:
                stack[-1] = (parent, parent_edges, least)
    return node.after


def enumerate_complex_events(
    node: Node,
    end: int,
    alive: Callable[[Any], bool],
    start_ok: Callable[[int], bool],
    build: Builder | None = None,
) -> Iterator[Any]:
    """Every complex event of the runs through ``node`` ending at ``end``.

    ``alive(best)`` prunes sub-DAGs whose every start is outside the window;
    ``start_ok(i)`` is the exact test on a start position.  Runs that give the
    same complex event are yielded once per run: callers dedupe (a hash set
    per end position).  Iterative DFS, so deep DAGs do not hit the recursion
    limit; the work per run is its number of DAG nodes, i.e. its emitting or
    merging steps.
    """
    emitted: list[Emission] = []
    stack: list[Iterator[Edge]] = [iter(node.edges)]
    while stack:
        for pred, emission in stack[-1]:
            if isinstance(pred, Node):
                if not alive(pred.best):
                    continue
                emitted.append(emission or ())
                stack.append(iter(pred.edges))
                break
            if start_ok(pred):
                yield (build or build_complex_event)(pred, end, emitted, emission)
        else:
            stack.pop()
            if emitted and len(emitted) >= len(stack):
                emitted.pop()


def enumerate_within(
    node: Node, end: int, threshold: Any, coords: Any, build: Builder | None = None
) -> Iterator[Any]:
    """:func:`enumerate_complex_events` for a window: ``alive(best)`` is
    ``best > threshold`` and ``start_ok(i)`` is ``coords.get(i) > threshold``
    (``coords`` maps the starts still in the window to their coordinate,
    ``None`` when a start's coordinate is its position;
    ``threshold`` ``None``: no window), inlined because this loop is the
    engine's output path.
    """
    if threshold is None:
        yield from enumerate_complex_events(node, end, _always, _always, build)
        return
    build = build or build_complex_event
    emitted: list[Emission] = []
    stack: list[Iterator[Edge]] = [iter(node.edges)]
    while stack:
        for pred, emission in stack[-1]:
            if isinstance(pred, Node):
                if not pred.best > threshold:
                    continue
                emitted.append(emission or ())
                stack.append(iter(pred.edges))
                break
            if (pred if coords is None else coords.get(pred, _EXPIRED)) > threshold:
                yield build(pred, end, emitted, emission)
        else:
            stack.pop()
            if emitted and len(emitted) >= len(stack):
                emitted.pop()


_EXPIRED = float("-inf")


def _always(_value: Any) -> bool:
    return True


def bags(
    emitted: Sequence[Emission], last: Emission | None
) -> tuple[dict[str, list[Event]], list[str] | None]:
    """The bags of one run, each in time order, and the variables that need the
    canonical tie-break sort (spec §2) because they got two events at one step.

    ``emitted`` holds the run's emissions from the last step back to the
    second, ``last`` the first step's: read backwards, every bag comes out
    sorted by time (an emission's events carry its step's time), so only a
    bag that got two events at the same step (several renamings into one
    variable) is out of canonical order.
    """
    mu: dict[str, list[Event]] = {}
    tied: list[str] | None = None
    if last:
        for var, event in last:
            bag = mu.get(var)
            if bag is None:
                mu[var] = [event]
            else:
                bag.append(event)
                if tied is None:
                    tied = [var]
                elif var not in tied:
                    tied.append(var)
    for n in range(len(emitted) - 1, -1, -1):
        for var, event in emitted[n]:
            bag = mu.get(var)
            if bag is None:
                mu[var] = [event]
            else:
                if bag[-1].time == event.time:
                    if tied is None:
                        tied = [var]
                    elif var not in tied:
                        tied.append(var)
                bag.append(event)
    return mu, tied


def build_complex_event(
    start: int, end: int, emitted: Sequence[Emission], last: Emission | None
) -> ComplexEvent:
    """The canonical complex event of one run (spec §2) without a full sort (:func:`bags`)."""
    mu, tied = bags(emitted, last)
    if tied is not None:
        for var in tied:
            mu[var].sort(key=Event.sort_key)
    if len(mu) == 1:
        for var, bag in mu.items():
            return ComplexEvent(start, end, ((var, tuple(bag)),))
    return ComplexEvent(start, end, tuple([(var, tuple(mu[var])) for var in sorted(mu)]))


Builder = Callable[[int, int, Sequence[Emission], Union[Emission, None]], Any]
"""What the enumeration makes of one run: ``build(start, end, emitted, last)``
(:func:`build_complex_event` by default; the command line writes JSON text directly)."""


def compact(roots: Sequence[Node], alive: Callable[[Any], bool], coord: Callable[[int], Any]) -> int:
    """Drop edges that can no longer lead to a run inside the window.

    Only sound when the window's lower bound never decreases (EVENTS, or a
    non-decreasing ``ON`` attribute).  Returns the number of live nodes, so
    the caller can space compactions to keep their cost amortised O(1) per
    configuration and step.
    """
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        kept: list[Edge] = []
        for edge in node.edges:
            pred = edge[0]
            if isinstance(pred, Node):
                if alive(pred.best):
                    kept.append(edge)
                    todo.append(pred)
            elif alive(coord(pred)):
                kept.append(edge)
        if len(kept) != len(node.edges):
            node.edges = kept
    return len(seen)
