"""Counters as states for trend counting: an ACEA whose carried registers do not read
events, unfolded into a register-free ACEA (issue 35; ``papers/engine.md``).

A counted repetition ``φ{n,m}`` (``compiler/counter.py``) carries one register whose
value is a function of the run's path alone (``count := 1``, ``count + 1``, ``count``,
``MIN(count + 1, n)``), never of the events' attributes.  Trend counting keeps one
configuration ``(q, τ)`` per value anyway, so nothing is lost by making each reachable
``(q, τ)`` a state: every transition is then taken from one configuration, with its
register guards decided and its event tests kept.  Runs correspond one to one (register
updates are deterministic), so counts, sums and unambiguity are those of the original.
What is gained: the result has no carried register, so the native core runs it, and
:func:`events_needed` can bound, per configuration, how many events a run still needs.

The unfolding is refused (``None``) when a carried register reads the event (a relating
filter, AGG, a negation's gap register) or when it would exceed :data:`UNFOLD_LIMIT`
states; the caller then runs the original automaton.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from acel.acea.model.automaton import ACEA, Transition
from acel.acea.model.expressions import (
    Arith,
    Cmp,
    Combine,
    Const,
    In,
    IsNull,
    Negate,
    PAnd,
    PNot,
    POr,
    Reg,
    RExpr,
    RPred,
    SameValue,
    TrueP,
    conj,
    eval_rexpr,
    eval_rpred3,
    is_register,
    names_in_expr,
    names_in_pred,
)

UNFOLD_LIMIT = 10_000
"""At most this many configurations become states (``A{n}`` needs about ``n + 2``)."""

Values = tuple[tuple[str, Any], ...]


class _Refused(Exception):
    """The automaton has a carried register the unfolding cannot decide."""


_PLAIN = (Reg, Const, Arith, Negate, Combine)


def _plain(expr: RExpr) -> bool:
    """Expressions :func:`eval_rexpr` decides from register values alone."""
    if isinstance(expr, (Reg, Const)):
        return True
    if isinstance(expr, Negate):
        return _plain(expr.operand)
    if isinstance(expr, (Arith, Combine)):
        return _plain(expr.left) and _plain(expr.right)
    return False


def _substitute_expr(expr: RExpr, known: Mapping[str, Any]) -> RExpr:
    """``expr`` with the known registers replaced by their values, folded when it reads
    nothing else."""
    if isinstance(expr, Reg):
        return Const(known[expr.name]) if expr.name in known else expr
    if not names_in_expr(expr) & known.keys():
        return expr
    if not _plain(expr):
        raise _Refused
    out: RExpr
    if isinstance(expr, Negate):
        out = Negate(_substitute_expr(expr.operand, known))
    elif isinstance(expr, Arith):
        out = Arith(expr.op, _substitute_expr(expr.left, known), _substitute_expr(expr.right, known))
    else:
        assert isinstance(expr, Combine)
        out = Combine(expr.func, _substitute_expr(expr.left, known),
                      _substitute_expr(expr.right, known))
    return Const(eval_rexpr(out, known.__getitem__)) if not names_in_expr(out) else out


def _substitute(pred: RPred, known: Mapping[str, Any]) -> RPred:
    """``pred`` with the known registers replaced by their values."""
    if isinstance(pred, TrueP) or not names_in_pred(pred) & known.keys():
        return pred
    if isinstance(pred, Cmp):
        return Cmp(pred.op, _substitute_expr(pred.left, known), _substitute_expr(pred.right, known))
    if isinstance(pred, SameValue):
        return SameValue(_substitute_expr(pred.left, known), _substitute_expr(pred.right, known))
    if isinstance(pred, In):
        return In(_substitute_expr(pred.operand, known), pred.values, pred.negated)
    if isinstance(pred, IsNull):
        return IsNull(_substitute_expr(pred.operand, known))
    if isinstance(pred, PNot):
        return PNot(_substitute(pred.operand, known))
    if isinstance(pred, (PAnd, POr)):
        return type(pred)(tuple(_substitute(p, known) for p in pred.operands))
    raise _Refused  # a gap register's test


def _decided(pred: RPred) -> RPred | None:
    """Top-level conjuncts that read nothing decided: the rest, or ``None`` (never true)."""
    conjuncts = pred.operands if isinstance(pred, PAnd) else (pred,)
    kept: list[RPred] = []
    for c in conjuncts:
        if names_in_pred(c):
            kept.append(c)
        elif eval_rpred3(c, lambda name: None) is not True:
            return None
    return conj(*kept)


def _carried(automaton: ACEA) -> frozenset[str]:
    """The registers some run carries from one event to the next."""
    out: set[str] = set()
    for regs in automaton.live.values():
        out |= regs
    return frozenset(out)


def _step(t: Transition, tau: Values, carried: frozenset[str],
          live: frozenset[str]) -> tuple[Transition, Values] | None:
    """``t`` taken from registers ``tau``: the register-free transition (its source and
    target still ``t``'s) and the carried registers after it; ``None``: it never fires."""
    before = dict(tau)
    known: dict[str, Any] = {}
    kept: list[tuple[str, RExpr]] = []
    for reg, expr in t.assignment:
        reads = {n for n in names_in_expr(expr) if is_register(n)}
        if reg in carried or reads:
            if not _plain(expr) or any(not is_register(n) for n in names_in_expr(expr)):
                raise _Refused  # a carried register that reads the event
            known[reg] = eval_rexpr(expr, before.get)
        else:
            kept.append((reg, expr))
    for reg in carried - known.keys():
        known[reg] = None  # not assigned: erased (automaton.fire)
    for _var, renamings in t.output:
        for renaming in renamings:
            if any(reg in known for _attr, reg in renaming.items):
                raise _Refused
    pred = _decided(_substitute(t.predicate, known))
    if pred is None:
        return None
    after = tuple(sorted((r, v) for r, v in known.items() if r in live and v is not None))
    return Transition(t.source, tuple(kept), pred, t.output, t.target), after


def unfold(automaton: ACEA, limit: int = UNFOLD_LIMIT) -> ACEA | None:
    """The register-free ACEA whose states are ``automaton``'s reachable configurations
    (``None``: nothing is carried, a carried register reads events, or over ``limit``)."""
    carried = _carried(automaton)
    if not carried:
        return None
    ids: dict[tuple[int, Values], int] = {(automaton.initial, ()): 0}
    todo: deque[tuple[int, Values]] = deque([(automaton.initial, ())])
    transitions: list[Transition] = []
    by_source = automaton.by_source
    try:
        while todo:
            config = todo.popleft()
            source = ids[config]
            for t in by_source.get(config[0], ()):
                taken = _step(t, config[1], carried, automaton.live[t.target])
                if taken is None:
                    continue
                flat, after = taken
                key = (t.target, after)
                target = ids.get(key)
                if target is None:
                    if len(ids) >= limit:
                        return None
                    target = ids[key] = len(ids)
                    todo.append(key)
                transitions.append(Transition(source, flat.assignment, flat.predicate,
                                              flat.output, target))
    except _Refused:
        return None
    finals = frozenset(i for (q, _), i in ids.items() if q in automaton.finals)
    return ACEA(len(ids), 0, finals, tuple(transitions), automaton.words)


def events_needed(automaton: ACEA) -> tuple[int, ...]:
    """Per state, the fewest events a run there still reads before it accepts (0 in a
    final state; every transition reads one event, guards ignored, so this is a lower
    bound).  A state that cannot accept gets ``num_states`` (more than any path)."""
    n = automaton.num_states
    into: dict[int, list[int]] = {}
    for t in automaton.transitions:
        into.setdefault(t.target, []).append(t.source)
    need = [n] * n
    queue = deque(sorted(automaton.finals))
    for q in queue:
        need[q] = 0
    while queue:
        q = queue.popleft()
        for p in into.get(q, ()):
            if need[p] > need[q] + 1:
                need[p] = need[q] + 1
                queue.append(p)
    return tuple(need)
