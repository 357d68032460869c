"""The NFA^b automaton of seed 002 (Agrawal et al., SIGMOD 2008, §3) and its runs.

States are laid out in a line, one per pattern component: a *singleton* state
for a single component and a pair ``p[1]``, ``p[i]`` for a Kleene plus
component, then the final state F.  Edges (seed 002, §3.1 and Figure 2):

- ``begin`` (singleton state or ``p[1]``): consume the event into the buffer
  and move on (to the next state, or to ``p[i]``);
- ``take`` (``p[i]``): consume the event into the buffer and stay;
- ``ignore`` (every state but the start state): consume without selecting;
  its formula encodes the event selection strategy (§3.2, Step 3);
- ``proceed`` (``p[i]``): an ε-edge to the next state, restricted by
  "peeking" (§3.2, Step 6): taken only when the current event satisfies the
  next state's begin condition; into F it is taken right after a begin or take.

The WITHIN condition (Step 4) is checked on every edge into F and pushed onto
all earlier edges as a pruning rule (Step 5) when the window axis is
monotone.  Runs are explicit and every accepting run yields its buffer: this is
the slow baseline on purpose; callers deduplicate matches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from acel.lang.ast import Window
from acel.lang.clauses import window_value
from acel.lang.events import Event

Strategy = Literal[
    "strict_contiguity",
    "partition_contiguity",
    "skip_till_next_match",
    "skip_till_any_match",
]
STRATEGIES: tuple[Strategy, ...] = (
    "strict_contiguity",
    "partition_contiguity",
    "skip_till_next_match",
    "skip_till_any_match",
)

Buffer = tuple[tuple[int, ...], ...]
"""The match buffer: for each component begun so far, its selected local positions."""

EdgePred = Callable[[Sequence[Event], Buffer], bool]
"""An edge formula over the sub-stream and the *tentative* buffer.

For ``begin`` and ``take`` the buffer already holds the event under test as
the last position of the current component (so ``v[i]`` is ``buf[c][-1]`` and
``v[i-1]`` is ``buf[c][-2]``); for ``proceed`` it is the buffer as it stands.
"""


def always(_events: Sequence[Event], _buf: Buffer) -> bool:
    """The formula ``True``."""
    return True


@dataclass(frozen=True)
class ComponentSpec:
    """One positive pattern component: its state(s) and edge formulas.

    ``begin`` and ``take`` are checked after the type test; ``proceed`` holds
    the conjuncts whose last identifier is ``v[v.len]`` (Step 2).
    """

    type: str
    kleene: bool
    begin: EdgePred = always
    take: EdgePred = always
    proceed: EdgePred = always


@dataclass(frozen=True)
class NFAb:
    """An NFA^b: the component states in order, the strategy and the window.

    ``loops`` extends seed 002's linear layout for GRETA's nested Kleene
    ``(c_s ; ... ; c_e)+``: a pair ``(e, s)`` lets a run that has finished
    component ``e`` start component ``s`` again (SASE+ queries have none).
    """

    components: tuple[ComponentSpec, ...]
    strategy: Strategy = "skip_till_any_match"
    within: Window | None = None
    loops: tuple[tuple[int, int], ...] = ()
    slide: Window | None = None
    """With a SLIDE (ACEL trend aggregation), a match must also fit one window
    ``[k·s, k·s + w)``; matches that fit none count nowhere and are pruned."""


@dataclass(frozen=True)
class _Run:
    """A run: current component, phase (0: singleton/``p[1]``, 1: ``p[i]``), buffer.

    ``comps`` names the component of each buffer segment (equal to
    ``range(len(buf))`` without loops).
    """

    comp: int
    phase: int
    buf: Buffer
    comps: tuple[int, ...]
    start: int


Accepted = tuple[tuple[int, ...], Buffer]
"""An accepting run: the component of each segment, and the segments."""


def _monotone(window: Window | None, events: Sequence[Event]) -> bool:
    """Whether the window axis never decreases, so spans only grow (Step 5 is safe)."""
    if window is None:
        return False
    if window.attr is None:
        return True
    values = [window_value(window, events, k) for k in range(len(events))]
    return all(a <= b for a, b in zip(values, values[1:]))


class _Runner:
    """One pass of the NFA^b over a sub-stream, collecting accepting buffers."""

    def __init__(
        self, nfa: NFAb, events: Sequence[Event], positions: Sequence[int] | None
    ) -> None:
        self.nfa = nfa
        self.events = events
        self.positions = positions
        self.last = len(nfa.components) - 1
        self.prune = _monotone(nfa.within, events)
        self.successors: list[tuple[int, ...]] = [
            ((c + 1,) if c < self.last else ())
            + tuple(start for end, start in nfa.loops if end == c)
            for c in range(len(nfa.components))
        ]
        self.out: list[Accepted] = []

    def span_ok(self, first: int, last: int) -> bool:
        window = self.nfa.within
        if window is None:
            return True
        lo = window_value(window, self.events, first)
        hi = window_value(window, self.events, last)
        if hi - lo >= window.size:
            return False
        slide = self.nfa.slide
        if slide is None:
            return True
        # the window holding ``lo`` that reaches furthest starts at floor(lo / s)·s
        return hi < math.floor(lo / slide.size) * slide.size + window.size

    def accept(self, comps: tuple[int, ...], buf: Buffer) -> None:
        if self.span_ok(buf[0][0], buf[-1][-1]):
            self.out.append((comps, buf))

    def begin(
        self, c: int, buf: Buffer, comps: tuple[int, ...], k: int, start: int, nxt: list[_Run]
    ) -> bool:
        """The begin edge of component ``c`` on event ``k``; whether it was taken."""
        spec = self.nfa.components[c]
        if self.events[k].type != spec.type:
            return False
        tentative = buf + ((k,),)
        comps = comps + (c,)
        if not spec.begin(self.events, tentative):
            return False
        if spec.kleene:
            nxt.append(_Run(c, 1, tentative, comps, start))
            if c == self.last and spec.proceed(self.events, tentative):
                self.accept(comps, tentative)
            return True
        if c == self.last:
            self.accept(comps, tentative)
        for succ in self.successors[c]:
            nxt.append(_Run(succ, 0, tentative, comps, start))
        return True

    def step(self, run: _Run, k: int, nxt: list[_Run]) -> None:
        """All moves of ``run`` on event ``k`` (begin/take, ignore, proceed)."""
        strategy = self.nfa.strategy
        c, buf = run.comp, run.buf
        if strategy == "strict_contiguity" and self.positions is not None:
            if self.positions[k] != self.positions[buf[-1][-1]] + 1:
                return
        spec = self.nfa.components[c]
        if run.phase == 0:
            selected = self.begin(c, buf, run.comps, k, run.start, nxt)
        else:
            tentative = buf[:-1] + (buf[-1] + (k,),)
            selected = self.events[k].type == spec.type and spec.take(self.events, tentative)
            if selected:
                nxt.append(_Run(c, 1, tentative, run.comps, run.start))
                if c == self.last and spec.proceed(self.events, tentative):
                    self.accept(run.comps, tentative)
            if self.successors[c] and spec.proceed(self.events, buf):
                # proceed with peek: only into a begin of the next state on this event
                for succ in self.successors[c]:
                    self.begin(succ, buf, run.comps, k, run.start, nxt)
        if strategy == "skip_till_any_match" or (
            strategy == "skip_till_next_match" and not selected
        ):
            nxt.append(run)

    def run(self) -> Iterator[Accepted]:
        runs: list[_Run] = []
        for k in range(len(self.events)):
            nxt: list[_Run] = []
            for run in runs:
                if self.prune and not self.span_ok(run.start, k):
                    continue
                self.step(run, k, nxt)
            self.begin(0, (), (), k, k, nxt)
            runs = nxt
            if self.out:
                yield from self.out
                self.out = []


def run_nfa(
    nfa: NFAb, events: Sequence[Event], positions: Sequence[int] | None = None
) -> Iterator[Accepted]:
    """Every accepting run (segment components and buffer) on a sub-stream numbered from 0.

    ``positions`` gives the global position of each event (used only by strict
    contiguity, which demands adjacency in the whole stream, not only inside a
    partition).  The same match may come from several runs.
    """
    if not nfa.components:
        return iter(())
    return _Runner(nfa, events, positions).run()
