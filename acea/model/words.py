"""A transition's guard in the query's own words (issue 25 §1).

The compiler turns ``SELL AS msft FILTER msft[price > 100]`` into registers
(``type#1 = 'SELL' AND price#1 > 100``).  This module reads them back: a
register that a transition emits as attribute ``a`` of variable ``X`` is
``X.a``; ``type#n = 'T'`` is the atom ``T AS X``; ``(now - start) < d`` is
``WITHIN d``; the ``INC``/``DEC``/``SAME`` bookkeeping of
:func:`acel.compiler.construct.filter_bag` is ``X[INC(a)]``.  Conditions on one
variable are grouped as in the query: ``msft[name = 'MSFT' AND price > 100]``.
Only plain text and Latin-1 symbols are used, so every font draws them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from acel.acea.model import expressions as ex
from acel.acea.model.expressions import TIME, AutomatonView, names_in_pred
from acel.acea.model.glossary import NO_WORDS, Glossary
from acel.acea.model.transitions import Transition

_BAG = re.compile(r"^(inc|dec|same)_(has|had|last\d*|prev\d*|ref)#")
_STEM = re.compile(r"#\d*$")
_VAR_PRED = re.compile(r"^(\w+)\[(.*)\]$", re.S)


@dataclass(frozen=True)
class Names:
    """What each register means: ``reg -> (variable, attribute)`` from the outputs,
    and ``group -> type`` from the atoms' type tests."""

    registers: dict[str, tuple[str, str]]
    types: dict[str, str]
    bags: dict[str, str] = field(default_factory=dict)
    """The variable ``X`` of each ``X[INC(a)]``/``DEC``/``SAME`` test, by its ``has``/``had``
    register: a variable emitted by every transition that runs the test."""
    glossary: Glossary = NO_WORDS
    """The compiler's words for its own guards and registers (relating filters, counters)."""

    @staticmethod
    def of(automaton: AutomatonView, glossary: Glossary | None = None) -> Names:
        """The names an automaton's outputs and type tests give its registers (and the
        compiler's glossary: the automaton's own, or ``glossary`` for a nested one)."""
        transitions = list(_all_transitions(automaton))
        types: dict[str, str] = {}
        for t in transitions:
            for c in _conjuncts(t.predicate):
                found = _type_test(c)
                if found is not None:
                    types[found[0]] = found[1]
        type_names = set(types.values())
        registers: dict[str, tuple[str, str]] = {}
        for t in transitions:
            for var, renamings in t.output:
                for renaming in renamings:
                    for attr, reg in renaming.items:
                        old = registers.get(reg)
                        if old is None or (old[0] in type_names and var not in type_names):
                            registers[reg] = (var, attr)
        words = glossary if glossary is not None else automaton.words
        return Names(registers, types, _bag_variables(transitions, registers, type_names), words)

    def variable(self, reg: str) -> str | None:
        """The variable a register belongs to (``None`` for bookkeeping registers)."""
        named = self.registers.get(reg)
        if named is not None:
            return named[0]
        group = _group(reg)
        for other, (var, _) in self.registers.items():
            if group and _group(other) == group:
                return var
        return None


def _bag_variables(transitions: list[Transition], registers: dict[str, tuple[str, str]],
                   type_names: set[str]) -> dict[str, str]:
    """:attr:`Names.bags`: for each bag test, the variables every transition running it
    emits; the one its compared attribute belongs to if it is among them."""
    candidates: dict[str, set[str]] = {}
    compared: dict[str, str] = {}
    for t in transitions:
        emitted = {var for var, _ in t.output} - type_names
        for name in names_in_pred(t.predicate):
            if _BAG.match(name) and name.split("_")[1].startswith("had"):
                candidates[name] = candidates.get(name, emitted) & emitted
            elif name in registers and registers[name][0] not in type_names:
                compared.setdefault(name, registers[name][0])
    out: dict[str, str] = {}
    for name, found in candidates.items():
        if found:
            mine = sorted(v for v in found if v in compared.values())
            out[name] = mine[0] if mine else sorted(found)[0]
    return out


def _all_transitions(automaton: AutomatonView) -> Iterable[Transition]:
    for t in automaton.transitions:
        yield t
        for _, expr in t.assignment:
            if isinstance(expr, ex.GapStep):
                yield from _all_transitions(expr.automaton)


def _group(reg: str) -> str:
    return reg.rsplit("#", 1)[1] if "#" in reg else ""


def _type_test(pred: ex.RPred) -> tuple[str, str] | None:
    """``(group, T)`` for ``type#n = 'T'``."""
    if (isinstance(pred, ex.Cmp) and pred.op == "=" and isinstance(pred.left, ex.Reg)
            and pred.left.name.startswith("type#") and isinstance(pred.right, ex.Const)
            and isinstance(pred.right.value, str)):
        return _group(pred.left.name), pred.right.value
    return None


def _conjuncts(pred: ex.RPred) -> list[ex.RPred]:
    if isinstance(pred, ex.PAnd):
        return [c for p in pred.operands for c in _conjuncts(p)]
    if isinstance(pred, ex.TrueP):
        return []
    return [pred]


def value_text(value: object) -> str:
    """A constant as ACEL writes it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, frozenset) and not value:
        return "{}"
    return repr(value)


@dataclass(frozen=True)
class Speaker:
    """Prints expressions in the query's words; ``local`` is the variable whose
    attributes are written bare (inside ``local[...]``)."""

    names: Names
    local: str | None = None
    event: str = "e"
    """The name of the event just read (its bare attributes are ``event.attr``)."""

    def reg(self, name: str) -> str:
        """A register or attribute by what it holds: ``msft.price``, ``price`` inside
        ``msft[...]``, ``max_price so far`` for an aggregate's accumulator."""
        if name == TIME:
            return "time"
        if "#" not in name:
            return name if self.local is not None else f"{self.event}.{name}"
        named = self.names.registers.get(name)
        if named is not None:
            var, attr = named
            return attr if var == self.local else f"{var}.{attr}"
        term = self.names.glossary.term(name) or self.names.glossary.carried_term(name)
        if term is not None:
            return term.text
        stem = _STEM.sub("", name)
        return stem[4:] + " so far" if stem.startswith("acc_") else stem

    def expr(self, e: ex.RExpr) -> str:
        """An expression in the query's words (monoid steps read as the aggregate)."""
        if isinstance(e, ex.Reg):
            return self.reg(e.name)
        if isinstance(e, ex.Const):
            return value_text(e.value)
        if isinstance(e, ex.Arith):
            return f"({self.expr(e.left)} {e.op} {self.expr(e.right)})"
        if isinstance(e, ex.Negate):
            return f"-{self.expr(e.operand)}"
        if isinstance(e, ex.Lift):
            return self.expr(e.operand)
        if isinstance(e, ex.Finish):
            inner = e.operand
            if isinstance(inner, ex.Reg) and self.names.glossary.term(inner.name) is not None:
                return self.reg(inner.name)  # RUNNING AVG(price), not AVG(its monoid)
            if isinstance(inner, ex.Combine) and inner.func == e.func:
                return self.expr(inner)
            return f"{e.func}({self.expr(inner)})"
        if isinstance(e, ex.Combine):
            right = e.right
            if (e.func == "COUNT" and isinstance(right, ex.Lift) and isinstance(right.operand, ex.Const)
                    and right.operand.value is not None):  # one more event counted
                return f"{self.expr(e.left)} + 1"
            return f"{e.func}({self.expr(e.left)}, {self.expr(e.right)})"
        if isinstance(e, ex.Identity):
            return f"{e.func}()"
        if isinstance(e, ex.GapStep):
            return f"runs of NOT {e.label or 'psi'}"
        raise TypeError(f"not a register expression: {e!r}")

    def pred(self, p: ex.RPred) -> str:
        """A predicate in the query's words (ACEL's operators)."""
        bag = self.bag(p)
        if bag is not None:
            return bag
        if isinstance(p, ex.TrueP):
            return "TRUE"
        if isinstance(p, ex.Cmp):
            left, right = self.expr(p.left), self.expr(p.right)
            return f"{left.strip('()')} {p.op} {right}" if isinstance(p.left, ex.Arith) else f"{left} {p.op} {right}"
        if isinstance(p, ex.In):
            values = ", ".join(value_text(v) for v in p.values)
            return f"{self.expr(p.operand)} {'NOT ' if p.negated else ''}IN ({values})"
        if isinstance(p, ex.IsNull):
            return f"{self.expr(p.operand)} IS NULL"
        if isinstance(p, ex.SameValue):
            return f"{self.expr(p.left)} = {self.expr(p.right)} (or both NULL)"
        if isinstance(p, ex.PNot):
            return f"NOT ({self.pred(p.operand)})"
        if isinstance(p, (ex.PAnd, ex.POr)):
            word = " AND " if isinstance(p, ex.PAnd) else " OR "
            return word.join(self._wrapped(o) for o in p.operands)
        if isinstance(p, ex.GapClear):
            return f"NOT {p.label or 'psi'}"
        raise TypeError(f"not a register predicate: {p!r}")

    def _wrapped(self, p: ex.RPred) -> str:
        text = self.pred(p)
        return f"({text})" if isinstance(p, (ex.PAnd, ex.POr)) and self.bag(p) is None else text

    def bag(self, p: ex.RPred) -> str | None:
        """``INC(a)``/``DEC(a)``/``SAME(a)`` for the bookkeeping test of filter_bag."""
        if not isinstance(p, ex.POr) or len(p.operands) != 2:
            return None
        first = _conjuncts(p.operands[0])
        null = first[0] if first else None
        if not (isinstance(null, ex.IsNull) and isinstance(null.operand, ex.Reg)):
            return None
        match = _BAG.match(null.operand.name)
        if match is None:
            return None
        for c in _conjuncts(p.operands[1]):
            if isinstance(c, ex.Cmp):
                current = c.right if isinstance(c.left, ex.Reg) and _BAG.match(c.left.name) else c.left
                owner = self.names.bags.get(null.operand.name)
                named = self.names.registers.get(getattr(current, "name", ""))
                if owner is not None and named is not None:  # X[INC(a)]: a of X's events
                    text = named[1] if owner == self.local else f"{owner}.{named[1]}"
                else:
                    text = self.expr(current)
                return f"{match.group(1).upper()}({text})"
        return None


def window_of(pred: ex.RPred) -> str | None:
    """``WITHIN d`` for the window test ``(now - start) < d``."""
    if (isinstance(pred, ex.Cmp) and isinstance(pred.left, ex.Arith) and pred.left.op == "-"
            and isinstance(pred.left.left, ex.Reg) and pred.left.left.name.startswith("now#")
            and isinstance(pred.right, ex.Const)):
        return f"WITHIN {value_text(pred.right.value)}"
    return None


def _mentions(p: ex.RPred, names: Names) -> set[str]:
    """The variables ``p`` reads (``""`` for a register of no variable)."""
    if Speaker(names).bag(p) is not None:  # the bookkeeping registers belong to X
        null = _conjuncts(p.operands[0])[0]  # type: ignore[attr-defined]
        owner = names.bags.get(null.operand.name)  # type: ignore[attr-defined]
        if owner is not None:
            return {owner}
        p = ex.PAnd(tuple(c for c in _conjuncts(p.operands[1]) if isinstance(c, ex.Cmp)))  # type: ignore[attr-defined]
        return {v for v in _mentions(p, names) if v} or {""}
    found = set()
    for name in names_in_pred(p):
        var = names.variable(name) if "#" in name else None
        found.add(var if var is not None else "")
    return found


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``22nd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _bound(c: ex.RPred, glossary: Glossary) -> tuple[str, int | None, int | None] | None:
    """``(counter, low, high)`` for a counter's test ``k >= n`` / ``k <= n`` / ``k < n``."""
    if not (isinstance(c, ex.Cmp) and isinstance(c.left, ex.Reg) and isinstance(c.right, ex.Const)
            and glossary.counter(c.left.name) is not None and isinstance(c.right.value, int)):
        return None
    n = c.right.value
    bounds = {">=": (n, None), ">": (n + 1, None), "<=": (None, n), "<": (None, n - 1),
              "=": (n, n)}.get(c.op)
    return None if bounds is None else (c.left.name, *bounds)


def _tighter(pick: Callable[[int, int], int], a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else pick(a, b)


def repetition_text(low: int | None, high: int | None, formula: str) -> str:
    """Which repetitions a counter's tests allow: ``2nd..3rd repetition of SELL AS up``."""
    if high is None:
        which = f"{ordinal(low or 1)} or a later"
    elif (low or 1) == high:
        which = f"the {ordinal(high)}"
    else:
        which = f"{ordinal(low or 1)}..{ordinal(high)}"
    return f"{which} repetition of {formula}"


def _joined(parts: list[str]) -> str:
    """Conditions on one variable joined by AND (an ``OR`` among several in parentheses)."""
    if len(parts) == 1:
        return parts[0]
    return " AND ".join(f"({p})" if " OR " in p and not p.startswith("(") else p for p in parts)


def guard_lines(t: Transition, names: Names) -> list[str]:
    """The guard of ``t`` as the query writes it, one item a line: the atom read
    (``SELL AS msft``), one ``X[...]`` per variable, the relating filters and
    repetitions the compiler noted (:mod:`acel.acea.model.glossary`), then the rest
    (``WITHIN``)."""
    atoms: list[str] = []
    per_var: dict[str, list[str]] = {}
    said: dict[str, None] = {}
    ranges: dict[str, tuple[int | None, int | None]] = {}
    rest: list[str] = []
    plain = Speaker(names)
    glossary = names.glossary
    for c in _conjuncts(t.predicate):
        words = glossary.guard(c) if glossary else None
        if words is not None:
            own = _VAR_PRED.match(words)
            if own is not None:  # f[dep_delay > PREV(dep_delay)] joins f[dep_delay > 15]
                parts = per_var.setdefault(own.group(1), [])
                if own.group(2) not in parts:
                    parts.append(own.group(2))
            else:
                said[words] = None
            continue
        bound = _bound(c, glossary) if glossary.counters else None
        if bound is not None:
            reg, low, high = bound
            old_low, old_high = ranges.get(reg, (None, None))
            ranges[reg] = (_tighter(max, low, old_low), _tighter(min, high, old_high))
            continue
        test = _type_test(c)
        if test is not None:
            var = names.variable(c.left.name)  # type: ignore[attr-defined]
            atoms.append(test[1] if var in (None, test[1]) else f"{test[1]} AS {var}")
            continue
        window = window_of(c)
        if window is not None:
            rest.append(window)
            continue
        mentioned = _mentions(c, names)
        if len(mentioned) == 1 and "" not in mentioned:
            var = next(iter(mentioned))
            per_var.setdefault(var, []).append(Speaker(names, var).pred(c))
        else:
            rest.append(plain.pred(c))
    lines = atoms + [f"{var}[{_joined(parts)}]" for var, parts in per_var.items()]
    lines += list(said)
    lines += [repetition_text(low, high, glossary.counter(reg) or "")
              for reg, (low, high) in ranges.items()]
    return lines + rest or ["any event"]


def _false_leaf(p: ex.RPred, lookup: ex.Lookup) -> ex.Cmp | None:
    """A comparison that makes ``p`` false (the last alternative's, for ``OR``)."""
    if isinstance(p, ex.Cmp):
        return None if ex.eval_rpred(p, lookup) else p
    if isinstance(p, ex.PAnd):
        return next((_false_leaf(o, lookup) for o in p.operands if not ex.eval_rpred(o, lookup)),
                    None)
    if isinstance(p, ex.POr):
        return next((leaf for o in reversed(p.operands) if (leaf := _false_leaf(o, lookup))), None)
    return None


def compared(p: ex.RPred, lookup: ex.Lookup, names: Names) -> str | None:
    """The values that make the guard part ``p`` false, in the query's words
    (``f.dep_delay 73 vs PREV(dep_delay) 80``), ``None`` when no comparison says it."""
    leaf = _false_leaf(p, lookup)
    if leaf is None:
        return None
    speak = Speaker(names)
    sides = []
    for side in (leaf.left, leaf.right):
        value = value_text(ex.eval_rexpr(side, lookup))
        if isinstance(side, ex.Reg) and names.glossary.counter(side.name) is not None:
            sides.append(f"repetition {value} of {names.glossary.counter(side.name)}")
        elif isinstance(side, ex.Const):
            sides.append(value)
        else:
            text = speak.expr(side)
            text = text[1:-1] if isinstance(side, ex.Arith) else text
            internal = any(names.glossary.register(n) is not None
                           and names.glossary.term(n) is None
                           for n in ex.names_in_expr(side))
            sides.append(value if internal else f"{text} {value}")
    return f"{sides[0]} vs {sides[1]}"
