"""Immutable abstract syntax of ACEL (spec §3, §5, §6): formulas, clauses and queries,
and the walks over formulas; the terms below formulas (expressions, predicates,
filters) are defined in :mod:`acel.lang.ast_terms` and re-exported here.

Binary operators are binary nodes (the parser builds them left-associative),
so that ``parse(print(ast)) == ast`` holds without any normalisation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar, Literal, Union, get_args

from acel.lang.ast_terms import (
    RELATING_TYPES,
    ArithOp,
    Attr,
    BagAgg,
    BagKind,
    BagPred,
    BinOp,
    CmpOp,
    Compare,
    EdgeKind,
    Expr,
    Filter,
    FilterAnd,
    FilterOr,
    FirstLast,
    InList,
    Lit,
    Neg,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
    Prev,
    Relating,
    Running,
    VarAttr,
    VarPred,
    neg,
)
from acel.lang.events import Value as Value

# ------------------------------------------------------------------- formulas
#
# Each formula node declares once what it is (papers/language.md, "Adding an
# operator"): ``operator``, its name in :data:`acel.lang.operators.OPERATORS`
# (None for an atom, which every engine supports); ``syntax``, what that name stands
# for there (OPERATORS is read from these two); ``symbol``, the keyword or
# symbol the printer writes; ``level``, its precedence in the grammar
# (:class:`Level`).  The printer and ``operators_of`` read these instead of
# keeping tables of their own.


class Level(IntEnum):
    """Precedence levels of formulas, loosest first (spec §11): an operand printed
    where a tighter level is needed gets parentheses."""

    FILTER = 0
    OR = 1
    AND = 2
    SEQUENCE = 3
    POSTFIX = 4
    PRIMARY = 5


class Derived:
    """A formula operator defined as a formula of the others (:meth:`expand`): the
    checker, the oracle, the compiler and the size bounds read its expansion, so it
    needs a case in none of them (papers/language.md, "Adding an operator").  A derived
    operator also subclasses :class:`Infix` or :class:`Postfix` (then the printer too
    needs nothing), and keeps its own node: it prints, and ``operators_of`` names it."""

    def expand(self) -> Formula:
        """The formula of existing operators this node means."""
        raise NotImplementedError


@dataclass(frozen=True)
class Infix:
    """A binary formula operator written ``φ1 symbol φ2``, left-associative: the left
    operand is printed at ``level``, the right one a level tighter.  A new binary
    operator subclasses it and declares the three ClassVars."""

    left: Formula
    right: Formula

    operator: ClassVar[str | None]
    syntax: ClassVar[str]
    symbol: ClassVar[str]
    level: ClassVar[Level]


@dataclass(frozen=True)
class Postfix:
    """A unary formula operator written ``φ symbol`` (``φ+``, ``φ:+``)."""

    formula: Formula

    operator: ClassVar[str | None]
    syntax: ClassVar[str]
    symbol: ClassVar[str]
    level: ClassVar[Level] = Level.POSTFIX


@dataclass(frozen=True)
class Atom:
    """An event type ``R``: the single events of that type."""

    type: str

    operator: ClassVar[str | None] = None
    symbol: ClassVar[str] = ""
    level: ClassVar[Level] = Level.PRIMARY


@dataclass(frozen=True)
class As:
    """``φ AS X``."""

    formula: Formula
    var: str

    operator: ClassVar[str | None] = "AS"
    syntax: ClassVar[str] = "φ AS X"
    symbol: ClassVar[str] = "AS"
    level: ClassVar[Level] = Level.POSTFIX


@dataclass(frozen=True)
class FilterF:
    """``φ FILTER filter``."""

    formula: Formula
    filter: Filter

    operator: ClassVar[str | None] = "FILTER"
    syntax: ClassVar[str] = "φ FILTER X[P] (unary predicates: comparisons, arithmetic, IN, NOT, AND, OR)"
    symbol: ClassVar[str] = "FILTER"
    level: ClassVar[Level] = Level.FILTER


@dataclass(frozen=True)
class Or(Infix):
    """``φ1 OR φ2``: the union of both sets."""

    operator = "OR"
    syntax = "φ1 OR φ2"
    symbol = "OR"
    level = Level.OR


@dataclass(frozen=True)
class And(Infix):
    """``φ1 AND φ2``: the complex events of both."""

    operator = "AND"
    syntax = "φ1 AND φ2"
    symbol = "AND"
    level = Level.AND


@dataclass(frozen=True)
class Seq(Infix):
    """``φ1 ; φ2``: ``end(C1) < start(C2)``."""

    operator = "SEQ"
    syntax = "φ1 ; φ2"
    symbol = ";"
    level = Level.SEQUENCE


@dataclass(frozen=True)
class Contig(Infix):
    """``φ1 : φ2``: ``end(C1) + 1 = start(C2)``."""

    operator = "CONTIG"
    syntax = "φ1 : φ2"
    symbol = ":"
    level = Level.SEQUENCE


@dataclass(frozen=True)
class Plus(Postfix):
    """``φ+``: iteration with ``;``."""

    operator = "PLUS"
    syntax = "φ+"
    symbol = "+"


@dataclass(frozen=True)
class ContigPlus(Postfix):
    """``φ:+``: iteration with ``:`` (the paper's ⊕)."""

    operator = "CONTIG_PLUS"
    syntax = "φ:+"
    symbol = ":+"


@dataclass(frozen=True)
class ProjectVars:
    """``PROJECT[X1, ..., Xn](φ)``; the list may be empty."""

    vars: tuple[str, ...]
    formula: Formula

    operator: ClassVar[str | None] = "PROJECT"
    syntax: ClassVar[str] = "PROJECT[X, …](φ)"
    symbol: ClassVar[str] = "PROJECT"
    level: ClassVar[Level] = Level.PRIMARY


@dataclass(frozen=True)
class ProjectAttrs:
    """``PROJECT X[a1, ..., an](φ)``: events of X keep only these attributes."""

    var: str
    attrs: tuple[str, ...]
    formula: Formula

    operator: ClassVar[str | None] = "PROJECT_ATTRS"
    syntax: ClassVar[str] = "PROJECT X[a, …](φ)"
    symbol: ClassVar[str] = "PROJECT"
    level: ClassVar[Level] = Level.PRIMARY


@dataclass(frozen=True)
class AggOutput:
    """``name := FUNC(var.attr)``; ``attr`` is ``None`` for ``COUNT(X)``."""

    name: str
    func: str
    var: str
    attr: str | None


@dataclass(frozen=True)
class Agg:
    """``AGG Z[b1 := F1(X1.a1), ...](φ)``."""

    var: str
    outputs: tuple[AggOutput, ...]
    formula: Formula

    operator: ClassVar[str | None] = "AGG"
    syntax: ClassVar[str] = "AGG Z[b := F(X.a), …](φ)"
    symbol: ClassVar[str] = "AGG"
    level: ClassVar[Level] = Level.PRIMARY


@dataclass(frozen=True)
class Next:
    """``NEXT(R)``: the first ``R`` after a contiguous run of non-``R`` events."""

    type: str

    operator: ClassVar[str | None] = "NEXT"
    syntax: ClassVar[str] = "NEXT(R)"
    symbol: ClassVar[str] = "NEXT"
    level: ClassVar[Level] = Level.PRIMARY


TOP_NOT_SYNTAX = "NOT ψ ; φ and φ ; NOT ψ (leading and trailing negation)"
"""What ``TOP_NOT`` stands for (:class:`LeadingNot` and :class:`TrailingNot` share it)."""


def _needs_excluded(excluded: tuple[Formula, ...], node: str) -> None:
    if not excluded:
        raise ValueError(f"{node} needs at least one negated formula")


@dataclass(frozen=True)
class SeqNot:
    """``φ1 ; NOT ψ1 ; … ; NOT ψn ; φ2`` (spec §3.1, middle negation).

    ``φ1 ; φ2`` keeping only the pairs whose gap holds no complex event of any
    ``ψk``: no ``N`` with ``end(C1) < start(N)`` and ``end(N) < start(C2)``.
    Several NOTs in a row guard the same gap.  The variables of the ``ψk``
    are local to them (never output, not visible outside).
    """

    left: Formula
    excluded: tuple[Formula, ...]
    right: Formula

    operator: ClassVar[str | None] = "NOT"
    syntax: ClassVar[str] = "φ1 ; NOT ψ ; φ2 (middle negation)"
    symbol: ClassVar[str] = "NOT"
    level: ClassVar[Level] = Level.SEQUENCE

    def __post_init__(self) -> None:
        _needs_excluded(self.excluded, "SeqNot")


@dataclass(frozen=True)
class LeadingNot:
    """``NOT ψ1 ; … ; NOT ψn ; φ`` (spec §3.1, leading negation).

    Keeps a complex event ``C`` of ``φ`` only if no ``ψk`` matches before it
    inside ``C``'s window.  Allowed only at the top of a query's formula (under
    its FILTERs) in a query with WITHIN: the window is the query's.
    """

    excluded: tuple[Formula, ...]
    formula: Formula

    operator: ClassVar[str | None] = "TOP_NOT"
    syntax: ClassVar[str] = TOP_NOT_SYNTAX
    symbol: ClassVar[str] = "NOT"
    level: ClassVar[Level] = Level.SEQUENCE

    def __post_init__(self) -> None:
        _needs_excluded(self.excluded, "LeadingNot")


@dataclass(frozen=True)
class TrailingNot:
    """``φ ; NOT ψ1 ; … ; NOT ψn`` (spec §3.1, trailing negation).

    Keeps ``C`` only if no ``ψk`` matches after it inside ``C``'s window; same
    placement rules as :class:`LeadingNot`.  With both, ``LeadingNot`` is the
    outer node (the canonical shape the parser builds).
    """

    formula: Formula
    excluded: tuple[Formula, ...]

    operator: ClassVar[str | None] = "TOP_NOT"
    syntax: ClassVar[str] = TOP_NOT_SYNTAX
    symbol: ClassVar[str] = "NOT"
    level: ClassVar[Level] = Level.SEQUENCE

    def __post_init__(self) -> None:
        _needs_excluded(self.excluded, "TrailingNot")


@dataclass(frozen=True)
class Repeat:
    """``φ{n}``, ``φ{n,m}``, ``φ{n,}`` and their ``:`` forms (spec §3.2).

    ``high`` is ``None`` for ``φ{n,}``; ``φ{n}`` is ``low == high``.  Sugar: every
    evaluator runs :func:`acel.lang.macros.expand_quantifiers` of it.
    """

    formula: Formula
    low: int
    high: int | None
    contiguous: bool = False

    operator: ClassVar[str | None] = "REPEAT"
    syntax: ClassVar[str] = "φ{n}, φ{n,m}, φ{n,} and φ:{n}, φ:{n,m}, φ:{n,} (counted repetition)"
    symbol: ClassVar[str] = "{}"
    level: ClassVar[Level] = Level.POSTFIX

    def __post_init__(self) -> None:
        if self.low < 1 or (self.high is not None and self.high < self.low):
            raise ValueError(f"a repetition needs 1 <= n <= m, not {{{self.low},{self.high}}}")


@dataclass(frozen=True)
class Opt:
    """``ψ?`` (``star``: ``ψ*``, that is ``ψ+?``) as an element of a sequence (spec §3.2).

    Only meaningful as an element of ``;``/``:`` chains (``Seq``, ``Contig``,
    ``SeqNot``); :func:`acel.lang.macros.expand_quantifiers` turns the chain into
    the ``OR`` of the sequences with and without the element.
    """

    formula: Formula
    star: bool = False

    operator: ClassVar[str | None] = "OPTIONAL"
    syntax: ClassVar[str] = "ψ? and ψ* as elements of a ; or : sequence"
    symbol: ClassVar[str] = "?"
    level: ClassVar[Level] = Level.POSTFIX


Formula = Union[
    Atom,
    As,
    FilterF,
    Or,
    And,
    Seq,
    Contig,
    Plus,
    ContigPlus,
    ProjectVars,
    ProjectAttrs,
    Agg,
    Next,
    SeqNot,
    LeadingNot,
    TrailingNot,
    Repeat,
    Opt,
]

# -------------------------------------------------------------------- queries


@dataclass(frozen=True)
class Window:
    """``n EVENTS`` (``attr is None``) or ``d ON attr``."""

    size: int | float
    attr: str | None = None


@dataclass(frozen=True)
class CountStar:
    """``COUNT(*)``: the number of complex events."""


@dataclass(frozen=True)
class ReturnAgg:
    """``F(X.a)`` or ``COUNT(X)`` over the bag sum of ``μ(X)`` of all matches."""

    func: str
    var: str
    attr: str | None


@dataclass(frozen=True)
class ReturnAttr:
    """A partition attribute in the RETURN list."""

    name: str


ReturnItem = Union[CountStar, ReturnAgg, ReturnAttr]


SELECT_STRATEGIES: tuple[str, ...] = ("ALL", "STRICT", "NEXT", "LAST", "MAX")
"""The selection strategies of spec §6.2 (``ALL``, the default, keeps everything)."""

SkipKind = Literal["TO_NEXT_ROW", "PAST_LAST_ROW", "TO_FIRST", "TO_LAST"]
"""The four after-match skips: ``AFTER MATCH SKIP TO NEXT ROW``, ``PAST LAST ROW``,
``TO FIRST X`` and ``TO LAST X``."""


@dataclass(frozen=True)
class Skip:
    """``AFTER MATCH SKIP …``: a sequential filter over a query's complex events in
    output order (papers/semantics.md, "After-match skip"); ``var`` is ``X`` of
    ``TO FIRST X`` / ``TO LAST X`` and ``None`` otherwise."""

    kind: SkipKind
    var: str | None = None


@dataclass(frozen=True)
class Query:
    """A formula with the clauses of spec §6 (``select``: §6.2; ``skip``: after-match
    skip, ``None`` keeping every complex event)."""

    formula: Formula
    returns: tuple[ReturnItem, ...] | None = None
    partition_by: tuple[str, ...] = ()
    within: Window | None = None
    slide: Window | None = None
    select: str = "ALL"
    skip: Skip | None = None


Node = Union[Formula, Filter, Pred, Expr, Query]

__all__ = [
    "Agg",
    "AggOutput",
    "And",
    "ArithOp",
    "As",
    "Atom",
    "Attr",
    "BagAgg",
    "BagKind",
    "BagPred",
    "BinOp",
    "CmpOp",
    "Compare",
    "Contig",
    "ContigPlus",
    "CountStar",
    "Derived",
    "EXPR_TYPES",
    "EdgeKind",
    "Expr",
    "FILTER_TYPES",
    "FORMULA_TYPES",
    "Filter",
    "FilterAnd",
    "FilterF",
    "FilterOr",
    "FirstLast",
    "Formula",
    "InList",
    "Infix",
    "LeadingNot",
    "Level",
    "Lit",
    "Neg",
    "Next",
    "NODE_KINDS",
    "Node",
    "Opt",
    "Or",
    "PRED_TYPES",
    "Plus",
    "Postfix",
    "Pred",
    "PredAnd",
    "PredNot",
    "PredOr",
    "Prev",
    "ProjectAttrs",
    "ProjectVars",
    "Query",
    "RELATING_TYPES",
    "Relating",
    "Repeat",
    "ReturnAgg",
    "ReturnAttr",
    "ReturnItem",
    "Running",
    "SELECT_STRATEGIES",
    "Seq",
    "SeqNot",
    "Skip",
    "SkipKind",
    "TopNegation",
    "TrailingNot",
    "VarAttr",
    "VarPred",
    "Window",
    "children",
    "contains",
    "formula_nodes",
    "neg",
    "top_negation",
    "transform",
    "walk",
    "with_children",
]


# -------------------------------------------------------------------- traversal

FORMULA_TYPES: tuple[type, ...] = get_args(Formula)
"""Every formula node class (the members of :data:`Formula`)."""

FILTER_TYPES: tuple[type, ...] = get_args(Filter)
"""Every filter node class (the members of :data:`Filter`)."""

PRED_TYPES: tuple[type, ...] = get_args(Pred)
"""Every unary predicate node class (the members of :data:`Pred`)."""

EXPR_TYPES: tuple[type, ...] = get_args(Expr)
"""Every expression node class (the members of :data:`Expr`)."""

NODE_KINDS: dict[str, tuple[type, ...]] = {
    "formula": FORMULA_TYPES,
    "filter": FILTER_TYPES,
    "predicate": PRED_TYPES,
    "expression": EXPR_TYPES,
}
"""The node classes of each kind a pass may walk (:mod:`acel.lang.passes`)."""

_FORMULA_CLASSES: tuple[type, ...] = (*FORMULA_TYPES, Infix, Postfix)
"""What a sub-formula may be: a member of :data:`Formula`, or a new operator built on
:class:`Infix` or :class:`Postfix` (``tests/test_passes_complete.py``'s toy operator)."""


def _formula_fields(node: Formula) -> Iterator[tuple[str, Formula | tuple[Formula, ...]]]:
    """The fields of ``node`` that hold sub-formulas (one, or a tuple of negated ``ψ``)."""
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        value = getattr(node, f.name)
        if isinstance(value, _FORMULA_CLASSES):
            yield f.name, value  # type: ignore[misc]
        elif f.name == "excluded":
            yield f.name, value


def children(node: Formula) -> tuple[Formula, ...]:
    """The direct sub-formulas of ``node`` in source order (negated ``ψ`` included).

    Filters, predicates and names are not formulas: :func:`walk` visits those.
    """
    out: list[Formula] = []
    for _name, value in _formula_fields(node):
        if isinstance(value, tuple):
            out.extend(value)
        else:
            out.append(value)
    return tuple(out)


def with_children(node: Formula, new: Sequence[Formula]) -> Formula:
    """``node`` with its sub-formulas replaced by ``new`` (same order as :func:`children`);
    ``node`` itself when nothing changed."""
    old = children(node)
    if len(new) != len(old):
        raise ValueError(f"{type(node).__name__} has {len(old)} sub-formulas, not {len(new)}")
    if all(a is b for a, b in zip(new, old)):
        return node
    changes: dict[str, object] = {}
    index = 0
    for name, value in _formula_fields(node):
        if isinstance(value, tuple):
            changes[name] = tuple(new[index:index + len(value)])
            index += len(value)
        else:
            changes[name] = new[index]
            index += 1
    return dataclasses.replace(node, **changes)  # type: ignore[arg-type,type-var]


def formula_nodes(formula: Formula) -> Iterator[Formula]:
    """Every formula node below ``formula`` (itself first, then pre-order), negated ``ψ``
    included; iterative, so as deep as the parser allows."""
    stack = [formula]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def contains(formula: Formula, kind: type | tuple[type, ...]) -> bool:
    """Whether some node of ``formula`` (negated ``ψ`` included) is a ``kind``."""
    return any(isinstance(node, kind) for node in formula_nodes(formula))


def transform(formula: Formula, rewrite: Callable[[Formula], Formula]) -> Formula:
    """Rebuild ``formula`` bottom-up: each node gets its rewritten children, then
    ``rewrite`` of the rebuilt node replaces it.  Unchanged parts keep their identity.

    Iterative (no Python recursion), so it handles formulas as deep as the parser allows.
    """
    done: list[Formula] = []
    stack: list[tuple[Formula, bool]] = [(formula, False)]
    while stack:
        node, expanded = stack.pop()
        kids = children(node)
        if not expanded:
            stack.append((node, True))
            stack.extend((kid, False) for kid in reversed(kids))
            continue
        new = done[len(done) - len(kids):] if kids else []
        if kids:
            del done[len(done) - len(kids):]
        done.append(rewrite(with_children(node, new)))
    return done[0]


def walk(node: object) -> Iterator[object]:
    """Every AST node below ``node`` (dataclass fields and tuples), ``node`` first.

    Pre-order, children in field order, as the recursive definition would give,
    but with an explicit stack: a formula's depth (a chain of 1,000 ``;`` is
    1,000 levels deep) never meets Python's recursion limit here.
    """
    stack: list[object] = [node]
    while stack:
        current = stack.pop()
        yield current
        if dataclasses.is_dataclass(current) and not isinstance(current, type):
            children: list[object] = []
            for f in dataclasses.fields(current):
                _children_of(getattr(current, f.name), children)
            stack.extend(reversed(children))


def _children_of(value: object, out: list[object]) -> None:
    """Append the AST nodes held by a field value (a node, or tuples of them) to ``out``."""
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, tuple):
            pending.extend(reversed(item))
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            out.append(item)


# ------------------------------------------------------------ top negation


@dataclass(frozen=True)
class TopNegation:
    """A query formula split around its leading and trailing negations (spec §3.1).

    ``leading`` and ``trailing`` are the negated formulas of the *top chain*
    (the root and, below it, FILTERs and top negations only); ``body`` is the
    rest with those FILTERs put back around it.  A negation's test depends
    only on ``start(C)``, ``end(C)`` and the window, and a filter only on
    ``C``'s bags, so the order in which they are applied does not matter.
    """

    leading: tuple[Formula, ...]
    body: Formula
    trailing: tuple[Formula, ...]

    @property
    def negated(self) -> bool:
        """Whether the formula has a leading or trailing negation at all."""
        return bool(self.leading or self.trailing)


def top_chain(formula: Formula) -> list[FilterF | LeadingNot | TrailingNot]:
    """The nodes from the root down through FILTERs, LeadingNots and TrailingNots."""
    chain: list[FilterF | LeadingNot | TrailingNot] = []
    node = formula
    while isinstance(node, (FilterF, LeadingNot, TrailingNot)):
        chain.append(node)
        node = node.formula
    return chain


def top_negation(formula: Formula) -> TopNegation:
    """Split ``formula`` into leading negations, body and trailing negations.

    Without top negation the body is ``formula`` itself (the same object).
    """
    chain = top_chain(formula)
    if not any(isinstance(n, (LeadingNot, TrailingNot)) for n in chain):
        return TopNegation((), formula, ())
    leading: list[Formula] = []
    trailing: list[Formula] = []
    filters: list[Filter] = []
    for node in chain:
        if isinstance(node, LeadingNot):
            leading.extend(node.excluded)
        elif isinstance(node, TrailingNot):
            trailing.extend(node.excluded)
        else:
            filters.append(node.filter)
    body = chain[-1].formula
    for flt in reversed(filters):
        body = FilterF(body, flt)
    return TopNegation(tuple(leading), body, tuple(trailing))
