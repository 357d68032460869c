"""Idempotent forms normalised before compiling (issue 24 §8, §9).

``B+…+`` with twenty ``+`` means ``B+``, yet each ``+`` multiplies the
automaton; an ``AND`` of a formula with itself squares it.  Each rule below is
a small pure function ``rule(formula) -> formula`` that rewrites one node
(given its children already rewritten) or returns it unchanged; :func:`normalise`
applies the ordered tuple :data:`RULES` bottom-up (sqlglot's optimizer style).

Every rule is an identity of the bag semantics (seed 004 §3, spec §3) for any
operand ``S = ⟦φ⟧``, whatever AS, FILTER or AGG sit inside ``φ`` (the rules
only compare or drop whole sub-formulas):

* ``(φ+)+ = φ+``: a chain of chains of ``φ`` is a chain of ``φ`` (``;`` is
  associative on complex events, ``C1 ∪ C2`` being bag union).
* ``(φ:+):+ = φ:+``: the same for contiguous chains.
* ``(φ+):+ = φ+`` and ``(φ:+)+ = φ+``: ``end(C1) + 1 = start(C2)`` implies
  ``end(C1) < start(C2)``, so contiguous links are links of ``;``, and a chain
  of ``φ`` is a chain of one-element blocks.
* ``φ AND φ = φ`` and ``φ OR φ = φ``: intersection and union are idempotent.

Each is checked on the oracle by Hypothesis (``tests/test_compiler_rewrite.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from acel.lang.ast import And, ContigPlus, Formula, Or, Plus, transform

Rule = Callable[[Formula], Formula]


def plus_of_iteration(node: Formula) -> Formula:
    """``(φ+)+ → φ+`` and ``(φ:+)+ → φ+``."""
    if isinstance(node, Plus) and isinstance(node.formula, (Plus, ContigPlus)):
        return Plus(node.formula.formula)
    return node


def contig_plus_of_iteration(node: Formula) -> Formula:
    """``(φ:+):+ → φ:+`` and ``(φ+):+ → φ+``."""
    if isinstance(node, ContigPlus) and isinstance(node.formula, (Plus, ContigPlus)):
        return node.formula
    return node


def same_operands(node: Formula) -> Formula:
    """``φ AND φ → φ`` and ``φ OR φ → φ`` (structurally equal operands)."""
    if isinstance(node, (And, Or)) and node.left == node.right:
        return node.left
    return node


RULES: tuple[Rule, ...] = (plus_of_iteration, contig_plus_of_iteration, same_operands)
"""The rules, tried in this order on every node until none changes it."""


def _fixpoint(node: Formula) -> Formula:
    """``node`` after the rules, repeated while one applies (each shrinks the node)."""
    changed = True
    while changed:
        changed = False
        for rule in RULES:
            rewritten = rule(node)
            if rewritten is not node:
                node, changed = rewritten, True
    return node


def normalise(formula: Formula) -> Formula:
    """``formula`` with the idempotent forms of :data:`RULES` collapsed, bottom-up; the
    same object when no rule applies."""
    return transform(formula, _fixpoint)
