"""Immutable syntax of SASE+ pattern queries (seed 002 §2, spec §8).

Predicates reuse ACEL's predicate trees (``acel.lang.ast.Pred``) so that one
definition of truth (``acel.lang.predicates``) serves both languages: an operand
that names an event of the match is an ``Attr`` whose name is the reference as
written canonically (``b[i-1].price``, ``avg(a[..i-1].price)``), and
``SaseQuery.refs`` decodes each such name into a :class:`Ref` or
:class:`AggRef`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from acel.reference.sase.nfa import Strategy

from acel.lang.ast import Pred, Window

Index = Literal["single", "i", "i-1", "1", "len"]
"""``a.x`` (single), ``b[i].x``, ``b[i-1].x``, ``b[1].x``, ``b[b.len].x``."""

Range = Literal["prev", "all"]
"""``b[..i-1]`` (the events selected before ``b[i]``) or ``b[]`` (all of them)."""


@dataclass(frozen=True)
class Component:
    """``T v`` (single), ``T+ v[]`` (Kleene plus) or ``!(T v)`` (negation)."""

    type: str
    var: str
    kleene: bool = False
    negated: bool = False


@dataclass(frozen=True)
class Ref:
    """An attribute of one event of the match: ``var``'s event at ``index``."""

    var: str
    index: Index
    attr: str

    def name(self) -> str:
        if self.index == "single":
            return f"{self.var}.{self.attr}"
        idx = f"{self.var}.len" if self.index == "len" else self.index
        return f"{self.var}[{idx}].{self.attr}"


@dataclass(frozen=True)
class AggRef:
    """``func(v[..i-1].attr)`` or ``func(v[].attr)``; ``attr`` is ``None`` for ``count(v[])``."""

    func: str
    var: str
    range: Range
    attr: str | None

    def name(self) -> str:
        inner = f"{self.var}[..i-1]" if self.range == "prev" else f"{self.var}[]"
        if self.attr is not None:
            inner += f".{self.attr}"
        return f"{self.func.upper()}({inner})"


Reference = Union[Ref, AggRef]


@dataclass(frozen=True)
class SaseQuery:
    """``PATTERN SEQ(...) WHERE strategy(...) { ... } WITHIN w RETURN ...``.

    ``partition`` holds the attributes of the equivalence tests ``[a, b]``;
    ``where`` the other top-level conjuncts; ``returns`` is ``None`` when the
    query has no RETURN clause (it then outputs its matches).
    """

    components: tuple[Component, ...]
    strategy: Strategy = "skip_till_any_match"
    partition: tuple[str, ...] = ()
    where: tuple[Pred, ...] = ()
    refs: tuple[tuple[str, Reference], ...] = ()
    within: Window | None = None
    returns: tuple[Reference, ...] | None = None

    def reference(self, name: str) -> Reference:
        """Decode an ``Attr`` name of a predicate into its reference."""
        for key, ref in self.refs:
            if key == name:
                return ref
        raise KeyError(name)

    def component(self, var: str) -> Component:
        for comp in self.components:
            if comp.var == var:
                return comp
        raise KeyError(var)
