"""Optional symbolic clean-up of an ACEA with sympy; never changes ``⟦A⟧``.

Two rewritings:

1. **Constant folding**: sub-expressions that read no register or attribute
   are evaluated (``Arith(Const 2, Const 3)`` becomes ``Const 5``), and
   top-level conjuncts of a predicate that read nothing are decided (a
   transition whose predicate can never be true is dropped).
2. **Contradictions**: the predicate is abstracted into a propositional
   formula (each comparison ``r = c`` of a register with a constant is a
   proposition ``Eq(r, c)``, any other comparison an opaque proposition)
   together with the facts that a register equals at most one constant and
   that ``r ≡ s`` with ``r = 'a'`` and ``s = 'b'`` (different strings) is
   impossible.  When sympy finds that abstraction unsatisfiable the
   transition is dropped.

Soundness under three-valued logic: if a predicate is *true* for some
registers, it is also true when every *unknown* comparison is read as false
(Kleene logic is monotone), and that reading satisfies the facts above; so
an unsatisfiable abstraction means the predicate is never true.  The
automaton is trimmed afterwards (the product of ``AND`` often has
transitions that only contradictory predicates kept alive).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from typing import Any

import sympy
from acel.acea.model import expressions as ex
from acel.acea.model.automaton import ACEA, Transition
from acel.acea.model.expressions import conj, eval_rexpr, eval_rpred3, names_in_expr, names_in_pred
from acel.acea.model.graph import trim_parts
from sympy.logic.inference import satisfiable


def _no_lookup(name: str) -> Any:
    raise KeyError(name)


def fold_expr(expr: ex.RExpr) -> ex.RExpr:
    """Evaluate every sub-expression that reads no name (monoid ones are left alone).

    A gap register's step keeps its shape; the negated formula's automaton is
    simplified in turn (:func:`simplify`, the same result for the step and
    its :class:`GapClear`, so both keep reading one automaton).
    """
    if isinstance(expr, (ex.Reg, ex.Const, ex.Identity)):
        return expr
    if isinstance(expr, ex.GapStep):
        return ex.GapStep(_simplified(expr.automaton), fold_expr(expr.operand), expr.label)
    if isinstance(expr, ex.Arith):
        out: ex.RExpr = ex.Arith(expr.op, fold_expr(expr.left), fold_expr(expr.right))
    elif isinstance(expr, ex.Negate):
        out = ex.Negate(fold_expr(expr.operand))
    elif isinstance(expr, ex.Lift):
        return ex.Lift(expr.func, fold_expr(expr.operand))
    elif isinstance(expr, ex.Finish):
        return ex.Finish(expr.func, fold_expr(expr.operand))
    elif isinstance(expr, ex.Combine):
        return ex.Combine(expr.func, fold_expr(expr.left), fold_expr(expr.right))
    else:
        raise TypeError(f"not a register expression: {expr!r}")
    if not names_in_expr(out):
        return ex.Const(eval_rexpr(out, _no_lookup))
    return out


def fold_pred(pred: ex.RPred) -> ex.RPred:
    """Fold constants inside the comparisons of a predicate (structure kept)."""
    if isinstance(pred, ex.TrueP):
        return pred
    if isinstance(pred, ex.Cmp):
        return ex.Cmp(pred.op, fold_expr(pred.left), fold_expr(pred.right))
    if isinstance(pred, ex.In):
        return ex.In(fold_expr(pred.operand), pred.values, pred.negated)
    if isinstance(pred, ex.IsNull):
        return ex.IsNull(fold_expr(pred.operand))
    if isinstance(pred, ex.SameValue):
        return ex.SameValue(fold_expr(pred.left), fold_expr(pred.right))
    if isinstance(pred, ex.PNot):
        return ex.PNot(fold_pred(pred.operand))
    if isinstance(pred, ex.PAnd):
        return ex.PAnd(tuple(fold_pred(p) for p in pred.operands))
    if isinstance(pred, ex.POr):
        return ex.POr(tuple(fold_pred(p) for p in pred.operands))
    if isinstance(pred, ex.GapClear):
        return ex.GapClear(_simplified(pred.automaton), fold_expr(pred.operand), pred.label)
    raise TypeError(f"not a register predicate: {pred!r}")


def decide_conjuncts(pred: ex.RPred) -> ex.RPred | None:
    """Drop top-level conjuncts that read nothing and are true; ``None`` if one is not."""
    conjuncts = pred.operands if isinstance(pred, ex.PAnd) else (pred,)
    kept: list[ex.RPred] = []
    for c in conjuncts:
        if names_in_pred(c):
            kept.append(c)
        elif eval_rpred3(c, _no_lookup) is not True:
            return None
    return conj(*dict.fromkeys(kept))


def _const_key(value: Any) -> tuple[str, Any] | None:
    """Values that ``compare('=')`` identifies get one key (1 and 1.0 alike)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("num", float(value))
    if isinstance(value, str):
        return ("str", value)
    return None


class _Abstraction:
    """Propositional abstraction of register predicates (see the module docstring)."""

    def __init__(self) -> None:
        self.symbols: dict[object, sympy.Symbol] = {}
        self.equalities: dict[str, dict[tuple[str, Any], sympy.Symbol]] = {}
        self.same: list[tuple[str, str, sympy.Symbol]] = []

    def symbol(self, key: object) -> sympy.Symbol:
        if key not in self.symbols:
            self.symbols[key] = sympy.Symbol(f"p{len(self.symbols)}")
        return self.symbols[key]

    def of(self, pred: ex.RPred) -> Any:
        if isinstance(pred, ex.TrueP):
            return sympy.true
        if isinstance(pred, ex.PAnd):
            return sympy.And(*(self.of(p) for p in pred.operands))
        if isinstance(pred, ex.POr):
            return sympy.Or(*(self.of(p) for p in pred.operands))
        if isinstance(pred, ex.PNot):
            return sympy.Not(self.of(pred.operand))
        if isinstance(pred, ex.Cmp) and pred.op == "=":
            reg, const = _reg_const(pred.left, pred.right)
            key = _const_key(const.value) if const is not None else None
            if reg is not None and key is not None:
                sym = self.symbol(("eq", reg.name, key))
                self.equalities.setdefault(reg.name, {})[key] = sym
                return sym
        if isinstance(pred, ex.SameValue) and isinstance(pred.left, ex.Reg) and isinstance(
            pred.right, ex.Reg
        ):
            sym = self.symbol(("same", pred.left.name, pred.right.name))
            self.same.append((pred.left.name, pred.right.name, sym))
            return sym
        return self.symbol(("opaque", pred))

    def facts(self) -> Any:
        out: list[Any] = []
        for by_key in self.equalities.values():
            for a, b in combinations(by_key.values(), 2):
                out.append(sympy.Not(sympy.And(a, b)))
        for left, right, sym in self.same:
            for kl, sl in self.equalities.get(left, {}).items():
                for kr, sr in self.equalities.get(right, {}).items():
                    if kl[0] == "str" and kr[0] == "str" and kl != kr:
                        out.append(sympy.Not(sympy.And(sym, sl, sr)))
        return sympy.And(*out)


def _reg_const(left: ex.RExpr, right: ex.RExpr) -> tuple[ex.Reg | None, ex.Const | None]:
    if isinstance(left, ex.Reg) and isinstance(right, ex.Const):
        return left, right
    if isinstance(right, ex.Reg) and isinstance(left, ex.Const):
        return right, left
    return None, None


def contradictory(pred: ex.RPred) -> bool:
    """Whether the predicate can never be true (sound, not complete)."""
    if isinstance(pred, ex.TrueP):
        return False
    abstraction = _Abstraction()
    formula = abstraction.of(pred)
    return satisfiable(sympy.And(formula, abstraction.facts())) is False


@lru_cache(maxsize=128)
def _simplified(automaton: ACEA) -> ACEA:
    """:func:`simplify` of a negated formula's automaton, once per automaton."""
    return simplify(automaton)


def simplify(automaton: ACEA) -> ACEA:
    """Fold constants, drop transitions that can never fire, trim."""
    kept: list[Transition] = []
    for t in automaton.transitions:
        assignment = tuple((reg, fold_expr(expr)) for reg, expr in t.assignment)
        pred = decide_conjuncts(fold_pred(t.predicate))
        if pred is None or contradictory(pred):
            continue
        kept.append(Transition(t.source, assignment, pred, t.output, t.target))
    n, q0, finals, transitions = trim_parts(
        automaton.num_states, automaton.initial, automaton.finals, kept
    )
    return ACEA(n, q0, finals, transitions)
