"""One ACEA construction per ACEL operator (seed 004 Appendix C, spec §3, §7).

Each function takes automata in the normal form of
:mod:`acel.compiler.automaton` (N1: no transition enters ``q0``; N2: final
states are sinks) and returns one in normal form.  ``papers/compiler.md``
describes every construction with a diagram and says where it departs from
Appendix C.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product

from acel.acea.model.automaton import ACEA, Renaming, Transition
from acel.acea.model.expressions import (
    TIME,
    Arith,
    Cmp,
    Combine,
    Const,
    Finish,
    GapClear,
    GapStep,
    Identity,
    IsNull,
    Lift,
    PAnd,
    POr,
    Reg,
    RExpr,
    RPred,
    TrueP,
    conj,
    eval_rpred3,
    names_in_pred,
)
from acel.acea.model.graph import trim_parts
from acel.compiler.automaton import (
    Auto,
    Outputs,
    assignment_of,
    distinct_renamings,
    outputs_of,
    rebuild,
)
from acel.compiler.context import Context
from acel.compiler.equality import (
    Decided,
    all_of,
    bags_equal,
    events_equal,
    negate,
    set_partitions,
    value,
)
from acel.compiler.translate import translate_pred

from acel.lang.ast import AggOutput, BagKind, Pred, Window
from acel.lang.events import Value


class CompileError(ValueError):
    """A formula the compiler cannot build (unknown type, clashing registers)."""


# ------------------------------------------------------------------ helpers


def fold(pred: RPred, constants: Mapping[str, Value]) -> RPred | None:
    """Decide the top-level conjuncts that read only known registers.

    A register is *known* (``type#k`` holds ``'R'``) because every transition
    that assigns it carries the conjunct ``type#k = 'R'``; that conjunct is
    therefore always kept.
    Returns the predicate without the conjuncts that are always true, or
    ``None`` when one is never true (the transition can never fire and is
    dropped).  Never changes which ``τ'`` satisfy the predicate.
    """
    conjuncts = pred.operands if isinstance(pred, PAnd) else (pred,)
    kept: list[RPred] = []
    for c in conjuncts:
        names = names_in_pred(c)
        if _defines_constant(c, constants):
            kept.append(c)  # the atom's own type check: it is what makes the register known
            continue
        elif all(n in constants for n in names):
            if eval_rpred3(c, constants.get) is not True:
                return None
            continue
        kept.append(c)
    return conj(*dict.fromkeys(kept))


def _defines_constant(pred: RPred, constants: Mapping[str, Value]) -> bool:
    return (
        isinstance(pred, Cmp)
        and pred.op == "="
        and isinstance(pred.left, Reg)
        and pred.left.name in constants
        and pred.right == Const(constants[pred.left.name])
    )


def _with_decided(pred: RPred, extra: Decided) -> RPred | None:
    if extra is False:
        return None
    if extra is True:
        return pred
    assert not isinstance(extra, bool)
    return conj(pred, extra)


def new_value(t: Transition, renaming: Renaming, attr: str) -> RExpr:
    """``ρ(τ')(attr)`` as an expression over ``τ ◁ e`` (what ``α`` assigns it)."""
    reg = value(renaming, attr)
    if isinstance(reg, Reg):
        return assignment_of(t)[reg.name]
    return reg


def _finish(ctx: Context, auto: Auto, transitions: Sequence[Transition | None]) -> Auto:
    kept: list[Transition] = []
    for t in transitions:
        if t is None:
            continue
        pred = fold(t.predicate, ctx.constants)
        if pred is None:
            continue
        kept.append(rebuild(t, predicate=pred) if pred != t.predicate else t)
    return auto.with_transitions(kept)


# -------------------------------------------------------------------- atoms


def atom(ctx: Context, type_name: str) -> Auto:
    """``R``: copy the read event's attributes into fresh registers, check the
    type, emit the copy through a renaming into variable ``R``.

    ``q0 --[a#k := a for a in attrs(R); type#k = 'R'; R ↦ {{a ↦ a#k}}]--> q1``
    """
    attrs = ctx.schema.attributes(type_name)
    if not attrs:
        raise CompileError(f"unknown event type {type_name!r}: the schema has no such type")
    regs = ctx.fresh_group(list(attrs))
    ctx.constants[regs["type"]] = type_name
    t = Transition.make(
        0,
        {reg: Reg(a) for a, reg in regs.items()},
        Cmp("=", Reg(regs["type"]), Const(type_name)),
        {type_name: [Renaming.of(regs)]},
        1,
    )
    return Auto(2, 0, frozenset({1}), (t,))


# ----------------------------------------------------------------------- AS


def as_var(ctx: Context, auto: Auto, var: str) -> Auto:
    """``φ AS X``: X also receives the bag union of everything a transition emits.

    Events emitted at time ``t`` come only from the transition reading
    ``e_t``, so the bag union over the whole complex event is the sum over
    transitions of each transition's bag union.  Equality of two emitted
    events is data-dependent, so a transition emitting ``d ≥ 2`` distinct
    renamings is split into one copy per partition of them into classes of
    equal events (predicate: equal inside a class, different across), and X
    gets, per class, the largest multiplicity any variable has there.
    """
    out_transitions: list[Transition | None] = []
    for t in auto.transitions:
        outputs = outputs_of(t)
        if not outputs:
            out_transitions.append(t)
            continue
        distinct = distinct_renamings(outputs)
        for partition in set_partitions(distinct):
            parts: list[Decided] = []
            for cls in partition:
                parts.extend(events_equal(cls[0], other, ctx.constants) for other in cls[1:])
            for a, b in _pairs([cls[0] for cls in partition]):
                parts.append(negate(events_equal(a, b, ctx.constants)))
            condition = all_of(parts)
            if condition is False:
                continue
            union: list[Renaming] = []
            for cls in partition:
                mult = max(sum(rs.count(r) for r in cls) for rs in outputs.values())
                union.extend([cls[0]] * mult)
            new_outputs = dict(outputs)
            new_outputs[var] = union
            pred = _with_decided(t.predicate, condition)
            out_transitions.append(
                None if pred is None else rebuild(t, predicate=pred, output=new_outputs)
            )
    return _finish(ctx, auto, out_transitions)


def _pairs(items: Sequence[Renaming]) -> list[tuple[Renaming, Renaming]]:
    return [(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items))]


# ------------------------------------------------------------------ filters


def filter_unary(ctx: Context, auto: Auto, var: str, pred: Pred) -> Auto:
    """``φ FILTER X[P]``: every transition emitting into X checks ``P`` on each
    event it emits there (``P`` renamed through each renaming of ``m(X)``)."""
    out: list[Transition | None] = []
    for t in auto.transitions:
        renamings = distinct_renamings(outputs_of(t), [var])
        if not renamings:
            out.append(t)
            continue
        checks = [translate_pred(pred, lambda a, r=r: value(r, a)) for r in renamings]  # type: ignore[misc]
        out.append(rebuild(t, predicate=conj(t.predicate, *checks)))
    return _finish(ctx, auto, out)


def filter_bag(ctx: Context, auto: Auto, var: str, kind: BagKind, attr: str) -> Auto:
    """``φ FILTER X[SAME(a)]`` / ``X[INC(a)]`` / ``X[DEC(a)]`` with registers.

    The bag predicates of :func:`acel.lang.predicates.bag_holds` are prefix-closed
    (a bag that fails keeps failing when events are added later in time), so
    checking them at every transition that emits into X is exact.  Registers:
    ``has`` (X already holds an event), and the values of ``a`` of the last
    group (events of the latest time in X): one register for SAME (a
    reference value), ``K`` for INC/DEC where ``K`` is the most distinct
    renamings a transition emits into X (shorter groups repeat a value).
    """
    if kind == "SAME":
        return _filter_same(ctx, auto, var, attr)
    op = "<" if kind == "INC" else ">"
    k_max = max(
        (len(distinct_renamings(outputs_of(t), [var])) for t in auto.transitions), default=0
    )
    if k_max == 0:
        return auto
    stem = kind.lower()
    has, old_has = ctx.fresh(f"{stem}_has"), ctx.fresh(f"{stem}_had")
    prev = [ctx.fresh(f"{stem}_last{i + 1}") for i in range(k_max)]
    old = [ctx.fresh(f"{stem}_prev{i + 1}") for i in range(k_max)]
    out: list[Transition | None] = []
    for t in auto.transitions:
        first, last = auto.is_first(t), auto.is_last(t)
        assignment = assignment_of(t)
        renamings = distinct_renamings(outputs_of(t), [var])
        predicate = t.predicate
        if not renamings:
            if not last:
                assignment[has] = Const(None) if first else Reg(has)
                for p in prev:
                    assignment[p] = Const(None) if first else Reg(p)
            out.append(rebuild(t, assignment=assignment))
            continue
        now = [value(r, attr) for r in renamings]
        if not first:
            assignment[old_has] = Reg(has)
            for o, p in zip(old, prev):
                assignment[o] = Reg(p)
            ordered = PAnd(tuple(Cmp(op, Reg(o), v) for o in old for v in now))
            predicate = conj(predicate, POr((IsNull(Reg(old_has)), ordered)))
        if not last:
            assignment[has] = Const(True)
            news = [new_value(t, r, attr) for r in renamings]
            for i, p in enumerate(prev):
                assignment[p] = news[min(i, len(news) - 1)]
        out.append(rebuild(t, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


def _filter_same(ctx: Context, auto: Auto, var: str, attr: str) -> Auto:
    """SAME(a): once X holds two events or more, all values are non-NULL and equal."""
    has, old_has = ctx.fresh("same_has"), ctx.fresh("same_had")
    ref, old_ref = ctx.fresh("same_ref"), ctx.fresh("same_prev")
    out: list[Transition | None] = []
    for t in auto.transitions:
        first, last = auto.is_first(t), auto.is_last(t)
        assignment = assignment_of(t)
        emitted = outputs_of(t).get(var, [])
        predicate = t.predicate
        if not emitted:
            if not last:
                assignment[has] = Const(None) if first else Reg(has)
                assignment[ref] = Const(None) if first else Reg(ref)
            out.append(rebuild(t, assignment=assignment))
            continue
        renamings = distinct_renamings({var: emitted})
        now = [value(r, attr) for r in renamings]
        alone: RPred = (
            PAnd(tuple(Cmp("=", now[0], v) for v in now)) if len(emitted) >= 2 else TrueP()
        )
        if first:
            predicate = conj(predicate, alone)
        else:
            assignment[old_has] = Reg(has)
            assignment[old_ref] = Reg(ref)
            with_previous = PAnd(tuple(Cmp("=", Reg(old_ref), v) for v in now))
            no_previous = conj(IsNull(Reg(old_has)), alone)
            predicate = conj(predicate, POr((no_previous, with_previous)))
        if not last:
            assignment[has] = Const(True)
            assignment[ref] = new_value(t, renamings[0], attr)
        out.append(rebuild(t, assignment=assignment, predicate=predicate))
    return _finish(ctx, auto, out)


# ------------------------------------------------------------- OR and AND


def union(ctx: Context, left: Auto, right: Auto) -> Auto:
    """``φ1 OR φ2``: disjoint union under a fresh initial state that copies
    both initial states' outgoing transitions (the old ones become dead)."""
    a = left.shifted(1)
    b = right.shifted(1 + left.num_states)
    transitions = list(a.transitions) + list(b.transitions)
    for t in a.transitions + b.transitions:
        if t.source in (a.initial, b.initial):
            transitions.append(rebuild(t, source=0))
    return Auto(1 + left.num_states + right.num_states, 0, a.finals | b.finals, tuple(transitions))


def union_all(ctx: Context, operands: Sequence[Auto]) -> Auto:
    """``φ1 OR … OR φn`` at once: :func:`union` folded over the operands, with every
    operand shifted once (a chain of binary unions shifts and trims the growing left
    side at every step: quadratic in the number of options of a quantifier)."""
    transitions: list[Transition] = []
    starts: list[Transition] = []
    offset = 1
    finals: set[int] = set()
    for auto in operands:
        shifted = auto.shifted(offset)
        transitions.extend(shifted.transitions)
        starts.extend(rebuild(t, source=0) for t in shifted.transitions
                      if t.source == shifted.initial)
        finals |= shifted.finals
        offset += auto.num_states
    return Auto(offset, 0, frozenset(finals), tuple(transitions + starts))


def intersection(ctx: Context, left: Auto, right: Auto) -> Auto:
    """``φ1 AND φ2``: the product, reachable part only.

    A pair of transitions reads the same event, runs both assignments
    (registers are disjoint) and both predicates, and also checks that they
    emit equal bags for every variable (events emitted at time ``t`` come
    only from step ``t``, so equal complex events ⇔ equal bags at every
    step).  The pair emits the left side's renamings.
    """
    clash = _registers(left) & _registers(right)
    if clash:
        raise CompileError(f"AND sides share registers {sorted(clash)}")
    by_source_l = _by_source(left)
    by_source_r = _by_source(right)
    index: dict[tuple[int, int], int] = {(left.initial, right.initial): 0}
    todo = [(left.initial, right.initial)]
    transitions: list[Transition] = []
    while todo:
        p, q = todo.pop()
        for t1, t2 in product(by_source_l.get(p, ()), by_source_r.get(q, ())):
            o1, o2 = outputs_of(t1), outputs_of(t2)
            checks = [
                bags_equal(o1.get(v, []), o2.get(v, []), ctx.constants)
                for v in sorted(set(o1) | set(o2))
            ]
            equal = all_of(checks)
            pred = _with_decided(conj(t1.predicate, t2.predicate), equal)
            if pred is None:
                continue
            pred = fold(pred, ctx.constants)
            if pred is None:
                continue
            target = (t1.target, t2.target)
            if target not in index:
                index[target] = len(index)
                todo.append(target)
            assignment = assignment_of(t1)
            assignment.update(assignment_of(t2))
            transitions.append(
                Transition.make(index[(p, q)], assignment, pred, o1, index[target])
            )
    finals = frozenset(
        i for (p, q), i in index.items() if p in left.finals and q in right.finals
    )
    return Auto(len(index), 0, finals, tuple(transitions))


def _by_source(auto: Auto) -> dict[int, list[Transition]]:
    out: dict[int, list[Transition]] = {}
    for t in auto.transitions:
        out.setdefault(t.source, []).append(t)
    return out


def _registers(auto: Auto) -> set[str]:
    out: set[str] = set()
    for t in auto.transitions:
        out |= t.assigned()
    return out


# ------------------------------------------------------ sequencing and +


def skip_loop(state: int) -> Transition:
    """The TRUE, register-erasing, non-emitting self-loop of ``;`` and ``+``."""
    return Transition.make(state, {}, TrueP(), {}, state)


def sequence(ctx: Context, left: Auto, right: Auto, *, skip: bool) -> Auto:
    """``φ1 ; φ2`` (``skip``) and ``φ1 : φ2``: the last steps of φ1 are
    redirected into φ2's initial state, which (for ``;``) gets a skip loop.

    The skip loop is never a first step (φ2's initial state is entered only
    after φ1's last step) and never a last one (N2), so a run's interval is
    exactly ``[start(C1), end(C2)]``.
    """
    b = right.shifted(left.num_states)
    transitions = [
        rebuild(t, target=b.initial) if t.target in left.finals else t for t in left.transitions
    ]
    transitions.extend(b.transitions)
    if skip:
        transitions.append(skip_loop(b.initial))
    return Auto(left.num_states + right.num_states, left.initial, b.finals, tuple(transitions))


def iteration(ctx: Context, auto: Auto, *, skip: bool) -> Auto:
    """``φ+`` (``skip``) and ``φ:+``: a fresh state ``L`` between iterations.

    Every last step also gets a copy into ``L``, every first step a copy out
    of ``L`` (a step that is both gets one ``L → L`` copy too); ``L`` has the
    skip loop for ``+``.  ``q0`` keeps no incoming transition (N1) and the
    final states stay sinks (N2).
    """
    loop = auto.num_states
    transitions: list[Transition] = []
    for t in auto.transitions:
        sources = [t.source] + ([loop] if auto.is_first(t) else [])
        targets = [t.target] + ([loop] if auto.is_last(t) else [])
        for s in sources:
            for g in targets:
                transitions.append(t if (s, g) == (t.source, t.target) else rebuild(t, source=s, target=g))
    if skip:
        transitions.append(skip_loop(loop))
    return Auto(auto.num_states + 1, auto.initial, auto.finals, tuple(transitions))


# ----------------------------------------------------------------- negation

NO_CONFIGURATIONS: frozenset[tuple[int, tuple[tuple[str, object], ...]]] = frozenset()
"""The gap register on entering the gap: no run of ψ has started yet."""


def negated_automaton(ctx: Context, autos: Sequence[Auto]) -> ACEA:
    """What a gap register runs for ``NOT ψ1 ; … ; NOT ψn``: ``ψ1 OR … OR ψn``.

    Several NOTs in a row guard the same gap, and only the intervals of their
    matches matter (spec §3.1), so one automaton for the union serves them
    all.  Outputs are dropped (ψ's variables are never emitted), then the
    automaton is trimmed and validated.
    """
    auto = autos[0]
    for other in autos[1:]:
        auto = union(ctx, auto, other)
    silent = [rebuild(t, output={}) for t in auto.transitions]
    n, q0, finals, transitions = trim_parts(auto.num_states, auto.initial, auto.finals, silent)
    return ACEA(n, q0, finals, transitions)


def gap_loop(state: int, register: str, negated: ACEA, label: str) -> Transition:
    """The self-loop of a gap state: read any event, step ψ's runs, die on a match.

    ``g := δψ(g ∪ {(q0ψ, ∅)})`` on the event just read, and the predicate
    "no accepting ψ-configuration in ``g``".  Emits nothing and keeps no other
    register (like the skip loop of ``;``; outer constructions add theirs).
    """
    return Transition.make(
        state,
        {register: GapStep(negated, Reg(register), label)},
        GapClear(negated, Reg(register), label),
        {},
        state,
    )


def sequence_not(ctx: Context, left: Auto, negated: ACEA, right: Auto, label: str) -> Auto:
    """``φ1 ; NOT ψ ; φ2`` (spec §3.1): ``;`` with a gap loop instead of the skip loop.

    φ1's last steps go to φ2's initial state ``g`` (as for ``;``) and also set
    a fresh gap register to ∅; ``g``'s only loop is :func:`gap_loop`, and φ2's
    first steps leave ``g`` unchanged.  The events read in ``g`` are exactly
    those strictly between ``end(C1)`` and ``start(C2)``; a ψ-run started at
    any of them is in the register, and the loop dies as soon as one accepts,
    so a run survives to φ2 iff no ``N ∈ ⟦ψ⟧`` lies in the gap.  States:
    ``|φ1| + |φ2|``, as for ``;`` (ψ's automaton lives in the register).
    """
    register = ctx.fresh("gap")
    b = right.shifted(left.num_states)
    transitions: list[Transition] = []
    for t in left.transitions:
        if t.target in left.finals:
            assignment = assignment_of(t)
            assignment[register] = Const(NO_CONFIGURATIONS)
            transitions.append(rebuild(t, assignment=assignment, target=b.initial))
        else:
            transitions.append(t)
    transitions.extend(b.transitions)
    transitions.append(gap_loop(b.initial, register, negated, label))
    return Auto(left.num_states + right.num_states, left.initial, b.finals, tuple(transitions))


# -------------------------------------------------------------- projections


def project_vars(ctx: Context, auto: Auto, keep: Sequence[str]) -> Auto:
    """``PROJECT[X1..Xn](φ)``: outputs of other variables are dropped."""
    wanted = set(keep)
    return auto.with_transitions(
        rebuild(t, output={v: rs for v, rs in outputs_of(t).items() if v in wanted})
        for t in auto.transitions
    )


def project_attrs(ctx: Context, auto: Auto, var: str, attrs: Sequence[str]) -> Auto:
    """``PROJECT X[a1..an](φ)``: X's renamings keep only ``a1..an``."""
    wanted = set(attrs)

    def restrict(r: Renaming) -> Renaming:
        return Renaming(tuple((a, reg) for a, reg in r.items if a in wanted))

    out: list[Transition] = []
    for t in auto.transitions:
        outputs = outputs_of(t)
        if var in outputs:
            outputs[var] = [restrict(r) for r in outputs[var]]
            t = rebuild(t, output=outputs)
        out.append(t)
    return auto.with_transitions(out)


# ---------------------------------------------------------------------- AGG


def aggregate(ctx: Context, auto: Auto, var: str, outputs: Sequence[AggOutput]) -> Auto:
    """``AGG Z[b1 := F1(X1.a1), ...](φ)``: one monoid register per output.

    First steps start from the identity ``1_F``, every step combines the
    lifted values it emits into ``Xk`` (with multiplicity; NULL lifts to the
    identity, COUNT(X) lifts 1 per event); other steps, skip loops included,
    keep the register.  Last steps (N2) put ``h_F`` of the final value in a
    register ``bk`` and emit the untyped event ``{b1 ↦ .., ..}`` into Z —
    also when the first step is the last (runs of one event).
    """
    accs = [ctx.fresh(f"acc_{o.name}") for o in outputs]
    results = {o.name: ctx.fresh(o.name) for o in outputs}
    out: list[Transition] = []
    for t in auto.transitions:
        first, last = auto.is_first(t), auto.is_last(t)
        assignment = assignment_of(t)
        emitted = outputs_of(t)
        for o, acc in zip(outputs, accs):
            expr: RExpr | None = None if first else Reg(acc)
            for r in emitted.get(o.var, []):
                lifted = Lift(o.func, Const(1) if o.attr is None else new_value(t, r, o.attr))
                expr = lifted if expr is None else Combine(o.func, expr, lifted)
            if expr is None:
                expr = Identity(o.func)
            if last:
                assignment[results[o.name]] = Finish(o.func, expr)
            else:
                assignment[acc] = expr
        if last:
            new_outputs: Outputs = dict(emitted)
            new_outputs[var] = [*emitted.get(var, []), Renaming.of(results)]
            out.append(rebuild(t, assignment=assignment, output=new_outputs))
        else:
            out.append(rebuild(t, assignment=assignment))
    return auto.with_transitions(out)


# ------------------------------------------------------------------- WITHIN


def within(ctx: Context, auto: Auto, window: Window) -> Auto:
    """``WITHIN w``: a start register set by first steps (``@time`` or the ON
    attribute), kept by the others; last steps require ``now − start < w``."""
    start, now = ctx.fresh("start"), ctx.fresh("now")
    source: RExpr = Reg(TIME) if window.attr is None else Reg(window.attr)
    out: list[Transition] = []
    for t in auto.transitions:
        first, last = auto.is_first(t), auto.is_last(t)
        assignment = assignment_of(t)
        assignment[start] = source if first else Reg(start)
        predicate = t.predicate
        if last:
            assignment[now] = source
            span = Cmp("<", Arith("-", Reg(now), Reg(start)), Const(window.size))
            predicate = conj(predicate, span)
        out.append(rebuild(t, assignment=assignment, predicate=predicate))
    return auto.with_transitions(out)


__all__ = [
    "CompileError",
    "aggregate",
    "as_var",
    "atom",
    "filter_bag",
    "filter_unary",
    "fold",
    "gap_loop",
    "intersection",
    "iteration",
    "negated_automaton",
    "project_attrs",
    "project_vars",
    "sequence",
    "sequence_not",
    "union",
    "within",
]
