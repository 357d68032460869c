"""``OR`` across relating terms that the extremes still decide (spec §5.1).

:func:`check_any_at_end`: disjuncts that bound one own expression from one side (``b[v >
a.v OR v > COUNT(c)]``), decided by its one extreme.  :func:`check_partition_at_end`:
disjuncts whose choices are independent (each other variable in one disjunct), each an
extremes comparison, with any own sides and directions (``c[LAST(c.k) >= k OR x =
MIN(c.x)]``, and ``k != AVG(c.x)`` as ``k < … OR k > …``): each event of X is guessed
onto one disjunct's side (``papers/compiler.md``, "Four exact constructions").
"""

from __future__ import annotations

from itertools import product

from acel.acea.model.automaton import Transition
from acel.acea.model.expressions import PAnd, POr, RExpr, RPred, conj
from acel.compiler.automaton import Auto, assignment_of, outputs_of, rebuild
from acel.compiler.construct import _finish
from acel.compiler.context import Context
from acel.compiler.relate_edges import edge_variants
from acel.compiler.relate_guarded import own_variants
from acel.compiler.relate_sides import (
    Deferred,
    Whole,
    emitted_values,
    empty,
    own_value,
    side,
    side_ok,
    side_updates,
    sum_of,
    universal,
)

from acel.lang.errors import UnsupportedQuery


def check_any_at_end(ctx: Context, auto: Auto, var: str, plans: list[Deferred]) -> Auto:
    """The disjuncts of :func:`_one_way_bounds`: X's side keeps the one extreme of E, each
    other variable its side, the whole-bag and FIRST/LAST terms their registers; the last
    step checks ``X empty OR some Y empty OR (no NULL E AND OR_i (ext E op_i ext G_i))``."""
    upper = plans[0].op in ("<", "<=")
    own = side(ctx, not upper, upper)
    sides = {p.other: (side(ctx, upper, not upper), p) for p in plans if p.other is not None}
    whole = Whole.of(ctx, sum_of(p.rest for p in plans), var)
    checks: list[RPred] = []
    for p in plans:
        if p.other is not None:
            theirs = sides[p.other][0]
            checks.append(PAnd((side_ok(theirs), universal(p.op, own, theirs))))
        else:
            checks.append(universal(p.op, own, whole.value(p.rest, var)))
    final = POr((empty(own), *(empty(s) for s, _ in sides.values()),
                 PAnd((side_ok(own), POr(tuple(checks))))))
    out: list[Transition | None] = []
    for tr in auto.transitions:
        first, last = auto.is_first(tr), auto.is_last(tr)
        updates = whole.updates(tr, first, last)
        for y, (theirs, p) in sides.items():
            updates.update(side_updates(theirs, first, emitted_values(tr, y, p.rest, "")))
        ((own_values, _),) = own_variants(tr, var, None, own_value(tr, var, plans[0]))
        updates.update(side_updates(own, first, own_values))
        for variant_updates, guard in edge_variants(auto, tr, whole.edges, whole.edge_regs, var):
            assignment = {**assignment_of(tr), **updates, **variant_updates}
            predicate = conj(tr.predicate, *guard, *([final] if last else []))
            out.append(rebuild(tr, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


MAX_GUESSES = 16
"""The most copies of one step the partition may make (a side per disjunct per event)."""


def check_partition_at_end(ctx: Context, auto: Auto, var: str, plans: list[Deferred]) -> Auto:
    """``∀e ∈ C(X): D1(e) OR … OR Dk(e)``, the ``Di`` extremes comparisons over disjoint
    other variables: a step emitting ``m`` events into X has ``k^m`` copies, each putting
    every event on one disjunct's side; the last step checks every side against its
    disjunct (vacuous when some other variable is empty).  Some run keeps a complex event
    iff some partition of X's events satisfies every side iff every event satisfies some
    disjunct: the result, a set, is exact (the copies make the automaton ambiguous, which
    the engines detect, as for :mod:`acel.compiler.relate_guarded`)."""
    owns = [side(ctx, p.op in (">", ">=", "="), p.op in ("<", "<=", "=")) for p in plans]
    sides = {p.other: (side(ctx, p.op in ("<", "<=", "="), p.op in (">", ">=", "=")), p)
             for p in plans if p.other is not None}
    whole = Whole.of(ctx, sum_of(p.rest for p in plans), var)
    checks: list[RPred] = []
    for own, p in zip(owns, plans):
        if p.other is not None:
            theirs = sides[p.other][0]
            check = PAnd((side_ok(theirs), universal(p.op, own, theirs)))
        else:
            check = universal(p.op, own, whole.value(p.rest, var))
        checks.append(POr((empty(own), PAnd((side_ok(own), check)))))
    final = POr((*(empty(s) for s, _ in sides.values()), PAnd(tuple(checks))))
    out: list[Transition | None] = []
    for tr in auto.transitions:
        first, last = auto.is_first(tr), auto.is_last(tr)
        updates = whole.updates(tr, first, last)
        for y, (theirs, p) in sides.items():
            updates.update(side_updates(theirs, first, emitted_values(tr, y, p.rest, "")))
        emitted = list(outputs_of(tr).get(var, []))
        if len(plans) ** len(emitted) > MAX_GUESSES:
            raise UnsupportedQuery(
                f"the automaton engines do not compile {var}[... OR ...]: one step emits "
                f"{len(emitted)} events into {var}, too many copies to place them one by one "
                "(spec §5.1; --engine oracle runs it)"
            )
        values = [own_value(tr, var, p) for p in plans]
        for choice in product(range(len(plans)), repeat=len(emitted)):
            placed: dict[str, RExpr] = {}
            for i, own in enumerate(owns):
                mine = [values[i](r) for r, c in zip(emitted, choice) if c == i]
                placed.update(side_updates(own, first, mine))
            for variant_updates, guard in edge_variants(auto, tr, whole.edges, whole.edge_regs, var):
                assignment = {**assignment_of(tr), **updates, **placed, **variant_updates}
                predicate = conj(tr.predicate, *guard, *([final] if last else []))
                out.append(rebuild(tr, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


__all__ = ["MAX_GUESSES", "check_any_at_end", "check_partition_at_end"]
