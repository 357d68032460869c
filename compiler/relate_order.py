"""Where a variable's events sit in the runs of an automaton (for the relating filters).

A conjunct can be checked when an event is read if everything it compares with is final
by then (:func:`precedes`); a variable that one step at most fills (:func:`one_step`)
has no event with an earlier one, and a variable that holds one event at most
(:func:`single_event`) can be kept in a register per attribute.
"""

from __future__ import annotations

from acel.acea.model.automaton import Transition
from acel.compiler.automaton import Auto, distinct_renamings, outputs_of


def precedes(auto: Auto, others: set[str], var: str) -> bool:
    """Whether, in every run, every event of ``others`` is read before the first event of
    ``var``: no step emitting into ``others`` follows (or is) a step emitting into ``var``."""
    emitting = [t for t in auto.transitions if outputs_of(t).get(var)]
    seen = _after(auto, emitting)
    after = [*emitting, *(t for t in auto.transitions if t.source in seen)]
    return not any(outputs_of(t).get(y) for t in after for y in others)



def _after(auto: Auto, steps: list[Transition]) -> set[int]:
    """The states reachable from the targets of ``steps`` (targets included)."""
    seen: set[int] = set()
    stack = [t.target for t in steps]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        stack.extend(t.target for t in auto.transitions if t.source == state)
    return seen


def one_step(auto: Auto, var: str) -> bool:
    """Whether no run has two steps emitting into ``var`` (its events share one time)."""
    emitting = [t for t in auto.transitions if outputs_of(t).get(var)]
    after = _after(auto, emitting)
    return not any(t.source in after for t in emitting)


def single_event(auto: Auto, var: str) -> bool:
    """Whether every run emits one distinct event into ``var`` at most (one step, one
    renaming: the same event twice is one event of the bag's set)."""
    return one_step(auto, var) and all(
        len(distinct_renamings({var: outputs_of(t)[var]})) <= 1
        for t in auto.transitions
        if outputs_of(t).get(var)
    )


def bound(auto: Auto, var: str, cap: int = 5, events: int | None = None) -> int | None:
    """The most events any run emits into ``var`` when each step emits one distinct event
    at most and no cycle emits (then at most ``cap``); None otherwise (unbounded, too many,
    or several events at one time).  With ``events``, only runs of at most that many steps
    matter (``WITHIN events EVENTS``), so ``min(events, …)`` when ``events <= cap``."""
    emits: dict[int, int] = {}
    for i, t in enumerate(auto.transitions):
        emitted = outputs_of(t).get(var)
        if emitted and len(distinct_renamings({var: emitted})) > 1:
            return None
        emits[i] = 1 if emitted else 0
    longest = _longest(auto, emits, cap)
    if events is not None and events <= cap:
        return events if longest is None else min(longest, events)
    return longest


def _longest(auto: Auto, emits: dict[int, int], cap: int) -> int | None:
    """The most emitting steps on any run (``emits``: 1 for a step that emits), or None
    when some run has more than ``cap`` (a cycle emits, or too many)."""
    best = {auto.initial: 0}
    changed = True
    while changed:
        changed = False
        for i, t in enumerate(auto.transitions):
            if t.source not in best:
                continue
            count = best[t.source] + emits[i]
            if count > cap:
                return None
            if count > best.get(t.target, -1):
                best[t.target] = count
                changed = True
    return max(best.values())


def _quiet_closure(auto: Auto, start: set[int], var: str, forward: bool) -> set[int]:
    """States reachable from ``start`` (or reaching it, ``forward`` False) through steps
    that emit nothing into ``var``."""
    seen: set[int] = set()
    stack = list(start)
    quiet = [t for t in auto.transitions if not outputs_of(t).get(var)]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        stack.extend(t.target if forward else t.source
                     for t in quiet if (t.source if forward else t.target) == state)
    return seen


def may_follow(auto: Auto, step: Transition, var: str) -> bool:
    """Whether some run has a step emitting into ``var`` after ``step``."""
    after = _after(auto, [step])
    return any(t.source in after for t in auto.transitions if outputs_of(t).get(var))


def may_open(auto: Auto, step: Transition, var: str) -> bool:
    """Whether ``step`` may emit the first events of ``var`` in a run (no step emitting
    into ``var`` need come before it)."""
    return step.source in _quiet_closure(auto, {auto.initial}, var, forward=True)


def may_close(auto: Auto, step: Transition, var: str) -> bool:
    """Whether ``step`` may emit the last events of ``var`` in an accepting run."""
    return step.target in _quiet_closure(auto, set(auto.finals), var, forward=False)
