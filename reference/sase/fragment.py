"""The ACEL formulas the two-step SASE+ baseline runs, split into NFA^b components.

A formula of the fragment is, after the quantifier macros (spec §3.2) and after
``OR`` is distributed into alternatives (``;``, ``:``, ``AS``, ``FILTER`` and the
wrappers below distribute over a union), a sequence of components ``T``, ``T AS v``,
``(T AS v)+``, ``T+ AS v`` or ``(T AS v):+``, joined by ``;`` or ``:``, with one level of
GRETA's nested Kleene ``(c1 ; ... ; cn)+``, under wrappers applied to each match
(``FILTER``, ``PROJECT[...]``, ``PROJECT X[...]``, ``AGG``).  It is the image of
SASE+'s skip-till-any-match fragment (seed 004 Appendix D, read backwards) plus SASE+'s
contiguity (seed 002 §2: strict / partition contiguity, here per connector) and its
aggregates over the Kleene events of a match (``AGG``).  Anything else raises
:class:`NotInFragment` before any data is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from acel.lang.ast import (
    Agg,
    As,
    Atom,
    Contig,
    ContigPlus,
    Filter,
    FilterF,
    Formula,
    Or,
    Plus,
    ProjectAttrs,
    ProjectVars,
    Seq,
)
from acel.lang.errors import UnsupportedQuery
from acel.lang.macros import expand_quantifiers

MAX_ALTERNATIVES = 64
"""At most this many ``OR`` alternatives (one NFA^b each) per query."""


class NotInFragment(UnsupportedQuery):
    """The ACEL query lies outside the SASE+ fragment the two-step baseline runs."""


@dataclass(frozen=True)
class FragmentComponent:
    """``T``, ``T AS v``, ``(T AS v)+`` (``var`` is ``None`` without AS).

    ``adjacent``: the component follows its predecessor by ``:`` (its first event is
    the next event of the sub-stream); ``contiguous``: a Kleene component written
    ``:+`` (each event of it follows the previous one directly).
    """

    type: str
    var: str | None
    kleene: bool
    adjacent: bool = False
    contiguous: bool = False

    def targets(self) -> tuple[str, ...]:
        """The variables each event of this component lands in (type first)."""
        if self.var is None or self.var == self.type:
            return (self.type,)
        return (self.type, self.var)


Wrapper = Union[Filter, tuple[str, ...], ProjectAttrs, Agg]
"""A filter, the variable list of a ``PROJECT[...]``, or a ``PROJECT X[...]`` / ``AGG``
node (its operand unused) applied to each match."""


@dataclass(frozen=True)
class Fragment:
    """A formula of the fragment: components and wrappers, innermost first."""

    components: tuple[FragmentComponent, ...]
    wrappers: tuple[Wrapper, ...]
    groups: tuple[tuple[int, int], ...] = ()
    """Kleene groups ``(c_s ; ... ; c_e)+`` as ``(s, e)`` component indices."""

    def in_group(self, c: int) -> bool:
        return any(s <= c <= e for s, e in self.groups)


_CONSTRUCTS = {
    "And": "AND",
    "ContigPlus": "':+' (contiguous iteration) over more than one event type",
    "Next": "NEXT",
    "SeqNot": "NOT (negation)",
    "LeadingNot": "NOT (negation)",
    "TrailingNot": "NOT (negation)",
    "ProjectAttrs": "a PROJECT X[...] inside the sequence",
    "ProjectVars": "a PROJECT inside the sequence",
    "FilterF": "a FILTER inside the sequence",
    "Agg": "an AGG inside the sequence",
    "Plus": "this iteration (nested deeper than (c1 ; ... ; cn)+, or over OR)",
    "As": "this AS (over more than one event)",
}


def _outside(formula: Formula) -> NotInFragment:
    what = _CONSTRUCTS.get(type(formula).__name__, type(formula).__name__)
    return NotInFragment(
        f"{what} has no SASE+ counterpart: the two-step baseline runs sequences (; or :) "
        "of T, T AS v, (T AS v)+, (T AS v):+ and groups (c1 ; ... ; cn)+, with OR between "
        "whole alternatives, under FILTER, PROJECT and AGG (--engine oracle runs it)"
    )


def _component(formula: Formula, adjacent: bool) -> FragmentComponent:
    if isinstance(formula, Atom):
        return FragmentComponent(formula.type, None, False, adjacent)
    if isinstance(formula, As) and isinstance(formula.formula, Atom):
        return FragmentComponent(formula.formula.type, formula.var, False, adjacent)
    if isinstance(formula, (Plus, ContigPlus)):
        contiguous = isinstance(formula, ContigPlus)
        inner = formula.formula
        if isinstance(inner, Atom):
            return FragmentComponent(inner.type, None, True, adjacent, contiguous)
        if isinstance(inner, As) and isinstance(inner.formula, Atom):
            return FragmentComponent(inner.formula.type, inner.var, True, adjacent, contiguous)
    if isinstance(formula, As) and isinstance(formula.formula, (Plus, ContigPlus)):
        # (T+) AS v gives v the same bag as (T AS v)+
        if isinstance(formula.formula.formula, Atom):
            contiguous = isinstance(formula.formula, ContigPlus)
            return FragmentComponent(
                formula.formula.formula.type, formula.var, True, adjacent, contiguous
            )
    raise _outside(formula)


def _flatten(formula: Formula, adjacent: bool = False) -> list[tuple[Formula, bool]]:
    """The elements of a ``;``/``:`` chain, each with whether ``:`` joins it to the previous."""
    if isinstance(formula, (Seq, Contig)):
        return _flatten(formula.left, adjacent) + _flatten(
            formula.right, isinstance(formula, Contig)
        )
    return [(formula, adjacent)]


def _is_group(formula: Formula) -> bool:
    return isinstance(formula, Plus) and isinstance(formula.formula, Seq)


# ------------------------------------------------------------------ OR

def _rebuild(node: Formula, kids: list[Formula]) -> Formula:
    if isinstance(node, (Seq, Contig)):
        return type(node)(kids[0], kids[1])
    if isinstance(node, As):
        return As(kids[0], node.var)
    if isinstance(node, FilterF):
        return FilterF(kids[0], node.filter)
    if isinstance(node, ProjectVars):
        return ProjectVars(node.vars, kids[0])
    if isinstance(node, ProjectAttrs):
        return ProjectAttrs(node.var, node.attrs, kids[0])
    assert isinstance(node, Agg)
    return Agg(node.var, node.outputs, kids[0])


def alternatives(formula: Formula) -> list[Formula]:
    """``formula`` as a union of ``OR``-free formulas (``;``, ``:``, ``AS``, ``FILTER``,
    ``PROJECT`` and ``AGG`` distribute over ``OR``: each acts on one complex event)."""
    if isinstance(formula, Or):
        found = alternatives(formula.left) + alternatives(formula.right)
    elif isinstance(formula, (Seq, Contig)):
        found = [
            _rebuild(formula, [left, right])
            for left in alternatives(formula.left)
            for right in alternatives(formula.right)
        ]
    elif isinstance(formula, (As, FilterF, ProjectVars, ProjectAttrs, Agg)):
        found = [_rebuild(formula, [kid]) for kid in alternatives(formula.formula)]
    else:
        return [formula]
    if len(found) > MAX_ALTERNATIVES:
        raise NotInFragment(
            f"the two-step baseline runs at most {MAX_ALTERNATIVES} alternatives of OR "
            "(one NFA^b each): --engine oracle or optimized runs this query"
        )
    return found


# ------------------------------------------------------------------ split

def fragment_of(formula: Formula) -> Fragment:
    """Split an ``OR``-free formula into components, groups and wrappers, or raise
    :class:`NotInFragment`.

    Besides SASE+'s flat sequences, one level of GRETA's nested Kleene is
    accepted: ``(c1 ; ... ; cn)+`` with components inside.
    """
    wrappers: list[Wrapper] = []
    while True:
        if isinstance(formula, FilterF):
            wrappers.append(formula.filter)
        elif isinstance(formula, ProjectVars):
            wrappers.append(tuple(formula.vars))
        elif isinstance(formula, (ProjectAttrs, Agg)):
            wrappers.append(formula)
        else:
            break
        formula = formula.formula
    components: list[FragmentComponent] = []
    groups: list[tuple[int, int]] = []
    for part, adjacent in _flatten(formula):
        if _is_group(part):
            assert isinstance(part, Plus)
            first = len(components)
            for inner, joined in _flatten(part.formula):
                if joined:
                    raise _outside(Contig(inner, inner))
                components.append(_component(inner, False))
            if adjacent:
                raise NotInFragment(
                    "':' before a group (c1 ; ... ; cn)+ has no SASE+ counterpart in the "
                    "two-step baseline (--engine oracle runs it)"
                )
            groups.append((first, len(components) - 1))
        else:
            components.append(_component(part, adjacent))
    return Fragment(tuple(components), tuple(reversed(wrappers)), tuple(groups))


def fragments_of(formula: Formula) -> list[Fragment]:
    """Every alternative of ``formula`` (quantifiers expanded) as a :class:`Fragment`;
    :class:`NotInFragment` when one lies outside."""
    return [fragment_of(f) for f in alternatives(expand_quantifiers(formula))]
