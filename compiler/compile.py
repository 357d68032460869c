"""``compile_formula`` and ``compile_query``: ACEL to ACEA (seed 004 Thm 6.2).

The formula is compiled bottom-up, one construction of
:mod:`acel.compiler.construct` per operator; NEXT is first expanded by its
macro (:func:`acel.lang.macros.expand_next`, spec §3) and idempotent forms
are normalised (:func:`acel.compiler.rewrite.normalise`: ``φ++ = φ+``, ``φ AND φ
= φ``, issue 24 §8–9).  The result is trimmed
(:func:`acel.acea.model.graph.trim`) and validated (:class:`acel.acea.model.ACEA`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch

import acel.compiler.construct as c
import acel.compiler.memo as memo
from acel.acea.model.automaton import ACEA
from acel.acea.model.graph import trim_parts
from acel.compiler.automaton import Auto
from acel.compiler.context import Context
from acel.compiler.counter import counted, repetition
from acel.compiler.notes import note_counter, note_relating
from acel.compiler.relate import aggregate_edges, filter_relating
from acel.compiler.rewrite import normalise

from acel.lang import ast as A
from acel.lang.chains import chain_operands
from acel.lang.errors import UnsupportedQuery
from acel.lang.macros import expand_next, expand_quantifiers
from acel.lang.passes import declare
from acel.lang.printer import format_formula
from acel.lang.relate import conjuncts, is_relating
from acel.lang.schema import Schema


def expand(formula: A.Formula, schema: Schema) -> A.Formula:
    """The formula with its quantifiers (spec §3.2) and NEXT (spec §3) expanded over the
    schema's types; the same object when it has neither (unchanged parts keep identity).

    Repetitions with many copies stay ``Repeat`` nodes: they are built as counters
    (:mod:`acel.compiler.counter`), whose size does not grow with the bounds."""
    return expand_next(expand_quantifiers(formula, keep=counted), schema.type_names())


_REUSED = (A.ProjectVars, A.FilterF, A.Plus, A.ContigPlus, A.Agg, A.ProjectAttrs)
"""Operators whose automata are built once per compilation and copied for their
repetitions (:mod:`acel.compiler.memo`): NEXT's macro, a quantifier's operand."""


def build(ctx: Context, formula: A.Formula) -> Auto:
    """The trimmed automaton of a formula (NEXT already expanded)."""
    kind = type(formula)
    case = _build.dispatch(kind)  # called here: one stack frame less per level
    if kind not in _REUSED:
        return trimmed(case(formula, ctx))
    saved = ctx.built.get(formula)
    if isinstance(saved, memo.Built):
        return memo.renumbered(ctx, saved)
    before = ctx.counter
    auto = trimmed(case(formula, ctx))
    ctx.built[formula] = memo.remember(ctx, auto, before)
    return auto


@singledispatch
def _build(formula: A.Formula, ctx: Context) -> Auto:
    """The automaton of one operator from its operands' (one construction of
    :mod:`acel.compiler.construct` per formula node)."""
    raise TypeError(f"not a formula: {formula!r}")


@_build.register(A.Atom)
def _build_atom(f: A.Atom, ctx: Context) -> Auto:
    return c.atom(ctx, f.type)


@_build.register(A.As)
def _build_as(f: A.As, ctx: Context) -> Auto:
    return c.as_var(ctx, build(ctx, f.formula), f.var)


@_build.register(A.FilterF)
def _build_filter(f: A.FilterF, ctx: Context) -> Auto:
    return apply_filter(ctx, build(ctx, f.formula), f.filter)


@_build.register(A.Or)
def _build_or(f: A.Or, ctx: Context) -> Auto:
    """A chain of ``OR`` (a quantifier's options) as one union: built, shifted and
    trimmed once, not once per option (issue 36: compile time under quantifiers)."""
    return c.union_all(ctx, [build(ctx, node) for node in chain_operands(f, A.Or)])


@_build.register(A.Derived)
def _build_derived(f: A.Derived, ctx: Context) -> Auto:  # type: ignore[misc]  # Derived: a base of formula nodes
    return build(ctx, f.expand())


@_build.register(A.And)
def _build_and(f: A.And, ctx: Context) -> Auto:
    return c.intersection(ctx, build(ctx, f.left), build(ctx, f.right))


@_build.register(A.Seq)
def _build_seq(f: A.Seq, ctx: Context) -> Auto:
    return c.sequence(ctx, build(ctx, f.left), build(ctx, f.right), skip=True)


@_build.register(A.Contig)
def _build_contig(f: A.Contig, ctx: Context) -> Auto:
    return c.sequence(ctx, build(ctx, f.left), build(ctx, f.right), skip=False)


@_build.register(A.Plus)
def _build_plus(f: A.Plus, ctx: Context) -> Auto:
    return c.iteration(ctx, build(ctx, f.formula), skip=True)


@_build.register(A.ContigPlus)
def _build_contig_plus(f: A.ContigPlus, ctx: Context) -> Auto:
    return c.iteration(ctx, build(ctx, f.formula), skip=False)


@_build.register(A.ProjectVars)
def _build_project_vars(f: A.ProjectVars, ctx: Context) -> Auto:
    return c.project_vars(ctx, build(ctx, f.formula), f.vars)


@_build.register(A.ProjectAttrs)
def _build_project_attrs(f: A.ProjectAttrs, ctx: Context) -> Auto:
    return c.project_attrs(ctx, build(ctx, f.formula), f.var, f.attrs)


@_build.register(A.Agg)
def _build_agg(f: A.Agg, ctx: Context) -> Auto:
    return aggregate_edges(ctx, build(ctx, f.formula), f)


@_build.register(A.SeqNot)
def _build_seq_not(f: A.SeqNot, ctx: Context) -> Auto:
    left = build(ctx, f.left)
    negated = c.negated_automaton(ctx, [build(ctx, psi) for psi in f.excluded])
    label = ", ".join(format_formula(psi) for psi in f.excluded)
    return c.sequence_not(ctx, left, negated, build(ctx, f.right), label)


@_build.register(A.LeadingNot)
@_build.register(A.TrailingNot)
def _build_top_not(f: A.LeadingNot | A.TrailingNot, ctx: Context) -> Auto:
    raise UnsupportedQuery(
        "leading and trailing negation (NOT ψ at the start or the end of the pattern) "
        "depend on the query's window and are not compiled into the automaton: every "
        "engine applies them around the automaton of the rest of the pattern "
        "(compile acel.lang.ast.top_negation(formula).body; spec §3.1)"
    )


@_build.register(A.Repeat)
def _build_repeat(f: A.Repeat, ctx: Context) -> Auto:
    operand = build(ctx, f.formula)
    auto = repetition(ctx, operand, f.low, f.high, skip=not f.contiguous)
    note_counter(ctx.words, operand, auto, f.formula)
    return auto


@_build.register(A.Next)
@_build.register(A.Opt)
def _build_next(f: A.Next | A.Opt, ctx: Context) -> Auto:
    raise c.CompileError("NEXT, ψ? and ψ* must be expanded before compiling (see expand)")


def apply_filter(ctx: Context, auto: Auto, filt: A.Filter) -> Auto:
    """``φ FILTER f`` with CEL's identities for AND (sequential) and OR (union)."""
    return _filtered(filt, ctx, auto)


@singledispatch
def _filtered(filt: A.Filter, ctx: Context, auto: Auto) -> Auto:
    raise TypeError(f"not a filter: {filt!r}")


@_filtered.register(A.VarPred)
def _filtered_var(filt: A.VarPred, ctx: Context, auto: Auto) -> Auto:
    if is_relating(filt.pred):  # spec §5.1: register constructions (compiler/relate.py)
        for part in conjuncts(filt.pred):  # one at a time, as filter_relating does, to gloss each
            before, auto = auto, filter_relating(ctx, auto, filt.var, part)
            note_relating(ctx.words, before, auto, filt.var, part)
        return auto
    return c.filter_unary(ctx, auto, filt.var, filt.pred)


@_filtered.register(A.BagPred)
def _filtered_bag(filt: A.BagPred, ctx: Context, auto: Auto) -> Auto:
    return c.filter_bag(ctx, auto, filt.var, filt.kind, filt.attr)


@_filtered.register(A.FilterAnd)
def _filtered_and(filt: A.FilterAnd, ctx: Context, auto: Auto) -> Auto:
    return _filtered(filt.right, ctx, _filtered(filt.left, ctx, auto))


@_filtered.register(A.FilterOr)
def _filtered_or(filt: A.FilterOr, ctx: Context, auto: Auto) -> Auto:
    """A chain of filter ``OR`` as one union, as :func:`_build_or` does for formulas: a
    chain of binary unions shifts the growing left side at every step (issue 37: 197
    options took 15 s, quadratic in their number)."""
    return c.union_all(ctx, [_filtered(option, ctx, auto) for option in chain_operands(filt, A.FilterOr)])


declare("compiler.formula", "formula", _build)
declare("compiler.filter", "filter", _filtered)


def trimmed(auto: Auto) -> Auto:
    """Only states reachable from q0 and co-reachable to F, renumbered."""
    return Auto(*trim_parts(auto.num_states, auto.initial, auto.finals, auto.transitions))


def compile_formula(formula: A.Formula, schema: Schema, events: int | None = None) -> ACEA:
    """An ACEA with ``⟦A⟧(S) = ⟦formula⟧(S)`` for every stream over ``schema``; with
    ``events`` (:func:`events_bound`), for the complex events that span at most that many
    events (the only ones a query with ``WITHIN events EVENTS`` keeps)."""
    ctx, auto = _built(formula, schema, events)
    return glossed(auto, ctx)


def _built(formula: A.Formula, schema: Schema, events: int | None) -> tuple[Context, Auto]:
    """The formula built, with its context.  Without the window first: the automaton is
    exact on every stream and unchanged by the window; a relating filter that needs the
    window's bound on its variables (``papers/compiler.md``) is built again with it."""
    body = normalise(expand(formula, schema))
    ctx = Context(schema)
    try:
        auto = build(ctx, body)
    except UnsupportedQuery:
        if events is None:
            raise
        ctx = Context(schema, events=events)
        auto = build(ctx, body)
    return ctx, auto


def events_bound(query: A.Query) -> int | None:
    """``n`` when the query keeps only complex events that span at most ``n`` events
    (``WITHIN n EVENTS``, spec §6: ``j − i < n``, so at most ``n`` steps of a run), and its
    strategy chooses among those (``SELECT ALL``); None otherwise."""
    window = query.within
    if window is None or window.attr is not None or query.select != "ALL":
        return None
    return int(window.size)


def glossed(auto: Auto, ctx: Context) -> ACEA:
    """The validated automaton, carrying the words noted for its own registers."""
    return ACEA(auto.num_states, auto.initial, auto.finals, auto.transitions, ctx.words)


@dataclass(frozen=True)
class CompiledQuery:
    """A query's automata: ``automaton`` also checks WITHIN on its last steps;
    ``formula_automaton`` is the bare formula (exact inside the window when a relating
    filter needed its bound, :func:`events_bound`).  PARTITION BY is not in the
    automaton: the stream is split (``acel.lang.clauses.split_partitions``) and
    ``automaton`` runs on each sub-stream.

    With leading or trailing negation (spec §3.1) the automata are those of
    the formula's body, and ``leading``/``trailing`` hold one automaton per
    negated formula (no WITHIN): the query driver (``acel.lang.clauses.run_query``)
    places their matches in each complex event's window.
    """

    automaton: ACEA
    formula_automaton: ACEA
    query: A.Query
    partition_by: tuple[str, ...]
    within: A.Window | None
    leading: tuple[ACEA, ...] = ()
    trailing: tuple[ACEA, ...] = ()


def compile_query(query: A.Query, schema: Schema) -> CompiledQuery:
    """Compile a query's formula and its WITHIN clause (spec §6, §3.1)."""
    top = A.top_negation(query.formula)
    ctx, auto = _built(top.body, schema, events_bound(query))
    formula_automaton = glossed(auto, ctx)
    if query.within is None:
        automaton = formula_automaton
    else:
        automaton = glossed(trimmed(c.within(ctx, auto, query.within)), ctx)
    return CompiledQuery(
        automaton,
        formula_automaton,
        query,
        query.partition_by,
        query.within,
        tuple(compile_formula(psi, schema) for psi in top.leading),
        tuple(compile_formula(psi, schema) for psi in top.trailing),
    )
