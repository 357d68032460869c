"""The size bound of compiled automata (``papers/compiler.md``, "Size").

``state_bound(φ)`` follows the constructions: an atom has 2 states; AS,
unary and bag FILTER, the projections and AGG add none; ``OR`` adds one
(the fresh initial state); ``;`` and ``:`` add none; ``+`` and ``:+`` add
one (``L``); a filter OR is a union of two filtered copies; ``AND`` is the
product.  So without AND and filter-OR the bound is at most ``2·|φ|``
(``|φ|`` = number of formula nodes), and trimming only lowers the count.

``φ1 ; NOT ψ1 ; … ; NOT ψn ; φ2`` adds no state either (the gap state is
φ2's initial state); the ψk become one automaton of at most
``Σ state_bound(ψk) + n - 1`` states held in the gap register
(:func:`negated_state_bound`), not states of the outer automaton.
"""

from __future__ import annotations

from acel.lang.ast import (
    Agg,
    And,
    As,
    Atom,
    Contig,
    ContigPlus,
    Filter,
    FilterAnd,
    FilterF,
    FilterOr,
    Formula,
    Next,
    Or,
    Plus,
    ProjectAttrs,
    ProjectVars,
    Seq,
    SeqNot,
)


def formula_size(formula: Formula) -> int:
    """``|φ|``: the number of formula nodes (atoms and operators; filters count 1;
    negated formulas count too)."""
    if isinstance(formula, (Atom, Next)):
        return 1
    if isinstance(formula, (Or, And, Seq, Contig)):
        return 1 + formula_size(formula.left) + formula_size(formula.right)
    if isinstance(formula, SeqNot):
        inner = sum(formula_size(psi) for psi in formula.excluded)
        return 1 + formula_size(formula.left) + inner + formula_size(formula.right)
    return 1 + formula_size(formula.formula)


def _filter_bound(filt: Filter, states: int) -> int:
    if isinstance(filt, FilterAnd):
        return _filter_bound(filt.right, _filter_bound(filt.left, states))
    if isinstance(filt, FilterOr):
        return _filter_bound(filt.left, states) + _filter_bound(filt.right, states) + 1
    return states


def state_bound(formula: Formula) -> int:
    """An upper bound on the states of ``compile_formula(formula)`` (NEXT expanded)."""
    if isinstance(formula, Atom):
        return 2
    if isinstance(formula, (As, ProjectVars, ProjectAttrs, Agg)):
        return state_bound(formula.formula)
    if isinstance(formula, FilterF):
        return _filter_bound(formula.filter, state_bound(formula.formula))
    if isinstance(formula, Or):
        return state_bound(formula.left) + state_bound(formula.right) + 1
    if isinstance(formula, (Seq, Contig, SeqNot)):
        return state_bound(formula.left) + state_bound(formula.right)
    if isinstance(formula, (Plus, ContigPlus)):
        return state_bound(formula.formula) + 1
    if isinstance(formula, And):
        return state_bound(formula.left) * state_bound(formula.right)
    raise TypeError(f"expand NEXT first (and no leading/trailing negation): {formula!r}")


def negated_state_bound(formula: SeqNot) -> int:
    """States of the automaton a gap register runs: the union of the ψk's."""
    return sum(state_bound(psi) for psi in formula.excluded) + len(formula.excluded) - 1


def is_linear(formula: Formula) -> bool:
    """No AND and no filter OR: the fragment where ``state_bound ≤ 2·|φ|``."""
    if isinstance(formula, And):
        return False
    if isinstance(formula, FilterF) and _has_filter_or(formula.filter):
        return False
    if isinstance(formula, (Atom, Next)):
        return True
    if isinstance(formula, (Or, Seq, Contig)):
        return is_linear(formula.left) and is_linear(formula.right)
    if isinstance(formula, SeqNot):
        parts = (formula.left, *formula.excluded, formula.right)
        return all(is_linear(part) for part in parts)
    return is_linear(formula.formula)


def _has_filter_or(filt: Filter) -> bool:
    if isinstance(filt, FilterOr):
        return True
    if isinstance(filt, FilterAnd):
        return _has_filter_or(filt.left) or _has_filter_or(filt.right)
    return False
