"""Indexed configurations for trend aggregation: beating GRETA's quadratic bound.

In a Kleene trend such as ``(STOCK AS s)+ FILTER s[DEC(price)]`` the compiled
automaton waits in a state whose only live registers are "the trend has
started" and "the last price".  Its configurations differ by that price, so
one per distinct price of the window, and each new event would be tested
against all of them: ``O(n)`` per event, ``O(n²)`` per window, like GRETA.

A state ``q`` is *indexed* when

* it has an **identity loop** (``TRUE``, any event, copies every live
  register, emits nothing): its configurations persist from step to step
  unchanged, so they can live in a persistent structure instead of being
  rebuilt per event; and
* some outgoing transitions are **range transitions** on one live register
  ``r`` (:func:`range_shape`): they read ``r`` only through one comparison
  ``r op y`` with ``y`` independent of ``r``, and neither their target
  registers nor what they emit depend on ``r``.

Configurations of ``q`` are grouped by their other registers; in a group, a
:class:`acea.fenwick.RankedIndex` over the ranks of ``r``'s possible values
(computed from the partition's events before the pass) answers "merge of the
vectors of all configurations with ``r op y``" in ``O(log m)``.  Values
outside the universe (NULL, strings, or values computed from registers) sit
in a side table scanned per query (correct, just slower).  Transitions of
``q`` that are neither identity nor range are evaluated by scanning the group.
Final states are never indexed (a run may end at every step).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from acel.acea.engine.closures import (
    CompiledAutomaton,
    CompiledTransition,
    FireFn,
    TrendItem,
    compile_event_expr,
    compile_range_transition,
)
from acel.acea.engine.fenwick import GrowingIndex
from acel.acea.model.automaton import Transition
from acel.acea.model.expressions import (
    Cmp,
    PAnd,
    PNot,
    POr,
    Reg,
    RPred,
    TrueP,
    names_in_expr,
    names_in_pred,
)

from acel.lang.predicates import compare

Classes = dict[Any, tuple[Any, ...]]
"""Start class → trend vector (see :mod:`acea.trend`)."""

FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "!=", "!=": "="}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _atoms(pred: RPred) -> Iterator[RPred]:
    if isinstance(pred, (PAnd, POr)):
        for operand in pred.operands:
            yield from _atoms(operand)
    elif isinstance(pred, PNot):
        yield from _atoms(pred.operand)
    elif not isinstance(pred, TrueP):
        yield pred


@dataclass(frozen=True)
class RangeShape:
    """How a transition depends on key register ``key``: ``key op y`` (or not at all)."""

    copies: frozenset[str]
    atom: Cmp | None
    op: str
    """Normalised so that the atom is ``key op y``."""


def range_shape(t: Transition, key: str, target_live: Sequence[str]) -> RangeShape | None:
    """Whether ``t`` is a range transition on register ``key`` (see the module doc)."""
    copies = frozenset(reg for reg, expr in t.assignment if expr == Reg(key))
    for reg, expr in t.assignment:
        if reg not in copies and key in names_in_expr(expr):
            return None
    if copies & set(target_live):
        return None
    for _, renamings in t.output:
        for renaming in renamings:
            if renaming.registers() & copies:
                return None
    touching = [a for a in _atoms(t.predicate) if names_in_pred(a) & copies]
    if not touching:
        return RangeShape(copies, None, "=")
    if len(touching) != 1:
        return None
    atom = touching[0]
    if not isinstance(atom, Cmp) or atom.op not in FLIP:
        return None
    if isinstance(atom.left, Reg) and atom.left.name in copies:
        other, op = atom.right, atom.op
    elif isinstance(atom.right, Reg) and atom.right.name in copies:
        other, op = atom.left, FLIP[atom.op]
    else:
        return None
    if names_in_expr(other) & copies:
        return None
    return RangeShape(copies, atom, op)


def is_identity_loop(t: Transition, live: Sequence[str]) -> bool:
    """``TRUE``, untyped, non-emitting, ``x := x`` for every live register."""
    if t.source != t.target or t.output or not isinstance(t.predicate, TrueP):
        return False
    assignment = dict(t.assignment)
    return all(assignment.get(x) == Reg(x) for x in live)


@dataclass(frozen=True)
class RangeTransition:
    compiled: CompiledTransition
    parts: FireFn
    op: str
    has_atom: bool


@dataclass(frozen=True)
class IndexPlan:
    """An indexed state: its key register and its identity / range transitions."""

    state: int
    key: str
    position: int
    identity: frozenset[int]
    ranged: dict[int, RangeTransition]
    universe: tuple[Callable[[dict[str, Any], int], Any], ...]
    """Expressions (of the read event) giving every value the key can take."""

    def universe_values(self, attrs: Sequence[dict[str, Any]]) -> list[Any]:
        """The sorted numeric values the key register can take on this partition."""
        found: set[Any] = set()
        for fn in self.universe:
            for k, a in enumerate(attrs):
                v = fn(a, k)
                if _is_number(v) and v == v:
                    found.add(v)
        return sorted(found)


def plan_indexes(
    ca: CompiledAutomaton, items: Sequence[TrendItem] | None
) -> dict[int, IndexPlan]:
    """The states worth indexing, with their key register (see the module doc)."""
    automaton = ca.automaton
    plans: dict[int, IndexPlan] = {}
    for q in automaton.states():
        live = ca.live[q]
        if not live or q in automaton.finals:
            continue
        outgoing = [ct for ct in ca.transitions if ct.transition.source == q]
        identity = frozenset(
            ct.index for ct in outgoing if is_identity_loop(ct.transition, live)
        )
        if not identity:
            continue
        best: tuple[int, str, dict[int, tuple[CompiledTransition, RangeShape]]] | None = None
        for key in live:
            shapes: dict[int, tuple[CompiledTransition, RangeShape]] = {}
            for ct in outgoing:
                if ct.index in identity:
                    continue
                shape = range_shape(ct.transition, key, ca.live[ct.transition.target])
                if shape is not None and shape.atom is not None:
                    shapes[ct.index] = (ct, shape)
            if shapes and (best is None or len(shapes) > best[0]):
                best = (len(shapes), key, shapes)
        if best is None:
            continue
        _, key, shapes = best
        ranged = {
            index: RangeTransition(
                ct,
                compile_range_transition(
                    ct.transition, index, ca.live, items, shape.copies, shape.atom  # type: ignore[arg-type]
                ),
                shape.op,
                shape.atom is not None,
            )
            for index, (ct, shape) in shapes.items()
        }
        universe = []
        for ct in ca.transitions:
            t = ct.transition
            if t.target != q or ct.index in identity:
                continue
            expr = dict(t.assignment).get(key)
            if expr is not None and not any("#" in n for n in names_in_expr(expr)):
                universe.append(compile_event_expr(expr))
        plans[q] = IndexPlan(q, key, live.index(key), identity, ranged, tuple(universe))
    return plans


class Group:
    """The configurations of an indexed state that agree on every non-key register."""

    __slots__ = ("entries", "index", "side", "merge", "seed", "inserted", "rebuilt_size")

    def __init__(self, seed: Sequence[Any], merge: Callable[[Classes, Classes], Classes]) -> None:
        self.seed = seed
        """Values known beforehand (a whole stream in memory): indexed as one level."""
        self.merge = merge
        self.entries: dict[Any, Classes] = {}
        self.index = GrowingIndex(merge, self.entries, seed)
        self.side: set[Any] = set()
        """Keys that are not numbers (NULL, strings, NaN): scanned per query."""
        self.inserted = 0
        self.rebuilt_size = 0

    def add(self, value: Any, classes: Classes) -> None:
        """Merge the runs of ``classes`` into the configuration with key ``value``."""
        old = self.entries.get(value)
        self.entries[value] = classes if old is None else self.merge(old, classes)
        tv = type(value)
        if (tv is int or tv is float) and value == value:
            self.index.add(value, classes)
        else:
            self.side.add(value)
        self.inserted += 1

    def rebuild(self, keep: Callable[[Any], bool]) -> None:
        """Drop dead classes, re-index what is left (amortised: on doubling)."""
        entries = {}
        for value, classes in self.entries.items():
            alive = {c: v for c, v in classes.items() if keep(c)}
            if alive:
                entries[value] = alive
        self.entries = {}
        self.index = GrowingIndex(self.merge, self.entries, self.seed)
        self.side = set()
        for value, classes in entries.items():
            self.add(value, classes)
        self.inserted = 0
        self.rebuilt_size = len(self.entries)

    def query(self, op: str, y: Any, w1: bool, w0: bool, wn: bool) -> Classes | None:
        """Merge of the configurations whose key ``v`` makes the predicate hold.

        The predicate holds for ``v`` when the atom ``v op y`` is true (``w1``),
        false (``w0``) or unknown (``wn``).
        """
        merge = self.merge
        acc: Classes | None = None
        index = self.index
        if _is_number(y) and y == y:
            if w1 and w0:
                acc = index.total()
            elif w1 or w0:
                acc = self._range(op if w1 else NEGATE[op], y)
        elif wn:
            acc = index.total()
        for value in self.side:
            truth = compare(op, value, y)
            if (w1 and truth is True) or (w0 and truth is False) or (wn and truth is None):
                part = self.entries[value]
                acc = part if acc is None else merge(acc, part)
        return acc

    def _range(self, op: str, y: Any) -> Classes | None:
        index = self.index
        if op == "<":
            return index.below(y, False)  # type: ignore[no-any-return]
        if op == "<=":
            return index.below(y, True)  # type: ignore[no-any-return]
        if op == ">":
            return index.above(y, False)  # type: ignore[no-any-return]
        if op == ">=":
            return index.above(y, True)  # type: ignore[no-any-return]
        if op == "=":
            return self.entries.get(y) if y in index.where else None
        below = index.below(y, False)
        above = index.above(y, False)
        if below is None:
            return above
        return below if above is None else self.merge(below, above)
