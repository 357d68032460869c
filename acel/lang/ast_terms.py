"""The immutable terms of ACEL's syntax below formulas: expressions (spec §5.1),
predicates and filters (spec §3); :mod:`acel.lang.ast` re-exports every name.

Binary operators are binary nodes (the parser builds them left-associative),
so that ``parse(print(ast)) == ast`` holds without any normalisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, Union

from acel.lang.events import Value

# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Attr:
    """An attribute of the event under test (``price``)."""

    name: str


@dataclass(frozen=True)
class Lit:
    """A literal: int, float, str or bool. Negative numbers are literals too."""

    value: Value


ArithOp = Literal["+", "-", "*", "/", "%"]


@dataclass(frozen=True)
class BinOp:
    """Arithmetic ``left op right``; a NULL operand (or ÷0) gives NULL."""

    op: ArithOp
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Neg:
    """Unary minus of a non-literal expression (``-(a + b)``, ``-price``)."""

    operand: Expr

    def __post_init__(self) -> None:
        if isinstance(self.operand, Lit) and _is_number(self.operand.value):
            raise ValueError("write a negative number as Lit(-n), not Neg(Lit(n))")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def neg(operand: Expr) -> Expr:
    """Unary minus, folding numeric literals into negative literals."""
    if isinstance(operand, Lit) and _is_number(operand.value):
        value = operand.value
        assert isinstance(value, (int, float))
        return Lit(-value)
    return Neg(operand)


# ------------------------------------------------ terms that relate events (spec §5.1)

RELATE_SYNTAX = (
    "X[P] with Y.a, F(Y.a), COUNT(Y), FIRST/LAST(Y.a), PREV(a), RUNNING F(a) (spec §5.1)"
)
"""What the operator ``RELATE`` (:data:`acel.lang.operators.OPERATORS`) stands for."""


@dataclass(frozen=True)
class VarAttr:
    """``Y.a``: the attribute ``a`` of an event of ``C(Y)``, read universally (every
    choice of one event of ``C(Y)``); ``X.a`` inside ``X[...]`` is the event's own ``a``."""

    var: str
    attr: str

    operator: ClassVar[str | None] = "RELATE"
    syntax: ClassVar[str] = RELATE_SYNTAX


@dataclass(frozen=True)
class BagAgg:
    """``F(Y.a)`` or ``COUNT(Y)`` (``attr`` None): ``F`` over the whole bag ``C(Y)``."""

    func: str
    var: str
    attr: str | None

    operator: ClassVar[str | None] = "RELATE"
    syntax: ClassVar[str] = RELATE_SYNTAX


EdgeKind = Literal["FIRST", "LAST"]


@dataclass(frozen=True)
class FirstLast:
    """``FIRST(Y.a)`` / ``LAST(Y.a)``: ``a`` of the earliest / latest event of ``C(Y)``."""

    which: EdgeKind
    var: str
    attr: str

    operator: ClassVar[str | None] = "RELATE"
    syntax: ClassVar[str] = RELATE_SYNTAX


@dataclass(frozen=True)
class Prev:
    """``PREV(a)``: ``a`` of the previous event of ``C(X)`` (the filtered variable)."""

    attr: str

    operator: ClassVar[str | None] = "RELATE"
    syntax: ClassVar[str] = RELATE_SYNTAX


@dataclass(frozen=True)
class Running:
    """``RUNNING F(a)``: ``F`` over the events of ``C(X)`` strictly earlier than the event."""

    func: str
    attr: str

    operator: ClassVar[str | None] = "RELATE"
    syntax: ClassVar[str] = RELATE_SYNTAX


Relating = Union[VarAttr, BagAgg, FirstLast, Prev, Running]
RELATING_TYPES: tuple[type, ...] = (VarAttr, BagAgg, FirstLast, Prev, Running)
"""The terms of spec §5.1, which read other events than the one under test."""

Expr = Union[Attr, Lit, BinOp, Neg, VarAttr, BagAgg, FirstLast, Prev, Running]

# ----------------------------------------------------------- unary predicates

CmpOp = Literal["=", "!=", "<", "<=", ">", ">="]


@dataclass(frozen=True)
class Compare:
    """``left op right``; false when either side is NULL (spec §5)."""

    op: CmpOp
    left: Expr
    right: Expr


@dataclass(frozen=True)
class InList:
    """``expr [NOT] IN (v1, ..., vn)``; false when ``expr`` is NULL."""

    expr: Expr
    values: tuple[Value, ...]
    negated: bool = False


@dataclass(frozen=True)
class PredAnd:
    left: Pred
    right: Pred


@dataclass(frozen=True)
class PredOr:
    left: Pred
    right: Pred


@dataclass(frozen=True)
class PredNot:
    operand: Pred


Pred = Union[Compare, InList, PredAnd, PredOr, PredNot]

# -------------------------------------------------------------------- filters

BagKind = Literal["SAME", "INC", "DEC"]


@dataclass(frozen=True)
class VarPred:
    """``X[P]``: every event of ``μ(X)`` satisfies the unary predicate ``P``."""

    var: str
    pred: Pred

    operator: ClassVar[str | None] = None


@dataclass(frozen=True)
class BagPred:
    """``X[SAME(a)]``, ``X[INC(a)]``, ``X[DEC(a)]`` over the whole bag ``μ(X)``."""

    var: str
    kind: BagKind
    attr: str

    operator: ClassVar[str | None] = "BAG"
    syntax: ClassVar[str] = "φ FILTER X[SAME(a)], X[INC(a)], X[DEC(a)] (bag predicates)"


@dataclass(frozen=True)
class FilterAnd:
    left: Filter
    right: Filter

    operator: ClassVar[str | None] = None


@dataclass(frozen=True)
class FilterOr:
    left: Filter
    right: Filter

    operator: ClassVar[str | None] = None


Filter = Union[VarPred, BagPred, FilterAnd, FilterOr]
