"""SASE+ → ACEL for the skip-till-any-match fragment (spec §8, seed 004 App. D; §3.1).

```
PATTERN SEQ(A a, B+ b[], C c)            PROJECT[a, b, c, ret](
WHERE [k] AND a.x > 1                      AGG ret[a_x := MAX(a.x), sum_b_y := SUM(b.y)](
  AND b[i].y > b[i-1].y          ⟶          (A AS a ; (B AS b)+ ; C AS c)
WITHIN 5                                     FILTER a[x > 1] AND b[INC(y)]))
RETURN a.x, SUM(b[].y)                   PARTITION BY k WITHIN 5 EVENTS
```

- ``T v`` becomes ``T AS v``, ``T+ v[]`` becomes ``(T AS v)+``, joined by ``;``;
  the PROJECT keeps only the component variables (and the AGG variable),
  since the type variables receive the events too;
- a conjunct naming one variable (``a.x``, or ``b[i].x`` only) becomes
  ``FILTER v[P]``; ``b[i].a > b[i-1].a`` becomes ``b[INC(a)]``, ``<`` gives
  ``DEC``, ``=`` gives ``SAME`` (either operand order);
- ``[attr]`` becomes ``PARTITION BY attr``, ``WITHIN`` stays;
- RETURN becomes one ``AGG``: ``SUM(b[].y)`` → ``SUM(b.y)``, ``COUNT(b[])`` →
  ``COUNT(b)``, and a single component's ``a.x`` → ``MAX(a.x)`` (``a`` holds
  exactly one event, so the maximum is its value, NULL included);
- a negated component ``!(T v)`` becomes ``NOT ψ`` with ``ψ = T AS v`` and the
  conjuncts naming ``v`` alone as ``ψ FILTER v[P]`` (spec §3.1): between two
  positive components it guards their gap (``φ1 ; NOT ψ ; φ2``); before the
  first or after the last it becomes a leading or trailing negation around
  the whole translated formula (the query must have WITHIN).

- a conjunct relating events (two variables, ``v[1]``, ``v[v.len]``,
  ``v[i-1]``, aggregates) becomes ``X[P]`` with the terms of spec §5.1
  (:func:`_relating_filter`): ``a.symbol = b.symbol`` → ``b[symbol = a.symbol]``,
  ``a[i].price > avg(a[..i-1].price)`` → ``a[price > RUNNING AVG(price)]``.

Anything else (other strategies, a negated component related to another) has no
ACEL counterpart and is refused with :class:`NotTranslatable` naming the
construct.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from acel.reference.sase.ast import AggRef, Component, Ref, Reference, SaseQuery
from acel.reference.sase.compile import ref_names

from acel.lang.ast import (
    Agg,
    AggOutput,
    As,
    Atom,
    Attr,
    BagAgg,
    BagKind,
    BagPred,
    BinOp,
    Compare,
    Expr,
    Filter,
    FilterAnd,
    FilterF,
    FirstLast,
    Formula,
    InList,
    LeadingNot,
    Lit,
    Neg,
    Plus,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
    Prev,
    ProjectVars,
    Query,
    Running,
    Seq,
    SeqNot,
    TrailingNot,
    VarAttr,
    VarPred,
)
from acel.lang.errors import AcelError


class NotTranslatable(AcelError):
    """A SASE+ construct without an ACEL counterpart."""


def _strip(node: Pred | Expr, query: SaseQuery) -> Pred | Expr:
    """Replace each reference ``v.x`` / ``v[i].x`` by the plain attribute ``x``."""
    if isinstance(node, Attr):
        ref = query.reference(node.name)
        assert isinstance(ref, Ref)
        return Attr(ref.attr)
    if isinstance(node, Lit):
        return node
    if isinstance(node, BinOp):
        return BinOp(node.op, _expr(node.left, query), _expr(node.right, query))
    if isinstance(node, Neg):
        return Neg(_expr(node.operand, query))
    if isinstance(node, Compare):
        return Compare(node.op, _expr(node.left, query), _expr(node.right, query))
    if isinstance(node, InList):
        return InList(_expr(node.expr, query), node.values, node.negated)
    if isinstance(node, PredAnd):
        return PredAnd(_pred(node.left, query), _pred(node.right, query))
    if isinstance(node, PredOr):
        return PredOr(_pred(node.left, query), _pred(node.right, query))
    if isinstance(node, PredNot):
        return PredNot(_pred(node.operand, query))
    raise TypeError(f"not a predicate: {node!r}")


def _expr(node: Expr, query: SaseQuery) -> Expr:
    out = _strip(node, query)
    assert isinstance(out, (Attr, Lit, BinOp, Neg))
    return out


def _pred(node: Pred, query: SaseQuery) -> Pred:
    out = _strip(node, query)
    assert isinstance(out, (Compare, InList, PredAnd, PredOr, PredNot))
    return out


_BAG_OPS: dict[str, BagKind] = {">": "INC", "<": "DEC", "=": "SAME"}
_FLIP = {">": "<", "<": ">", "=": "="}


def _iterator_bag_pred(conjunct: Pred, query: SaseQuery) -> BagPred | None:
    """``v[i].a op v[i-1].a`` (or mirrored) as ``v[INC|DEC|SAME(a)]``, else ``None``."""
    if not (
        isinstance(conjunct, Compare)
        and isinstance(conjunct.left, Attr)
        and isinstance(conjunct.right, Attr)
    ):
        return None
    left = query.reference(conjunct.left.name)
    right = query.reference(conjunct.right.name)
    if not (isinstance(left, Ref) and isinstance(right, Ref)):
        return None
    if left.var != right.var or left.attr != right.attr:
        return None
    op: str = conjunct.op
    if (left.index, right.index) == ("i-1", "i"):
        op = _FLIP.get(op, op)
    elif (left.index, right.index) != ("i", "i-1"):
        return None
    kind = _BAG_OPS.get(op)
    return None if kind is None else BagPred(left.var, kind, left.attr)


def _filter(conjunct: Pred, query: SaseQuery) -> Filter:
    bag = _iterator_bag_pred(conjunct, query)
    if bag is not None:
        return bag
    refs: list[Reference] = [query.reference(n) for n in ref_names(conjunct)]
    if not refs:
        raise NotTranslatable("a WHERE conjunct that names no event has no ACEL counterpart")
    relating = _relating_filter(conjunct, query, refs)
    if relating is not None:
        return relating
    for ref in refs:
        if isinstance(ref, AggRef):
            raise NotTranslatable(
                f"the aggregate {ref.name()} inside WHERE has no ACEL counterpart "
                "(ACEL filters test single events or INC/DEC/SAME)"
            )
        if ref.index in ("1", "len", "i-1"):
            raise NotTranslatable(
                f"{ref.name()} has no ACEL counterpart (only v[i] with v[i-1] in the "
                "shape v[i].a > v[i-1].a, < or =, which become INC, DEC, SAME)"
            )
    variables = sorted({r.var for r in refs})
    if len(variables) > 1:
        raise NotTranslatable(
            f"a predicate relating {' and '.join(variables)} has no ACEL counterpart "
            "(ACEL filters test one variable's events one at a time)"
        )
    return VarPred(variables[0], _pred(conjunct, query))


def _filtered_variable(refs: list[Reference], query: SaseQuery) -> str:
    """The variable ``X`` of ``X[P]`` for a conjunct relating events: the one read per
    event (``v.x``, ``v[i].x``, ``v[i-1].x``, ``f(v[..i-1].x)``), the last declared if
    several; else the variable of the first reference."""
    order = {c.var: k for k, c in enumerate(query.components)}
    per_event = {
        r.var
        for r in refs
        if (isinstance(r, Ref) and r.index in ("single", "i", "i-1"))
        or (isinstance(r, AggRef) and r.range == "prev")
    }
    if per_event:
        return max(per_event, key=lambda v: order.get(v, -1))
    return refs[0].var


def _relating_term(ref: Reference, var: str) -> Expr:
    """One SASE+ reference as a term of spec §5.1 inside ``var[...]``."""
    if isinstance(ref, AggRef):
        if ref.range == "all":
            return BagAgg(ref.func.upper(), ref.var, ref.attr)
        if ref.var == var and ref.attr is not None:
            return Running(ref.func.upper(), ref.attr)
        raise NotTranslatable(f"{ref.name()} has no ACEL counterpart inside {var}[...]")
    if ref.index == "1":
        return FirstLast("FIRST", ref.var, ref.attr)
    if ref.index == "len":
        return FirstLast("LAST", ref.var, ref.attr)
    if ref.var == var and ref.index in ("single", "i"):
        return Attr(ref.attr)
    if ref.var == var and ref.index == "i-1":
        return Prev(ref.attr)
    if ref.index == "single":
        return VarAttr(ref.var, ref.attr)
    raise NotTranslatable(
        f"{ref.name()} has no ACEL counterpart inside {var}[...] (spec §5.1 reads one "
        "variable's events one at a time)"
    )


def _relating_filter(conjunct: Pred, query: SaseQuery, refs: list[Reference]) -> Filter | None:
    """A conjunct that relates events (two variables, ``v[1]``, ``v[v.len]``, ``v[i-1]``,
    aggregates) as ``X[P]`` with the terms of spec §5.1; ``None`` for a plain conjunct.

    ``a.symbol = b.symbol`` → ``b[symbol = a.symbol]``, ``b[i].price > b[i-1].price`` →
    ``b[price > PREV(price)]``, ``a[i].price > avg(a[..i-1].price)`` →
    ``a[price > RUNNING AVG(price)]``, ``a[a.len].x`` → ``LAST(a.x)``, ``a[1].x`` →
    ``FIRST(a.x)``, ``sum(a[].x)`` → ``SUM(a.x)``.
    """
    simple = all(isinstance(r, Ref) and r.index in ("single", "i") for r in refs)
    if simple and len({r.var for r in refs}) == 1:
        return None
    if any(r.var in {c.var for c in query.components if c.negated} for r in refs):
        return None  # a negated component's conjuncts stay local to its ψ
    var = _filtered_variable(refs, query)

    def term(name: str) -> Expr:
        return _relating_term(query.reference(name), var)

    return VarPred(var, _map_refs(conjunct, term))


def _map_refs(node: Pred, term: Callable[[str], Expr]) -> Pred:
    """``node`` with every reference name (an ``Attr`` of the SASE+ parse) mapped."""

    def expr(e: Expr) -> Expr:
        if isinstance(e, Attr):
            return term(e.name)
        if isinstance(e, BinOp):
            return BinOp(e.op, expr(e.left), expr(e.right))
        if isinstance(e, Neg):
            return Neg(expr(e.operand))
        return e

    if isinstance(node, Compare):
        return Compare(node.op, expr(node.left), expr(node.right))
    if isinstance(node, InList):
        return InList(expr(node.expr), node.values, node.negated)
    if isinstance(node, PredAnd):
        return PredAnd(_map_refs(node.left, term), _map_refs(node.right, term))
    if isinstance(node, PredOr):
        return PredOr(_map_refs(node.left, term), _map_refs(node.right, term))
    if isinstance(node, PredNot):
        return PredNot(_map_refs(node.operand, term))
    raise TypeError(f"not a predicate: {node!r}")


def _identifier(text: str) -> str:
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", text)).strip("_").lower()


def return_outputs(query: SaseQuery) -> tuple[AggOutput, ...]:
    """The AGG outputs for a SASE+ RETURN list, named after the items (``sum_b_y``)."""
    outputs: list[AggOutput] = []
    used: set[str] = set()
    for ref in query.returns or ():
        name = _identifier(ref.name())
        base, n = name, 1
        while name in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name)
        if isinstance(ref, Ref):
            if ref.index != "single":
                raise NotTranslatable(f"RETURN {ref.name()} has no ACEL counterpart")
            outputs.append(AggOutput(name, "MAX", ref.var, ref.attr))
        else:
            outputs.append(AggOutput(name, ref.func, ref.var, ref.attr))
    return tuple(outputs)


def return_variable(query: SaseQuery) -> str:
    """A fresh variable for the AGG event: ``ret`` unless a name of the query takes it."""
    taken = {c.var for c in query.components} | {c.type for c in query.components}
    name, n = "ret", 1
    while name in taken:
        n += 1
        name = f"ret{n}"
    return name


def _negated_formula(comp: Component, filters: list[Filter]) -> Formula:
    """``ψ`` for ``!(T v)``: ``T AS v``, filtered by the conjuncts that name ``v``."""
    psi: Formula = As(Atom(comp.type), comp.var)
    if filters:
        combined = filters[0]
        for f in filters[1:]:
            combined = FilterAnd(combined, f)
        psi = FilterF(psi, combined)
    return psi


def translate(query: SaseQuery) -> Query:
    """The ACEL query with the same matches (and per-match rows, as one AGG)."""
    if query.strategy != "skip_till_any_match":
        raise NotTranslatable(
            f"the strategy {query.strategy} has no ACEL counterpart: ACEL's ';' skips any "
            "event (skip_till_any_match)"
        )
    positive_components = [c for c in query.components if not c.negated]
    for comp in positive_components:
        # a negated component's type and variable live inside its ψ only (spec §3.1)
        others = {c.type for c in positive_components if c is not comp}
        if comp.var in others:
            raise NotTranslatable(
                f"the variable {comp.var} is also an event type of the pattern; in ACEL it "
                "would receive that type's events too (rename the variable)"
            )
    negated = {c.var: c for c in query.components if c.negated}
    filters = [_filter(conjunct, query) for conjunct in query.where]
    local: dict[str, list[Filter]] = {var: [] for var in negated}
    positive_filters: list[Filter] = []
    for f in filters:
        var = f.var if isinstance(f, (VarPred, BagPred)) else None
        if var in local:
            local[var].append(f)
        else:
            positive_filters.append(f)
    # the sequence: positive components joined by ';', the negations in their gaps
    leading: list[Formula] = []
    pending: list[Formula] = []
    formula: Formula | None = None
    for comp in query.components:
        if comp.negated:
            psi = _negated_formula(comp, local[comp.var])
            (leading if formula is None else pending).append(psi)
            continue
        atom: Formula = As(Atom(comp.type), comp.var)
        part = Plus(atom) if comp.kleene else atom
        if formula is None:
            formula = part
        elif pending:
            formula = SeqNot(formula, tuple(pending), part)
            pending = []
        else:
            formula = Seq(formula, part)
    assert formula is not None, "the parser demands a positive component"
    if positive_filters:
        combined = positive_filters[0]
        for f in positive_filters[1:]:
            combined = FilterAnd(combined, f)
        formula = FilterF(formula, combined)
    keep = [c.var for c in query.components if not c.negated]
    if query.returns is not None:
        var = return_variable(query)
        formula = Agg(var, return_outputs(query), formula)
        keep.append(var)
    formula = ProjectVars(tuple(keep), formula)
    if (leading or pending) and query.within is None:
        raise NotTranslatable(
            "a negation at the start or the end of the pattern needs WITHIN (spec §3.1)"
        )
    if pending:
        formula = TrailingNot(formula, tuple(pending))
    if leading:
        formula = LeadingNot(tuple(leading), formula)
    return Query(formula, partition_by=query.partition, within=query.within)
