"""Register summaries of the relating constructions (spec §5.1): the plan of a comparison
the extremes decide, one side's registers (count, known count, extremes), and the
registers of whole-bag and FIRST/LAST terms (``papers/compiler.md``, "Predicates that
relate events").  Shared by :mod:`acel.compiler.relate` and
:mod:`acel.compiler.relate_disjuncts`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from acel.acea.model.automaton import Renaming, Transition
from acel.acea.model.expressions import (
    Cmp,
    Combine,
    Const,
    Finish,
    Identity,
    Lift,
    PAnd,
    Reg,
    RExpr,
    RPred,
)
from acel.compiler.automaton import outputs_of
from acel.compiler.construct import new_value
from acel.compiler.context import Context
from acel.compiler.relate_terms import is_own, translate_expr_terms

from acel.lang.ast import BagAgg, BinOp, CmpOp, Compare, Expr, FirstLast, Lit, Pred, VarAttr
from acel.lang.relate import relating_terms


@dataclass(frozen=True)
class Deferred:
    """``E op G``: ``E`` over X's own attributes, ``G`` over one other variable's event
    (``other`` set) or over whole-bag terms (``other`` None)."""

    op: CmpOp
    own: Expr
    rest: Expr
    other: str | None
    parts: tuple[tuple[str, Expr], ...] = ()
    """With several other variables (``c[v > a.v + b.v]``): ``G`` as a sum of one part per
    variable, ``other`` None; the extreme of the sum over every choice is the sum of the
    parts' extremes (spec §5.1's linear sides)."""
    whole: Expr | None = None
    """With ``parts``: the summand of whole-bag and FIRST/LAST terms (one value per run,
    ``b[v > a.v + MAX(a.v)]``), added to the parts' extremes."""
    exempt: Pred | None = None
    """``U`` of a conjunct ``U OR E op G`` (``U`` over X's own attributes): the events
    where it is true are exempt, the others enter X's side (:mod:`relate_guarded`)."""


def other_terms(expr: Expr, var: str) -> list[Expr]:
    return [t for t in relating_terms(Compare("=", expr, Lit(0))) if not is_own(t, var)]


@dataclass(frozen=True)
class Side:
    """Registers summarising one side over a run: events, non-NULL values, extremes."""

    count: str
    known: str
    low: str | None
    high: str | None


def side(ctx: Context, low: bool, high: bool) -> Side:
    return Side(
        ctx.fresh("rel_n"),
        ctx.fresh("rel_k"),
        ctx.fresh("rel_lo") if low else None,
        ctx.fresh("rel_hi") if high else None,
    )


def side_updates(
    side: Side, first: bool, values: list[RExpr]
) -> dict[str, RExpr]:
    """The new values of a side's registers after the step emits ``values``."""
    def start(func: str, reg: str) -> RExpr:
        return Identity(func) if first else Reg(reg)

    out: dict[str, RExpr] = {}
    count = start("COUNT", side.count)
    known = start("COUNT", side.known)
    for v in values:
        count = Combine("COUNT", count, Lift("COUNT", Const(1)))
        known = Combine("COUNT", known, Lift("COUNT", v))
    out[side.count] = count
    out[side.known] = known
    for reg, func in ((side.low, "MIN"), (side.high, "MAX")):
        if reg is None:
            continue
        acc: RExpr = Const(None) if first else Reg(reg)
        for v in values:
            acc = Combine(func, acc, Lift(func, v))
        out[reg] = acc
    return out


def side_ok(side: Side) -> RPred:
    """Every value of the side was known (no NULL)."""
    return Cmp("=", Reg(side.known), Reg(side.count))


def empty(side: Side) -> RPred:
    return Cmp("=", Reg(side.count), Const(0))


def universal(op: CmpOp, own: Side, other: RExpr | Side) -> RPred:
    """``E op G`` for every value E of ``own`` and every G (one value, or a side)."""
    if isinstance(other, Side):
        lo_g, hi_g = Reg(other.low) if other.low else None, Reg(other.high) if other.high else None
    else:
        lo_g = hi_g = other
    return universal_sum(op, own, lo_g, hi_g)


def emitted_values(tr: Transition, name: str, expr: Expr, own_var: str) -> list[RExpr]:
    """``expr`` on each event ``tr`` emits into ``name`` (with multiplicity), as expressions
    over ``τ ◁ e``; ``own_var`` names the variable whose ``X.a`` is the event's own."""
    values: list[RExpr] = []
    for r in outputs_of(tr).get(name, []):

        def attr(a: str, r: Renaming = r) -> RExpr:
            return new_value(tr, r, a)

        def term(t: Expr, r: Renaming = r) -> RExpr:
            assert isinstance(t, VarAttr)
            return new_value(tr, r, t.attr)

        values.append(translate_expr_terms(expr, own_var, attr, term))
    return values



@dataclass(frozen=True)
class Whole:
    """The registers of whole-bag terms (an accumulator and the final value per ``F(Y.a)``)
    and of FIRST/LAST terms (updated by :func:`edge_variants`) in one expression."""

    accs: dict[BagAgg, str]
    finals: dict[BagAgg, str]
    edges: list[FirstLast]
    edge_regs: dict[FirstLast, str]

    @staticmethod
    def of(ctx: Context, expr: Expr | None, var: str) -> Whole:
        terms = other_terms(expr, var) if expr is not None else []
        bag_terms = list(dict.fromkeys(t for t in terms if isinstance(t, BagAgg)))
        edges = list(dict.fromkeys(t for t in terms if isinstance(t, FirstLast)))
        return Whole(
            {t: ctx.fresh("rel_acc") for t in bag_terms},
            {t: ctx.fresh("rel_bag") for t in bag_terms},
            edges,
            {t: ctx.fresh(f"rel_{t.which.lower()}") for t in edges},
        )

    def updates(self, tr: Transition, first: bool, last: bool) -> dict[str, RExpr]:
        """The accumulators after ``tr`` (and the final values on a last step)."""
        outputs = outputs_of(tr)
        out: dict[str, RExpr] = {}
        for t, acc in self.accs.items():
            expr: RExpr = Identity(t.func) if first else Reg(acc)
            for r in outputs.get(t.var, []):
                lifted = Lift(t.func, Const(1) if t.attr is None else new_value(tr, r, t.attr))
                expr = Combine(t.func, expr, lifted)
            out[acc] = expr
            if last:
                out[self.finals[t]] = Finish(t.func, expr)
        return out

    def value(self, expr: Expr, var: str) -> RExpr:
        """``expr`` over the final values (read by the last step)."""
        def term(t: Expr) -> RExpr:
            return Reg(self.finals[t]) if isinstance(t, BagAgg) else Reg(self.edge_regs[t])  # type: ignore[index]

        return translate_expr_terms(expr, var, lambda a: Const(None), term)


def universal_sum(op: CmpOp, own: Side, lo_g: RExpr | None, hi_g: RExpr | None) -> RPred:
    """``E op G`` for every value E of ``own`` and every G between ``lo_g`` and ``hi_g``
    (both reached): the extremes decide it, as in :func:`_universal`."""
    lo_e = Reg(own.low) if own.low else None
    hi_e = Reg(own.high) if own.high else None
    if op in ("<", "<="):
        assert hi_e is not None and lo_g is not None
        return Cmp(op, hi_e, lo_g)
    if op in (">", ">="):
        assert lo_e is not None and hi_g is not None
        return Cmp(op, lo_e, hi_g)
    assert lo_e is not None and hi_e is not None and lo_g is not None and hi_g is not None
    return PAnd((Cmp("=", lo_e, hi_e), Cmp("=", lo_g, hi_g), Cmp("=", hi_e, lo_g)))


def own_value(tr: Transition, var: str, plan: Deferred) -> Callable[[Renaming], RExpr]:
    """``E`` of ``plan`` on an event ``tr`` emits into X (through its renaming)."""

    def value_of(r: Renaming) -> RExpr:
        return translate_expr_terms(plan.own, var, lambda a: new_value(tr, r, a), _no_term)

    return value_of


def _no_term(term: Expr) -> RExpr:
    raise AssertionError(f"an own side has no term: {term!r}")


def sum_of(exprs: Iterable[Expr]) -> Expr:
    """One expression holding every term of ``exprs`` (for :meth:`Whole.of`)."""
    out: Expr | None = None
    for e in exprs:
        out = e if out is None else BinOp("+", out, e)
    assert out is not None
    return out
