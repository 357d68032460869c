"""The size bound of compiled automata (``papers/compiler.md``, "Size").

``state_bound(φ)`` follows the constructions: an atom has 2 states; AS,
unary and bag FILTER, the projections and AGG add none; ``OR`` adds one
(the fresh initial state); ``;`` and ``:`` add none; ``+`` and ``:+`` add
one (``L``); a filter OR is a union of two filtered copies; ``AND`` is the
product.  So without AND and filter-OR the bound is at most ``2·|φ|``
(``|φ|`` = number of formula nodes), and trimming only lowers the count.

A counted repetition ``φ{n,m}`` (``compiler/counter.py``; smaller ones are expanded
before) adds one state like ``+``: its size does not depend on ``n`` or ``m``.

``φ1 ; NOT ψ1 ; … ; NOT ψn ; φ2`` adds no state either (the gap state is
φ2's initial state); the ψk become one automaton of at most
``Σ state_bound(ψk) + n - 1`` states held in the gap register
(:func:`negated_state_bound`), not states of the outer automaton.
"""

from __future__ import annotations

from functools import singledispatch

from acel.lang import ast as A
from acel.lang.passes import declare

# ------------------------------------------------------------------ |φ|


@singledispatch
def formula_size(formula: A.Formula) -> int:
    """``|φ|``: the number of formula nodes (atoms and operators; filters count 1;
    negated formulas count too)."""
    raise TypeError(f"not a formula: {formula!r}")


@formula_size.register(A.Atom)
@formula_size.register(A.Next)
def _size_leaf(formula: A.Atom | A.Next) -> int:
    return 1


@formula_size.register(A.Or)
@formula_size.register(A.And)
@formula_size.register(A.Seq)
@formula_size.register(A.Contig)
def _size_binary(formula: A.Infix) -> int:
    return 1 + formula_size(formula.left) + formula_size(formula.right)


@formula_size.register(A.SeqNot)
def _size_seq_not(formula: A.SeqNot) -> int:
    inner = sum(formula_size(psi) for psi in formula.excluded)
    return 1 + formula_size(formula.left) + inner + formula_size(formula.right)


@formula_size.register(A.As)
@formula_size.register(A.FilterF)
@formula_size.register(A.Plus)
@formula_size.register(A.ContigPlus)
@formula_size.register(A.ProjectVars)
@formula_size.register(A.ProjectAttrs)
@formula_size.register(A.Agg)
@formula_size.register(A.LeadingNot)
@formula_size.register(A.TrailingNot)
@formula_size.register(A.Repeat)
@formula_size.register(A.Opt)
def _size_unary(formula: A.As | A.FilterF | A.Postfix | A.ProjectVars | A.ProjectAttrs | A.Agg
                | A.LeadingNot | A.TrailingNot) -> int:
    return 1 + formula_size(formula.formula)


# ------------------------------------------------------------------ state bound


@singledispatch
def _filter_bound(filt: A.Filter, states: int) -> int:
    raise TypeError(f"not a filter: {filt!r}")


@_filter_bound.register(A.FilterAnd)
def _filter_bound_and(filt: A.FilterAnd, states: int) -> int:
    return _filter_bound(filt.right, _filter_bound(filt.left, states))


@_filter_bound.register(A.FilterOr)
def _filter_bound_or(filt: A.FilterOr, states: int) -> int:
    return _filter_bound(filt.left, states) + _filter_bound(filt.right, states) + 1


@_filter_bound.register(A.VarPred)
@_filter_bound.register(A.BagPred)
def _filter_bound_leaf(filt: A.VarPred | A.BagPred, states: int) -> int:
    return states


@singledispatch
def state_bound(formula: A.Formula) -> int:
    """An upper bound on the states of ``compile_formula(formula)`` (NEXT expanded)."""
    raise TypeError(f"expand NEXT first (and no leading/trailing negation): {formula!r}")


@state_bound.register(A.Next)
@state_bound.register(A.LeadingNot)
@state_bound.register(A.TrailingNot)
@state_bound.register(A.Opt)
def _bound_not_compiled(
    formula: A.Next | A.LeadingNot | A.TrailingNot | A.Opt,
) -> int:
    raise TypeError(
        f"expand NEXT and ψ?/ψ* first (and no leading/trailing negation): {formula!r}"
    )


@state_bound.register(A.Atom)
def _bound_atom(formula: A.Atom) -> int:
    return 2


@state_bound.register(A.As)
@state_bound.register(A.ProjectVars)
@state_bound.register(A.ProjectAttrs)
@state_bound.register(A.Agg)
def _bound_same(formula: A.As | A.ProjectVars | A.ProjectAttrs | A.Agg) -> int:
    return state_bound(formula.formula)


@state_bound.register(A.FilterF)
def _bound_filter(formula: A.FilterF) -> int:
    return _filter_bound(formula.filter, state_bound(formula.formula))


@state_bound.register(A.Or)
def _bound_or(formula: A.Or) -> int:
    return state_bound(formula.left) + state_bound(formula.right) + 1


@state_bound.register(A.Seq)
@state_bound.register(A.Contig)
@state_bound.register(A.SeqNot)
def _bound_sequence(formula: A.Seq | A.Contig | A.SeqNot) -> int:
    return state_bound(formula.left) + state_bound(formula.right)


@state_bound.register(A.Plus)
@state_bound.register(A.ContigPlus)
@state_bound.register(A.Repeat)
def _bound_iteration(formula: A.Postfix | A.Repeat) -> int:
    """``+`` adds ``L``; so does a counted ``φ{n,m}`` (the only repetitions ``expand``
    leaves: ``compiler/counter.py``), whatever its bounds."""
    return state_bound(formula.formula) + 1


@state_bound.register(A.And)
def _bound_and(formula: A.And) -> int:
    return state_bound(formula.left) * state_bound(formula.right)


def negated_state_bound(formula: A.SeqNot) -> int:
    """States of the automaton a gap register runs: the union of the ψk's."""
    return sum(state_bound(psi) for psi in formula.excluded) + len(formula.excluded) - 1


# ------------------------------------------------------------------ linearity


@singledispatch
def is_linear(formula: A.Formula) -> bool:
    """No AND and no filter OR: the fragment where ``state_bound ≤ 2·|φ|``."""
    raise TypeError(f"not a formula: {formula!r}")


# ---------------------------------------------------------- derived operators


@formula_size.register(A.Derived)
def _size_derived(formula: A.Derived) -> int:  # type: ignore[misc]  # Derived: a base of formula nodes
    return formula_size(formula.expand())  # what is compiled


@state_bound.register(A.Derived)
def _bound_derived(formula: A.Derived) -> int:  # type: ignore[misc]  # Derived: a base of formula nodes
    return state_bound(formula.expand())


@is_linear.register(A.Derived)
def _linear_derived(formula: A.Derived) -> bool:  # type: ignore[misc]  # Derived: a base of formula nodes
    return is_linear(formula.expand())


@is_linear.register(A.And)
def _linear_and(formula: A.And) -> bool:
    return False


@is_linear.register(A.FilterF)
def _linear_filter(formula: A.FilterF) -> bool:
    return not _has_filter_or(formula.filter) and is_linear(formula.formula)


@is_linear.register(A.Atom)
@is_linear.register(A.Next)
def _linear_leaf(formula: A.Atom | A.Next) -> bool:
    return True


@is_linear.register(A.Or)
@is_linear.register(A.Seq)
@is_linear.register(A.Contig)
def _linear_binary(formula: A.Or | A.Seq | A.Contig) -> bool:
    return is_linear(formula.left) and is_linear(formula.right)


@is_linear.register(A.SeqNot)
def _linear_seq_not(formula: A.SeqNot) -> bool:
    parts = (formula.left, *formula.excluded, formula.right)
    return all(is_linear(part) for part in parts)


@is_linear.register(A.As)
@is_linear.register(A.Plus)
@is_linear.register(A.ContigPlus)
@is_linear.register(A.ProjectVars)
@is_linear.register(A.ProjectAttrs)
@is_linear.register(A.Agg)
@is_linear.register(A.LeadingNot)
@is_linear.register(A.TrailingNot)
@is_linear.register(A.Repeat)
@is_linear.register(A.Opt)
def _linear_unary(formula: A.As | A.Postfix | A.ProjectVars | A.ProjectAttrs | A.Agg
                  | A.LeadingNot | A.TrailingNot | A.Repeat | A.Opt) -> bool:
    return is_linear(formula.formula)


@singledispatch
def _has_filter_or(filt: A.Filter) -> bool:
    raise TypeError(f"not a filter: {filt!r}")


@_has_filter_or.register(A.FilterOr)
def _has_filter_or_or(filt: A.FilterOr) -> bool:
    return True


@_has_filter_or.register(A.FilterAnd)
def _has_filter_or_and(filt: A.FilterAnd) -> bool:
    return _has_filter_or(filt.left) or _has_filter_or(filt.right)


@_has_filter_or.register(A.VarPred)
@_has_filter_or.register(A.BagPred)
def _has_filter_or_leaf(filt: A.VarPred | A.BagPred) -> bool:
    return False


declare("size.formula_size", "formula", formula_size)
declare("size.state_bound", "formula", state_bound)
declare("size.is_linear", "formula", is_linear)
declare("size.filter_bound", "filter", _filter_bound)
declare("size.has_filter_or", "filter", _has_filter_or)
