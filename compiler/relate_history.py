"""``PREV(a)`` and ``RUNNING F(a)`` with registers (spec §5.1, first-event rule).

Each event of X is checked as it is read, against the values of X's events before it:
registers hold the last value of each ``PREV`` attribute and the running monoid value
of each ``RUNNING`` term, and their copies ``τ'`` needs (predicates read the registers
after the step).  ``had`` is NULL when X had no earlier event: the conjunct is then not
required (``papers/compiler.md``, "history").
"""

from __future__ import annotations

from dataclasses import dataclass

from acel.acea.model.automaton import Renaming, Transition
from acel.acea.model.expressions import (
    Combine,
    Const,
    Finish,
    Identity,
    IsNull,
    Lift,
    POr,
    Reg,
    RExpr,
    RPred,
    conj,
)
from acel.compiler.automaton import Auto, assignment_of, distinct_renamings, outputs_of, rebuild
from acel.compiler.construct import _finish, new_value
from acel.compiler.context import Context
from acel.compiler.equality import value
from acel.compiler.relate_order import may_follow
from acel.compiler.relate_terms import TIES, refuse, translate_terms

from acel.lang.ast import Expr, Pred, Prev, Running
from acel.lang.printer import format_expr


@dataclass(frozen=True)
class History:
    """The registers of a conjunct's history terms over variable ``var``."""

    var: str
    has: str
    had: str
    regs: dict[Expr, str]
    olds: dict[Expr, str]

    @staticmethod
    def fresh(ctx: Context, var: str, terms: list[Expr]) -> History:
        return History(
            var, ctx.fresh("rel_has"), ctx.fresh("rel_had"),
            {t: ctx.fresh("rel_prev" if isinstance(t, Prev) else "rel_run") for t in terms},
            {t: ctx.fresh("rel_old") for t in terms},
        )

    def renamings(self, auto: Auto, tr: Transition, conjunct: Pred) -> list[Renaming]:
        """The distinct events ``tr`` emits into the variable.  Several (ties in time) share
        the events before them, so their checks and ``RUNNING`` need no order; ``PREV`` of
        a later event would need the greatest of them in the canonical order of §2, so a
        step emitting several is refused when a later step may emit into the variable."""
        emitted = outputs_of(tr).get(self.var, [])
        renamings = distinct_renamings({self.var: emitted}) if emitted else []
        if (len(renamings) > 1 and any(isinstance(t, Prev) for t in self.regs)
                and may_follow(auto, tr, self.var)):
            raise refuse(format_expr(next(t for t in self.regs if isinstance(t, Prev))),
                         conjunct, self.var, TIES)
        return renamings

    def updates(
        self, tr: Transition, renamings: list[Renaming], first: bool, last: bool
    ) -> dict[str, RExpr]:
        """The registers ``tr`` (emitting ``renamings`` into X, or none) assigns: the copies
        before the step's events of X, then the new values (``PREV``: the one event's, or
        any when no later event reads it, :meth:`renamings`)."""
        out: dict[str, RExpr] = {}
        emitted = outputs_of(tr).get(self.var, [])
        r = renamings[0] if renamings else None

        def reset(t: Expr) -> RExpr:
            return Identity(t.func) if isinstance(t, Running) else Const(None)

        def kept(reg: str, t: Expr | None = None) -> RExpr:
            return (Const(None) if t is None else reset(t)) if first else Reg(reg)

        if r is not None:
            out[self.had] = kept(self.has)
            out.update({self.olds[t]: kept(reg, t) for t, reg in self.regs.items()})
        if last:
            return out
        out[self.has] = Const(True) if r is not None else kept(self.has)
        for t, reg in self.regs.items():
            if r is None:
                out[reg] = kept(reg, t)
            elif isinstance(t, Prev):
                out[reg] = new_value(tr, r, t.attr)
            else:
                assert isinstance(t, Running)
                acc = kept(reg, t)
                for e in emitted:
                    acc = Combine(t.func, acc, Lift(t.func, new_value(tr, e, t.attr)))
                out[reg] = acc
        return out

    def term(self, t: Expr) -> RExpr:
        """A history term's value for the event being read."""
        if isinstance(t, Running):
            return Finish(t.func, Reg(self.olds[t]))
        return Reg(self.olds[t])

    def first_event(self) -> RPred:
        """X had no event before this one: the conjunct is not required."""
        return IsNull(Reg(self.had))


def filter_history(ctx: Context, auto: Auto, var: str, conjunct: Pred, terms: list[Expr]) -> Auto:
    """A conjunct reading ``PREV``/``RUNNING`` and X's own attributes only."""
    history = History.fresh(ctx, var, terms)
    out: list[Transition | None] = []
    for tr in auto.transitions:
        renamings = history.renamings(auto, tr, conjunct)
        assignment = assignment_of(tr)
        assignment.update(history.updates(tr, renamings, auto.is_first(tr), auto.is_last(tr)))
        predicate = tr.predicate
        for r in renamings:
            check = translate_terms(conjunct, var, lambda a, r=r: value(r, a), history.term)  # type: ignore[misc]
            predicate = conj(predicate, POr((history.first_event(), check)))
        out.append(rebuild(tr, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


__all__ = ["History", "filter_history"]
