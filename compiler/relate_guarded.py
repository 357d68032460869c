"""A relating conjunct ``U OR R`` whose ``U`` reads only X's own attributes (spec §5.1).

Under the universal reading ``∀e ∈ C(X) ∀ choices: U(e) OR R(e, …)``, an event whose ``U``
is true satisfies the conjunct whatever the other events are, so the conjunct is
``∀e ∈ C(X) with U(e) not true: R(e, …)``: the construction of ``R`` alone
(:mod:`acel.compiler.relate`, extremes over X's side) where the events with ``U`` true are
**exempt** from X's side (``A{1,3}+ FILTER A[x <= 3 OR AVG(A.x) > x]``).

X's side is summarised over a run; which events enter it is chosen per step: a step
emitting ``e`` into X has a copy that counts ``e`` and a copy, guarded by ``U(e)``, that
does not.  Counting an event can only make the extremes' check stricter (the count grows,
the extremes widen), so a complex event passes on some run iff it passes on the run that
exempts every event whose ``U`` is true: the result, a set, is exact.  The copies make the
automaton (maybe) ambiguous, which the engines already detect (``papers/compiler.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product

from acel.acea.model.automaton import Renaming, Transition
from acel.acea.model.expressions import RExpr, RPred
from acel.compiler.automaton import outputs_of
from acel.compiler.equality import value
from acel.compiler.relate_terms import is_own, translate_terms

from acel.lang.ast import Expr, Pred, PredOr
from acel.lang.errors import UnsupportedQuery
from acel.lang.printer import format_pred
from acel.lang.relate import relating_terms

MAX_EXEMPT_COPIES = 16
"""The most copies of one step the exemption may make (2 per event emitted into X)."""


def disjuncts_of(pred: Pred) -> list[Pred]:
    """The top-level ``OR`` disjuncts of ``pred``, left to right."""
    if isinstance(pred, PredOr):
        return [*disjuncts_of(pred.left), *disjuncts_of(pred.right)]
    return [pred]


def without_repeats(pred: Pred) -> Pred:
    """``pred`` with each top-level disjunct once (``P OR P`` is ``P``), order kept."""
    disjuncts = list(dict.fromkeys(disjuncts_of(pred)))
    out = disjuncts[0]
    for d in disjuncts[1:]:
        out = PredOr(out, d)
    return out


def split_exempt(conjunct: Pred, var: str) -> tuple[Pred, Pred] | None:
    """``(U, R)`` when ``conjunct`` is ``U OR R`` up to the order of its disjuncts, with
    ``U`` (one or more disjuncts) over X's own attributes and ``R`` the one disjunct that
    reads other events; None otherwise."""
    disjuncts = disjuncts_of(conjunct)
    relating = [d for d in disjuncts if any(not is_own(t, var) for t in relating_terms(d))]
    plain = [d for d in disjuncts if d not in relating]
    if len(relating) != 1 or not plain:
        return None
    exempt = plain[0]
    for d in plain[1:]:
        exempt = PredOr(exempt, d)
    return exempt, relating[0]


def holds_own(exempt: Pred, var: str, r: Renaming) -> RPred:
    """``U`` on the event ``r`` renames, on the step's new registers (a guard)."""
    return translate_terms(exempt, var, lambda a: value(r, a), _no_term)


def own_variants(
    tr: Transition,
    var: str,
    exempt: Pred | None,
    value_of: Callable[[Renaming], RExpr],
) -> list[tuple[list[RExpr], list[RPred]]]:
    """The copies of ``tr`` for X's side: per copy, the values that enter it (``value_of``
    each counted event, with multiplicity) and the guards of the exempt ones.  Without
    ``U``: one copy counting every event."""
    emitted = list(outputs_of(tr).get(var, []))
    if exempt is None:
        return [([value_of(r) for r in emitted], [])]
    if 2 ** len(emitted) > MAX_EXEMPT_COPIES:
        raise UnsupportedQuery(
            f"the automaton engines do not compile {var}[{format_pred(exempt)} OR ...]: one "
            f"step emits {len(emitted)} events into {var}, too many copies to exempt them one "
            "by one (spec §5.1; --engine oracle runs it)"
        )
    copies: list[tuple[list[RExpr], list[RPred]]] = []
    for choice in product((False, True), repeat=len(emitted)):
        values = [value_of(r) for r, skip in zip(emitted, choice) if not skip]
        guards = [holds_own(exempt, var, r) for r, skip in zip(emitted, choice) if skip]
        copies.append((values, guards))
    return copies


def _no_term(term: Expr) -> RExpr:
    raise AssertionError(f"U reads no term of §5.1: {term!r}")


__all__ = ["MAX_EXEMPT_COPIES", "disjuncts_of", "holds_own", "own_variants", "split_exempt", "without_repeats"]
