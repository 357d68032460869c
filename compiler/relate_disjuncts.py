"""``OR`` across relating terms that the extremes still decide (spec §5.1).

:func:`check_any_at_end`: disjuncts that bound one own expression from one side (``b[v >
a.v OR v > COUNT(c)]``), decided by its one extreme (``papers/compiler.md``, "Three exact
shortcuts").
"""

from __future__ import annotations

from acel.acea.model.automaton import Transition
from acel.acea.model.expressions import PAnd, POr, RPred, conj
from acel.compiler.automaton import Auto, assignment_of, rebuild
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


__all__ = ["check_any_at_end"]
