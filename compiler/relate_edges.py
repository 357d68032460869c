"""``FIRST``/``LAST`` with registers: in relating filters and as AGG outputs (spec §5.1).

``LAST(Y.a)`` takes the value of each event emitted into Y; ``FIRST(Y.a)`` only the first,
a later emitting step being split on a set flag (``papers/compiler.md``).
"""

from __future__ import annotations

from acel.acea.model.automaton import Renaming, Transition
from acel.acea.model.expressions import Const, IsNull, PNot, Reg, RExpr, RPred, conj
from acel.compiler.automaton import Auto, assignment_of, distinct_renamings, outputs_of, rebuild
from acel.compiler.construct import _finish, aggregate, new_value
from acel.compiler.context import Context
from acel.compiler.relate_order import may_close, may_open
from acel.compiler.relate_terms import TIES

from acel.lang.ast import Agg, FirstLast
from acel.lang.errors import UnsupportedQuery
from acel.lang.printer import format_expr


def edge_variants(
    auto: Auto,
    tr: Transition,
    edges: list[FirstLast],
    regs: dict[FirstLast, str],
    var: str,
) -> list[tuple[dict[str, RExpr], list[RPred]]]:
    """The register updates of ``FIRST``/``LAST`` terms on ``tr`` (of ``auto``), as
    variants of it.

    ``LAST(Y.a)`` takes the value of each event emitted into Y.  ``FIRST(Y.a)`` takes it
    only when Y had none yet: a step that emits into Y (not a first step) is split in two
    copies guarded by whether the register was set (``IsNull`` on a flag).  A step that
    emits several distinct events into Y (ties in time: the canonical order of §2 decides)
    is refused unless it can never be Y's first (for FIRST) or last (for LAST) step."""
    first = auto.is_first(tr)
    variants: list[tuple[dict[str, RExpr], list[RPred]]] = [({}, [])]
    for t in edges:
        emitted = outputs_of(tr).get(t.var, [])
        renamings = distinct_renamings({t.var: emitted}) if emitted else []
        if len(renamings) > 1 and t.which == "FIRST" and not may_open(auto, tr, t.var):
            variants = [({**u, regs[t]: Reg(regs[t])}, g) for u, g in variants]
            continue  # Y's first event came earlier: FIRST keeps it
        if len(renamings) > 1 and t.which == "LAST" and not may_close(auto, tr, t.var):
            renamings = renamings[:1]  # a later step of Y always overwrites this value
        if len(renamings) > 1:
            raise UnsupportedQuery(
                f"the automaton engines do not compile {format_expr(t)} in {var}[...]: {TIES} "
                "(spec §5.1; the oracle runs it: --engine oracle)"
            )
        reg = regs[t]
        keep: RExpr = Const(None) if first else Reg(reg)
        if not renamings:
            variants = [({**u, reg: keep}, g) for u, g in variants]
            continue
        now = new_value(tr, renamings[0], t.attr)
        if t.which == "LAST" or first:
            variants = [({**u, reg: now}, g) for u, g in variants]
            continue
        # FIRST on a later step: set only if unset (flag register ``seen`` is TRUE once set)
        seen, old = _flags(reg)
        variants = [
            ({**u, reg: now, seen: Const(True), old: Reg(seen)}, [*g, IsNull(Reg(old))])
            for u, g in variants
        ] + [
            ({**u, reg: Reg(reg), seen: Const(True), old: Reg(seen)}, [*g, PNot(IsNull(Reg(old)))])
            for u, g in variants
        ]
    return _with_seen_flags(variants, edges, regs, tr, first)


def _flags(reg: str) -> tuple[str, str]:
    """The companion registers of a FIRST register: set-flag and its copy before the step."""
    stem, _, number = reg.partition("#")
    return f"{stem}_set#{number}", f"{stem}_was#{number}"


def _with_seen_flags(
    variants: list[tuple[dict[str, RExpr], list[RPred]]],
    edges: list[FirstLast],
    regs: dict[FirstLast, str],
    tr: Transition,
    first: bool,
) -> list[tuple[dict[str, RExpr], list[RPred]]]:
    """Every variant keeps (or starts) the ``set`` flag of each FIRST register."""
    out = []
    for updates, guard in variants:
        updates = dict(updates)
        for t in edges:
            if t.which != "FIRST":
                continue
            seen = _flags(regs[t])[0]
            if seen in updates:
                continue
            emitted = bool(outputs_of(tr).get(t.var))
            if emitted:
                updates[seen] = Const(True)
            else:
                updates[seen] = Const(None) if first else Reg(seen)
        out.append((updates, guard))
    return out


def aggregate_edges(ctx: Context, auto: Auto, node: Agg) -> Auto:
    """``AGG Z[...]`` whose outputs include ``FIRST``/``LAST`` (spec §5.1).

    The monoid outputs are built by :func:`acel.compiler.construct.aggregate`; each
    ``FIRST(X.a)``/``LAST(X.a)`` output keeps a register exactly as a filter's
    ``FIRST``/``LAST`` term does (:func:`edge_variants`: ``LAST`` takes each value
    emitted into X, ``FIRST`` only the first, a step being split on the set flag), read
    over the operand's transitions, and the event created in Z reads that register.
    """
    edge_outputs = [o for o in node.outputs if o.func in ("FIRST", "LAST")]
    monoids = [o for o in node.outputs if o.func not in ("FIRST", "LAST")]
    built = aggregate(ctx, auto, node.var, monoids)
    if not edge_outputs:
        return built
    terms = {
        o.name: FirstLast("FIRST" if o.func == "FIRST" else "LAST", o.var, o.attr or "")
        for o in edge_outputs
    }
    edges = list(dict.fromkeys(terms.values()))
    regs = {t: ctx.fresh(f"agg_{t.which.lower()}") for t in edges}
    out: list[Transition | None] = []
    for operand, tr in zip(auto.transitions, built.transitions):
        last = auto.is_last(operand)
        for updates, guard in edge_variants(auto, operand, edges, regs, node.var):
            assignment = assignment_of(tr)
            assignment.update(updates)
            outputs = outputs_of(tr)
            if last:  # the created event: the renaming aggregate() added (order is canonical)
                renamings = list(outputs[node.var])
                for r in outputs_of(operand).get(node.var, []):
                    renamings.remove(r)
                (created,) = renamings
                names = {name: regs[t] for name, t in terms.items()}
                kept = list(outputs[node.var])
                kept.remove(created)
                outputs[node.var] = [*kept, Renaming.of({**dict(created.items), **names})]
            out.append(rebuild(tr, assignment=assignment, output=outputs,
                               predicate=conj(tr.predicate, *guard)))
    return _finish(ctx, built, out)

