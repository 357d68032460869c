"""A relating conjunct of any shape over variables that hold few events (spec §5.1).

The extremes of :mod:`acel.compiler.relate` decide ``<``, ``<=``, ``>``, ``>=``, ``=``
over whole bags; ``!=``, ``OR``, ``IN``, non-linear sides and sides that mix terms have
no such summary.  They need none when the universal reading has few choices: when every
variable the conjunct reads through ``Y.a`` (and X itself) holds at most ``k`` events in
every run (:func:`acel.compiler.relate_order.bound`: no cycle emits into it), its events
sit in ``k`` **slots** of registers (slot 1 the latest; an event shifts the others down)
and the last step evaluates the conjunct **as written** for every event of X and every
choice of one event per other variable (``PREV``/``RUNNING`` read the later slots).  One
variable ``M`` may hold unboundedly many events when the others, and the bags of the
whole-bag terms, are complete before ``M``'s first event
(:func:`acel.compiler.relate_order.precedes`): each event of ``M`` is then checked as it
is read (with ``PREV``/``RUNNING`` registers when ``M`` is X,
:class:`acel.compiler.relate_history.History`).  An empty slot makes its instance hold,
as an empty bag does in :func:`acel.lang.relate.holds_for` (``papers/compiler.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

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
from acel.compiler.relate_edges import edge_variants
from acel.compiler.relate_history import History
from acel.compiler.relate_order import bound, precedes
from acel.compiler.relate_terms import PLACEHOLDER, subst, translate_terms

from acel.lang.ast import Attr, BagAgg, Expr, FirstLast, Pred, Prev, Running, VarAttr
from acel.lang.relate import expressions, others, reads_history, relating_terms

MAX_INSTANCES = 25
"""The most instances of the conjunct one check may conjoin (product of the slots)."""


def _attributes(conjunct: Pred, var: str) -> dict[str, list[str]]:
    """The attributes the conjunct reads of each variable's events (X: its own, and those
    of its ``PREV``/``RUNNING`` terms)."""
    out: dict[str, list[str]] = {var: []}
    for y in others(conjunct, var):
        out[y] = []
    for node in expressions(subst(conjunct, {}, var)):
        if isinstance(node, Attr) and not node.name.startswith(PLACEHOLDER):
            out[var].append(node.name)
    for term in relating_terms(conjunct):
        if isinstance(term, VarAttr):
            out[term.var].append(term.attr)
        elif isinstance(term, (Prev, Running)):
            out[var].append(term.attr)
    return {v: list(dict.fromkeys(attrs)) for v, attrs in out.items()}


def _plan(auto: Auto, conjunct: Pred, var: str, events: int | None
          ) -> tuple[str, dict[str, int]] | None:
    """The variable checked as read (``""``: none, the last step checks) and the slots of
    the others; None when neither way applies (``events``: the window's bound on runs)."""
    variables = [var, *others(conjunct, var)]
    bounds = {v: bound(auto, v, events=events) for v in variables}
    slots = {v: k for v, k in bounds.items() if k is not None}
    history = reads_history(conjunct)
    if len(slots) == len(variables) and _instances(slots) <= MAX_INSTANCES:
        return "", slots
    for m in [var] if history else variables:
        rest = {v: slots[v] for v in variables if v != m and v in slots}
        if (len(rest) == len(variables) - 1 and _instances(rest) <= MAX_INSTANCES
                and precedes(auto, set(rest) | _complete_before(conjunct, m), m)):
            return m, rest
    return None


def _complete_before(conjunct: Pred, m: str) -> set[str]:
    """The variables whose bags a whole-bag term reads, to be complete before ``M``'s
    events are checked; ``FIRST(M.a)`` is known from ``M``'s first event on."""
    return {
        t.var for t in relating_terms(conjunct)
        if isinstance(t, BagAgg) or (isinstance(t, FirstLast) and (t.which, t.var) != ("FIRST", m))
    }


def _instances(slots: dict[str, int]) -> int:
    count = 1
    for k in slots.values():
        count *= max(k, 1)
    return count


def compiles(auto: Auto, conjunct: Pred, var: str, events: int | None = None) -> bool:
    """Whether :func:`filter_by_events` compiles ``conjunct`` on ``auto`` (with the same
    ``events`` as its context's)."""
    return _plan(auto, conjunct, var, events) is not None


@dataclass(frozen=True)
class _Slots:
    """The registers of a conjunct over slots (module doc) and the checks they make."""

    conjunct: Pred
    var: str
    slots: dict[str, int]
    regs: dict[tuple[str, int, str], str]
    has: dict[tuple[str, int], str]
    history: bool
    accs: dict[BagAgg, str]
    edge_regs: dict[FirstLast, str]

    def instance(self, event: Callable[[str, str], RExpr], earlier: Callable[[Expr], RExpr]
                 ) -> RPred:
        """The conjunct for one event of X (``event(var, a)``) and one choice of the others."""
        def term(t: Expr) -> RExpr:
            if isinstance(t, VarAttr):
                return event(t.var, t.attr)
            if isinstance(t, (Prev, Running)):
                return earlier(t)
            if isinstance(t, BagAgg):
                return Finish(t.func, Reg(self.accs[t]))
            assert isinstance(t, FirstLast)
            return Reg(self.edge_regs[t])

        return translate_terms(self.conjunct, self.var, lambda a: event(self.var, a), term)

    def every_choice(self, fixed: str, fixed_event: Callable[[str], RExpr],
                     first_event: RPred | None, earlier: Callable[[Expr], RExpr]) -> list[RPred]:
        """The instances for one event of ``fixed`` and every choice of slots of the rest;
        an empty slot (or X's first event, with history) makes its instance hold."""
        rest = [v for v in self.slots if v != fixed]
        out = []
        for choice in product(*(range(self.slots[v]) for v in rest)):
            picked = dict(zip(rest, choice))

            def event(v: str, a: str, picked: dict[str, int] = picked) -> RExpr:
                return fixed_event(a) if v == fixed else Reg(self.regs[v, picked[v], a])

            vacuous = [IsNull(Reg(self.has[v, i])) for v, i in picked.items()]
            if first_event is not None:
                vacuous.append(first_event)
            out.append(POr((*vacuous, self.instance(event, earlier))))
        return out

    def earlier(self, i: int) -> Callable[[Expr], RExpr]:
        """``PREV``/``RUNNING`` for the event in X's slot ``i``: the later slots hold the
        earlier events (an empty slot is NULL, which a monoid lifts to its identity)."""
        k, var, regs = self.slots[self.var], self.var, self.regs

        def term(t: Expr) -> RExpr:
            if isinstance(t, Prev):
                return Reg(regs[var, i + 1, t.attr]) if i + 1 < k else Const(None)
            assert isinstance(t, Running)
            acc: RExpr = Identity(t.func)
            for j in range(i + 1, k):
                acc = Combine(t.func, acc, Lift(t.func, Reg(regs[var, j, t.attr])))
            return Finish(t.func, acc)

        return term

    def at_end(self) -> RPred:
        """Every slot of X against every choice of the others' slots (last step)."""
        k, var = self.slots[self.var], self.var
        checks: list[RPred] = []
        for i in range(k):
            if self.history and i + 1 == k:
                continue  # the earliest slot has no earlier event: not required
            first_event = IsNull(Reg(self.has[var, i + 1])) if self.history else None

            def slot(a: str, i: int = i) -> RExpr:
                return Reg(self.regs[var, i, a])

            mine = self.every_choice(var, slot, first_event, self.earlier(i))
            checks.append(POr((IsNull(Reg(self.has[var, i])), conj(*mine))))
        return conj(*checks)

    def when_read(self, tr: Transition, reader: str, history: History | None) -> list[RPred]:
        """Each event ``tr`` emits into ``reader`` against every choice of the slots."""
        now = history.term if history is not None else _no_history
        first_event = history.first_event() if history is not None else None
        out: list[RPred] = []
        for r in distinct_renamings({reader: outputs_of(tr).get(reader, [])}):

            def read(a: str, r: Renaming = r) -> RExpr:
                return value(r, a)

            out.extend(self.every_choice(reader, read, first_event, now))
        return out


def filter_by_events(ctx: Context, auto: Auto, var: str, conjunct: Pred) -> Auto:
    """``φ FILTER X[conjunct]`` with the events of its variables in slots (module doc);
    call only when :func:`compiles` says so."""
    plan = _plan(auto, conjunct, var, ctx.events)
    assert plan is not None
    reader, slots = plan
    attrs = _attributes(conjunct, var)
    terms = list(dict.fromkeys(relating_terms(conjunct)))
    history_terms = [t for t in terms if isinstance(t, (Prev, Running))]
    history = History.fresh(ctx, var, history_terms) if history_terms and reader else None
    edges = [t for t in terms if isinstance(t, FirstLast)]
    plan_regs = _Slots(
        conjunct, var, slots,
        {(v, i, a): ctx.fresh(f"rel_{a}") for v, k in slots.items() for i in range(k)
         for a in attrs[v]},
        {(v, i): ctx.fresh("rel_has") for v, k in slots.items() for i in range(k)},
        bool(history_terms),
        {t: ctx.fresh("rel_acc") for t in terms if isinstance(t, BagAgg)},
        {t: ctx.fresh(f"rel_{t.which.lower()}") for t in edges},
    )
    out: list[Transition | None] = []
    for tr in auto.transitions:
        first = auto.is_first(tr)
        assignment = assignment_of(tr)
        assignment.update(_shift(tr, first, slots, attrs, plan_regs.regs, plan_regs.has))
        if history is not None:
            assignment.update(history.updates(tr, history.renamings(auto, tr, conjunct), first,
                                              auto.is_last(tr)))
        assignment.update(_accumulate(tr, first, plan_regs.accs))
        checks: list[RPred] = []
        if reader == "" and auto.is_last(tr):
            checks.append(plan_regs.at_end())
        elif reader:
            checks.extend(plan_regs.when_read(tr, reader, history))
        for updates, guard in edge_variants(auto, tr, edges, plan_regs.edge_regs, var):
            out.append(rebuild(tr, assignment={**assignment, **updates},
                               predicate=conj(tr.predicate, *guard, *checks)))
    return _finish(ctx, auto, out)


def _accumulate(tr: Transition, first: bool, accs: dict[BagAgg, str]) -> dict[str, RExpr]:
    """The whole-bag monoid registers after ``tr`` (as AGG keeps them)."""
    out: dict[str, RExpr] = {}
    for t, acc in accs.items():
        expr: RExpr = Identity(t.func) if first else Reg(acc)
        for r in outputs_of(tr).get(t.var, []):
            lifted = Lift(t.func, Const(1) if t.attr is None else new_value(tr, r, t.attr))
            expr = Combine(t.func, expr, lifted)
        out[acc] = expr
    return out


def _no_history(t: Expr) -> RExpr:
    raise AssertionError(f"no history term outside X: {t!r}")


def _shift(
    tr: Transition,
    first: bool,
    slots: dict[str, int],
    attrs: dict[str, list[str]],
    regs: dict[tuple[str, int, str], str],
    has: dict[tuple[str, int], str],
) -> dict[str, RExpr]:
    """The slot registers after ``tr``: an event emitted into a variable enters slot 0 and
    shifts the others down one; otherwise every slot keeps its value."""
    out: dict[str, RExpr] = {}
    for v, k in slots.items():
        emitted: list[Renaming] = distinct_renamings({v: outputs_of(tr).get(v, [])})
        for i in range(k):
            def keep(reg: str) -> RExpr:
                return Const(None) if first else Reg(reg)

            if not emitted:
                out[has[v, i]] = keep(has[v, i])
                out.update({regs[v, i, a]: keep(regs[v, i, a]) for a in attrs[v]})
            elif i == 0:
                out[has[v, 0]] = Const(True)
                out.update({regs[v, 0, a]: new_value(tr, emitted[0], a) for a in attrs[v]})
            else:
                out[has[v, i]] = keep(has[v, i - 1])
                out.update({regs[v, i, a]: keep(regs[v, i - 1, a]) for a in attrs[v]})
    return out


__all__ = ["MAX_INSTANCES", "compiles", "filter_by_events"]
