"""Leading and trailing negation in the streaming engine (spec §3.1).

``NOT ψ ; φ`` and ``φ ; NOT ψ`` depend on the query's window, so they are not
compiled into the automaton: the runner runs each ``ψ`` beside the body, on
the same partition, with a :class:`Detector`.  A detector is a small
propagation over ``ψ``'s automaton that keeps, per configuration, only the
latest start (position inside the partition, and its window coordinate) of
the runs through it; at every event it says the latest start of a ``ψ``
match ending there.  On a monotone window axis that is all the rules of
§3.1 need (the positions are ``i = start(C)``, ``j = end(C)``, ``s, t`` the
ends of ``N``, ``v`` the coordinate):

* trailing, no SLIDE: ``C`` is blocked iff the first ``t`` with a match
  starting after ``j`` has ``v(t) < v(i) + w`` (later ``t`` only have larger
  ``v``), so ``C`` waits until that ``t`` comes (blocked) or the axis passes
  ``v(i) + w`` (kept); with SLIDE, window ``k`` drops ``C`` iff that ``t``
  has ``v(t) < hi_k``;
* leading, no SLIDE: with ``G(i)`` the latest start coordinate of a match
  ending before ``i`` (a running maximum, known when ``C`` starts), ``C`` is
  blocked iff ``v(j) < G(i) + w``; with SLIDE, window ``k`` drops ``C`` iff
  ``G(i) ≥ lo_k``.

Runs of ``ψ`` starting at or below ``v(now) − w`` can no longer matter and are
dropped, so memory follows the window.  On an axis that may decrease, the
runner keeps the complex events and the ``ψ`` intervals of the partition and
applies §3.1 literally at the end (:func:`blocked`).
"""

from __future__ import annotations

from typing import Any

from acel.acea.engine.closures import CompiledAutomaton, CompiledTransition

Start = tuple[int, Any]
"""The latest start of some runs: ``(position inside the partition, coordinate)``."""


class Detector:
    """Where the matches of one negated formula ``ψ`` end, with their latest start.

    With ``all_starts`` (an axis that may decrease) every start of every run is
    kept instead, and every interval ``(s, t)`` of a match is recorded in ``spans``.
    """

    __slots__ = ("ca", "active", "within", "spans")

    def __init__(self, ca: CompiledAutomaton, within: Any, all_starts: bool = False) -> None:
        self.ca = ca
        self.active: dict[tuple[int, tuple[Any, ...]], Any] = {}
        self.within = within
        """The window size (runs starting at or below ``v(now) − w`` are dropped)."""
        self.spans: list[tuple[int, int]] | None = [] if all_starts else None
        """With ``all_starts``: every ``(s, t)`` of a match (local positions)."""

    def step(self, attrs: dict[str, Any], position: int, local: int, coord: Any) -> Start | None:
        """Read one event; the latest start of a ``ψ`` match ending at it, if any."""
        ca = self.ca
        ready = ca.ready
        cache: dict[int, tuple[CompiledTransition, ...]] = {}
        spans = self.spans
        sources = list(self.active.items())
        if spans is None:
            sources.append(((ca.automaton.initial, ()), (local, coord)))
        else:
            sources.append(((ca.automaton.initial, ()), frozenset([local])))
        floor = None if self.within is None or spans is not None else coord - self.within
        new: dict[tuple[int, tuple[Any, ...]], Any] = {}
        for (state, tau), start in sources:
            if floor is not None and start[1] <= floor:
                continue
            for ct in ready(state, attrs, position, cache):
                res = ct.fire(tau, attrs, position)
                if res is None:
                    continue
                key = (ct.target, res[0])
                old = new.get(key)
                if spans is not None:
                    new[key] = start if old is None else old | start
                elif old is None or start[0] > old[0]:
                    new[key] = start
        self.active = new
        best: Start | None = None
        finals = ca.automaton.finals
        for (state, _), start in new.items():
            if state not in finals:
                continue
            if spans is not None:
                spans.extend((s, local) for s in start)
                best = (max(start), None)
            elif best is None or start[0] > best[0]:
                best = start
        return best


def blocked(
    start: Any,
    end: Any,
    i: int,
    j: int,
    leading: list[tuple[int, int]],
    trailing: list[tuple[int, int]],
    coords: dict[int, Any],
    within: Any,
    bounds: tuple[Any, Any] | None = None,
) -> bool:
    """Spec §3.1 literally, for one complex event ``C`` = ``(i, j)`` (local positions)
    with coordinates ``start`` and ``end``, given every ``ψ`` interval ``(s, t)``.

    Without ``bounds`` (no SLIDE): a trailing ``N`` after ``C`` with ``v(t) − v(i) < w``
    or a leading ``N`` before ``C`` with ``v(j) − v(s) < w`` blocks it.  With
    ``bounds`` ``[lo, hi)`` (one SLIDE window): such an ``N`` with both ends in it.
    """

    def inside(span: tuple[int, int]) -> bool:
        assert bounds is not None
        lo, hi = bounds
        return bool(lo <= coords[span[0]] < hi and lo <= coords[span[1]] < hi)

    if bounds is None:
        if any(j < s and coords[t] - start < within for s, t in trailing):
            return True
        return any(t < i and end - coords[s] < within for s, t in leading)
    return any(j < s and inside((s, t)) for s, t in trailing) or any(
        t < i and inside((s, t)) for s, t in leading
    )
