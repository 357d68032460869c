"""Naive runs of a query's ACEA, kept step by step for the step-through view (issue 25 §2).

:mod:`acel.acea.engine.naive` follows the definition (spec §7): a run starts at
every event, reads the following events of its partition, fires every
transition whose predicate holds (:func:`acel.acea.model.automaton.fire`), and a
complex event completes whenever a run enters a final state.  This module does
the same but records, after each event of the stream, the configurations alive
(their state, their start and the events emitted so far), the edges fired and
the complex events completed, and explains why an expected match is missing:
the first event at which no run that could build it survives, and, for every
transition it could have taken there, the part of the guard that failed (in the
query's words, :mod:`acel.acea.model.words`).

Positions are global (the stream's), although each partition runs on its own
renumbered events as spec §1 says.  Leading and trailing ``NOT`` (applied per
window by the query driver, spec §3.1) are not part of the automaton: the
trace leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acel.acea.model.automaton import ACEA, Registers, Transition, emitted, fire, lookup_in
from acel.acea.model.expressions import Cmp, PAnd, Reg, TrueP, eval_rpred
from acel.acea.model.expressions import eval_rexpr as _eval
from acel.acea.model.render import element_of
from acel.acea.model.words import Names, compared, guard_lines

from acel.lang.clauses import split_partitions
from acel.lang.events import Event

MAX_EVENTS = 200
"""The step-through view is for short streams: at most this many events."""

Emitted = tuple[tuple[str, tuple[int, ...]], ...]
"""Global positions emitted so far per variable (sorted)."""


@dataclass(frozen=True)
class Run:
    """A configuration after a step: where the run started, its state, what it emitted."""

    start: int
    state: int
    registers: Registers
    emitted: Emitted

    def as_json(self) -> dict[str, Any]:
        """What the page shows of the run: start, state, positions per variable."""
        return {"start": self.start, "state": self.state,
                "vars": {var: list(positions) for var, positions in self.emitted}}


@dataclass
class Step:
    """What happened when one event was read (step 0: before any event)."""

    runs: list[Run] = field(default_factory=list)
    edges: set[tuple[int, int]] = field(default_factory=set)
    elements: set[str] = field(default_factory=set)
    """The SVG ids of the edges and skip loops fired (:func:`acel.acea.model.render.element_of`)."""
    matches: list[dict[str, Any]] = field(default_factory=list)


def _add(so_far: Emitted, new: dict[str, list[Event]], positions: Sequence[int]) -> Emitted:
    bags = {var: list(found) for var, found in so_far}
    for var, events in new.items():
        bags.setdefault(var, []).extend(positions[e.time] for e in events)
    return tuple(sorted((var, tuple(sorted(found))) for var, found in bags.items() if found))


def _step(automaton: ACEA, run: Run, event: Event,
          positions: Sequence[int]) -> list[tuple[Transition, Run]]:
    out = []
    for t in automaton.by_source.get(run.state, ()):
        tau = fire(t, run.registers, event)
        if tau is not None:
            new = emitted(t, tau, event.time)
            out.append((t, Run(run.start, t.target, tau, _add(run.emitted, new, positions))))
    return out


def trace(automaton: ACEA, events: Sequence[Event],
          partition_by: Sequence[str] = ()) -> list[Step]:
    """The steps of every run over ``events`` (numbered 0..n-1): ``n + 1`` steps, the
    first before any event; each run only reads the events of its partition."""
    where: dict[int, tuple[Any, Event, Sequence[int]]] = {}
    for part in split_partitions(events, partition_by):
        for position, event in zip(part.positions, part.events):
            where[position] = (part.key, event, part.positions)
    steps = [Step()]
    alive: dict[Any, list[Run]] = {}
    for position in range(len(events)):
        step = Step()
        if position in where:  # an event lacking a PARTITION BY attribute changes nothing
            key, event, positions = where[position]
            following: dict[Run, None] = {}
            for run in [*alive.get(key, []), Run(position, automaton.initial, (), ())]:
                for t, after in _step(automaton, run, event, positions):
                    following[after] = None
                    step.edges.add((t.source, t.target))
                    step.elements.add(element_of(t))
            alive[key] = list(following)
            step.matches = [{"start": r.start, "end": position, "vars": r.as_json()["vars"],
                             "key": [[n, v] for n, v in key]}
                            for r in following if r.state in automaton.finals]
        step.runs = [r for runs in alive.values() for r in runs]
        steps.append(step)
    return steps


# ------------------------------------------------------------------ why not


def _conjuncts(t: Transition) -> list[Any]:
    p = t.predicate
    if isinstance(p, PAnd):
        return list(p.operands)
    return [] if isinstance(p, TrueP) else [p]


def failed_part(t: Transition, run: Run, event: Event, names: Names) -> str:
    """Why ``t`` cannot read ``event``: the first part of its guard that is false, in
    the query's words (``the event is not a SELL``, ``msft[price > 100] is false``)."""
    before = lookup_in(run.registers, event)
    after = {reg: _eval(expr, before.get) for reg, expr in t.assignment}
    values = {r: v for r, v in after.items() if v is not None}
    for c in _conjuncts(t):
        if not eval_rpred(c, values.get):
            if isinstance(c, Cmp) and isinstance(c.left, Reg) and c.left.name.startswith("type#"):
                return f"the event is not a {getattr(c.right, 'value', '?')}"
            single = Transition(t.source, t.assignment, c, t.output, t.target)
            said = " AND ".join(guard_lines(single, names)) + " is false"
            values_now = compared(c, values.get, names)
            return f"{said}: {values_now}" if values_now else said
    return " AND ".join(guard_lines(t, names)) + " is false"


def _event_text(event: Event) -> str:
    attrs = " ".join(f"{n}={v!r}" for n, v in event.attrs if n != "type")
    return f"{event.type or 'event'} {attrs}".strip()


def why_not(automaton: ACEA, events: Sequence[Event], expect: Sequence[int],
            partition_by: Sequence[str] = ()) -> dict[str, Any]:
    """Why no complex event holds exactly the events at positions ``expect``: the
    first event at which every run that could build it died, and for each
    transition it could have taken, why not (``found`` when such a match exists).
    The runs that could build it keep exactly those events (emit them into some
    variable) and read the others without keeping them, from any start up to the
    first of them (a projected part may come first) to any end from the last."""
    wanted = sorted(set(expect))
    if not wanted or wanted[0] < 0 or wanted[-1] >= len(events):
        raise ValueError(f"expected positions must lie in 0..{len(events) - 1}: {list(expect)}")
    names = Names.of(automaton)
    part = next((p for p in split_partitions(events, partition_by)
                 if wanted[0] in p.positions), None)
    if part is None or not set(wanted) <= set(part.positions):
        return {"expect": wanted, "found": False, "position": wanted[0],
                "reason": "the expected events are not all in one partition (PARTITION BY)",
                "tried": []}
    runs: list[Run] = []
    after_last: list[Run] | None = None
    for position, event in zip(part.positions, part.events):
        if position <= wanted[0]:  # a run may start before its first kept event (projection)
            runs.append(Run(position, automaton.initial, (), ()))
        following, tried = _advance(automaton, runs, event, position in wanted,
                                    part.positions, names)
        if not following and position < wanted[0]:
            runs = []
            continue
        if not following:
            if position > wanted[-1]:  # read past the match: no final state came
                break
            return {"expect": wanted, "found": False, "position": position,
                    "event": _event_text(event), "states": sorted({r.state for r in runs}),
                    "reason": f"every run that could build the match dies at event {position}",
                    "tried": tried}
        runs = following
        if position >= wanted[-1]:  # a projection may read more events without keeping them
            after_last = runs if after_last is None else after_last
            if any(r.state in automaton.finals for r in runs):
                return {"expect": wanted, "found": True, "position": position,
                        "reason": f"the match is found: it completes at event {position}",
                        "tried": []}
    states = sorted({r.state for r in after_last or runs})
    listed = ", ".join(f"q{q}" for q in states)
    return {"expect": wanted, "found": False, "position": wanted[-1], "states": states,
            "reason": f"after event {wanted[-1]} the runs are in {listed}, not a final state: "
                      "the pattern needs more events", "tried": []}


def _advance(automaton: ACEA, runs: list[Run], event: Event, keep: bool,
             positions: Sequence[int], names: Names) -> tuple[list[Run], list[dict[str, Any]]]:
    """The runs that read ``event`` and keep it exactly when ``keep`` (emitting into some
    variable), and why every other transition of theirs could not."""
    following: list[Run] = []
    tried: list[dict[str, Any]] = []
    for run in runs:
        for t in automaton.by_source.get(run.state, ()):
            tau = fire(t, run.registers, event)
            edge = f"q{t.source} -> q{t.target}"
            if tau is None:
                tried.append({"edge": edge, "why": failed_part(t, run, event, names)})
            elif bool(t.output) != keep:
                tried.append({"edge": edge, "why": "takes this event, which the match leaves "
                              "out" if t.output else "skips this event, which the match needs"})
            else:
                new = emitted(t, tau, event.time)
                following.append(Run(run.start, t.target, tau, _add(run.emitted, new, positions)))
    unique = list({(t["edge"], t["why"]): t for t in tried}.values())
    return list(dict.fromkeys(following)), unique
