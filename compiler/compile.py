"""``compile_formula`` and ``compile_query``: ACEL to ACEA (seed 004 Thm 6.2).

The formula is compiled bottom-up, one construction of
:mod:`acel.compiler.construct` per operator; NEXT is first expanded by its
macro (:func:`acel.lang.macros.expand_next`, spec §3).  The result is trimmed
(:func:`acel.acea.model.graph.trim`) and validated (:class:`acel.acea.model.ACEA`).
"""

from __future__ import annotations

from dataclasses import dataclass

from acel.acea.model.automaton import ACEA
from acel.acea.model.graph import trim_parts
from acel.compiler import construct as c
from acel.compiler.automaton import Auto
from acel.compiler.context import Context

from acel.lang.ast import (
    Agg,
    And,
    As,
    Atom,
    BagPred,
    Contig,
    ContigPlus,
    Filter,
    FilterAnd,
    FilterF,
    FilterOr,
    Formula,
    LeadingNot,
    Next,
    Or,
    Plus,
    ProjectAttrs,
    ProjectVars,
    Query,
    Seq,
    SeqNot,
    TrailingNot,
    VarPred,
    Window,
    top_negation,
)
from acel.lang.errors import UnsupportedQuery
from acel.lang.macros import expand_next
from acel.lang.printer import format_formula
from acel.lang.schema import Schema


def expand(formula: Formula, schema: Schema) -> Formula:
    """The formula with NEXT expanded over the schema's types (spec §3); the same
    object when it has no NEXT (:func:`acel.lang.ast.transform` keeps unchanged parts)."""
    return expand_next(formula, schema.type_names())


def build(ctx: Context, formula: Formula) -> Auto:
    """The trimmed automaton of a formula (NEXT already expanded)."""
    return trimmed(_build(ctx, formula))


def _build(ctx: Context, formula: Formula) -> Auto:
    if isinstance(formula, Atom):
        return c.atom(ctx, formula.type)
    if isinstance(formula, As):
        return c.as_var(ctx, build(ctx, formula.formula), formula.var)
    if isinstance(formula, FilterF):
        return apply_filter(ctx, build(ctx, formula.formula), formula.filter)
    if isinstance(formula, Or):
        return c.union(ctx, build(ctx, formula.left), build(ctx, formula.right))
    if isinstance(formula, And):
        return c.intersection(ctx, build(ctx, formula.left), build(ctx, formula.right))
    if isinstance(formula, Seq):
        return c.sequence(ctx, build(ctx, formula.left), build(ctx, formula.right), skip=True)
    if isinstance(formula, Contig):
        return c.sequence(ctx, build(ctx, formula.left), build(ctx, formula.right), skip=False)
    if isinstance(formula, Plus):
        return c.iteration(ctx, build(ctx, formula.formula), skip=True)
    if isinstance(formula, ContigPlus):
        return c.iteration(ctx, build(ctx, formula.formula), skip=False)
    if isinstance(formula, ProjectVars):
        return c.project_vars(ctx, build(ctx, formula.formula), formula.vars)
    if isinstance(formula, ProjectAttrs):
        return c.project_attrs(ctx, build(ctx, formula.formula), formula.var, formula.attrs)
    if isinstance(formula, Agg):
        return c.aggregate(ctx, build(ctx, formula.formula), formula.var, formula.outputs)
    if isinstance(formula, SeqNot):
        left = build(ctx, formula.left)
        negated = c.negated_automaton(ctx, [build(ctx, psi) for psi in formula.excluded])
        label = ", ".join(format_formula(psi) for psi in formula.excluded)
        return c.sequence_not(ctx, left, negated, build(ctx, formula.right), label)
    if isinstance(formula, (LeadingNot, TrailingNot)):
        raise UnsupportedQuery(
            "leading and trailing negation (NOT ψ at the start or the end of the pattern) "
            "depend on the query's window and are not compiled into the automaton: every "
            "engine applies them around the automaton of the rest of the pattern "
            "(compile acel.lang.ast.top_negation(formula).body; spec §3.1)"
        )
    if isinstance(formula, Next):
        raise c.CompileError("NEXT must be expanded before compiling (see expand)")
    raise TypeError(f"not a formula: {formula!r}")


def apply_filter(ctx: Context, auto: Auto, filt: Filter) -> Auto:
    """``φ FILTER f`` with CEL's identities for AND (sequential) and OR (union)."""
    if isinstance(filt, VarPred):
        return c.filter_unary(ctx, auto, filt.var, filt.pred)
    if isinstance(filt, BagPred):
        return c.filter_bag(ctx, auto, filt.var, filt.kind, filt.attr)
    if isinstance(filt, FilterAnd):
        return apply_filter(ctx, apply_filter(ctx, auto, filt.left), filt.right)
    if isinstance(filt, FilterOr):
        return c.union(ctx, apply_filter(ctx, auto, filt.left), apply_filter(ctx, auto, filt.right))
    raise TypeError(f"not a filter: {filt!r}")


def trimmed(auto: Auto) -> Auto:
    """Only states reachable from q0 and co-reachable to F, renumbered."""
    return Auto(*trim_parts(auto.num_states, auto.initial, auto.finals, auto.transitions))


def compile_formula(formula: Formula, schema: Schema) -> ACEA:
    """An ACEA with ``⟦A⟧(S) = ⟦formula⟧(S)`` for every stream over ``schema``."""
    ctx = Context(schema)
    auto = build(ctx, expand(formula, schema))
    return auto.to_acea()


@dataclass(frozen=True)
class CompiledQuery:
    """A query's automata: ``automaton`` also checks WITHIN on its last steps;
    ``formula_automaton`` is the bare formula.  PARTITION BY is not in the
    automaton: the stream is split (``acel.lang.clauses.split_partitions``) and
    ``automaton`` runs on each sub-stream.

    With leading or trailing negation (spec §3.1) the automata are those of
    the formula's body, and ``leading``/``trailing`` hold one automaton per
    negated formula (no WITHIN): the query driver (``acel.lang.clauses.run_query``)
    places their matches in each complex event's window.
    """

    automaton: ACEA
    formula_automaton: ACEA
    query: Query
    partition_by: tuple[str, ...]
    within: Window | None
    leading: tuple[ACEA, ...] = ()
    trailing: tuple[ACEA, ...] = ()


def compile_query(query: Query, schema: Schema) -> CompiledQuery:
    """Compile a query's formula and its WITHIN clause (spec §6, §3.1)."""
    top = top_negation(query.formula)
    ctx = Context(schema)
    auto = build(ctx, expand(top.body, schema))
    formula_automaton = auto.to_acea()
    if query.within is None:
        automaton = formula_automaton
    else:
        automaton = trimmed(c.within(ctx, auto, query.within)).to_acea()
    return CompiledQuery(
        automaton,
        formula_automaton,
        query,
        query.partition_by,
        query.within,
        tuple(compile_formula(psi, schema) for psi in top.leading),
        tuple(compile_formula(psi, schema) for psi in top.trailing),
    )
