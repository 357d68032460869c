"""Expression and predicate trees over registers (seed 004 §6, spec §7).

These are data, not Python lambdas, so that automata can be printed,
simplified, rendered and compared.  A name containing ``#`` is a register; any
other name reads an attribute of the event just read (``τ ◁ e``); the name
``@time`` reads the time of the event just read.  Registers may hold monoid
elements (for instance AVG's ``(sum, count)`` pairs) as well as data values,
and the *gap register* of a negation holds a set of configurations of the
negated formula's automaton (:class:`GapStep`, :class:`GapClear`, spec §3.1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

from acel.lang import aggregates
from acel.lang.predicates import Truth, arith, compare

TIME = "@time"
"""The pseudo-attribute holding the time (position) of the event just read."""


def is_register(name: str) -> bool:
    """Registers carry a ``#`` so that no data attribute can overwrite them."""
    return "#" in name


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Reg:
    """The value of a register or of an attribute of the read event."""

    name: str


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Arith:
    """``left op right`` with ``+ - * / %`` and the NULL rules of spec §5."""

    op: str
    left: RExpr
    right: RExpr


@dataclass(frozen=True)
class Negate:
    operand: RExpr


@dataclass(frozen=True)
class Lift:
    """``g_F(x)``: a value into aggregate F's monoid (NULL gives the identity)."""

    func: str
    operand: RExpr


@dataclass(frozen=True)
class Combine:
    """``x ⊕_F y`` in aggregate F's monoid."""

    func: str
    left: RExpr
    right: RExpr


@dataclass(frozen=True)
class Finish:
    """``h_F(x)``: a monoid element of F to its output value."""

    func: str
    operand: RExpr


@dataclass(frozen=True)
class Identity:
    """``1_F``: aggregate F's identity element."""

    func: str


Lookup = Callable[[str], Any]
"""How an expression reads a name: an attribute of the event just read, or a register."""

Registers = tuple[tuple[str, Any], ...]
"""A register valuation ``τ`` (after an assignment): sorted, NULLs left out."""

Configuration = tuple[int, Registers]
"""``(state, τ)``; inside a gap register, ``τ`` keeps only the registers live at the state."""


class AutomatonView(Protocol):
    """An ACEA (:class:`acel.acea.model.automaton.ACEA`) as the modules it is built from
    see it: ψ's automaton in a gap register, an automaton drawn or described.  A
    protocol, so that expressions (which an ACEA holds) and pictures of an ACEA
    (which an ACEA shows) do not import the automaton module."""

    @property
    def num_states(self) -> int: ...

    @property
    def initial(self) -> int: ...

    @property
    def finals(self) -> frozenset[int]: ...

    @property
    def transitions(self) -> tuple[Any, ...]:
        """Its :class:`~acel.acea.model.transitions.Transition` records."""
        ...

    @property
    def words(self) -> Any:
        """The query's words for the compiler's registers (a ``Glossary``)."""
        ...

    @property
    def event_names(self) -> frozenset[str]: ...

    def states(self) -> range: ...

    def size(self) -> dict[str, int]: ...

    def step_configurations(
        self, configurations: Iterable[Configuration] | None, event: Lookup
    ) -> frozenset[Configuration]: ...

    def accepting(self, configurations: Iterable[Configuration] | None) -> bool: ...


@dataclass(frozen=True)
class GapStep:
    """The update of the gap register of ``φ1 ; NOT ψ ; φ2`` (spec §3.1).

    ``automaton`` is ψ's ACEA (outputs dropped: ψ's variables are never
    emitted); ``operand`` evaluates to a frozenset of its configurations
    ``(state, registers)``.  The value is the set of configurations reached by
    reading the current event from every configuration of ``operand`` *and*
    from ψ's initial configuration (a ψ-match may start at any event of the
    gap): :meth:`acea.model.ACEA.step_configurations`.  ``label`` is ψ's
    canonical text, for diagrams only.
    """

    automaton: AutomatonView
    operand: RExpr
    label: str = field(default="", compare=False)


RExpr = Union[Reg, Const, Arith, Negate, Lift, Combine, Finish, Identity, GapStep]

# ----------------------------------------------------------------- predicates


@dataclass(frozen=True)
class TrueP:
    """The predicate that always holds."""


@dataclass(frozen=True)
class Cmp:
    """``left op right``; unknown (so false) when a side is NULL."""

    op: str
    left: RExpr
    right: RExpr


@dataclass(frozen=True)
class In:
    """``operand [NOT] IN values``; unknown when the operand is NULL."""

    operand: RExpr
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    """``operand IS NULL`` (two-valued)."""

    operand: RExpr


@dataclass(frozen=True)
class SameValue:
    """Null-safe equality (``IS NOT DISTINCT FROM``), two-valued."""

    left: RExpr
    right: RExpr


@dataclass(frozen=True)
class PAnd:
    operands: tuple[RPred, ...]


@dataclass(frozen=True)
class POr:
    operands: tuple[RPred, ...]


@dataclass(frozen=True)
class PNot:
    operand: RPred


@dataclass(frozen=True)
class GapClear:
    """No configuration in ``operand`` (a set of ``automaton``'s configurations) is
    accepting: no match of ψ has ended in the gap so far (spec §3.1).  Two-valued."""

    automaton: AutomatonView
    operand: RExpr
    label: str = field(default="", compare=False)


RPred = Union[TrueP, Cmp, In, IsNull, SameValue, PAnd, POr, PNot, GapClear]



def _agg(name: str) -> aggregates.Aggregate:
    agg = aggregates.lookup(name)
    if agg is None:
        raise ValueError(f"unknown aggregate function {name!r}")
    return agg


def eval_rexpr(expr: RExpr, lookup: Lookup) -> Any:
    """Evaluate an expression; ``lookup`` gives registers and attributes."""
    if isinstance(expr, Reg):
        return lookup(expr.name)
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Arith):
        return arith(expr.op, eval_rexpr(expr.left, lookup), eval_rexpr(expr.right, lookup))
    if isinstance(expr, Negate):
        value = eval_rexpr(expr.operand, lookup)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return -value if ok else None
    if isinstance(expr, Lift):
        agg = _agg(expr.func)
        value = eval_rexpr(expr.operand, lookup)
        return agg.identity if value is None else agg.lift(value)
    if isinstance(expr, Combine):
        agg = _agg(expr.func)
        left = eval_rexpr(expr.left, lookup)
        right = eval_rexpr(expr.right, lookup)
        return agg.combine(
            agg.identity if left is None else left, agg.identity if right is None else right
        )
    if isinstance(expr, Finish):
        agg = _agg(expr.func)
        value = eval_rexpr(expr.operand, lookup)
        return agg.finish(agg.identity if value is None else value)
    if isinstance(expr, Identity):
        return _agg(expr.func).identity
    if isinstance(expr, GapStep):
        return expr.automaton.step_configurations(eval_rexpr(expr.operand, lookup), lookup)
    raise TypeError(f"not a register expression: {expr!r}")


def eval_rpred3(pred: RPred, lookup: Lookup) -> Truth:
    """Three-valued truth of a register predicate (spec §5's NULL rule)."""
    if isinstance(pred, TrueP):
        return True
    if isinstance(pred, Cmp):
        return compare(pred.op, eval_rexpr(pred.left, lookup), eval_rexpr(pred.right, lookup))
    if isinstance(pred, In):
        value = eval_rexpr(pred.operand, lookup)
        if value is None:
            return None
        found = any(compare("=", value, v) for v in pred.values)
        return (not found) if pred.negated else found
    if isinstance(pred, IsNull):
        return eval_rexpr(pred.operand, lookup) is None
    if isinstance(pred, SameValue):
        return eval_rexpr(pred.left, lookup) == eval_rexpr(pred.right, lookup)
    if isinstance(pred, PNot):
        inner = eval_rpred3(pred.operand, lookup)
        return None if inner is None else not inner
    if isinstance(pred, GapClear):
        return not pred.automaton.accepting(eval_rexpr(pred.operand, lookup))
    if isinstance(pred, PAnd):
        unknown = False
        for operand in pred.operands:
            value = eval_rpred3(operand, lookup)
            if value is False:
                return False
            unknown = unknown or value is None
        return None if unknown else True
    if isinstance(pred, POr):
        unknown = False
        for operand in pred.operands:
            value = eval_rpred3(operand, lookup)
            if value is True:
                return True
            unknown = unknown or value is None
        return None if unknown else False
    raise TypeError(f"not a register predicate: {pred!r}")


def eval_rpred(pred: RPred, lookup: Lookup) -> bool:
    """Whether a register predicate is true (unknown counts as false)."""
    return eval_rpred3(pred, lookup) is True


def names_in_expr(expr: RExpr) -> set[str]:
    """Every register or attribute name an expression reads."""
    if isinstance(expr, Reg):
        return {expr.name}
    if isinstance(expr, (Const, Identity)):
        return set()
    if isinstance(expr, (Negate, Lift, Finish)):
        return names_in_expr(expr.operand)
    if isinstance(expr, (Arith, Combine)):
        return names_in_expr(expr.left) | names_in_expr(expr.right)
    if isinstance(expr, GapStep):
        # the gap register, and the attributes ψ reads from the event (not its registers)
        return names_in_expr(expr.operand) | expr.automaton.event_names
    raise TypeError(f"not a register expression: {expr!r}")


def names_in_pred(pred: RPred) -> set[str]:
    """Every register or attribute name a predicate reads."""
    if isinstance(pred, TrueP):
        return set()
    if isinstance(pred, (Cmp, SameValue)):
        return names_in_expr(pred.left) | names_in_expr(pred.right)
    if isinstance(pred, (In, IsNull, GapClear)):
        return names_in_expr(pred.operand)
    if isinstance(pred, PNot):
        return names_in_pred(pred.operand)
    if isinstance(pred, (PAnd, POr)):
        out: set[str] = set()
        for operand in pred.operands:
            out |= names_in_pred(operand)
        return out
    raise TypeError(f"not a register predicate: {pred!r}")


def conj(*preds: RPred) -> RPred:
    """Conjunction that drops TRUE and flattens nested conjunctions."""
    flat: list[RPred] = []
    for pred in preds:
        if isinstance(pred, TrueP):
            continue
        if isinstance(pred, PAnd):
            flat.extend(pred.operands)
        else:
            flat.append(pred)
    if not flat:
        return TrueP()
    if len(flat) == 1:
        return flat[0]
    return PAnd(tuple(flat))
