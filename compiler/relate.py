"""``φ FILTER X[P]`` where ``P`` relates events (spec §5.1), with registers.

``P`` is split into its top-level conjuncts (the universal reading is conjunct by
conjunct, :mod:`acel.lang.relate`) and each conjunct gets one construction
(``papers/compiler.md``, "Predicates that relate events"):

* **own**: no term of §5.1 (``X.a`` is the event's own ``a``): checked on each event
  emitted into X, as a unary filter.  No register.
* **history**: reads ``PREV(a)``/``RUNNING F(a)`` and X's own attributes only: checked as
  each event of X is read, against registers that hold the last values of X and the
  running monoid values (``1 + #PREV + #RUNNING`` registers, and as many copies).
* **deferred**: a comparison ``E op G`` (``<``, ``<=``, ``>``, ``>=``, ``=``; a ``NOT``
  in front flips it) where ``E`` reads only X's own attributes and ``G`` reads either
  the attributes of one other variable ``Y`` (universal reading) or whole-bag terms
  (``F(Y.a)``, ``COUNT(Y)``).  Registers keep, over the run, the count of X's events,
  the count of those whose ``E`` is not NULL and the extreme of ``E`` the operator needs
  (both extremes for ``=``), the same three for ``G`` over Y's events, or a monoid
  register per whole-bag term; the last step of the run compares them.  This is exact
  whatever the order of X's and Y's events in the run (Y's events may come later).

A conjunct these do not compile (``!=``, ``OR``/``IN`` across terms, non-linear or mixed
sides, ``PREV``/``RUNNING`` beside other variables) is evaluated as written over slots of
registers when its variables hold few events (:mod:`acel.compiler.relate_single`; the
query's ``WITHIN n EVENTS`` bounds them, ``Context.events``); a conjunct ``U OR R`` with
``U`` over X's own attributes exempts the events where ``U`` holds from R's extremes
(:mod:`acel.compiler.relate_guarded`); a history conjunct over a variable that one step
fills is vacuous.  Then, exactly: a ``!=`` that the event giving the compared value always
fails as an empty variable (:mod:`acel.compiler.relate_empty`), an ``OR`` of extremes
comparisons over disjoint variables (a ``!=`` against one value per run as ``<`` OR ``>``)
by one extreme or a guessed partition of X's events
(:mod:`acel.compiler.relate_disjuncts`); a side mixing ``Y.a`` with whole-bag terms adds
them as one summand.  What remains raises
:class:`UnsupportedQuery` naming the term, and saying what compiles instead, before any
data is read; the oracle still answers it (``papers/compiler.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from acel.acea.model.automaton import Renaming, Transition
from acel.acea.model.expressions import (
    Arith,
    Cmp,
    Combine,
    Const,
    Finish,
    Identity,
    Lift,
    PAnd,
    POr,
    Reg,
    RExpr,
    RPred,
    conj,
)
from acel.compiler.automaton import Auto, assignment_of, distinct_renamings, outputs_of, rebuild
from acel.compiler.construct import _finish, filter_unary, new_value
from acel.compiler.context import Context
from acel.compiler.equality import value
from acel.compiler.relate_disjuncts import check_any_at_end, check_partition_at_end
from acel.compiler.relate_edges import aggregate_edges, edge_variants
from acel.compiler.relate_empty import empty_variable, filter_empty
from acel.compiler.relate_guarded import (
    disjuncts_of,
    holds_own,
    own_variants,
    split_exempt,
    without_repeats,
)
from acel.compiler.relate_history import filter_history
from acel.compiler.relate_order import one_step, precedes
from acel.compiler.relate_sides import Deferred as _Deferred
from acel.compiler.relate_sides import Side as _Side
from acel.compiler.relate_sides import Whole as _Whole
from acel.compiler.relate_sides import emitted_values as _emitted_values
from acel.compiler.relate_sides import empty as _empty
from acel.compiler.relate_sides import other_terms as _terms
from acel.compiler.relate_sides import side as _side
from acel.compiler.relate_sides import side_ok as _side_ok
from acel.compiler.relate_sides import side_updates as _side_updates
from acel.compiler.relate_sides import universal as _universal
from acel.compiler.relate_sides import universal_sum as _universal_sum
from acel.compiler.relate_single import compiles as by_events
from acel.compiler.relate_single import filter_by_events
from acel.compiler.relate_terms import (
    FEW_EVENTS,
    FLIP,
    NEGATE,
    PLACEHOLDER,
    is_own,
    refuse,
    subst,
    translate_expr_terms,
)

from acel.lang.ast import (
    RELATING_TYPES,
    Attr,
    BagAgg,
    BinOp,
    Compare,
    Expr,
    FirstLast,
    Lit,
    Neg,
    Pred,
    PredNot,
    Prev,
    Running,
    VarAttr,
    neg,
)
from acel.lang.errors import UnsupportedQuery
from acel.lang.printer import format_expr, format_pred
from acel.lang.relate import conjuncts, reads_history, relating_terms

# ------------------------------------------------------------------ plans


def _hasis_own(expr: Expr, var: str) -> bool:
    pred = subst(Compare("=", expr, Lit(0)), {}, var)
    return any(isinstance(node, Attr) and not node.name.startswith(PLACEHOLDER) for node in _walk(pred))


def _walk(pred: Pred) -> list[object]:
    out: list[object] = []
    stack: list[object] = [pred]
    while stack:
        node = stack.pop()
        out.append(node)
        for field in ("left", "right", "operand", "expr"):
            child = getattr(node, field, None)
            if child is not None:
                stack.append(child)
    return out


def _deferred(conjunct: Pred, var: str) -> _Deferred:
    """The comparison of a deferred conjunct, or UnsupportedQuery naming the term."""
    pred = conjunct
    negated = False
    if isinstance(pred, PredNot):
        pred, negated = pred.operand, True
    if not isinstance(pred, Compare):
        named = _terms_of(conjunct, var)  # none in an own disjunct (`v IN (1, 3)`) of an OR
        term = format_expr(named[0]) if named else "this disjunct"
        raise refuse(
            term, conjunct, var,
            "OR or IN across relating terms over variables that hold many events: each event "
            "may satisfy another disjunct, so no summary per side decides it; it compiles as "
            "U OR R with U over the event's own attributes, or when one variable holds many "
            "and the others' events come first, or under WITHIN n EVENTS with n <= 5 (at most "
            "5 events per variable); write X[P] AND X[Q] when that is meant",
        )
    op: str = NEGATE[pred.op] if negated else pred.op
    sides = [(pred.left, pred.right, op), (pred.right, pred.left, FLIP.get(op, op))]
    for own, rest, side_op in sides:
        if _terms(own, var):
            continue
        if side_op not in FLIP:
            raise refuse(
                format_expr(_terms(rest, var)[0]), conjunct, var,
                "!= between two variables that hold many events has no register summary (no "
                "register automaton checks that a value differs from every value of a bag read "
                "before it); it compiles when both sides hold at most 5 events (no + around them, "
                "or WITHIN n EVENTS with n <= 5), or the side with many events comes after the "
                "other: compare with one value (FIRST(Y.a), LAST(Y.a), MIN(Y.a)) when that is meant",
            )
        if _hasis_own(rest, var):
            break  # a side mixes X's attributes with other events': try the linear split
        terms = _terms(rest, var)
        others = sorted({t.var for t in terms if isinstance(t, VarAttr)})
        for t in terms:
            if isinstance(t, (Prev, Running)):
                raise refuse(format_expr(t), conjunct, var, f"PREV and RUNNING mix with other variables' terms; {FEW_EVENTS}")
        if others and any(isinstance(t, (BagAgg, FirstLast)) for t in terms):
            parts, whole = _parts_and_whole(rest, others, conjunct, var)
            return _Deferred(side_op, own, rest, None, parts, whole)  # type: ignore[arg-type]
        if len(others) > 1:
            return _Deferred(side_op, own, rest, None, _parts(rest, others, conjunct, var))  # type: ignore[arg-type]
        return _Deferred(side_op, own, rest, others[0] if others else None)  # type: ignore[arg-type]
    split = _split(BinOp("-", pred.left, pred.right), var)
    if split is not None and split[1] is not None and op in FLIP:
        own_part, rest_part = split
        assert rest_part is not None
        moved = Compare(
            op,  # type: ignore[arg-type]
            own_part if own_part is not None else Lit(0),
            neg(rest_part),
        )
        return _deferred(moved, var)
    raise refuse(
        format_pred(pred), conjunct, var,
        "it does not separate into the event's own attributes on one side and other events' "
        f"on the other (a linear expression with constant coefficients); {FEW_EVENTS}",
    )


def _peel(
    rest: Expr, names: list[str], conjunct: Pred, var: str, why: str
) -> tuple[list[tuple[str, Expr]], Expr | None]:
    """``rest`` split into one part per name in order, and what remains (None when
    nothing does), or UnsupportedQuery saying ``why``."""
    parts: list[tuple[str, Expr]] = []
    remaining: Expr | None = rest
    for y in names:
        split = _split(remaining, y) if remaining is not None else None
        if split is None or split[0] is None:
            raise refuse(format_expr(rest), conjunct, var, f"{why}; {FEW_EVENTS}")
        parts.append((y, split[0]))
        remaining = split[1]
    return parts, remaining


def _parts(rest: Expr, others: list[str], conjunct: Pred, var: str) -> tuple[tuple[str, Expr], ...]:
    """``rest`` as a sum of one expression per other variable, or UnsupportedQuery."""
    parts, remaining = _peel(
        rest, others[:-1], conjunct, var,
        "it does not separate into one part per other variable (a linear expression with constant coefficients)",
    )
    if remaining is None:
        raise refuse(format_expr(rest), conjunct, var, f"it reads no attribute of the last variable; {FEW_EVENTS}")
    parts.append((others[-1], remaining))
    return tuple(parts)


def _parts_and_whole(
    rest: Expr, others: list[str], conjunct: Pred, var: str
) -> tuple[tuple[tuple[str, Expr], ...], Expr]:
    """``rest`` as one part per other variable plus a whole-bag summand (linear), or
    UnsupportedQuery."""
    parts, remaining = _peel(
        rest, others, conjunct, var,
        "a side mixes Y.a with whole-bag aggregates and does not separate into one "
        "part per variable plus the whole-bag part (linear, constant coefficients)",
    )
    assert remaining is not None  # the whole-bag terms are in no variable's part
    return tuple(parts), remaining


def _constant(expr: Expr) -> bool:
    """An expression of literals only (a coefficient)."""
    return not any(
        isinstance(n, (Attr, *RELATING_TYPES)) for n in _walk(Compare("=", expr, Lit(0)))
    )


def _add(op: str, a: Expr | None, b: Expr | None) -> Expr | None:
    if b is None:
        return a
    if a is None:
        return b if op == "+" else neg(b)
    return BinOp(op, a, b)  # type: ignore[arg-type]


def _split(expr: Expr, var: str) -> tuple[Expr | None, Expr | None] | None:
    """``expr`` as ``own + rest`` (own reads only X's attributes, rest only other events),
    when it is linear with constant coefficients (``price - 1.05 * a.price``); else None."""
    if not _terms(expr, var):
        return expr, None
    if not _hasis_own(expr, var):
        return None, expr
    if isinstance(expr, Neg):
        inner = _split(expr.operand, var)
        if inner is None:
            return None
        return tuple(None if p is None else neg(p) for p in inner)  # type: ignore[return-value]
    if not isinstance(expr, BinOp):
        return None
    if expr.op in ("+", "-"):
        left, right = _split(expr.left, var), _split(expr.right, var)
        if left is None or right is None:
            return None
        return _add(expr.op, left[0], right[0]), _add(expr.op, left[1], right[1])
    scale: Expr | None = None
    body = expr.left
    if expr.op in ("*", "/") and _constant(expr.right):
        scale, body = expr.right, expr.left
    elif expr.op == "*" and _constant(expr.left):
        scale, body = expr.left, expr.right
    if scale is None:
        return None
    inner = _split(body, var)
    if inner is None:
        return None
    return tuple(None if p is None else BinOp(expr.op, p, scale) for p in inner)  # type: ignore[return-value]


def _terms_of(pred: Pred, var: str) -> list[Expr]:
    return [t for t in relating_terms(pred) if not is_own(t, var)]


# -------------------------------------------------------------- the constructions


def filter_relating(ctx: Context, auto: Auto, var: str, pred: Pred) -> Auto:
    """``φ FILTER X[P]`` with ``P`` using the terms of spec §5.1 (module doc)."""
    for conjunct in conjuncts(pred):
        terms = _terms_of(conjunct, var)
        if not terms:
            plain = subst(conjunct, {}, var)
            auto = filter_unary(ctx, auto, var, plain)
        elif reads_history(conjunct) and one_step(auto, var):
            continue  # no event of X has an earlier one: the first-event rule keeps them all
        elif all(isinstance(t, (Prev, Running)) for t in terms):
            auto = filter_history(ctx, auto, var, conjunct, terms)
        else:
            auto = _comparison(ctx, auto, var, conjunct)
    return auto


def _comparison(ctx: Context, auto: Auto, var: str, conjunct: Pred) -> Auto:
    """A conjunct with other events' terms: by extremes (:func:`_deferred`), else with one
    event per variable in registers (:mod:`acel.compiler.relate_single`), else as ``U OR
    R`` with the events where ``U`` holds exempt from R's extremes
    (:mod:`acel.compiler.relate_guarded`), else (``a != MAX(X.a)``, an event always
    fails: :mod:`acel.compiler.relate_empty`) as an empty variable, else (disjuncts that
    bound one own expression from one side, :func:`_one_way_bounds`) by the extreme of
    that expression, else refused.  A disjunct written twice counts once."""
    conjunct = without_repeats(conjunct)
    try:
        return _check_at_end(ctx, auto, var, _deferred(conjunct, var))
    except UnsupportedQuery as refusal:
        if by_events(auto, conjunct, var, ctx.events):
            return filter_by_events(ctx, auto, var, conjunct)
        gone = empty_variable(auto, conjunct, var)
        if gone is not None:
            return filter_empty(ctx, auto, gone)
        split = split_exempt(conjunct, var)
        failed: UnsupportedQuery = refusal
        if split is not None:
            try:
                plan = replace(_deferred(split[1], var), exempt=split[0])
                try:
                    return _check_at_end(ctx, auto, var, plan)
                except UnsupportedQuery as late:
                    failed = late  # the construction's own refusal (ties, copies) names it
            except UnsupportedQuery:
                pass
        bounds = _one_way_bounds(conjunct, var)
        if bounds is not None:
            return check_any_at_end(ctx, auto, var, bounds)
        independent = _independent_disjuncts(conjunct, var)
        if independent is None:
            raise failed from None
        return check_partition_at_end(ctx, auto, var, independent)


def _check_when_read(ctx: Context, auto: Auto, var: str, plan: _Deferred) -> Auto:
    """A deferred conjunct whose other events all precede X's in every run (``A AS a ;
    (B AS b)+ FILTER b[v > a.v]``): the other side's summary is final when X is read, so
    each event of X is checked as it is read and X needs no register (runs that differ
    only in X's values stay one configuration)."""
    high_g = plan.op in (">", ">=", "=")
    low_g = plan.op in ("<", "<=", "=")
    other = _side(ctx, low_g, high_g) if plan.other is not None else None
    bag_terms = [t for t in _terms(plan.rest, var) if isinstance(t, BagAgg)]
    accs = {t: ctx.fresh("rel_acc") for t in bag_terms}
    out: list[Transition | None] = []
    for tr in auto.transitions:
        first = auto.is_first(tr)
        outputs = outputs_of(tr)
        assignment = assignment_of(tr)
        if other is not None and plan.other is not None:
            values = _emitted_values(tr, plan.other, plan.rest, "")
            assignment.update(_side_updates(other, first, values))
        for t, acc in accs.items():
            expr: RExpr = Identity(t.func) if first else Reg(acc)
            for r in outputs.get(t.var, []):
                lifted = Lift(t.func, Const(1) if t.attr is None else new_value(tr, r, t.attr))
                expr = Combine(t.func, expr, lifted)
            assignment[acc] = expr
        predicate = tr.predicate
        for r in distinct_renamings({var: outputs.get(var, [])}) if outputs.get(var) else []:
            own_now = translate_expr_terms(plan.own, var, lambda a, r=r: value(r, a), _no_term)  # type: ignore[misc]
            if other is not None:
                lo = Reg(other.low) if other.low else None
                hi = Reg(other.high) if other.high else None
                if plan.op in ("<", "<="):
                    assert lo is not None
                    cmp: RPred = Cmp(plan.op, own_now, lo)
                elif plan.op in (">", ">="):
                    assert hi is not None
                    cmp = Cmp(plan.op, own_now, hi)
                else:
                    assert lo is not None and hi is not None
                    cmp = PAnd((Cmp("=", lo, hi), Cmp("=", own_now, lo)))
                check: RPred = POr((_empty(other), PAnd((_side_ok(other), cmp))))
            else:
                target = translate_expr_terms(plan.rest, var, lambda a: Const(None), _finished(accs))
                check = Cmp(plan.op, own_now, target)
            if plan.exempt is not None:
                check = POr((holds_own(plan.exempt, var, r), check))
            predicate = conj(predicate, check)
        out.append(rebuild(tr, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


def _finished(accs: dict[BagAgg, str]) -> Callable[[Expr], RExpr]:
    """A whole-bag term's value from its accumulator register."""

    def term(t: Expr) -> RExpr:
        assert isinstance(t, BagAgg)
        return Finish(t.func, Reg(accs[t]))

    return term


def _no_term(term: Expr) -> RExpr:
    raise AssertionError(f"an own side has no term: {term!r}")


def _check_at_end(ctx: Context, auto: Auto, var: str, plan: _Deferred) -> Auto:
    """A deferred conjunct: summaries kept over the run, compared by its last step."""
    terms = _terms(plan.rest, var)
    sources = {t.var for t in terms if isinstance(t, (VarAttr, BagAgg))}
    if plan.parts:
        return _check_parts_at_end(ctx, auto, var, plan)
    if (
        all(isinstance(t, (VarAttr, BagAgg)) for t in terms)
        and var not in sources
        and precedes(auto, sources, var)
    ):
        return _check_when_read(ctx, auto, var, plan)
    low = plan.op in (">", ">=", "=")
    high = plan.op in ("<", "<=", "=")
    own = _side(ctx, low, high)
    other = _side(ctx, high, low) if plan.other is not None else None
    bag_terms = [t for t in terms if isinstance(t, BagAgg)]
    edges = [t for t in dict.fromkeys(terms) if isinstance(t, FirstLast)]
    accs = {t: ctx.fresh("rel_acc") for t in bag_terms}
    finals = {t: ctx.fresh("rel_bag") for t in bag_terms}
    edge_regs = {t: ctx.fresh(f"rel_{t.which.lower()}") for t in edges}
    out: list[Transition | None] = []
    for tr in auto.transitions:
        first, last = auto.is_first(tr), auto.is_last(tr)
        outputs = outputs_of(tr)
        updates: dict[str, RExpr] = {}
        if other is not None and plan.other is not None:
            values = _emitted_values(tr, plan.other, plan.rest, "")
            updates.update(_side_updates(other, first, values))
        for t, acc in accs.items():
            expr: RExpr = Identity(t.func) if first else Reg(acc)
            for r in outputs.get(t.var, []):
                lifted = Lift(t.func, Const(1) if t.attr is None else new_value(tr, r, t.attr))
                expr = Combine(t.func, expr, lifted)
            updates[acc] = expr
        if last:
            for t in bag_terms:
                updates[finals[t]] = Finish(t.func, updates[accs[t]])
        check = _final_check(plan, own, other, var, finals, edge_regs) if last else None
        for own_values, exempt in _own_copies(tr, var, plan):
            own_updates = {**updates, **_side_updates(own, first, own_values)}
            for variant_updates, guard in edge_variants(auto, tr, edges, edge_regs, var):
                assignment = {**assignment_of(tr), **own_updates, **variant_updates}
                predicate = conj(tr.predicate, *exempt, *guard, *([check] if check else []))
                out.append(rebuild(tr, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


def _own_copies(tr: Transition, var: str, plan: _Deferred) -> list[tuple[list[RExpr], list[RPred]]]:
    """The copies of ``tr`` for X's side (one, unless events may be exempt)."""

    def own_value(r: Renaming) -> RExpr:
        def attr(a: str) -> RExpr:
            return new_value(tr, r, a)

        return translate_expr_terms(plan.own, var, attr, _no_term)

    return own_variants(tr, var, plan.exempt, own_value)


def _check_parts_at_end(ctx: Context, auto: Auto, var: str, plan: _Deferred) -> Auto:
    """``E op G1(y1) + ... + Gk(yk)`` for every event of X and every choice of the ``yi``:
    one side per part (count, known count, the extreme ``op`` needs), compared by the last
    step as ``ext E op ext G1 + ... + ext Gk``; vacuous when X or some ``Yi`` is empty."""
    low = plan.op in (">", ">=", "=")
    high = plan.op in ("<", "<=", "=")
    own = _side(ctx, low, high)
    sides = [(_side(ctx, high, low), y, expr) for y, expr in plan.parts]
    lo_g: RExpr | None = None
    hi_g: RExpr | None = None
    for side, _y, _expr in sides:
        if side.low is not None:
            lo_g = Reg(side.low) if lo_g is None else Arith("+", lo_g, Reg(side.low))
        if side.high is not None:
            hi_g = Reg(side.high) if hi_g is None else Arith("+", hi_g, Reg(side.high))
    whole = _Whole.of(ctx, plan.whole, var)
    if plan.whole is not None:
        w = whole.value(plan.whole, var)
        lo_g = Arith("+", lo_g, w) if lo_g is not None else None
        hi_g = Arith("+", hi_g, w) if hi_g is not None else None
    check = _universal_sum(plan.op, own, lo_g, hi_g)
    final = POr((
        _empty(own), *(_empty(side) for side, _, _ in sides),
        PAnd((_side_ok(own), *(_side_ok(side) for side, _, _ in sides), check)),
    ))
    out: list[Transition | None] = []
    for tr in auto.transitions:
        first, last = auto.is_first(tr), auto.is_last(tr)
        base = {**assignment_of(tr), **whole.updates(tr, first, last)}
        for side, y, expr in sides:
            base.update(_side_updates(side, first, _emitted_values(tr, y, expr, "")))
        for own_values, exempt in _own_copies(tr, var, plan):
            own_updates = _side_updates(own, first, own_values)
            for variant_updates, guard in edge_variants(auto, tr, whole.edges, whole.edge_regs, var):
                assignment = {**base, **own_updates, **variant_updates}
                predicate = conj(tr.predicate, *exempt, *guard, *([final] if last else []))
                out.append(rebuild(tr, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


def _independent_disjuncts(conjunct: Pred, var: str) -> list[_Deferred] | None:
    """The disjuncts of ``conjunct`` as comparisons the extremes decide, a ``!=`` against
    one value per run (no ``Y.a``) as its ``<`` and ``>``, when no other variable is read
    in two of them, nothing reads ``PREV``/``RUNNING`` and no side splits into parts (for
    :func:`check_partition_at_end`); None otherwise."""
    plans: list[_Deferred] = []
    for d in dict.fromkeys(disjuncts_of(conjunct)):
        pred, negated = (d.operand, True) if isinstance(d, PredNot) else (d, False)
        if isinstance(pred, Compare) and pred.op == ("=" if negated else "!="):
            pair = [Compare("<", pred.left, pred.right), Compare(">", pred.left, pred.right)]
        else:
            pair = [d]
        try:
            found = [_deferred(one, var) for one in pair]
        except UnsupportedQuery:
            return None
        if len(pair) == 2 and any(p.other is not None for p in found):
            return None  # != against every event of Y: the choice is shared by < and >
        plans.extend(found)
    others = [p.other for p in plans if p.other is not None]
    terms = [t for p in plans for t in _terms(p.rest, var)]
    if (len(plans) < 2 or any(p.parts for p in plans) or len(others) != len(set(others))
            or any(isinstance(t, (Prev, Running)) for t in terms)):
        return None
    return plans


def _one_way_bounds(conjunct: Pred, var: str) -> list[_Deferred] | None:
    """``E op1 G1 OR E op2 G2 OR …``: every disjunct a comparison the extremes decide, with
    one own side ``E`` and every ``op`` bounding it from one side (all ``<``/``<=`` or all
    ``>``/``>=``), each other variable read in one disjunct at most, no ``PREV``/``RUNNING``;
    None otherwise.  Then ``∀e ∀y1…yk: OR_i E(e) op_i G_i(y_i)`` is ``OR_i ∀y_i: E op_i
    G_i(y_i)`` for each ``e`` (disjoint choices), and a set of values bounded from below
    (above) lies in a union of up-sets (down-sets) iff its least (greatest) value does:
    the one extreme of E decides every disjunct."""
    disjuncts = list(dict.fromkeys(disjuncts_of(conjunct)))
    if len(disjuncts) < 2:
        return None
    try:
        plans = [_deferred(d, var) for d in disjuncts]
    except UnsupportedQuery:
        return None
    owns = {subst(Compare("=", p.own, Lit(0)), {}, var) for p in plans}
    ways = {p.op in ("<", "<=") for p in plans}
    others = [p.other for p in plans if p.other is not None]
    terms = [t for p in plans for t in _terms(p.rest, var)]
    if (len(owns) > 1 or len(ways) > 1 or any(p.parts or p.op == "=" for p in plans)
            or len(others) != len(set(others)) or any(isinstance(t, (Prev, Running)) for t in terms)):
        return None
    return plans


def _final_check(
    plan: _Deferred,
    own: _Side,
    other: _Side | None,
    var: str,
    finals: dict[BagAgg, str],
    edge_regs: dict[FirstLast, str],
) -> RPred:
    """The comparison the last step makes: vacuous when X (or Y) is empty, false on NULLs."""
    if other is not None:
        return POr((
            _empty(own), _empty(other),
            PAnd((_side_ok(own), _side_ok(other), _universal(plan.op, own, other))),
        ))

    def term(t: Expr) -> RExpr:
        if isinstance(t, BagAgg):
            return Reg(finals[t])
        assert isinstance(t, FirstLast)
        return Reg(edge_regs[t])

    target = translate_expr_terms(plan.rest, var, lambda a: Const(None), term)
    return POr((_empty(own), PAnd((_side_ok(own), _universal(plan.op, own, target)))))



__all__ = ["aggregate_edges", "filter_relating"]

