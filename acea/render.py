"""Readable text and Graphviz pictures of an ACEA.

``format_rexpr`` / ``format_rpred`` print register expressions and
predicates; ``transition_label`` prints one transition as three lines
(predicate, assignment, outputs).  An atom's copies ``a#n := a`` are shown
as ``e ▷ #n (a, b, ...)`` and a renaming ``{a ↦ a#n, ...}`` that copies
them all back as ``e#n``.  ``to_dot`` always works (it only builds text);
``render`` and ``to_svg`` call the ``dot`` program.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import graphviz
from acel.acea.expressions import (
    Arith,
    Cmp,
    Combine,
    Const,
    Finish,
    Identity,
    In,
    IsNull,
    Lift,
    Negate,
    PAnd,
    PNot,
    POr,
    Reg,
    RExpr,
    RPred,
    SameValue,
    TrueP,
)
from acel.acea.model import ACEA, Renaming, Transition


def format_value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def format_rexpr(expr: RExpr) -> str:
    """An expression as text (``Combine`` as ``⊕F``, ``Lift`` as ``gF``, ``Finish`` as ``hF``)."""
    if isinstance(expr, Reg):
        return expr.name
    if isinstance(expr, Const):
        return format_value(expr.value)
    if isinstance(expr, Arith):
        return f"({format_rexpr(expr.left)} {expr.op} {format_rexpr(expr.right)})"
    if isinstance(expr, Negate):
        return f"-{format_rexpr(expr.operand)}"
    if isinstance(expr, Lift):
        return f"g{expr.func}({format_rexpr(expr.operand)})"
    if isinstance(expr, Combine):
        return f"{format_rexpr(expr.left)} ⊕{expr.func} {format_rexpr(expr.right)}"
    if isinstance(expr, Finish):
        return f"h{expr.func}({format_rexpr(expr.operand)})"
    if isinstance(expr, Identity):
        return f"1{expr.func}"
    raise TypeError(f"not a register expression: {expr!r}")


def format_rpred(pred: RPred) -> str:
    """A predicate as text (``≡`` is null-safe equality)."""
    if isinstance(pred, TrueP):
        return "TRUE"
    if isinstance(pred, Cmp):
        return f"{format_rexpr(pred.left)} {pred.op} {format_rexpr(pred.right)}"
    if isinstance(pred, In):
        values = ", ".join(format_value(v) for v in pred.values)
        neg = "NOT " if pred.negated else ""
        return f"{format_rexpr(pred.operand)} {neg}IN ({values})"
    if isinstance(pred, IsNull):
        return f"{format_rexpr(pred.operand)} IS NULL"
    if isinstance(pred, SameValue):
        return f"{format_rexpr(pred.left)} ≡ {format_rexpr(pred.right)}"
    if isinstance(pred, PNot):
        return f"NOT ({format_rpred(pred.operand)})"
    if isinstance(pred, PAnd):
        return " AND ".join(_wrap(p) for p in pred.operands)
    if isinstance(pred, POr):
        return " OR ".join(_wrap(p) for p in pred.operands)
    raise TypeError(f"not a register predicate: {pred!r}")


def _wrap(pred: RPred) -> str:
    text = format_rpred(pred)
    return f"({text})" if isinstance(pred, (PAnd, POr)) else text


def _copy_group(reg: str, expr: RExpr) -> str | None:
    """``n`` when ``reg := expr`` is the copy ``a#n := a``."""
    if isinstance(expr, Reg) and "#" not in expr.name and reg.startswith(expr.name + "#"):
        return reg[len(expr.name) + 1 :]
    return None


def format_assignment(t: Transition) -> str:
    copies: dict[str, list[str]] = {}
    others: list[str] = []
    for reg, expr in t.assignment:
        group = _copy_group(reg, expr)
        if group is not None:
            copies.setdefault(group, []).append(reg.split("#")[0])
        else:
            others.append(f"{reg} := {format_rexpr(expr)}")
    parts = [f"e ▷ #{g} ({', '.join(attrs)})" for g, attrs in copies.items()]
    return "; ".join(parts + others)


def format_renaming(renaming: Renaming) -> str:
    groups = {reg.split("#", 1)[1] for _, reg in renaming.items if "#" in reg}
    if len(groups) == 1 and all(reg == f"{a}#{next(iter(groups))}" for a, reg in renaming.items):
        return f"e#{next(iter(groups))}"
    return "{" + ", ".join(f"{a}↦{reg}" for a, reg in renaming.items) + "}"


def format_output(t: Transition) -> str:
    return "; ".join(
        f"{var} ↦ {{{{{', '.join(format_renaming(r) for r in renamings)}}}}}"
        for var, renamings in t.output
    )


def transition_label(t: Transition) -> str:
    """Predicate, assignment and outputs of a transition, one per line."""
    lines = [format_rpred(t.predicate)]
    assignment = format_assignment(t)
    lines.append(assignment if assignment else "∅ (erase)")
    output = format_output(t)
    if output:
        lines.append(output)
    return "\n".join(lines)


def to_graphviz(automaton: ACEA, name: str = "ACEA") -> graphviz.Digraph:
    """One node per state (initial: bold, filled; final: double circle)."""
    dot = graphviz.Digraph(name=name, graph_attr={"rankdir": "LR"})
    dot.attr("node", shape="circle", fontname="Helvetica")
    dot.attr("edge", fontname="Helvetica", fontsize="10")
    for q in automaton.states():
        attrs = {"shape": "doublecircle" if q in automaton.finals else "circle"}
        if q == automaton.initial:
            attrs.update(style="bold,filled", fillcolor="lightgrey")
        dot.node(str(q), f"q{q}", **attrs)
    for t in automaton.transitions:
        dot.edge(str(t.source), str(t.target), label=transition_label(t))
    return dot


def to_dot(automaton: ACEA) -> str:
    """The DOT source of the automaton's picture (no ``dot`` program needed)."""
    return str(to_graphviz(automaton).source)


def to_svg(automaton: ACEA) -> str:
    """The picture as SVG text (needs the ``dot`` program)."""
    return to_graphviz(automaton).pipe(format="svg").decode("utf-8")


def render(automaton: ACEA, path: str | Path, fmt: str | None = None) -> Path:
    """Write the picture to ``path`` (format from ``fmt`` or the suffix: svg, png, pdf, dot)."""
    target = Path(path)
    kind = (fmt or target.suffix.lstrip(".") or "svg").lower()
    if kind in ("dot", "gv"):
        target.write_text(to_dot(automaton), encoding="utf-8")
        return target
    target.write_bytes(to_graphviz(automaton).pipe(format=kind))
    return target


class Diagram:
    """A Jupyter-friendly wrapper: displays an automaton as SVG."""

    def __init__(self, automaton: ACEA) -> None:
        self.automaton = automaton

    def _repr_svg_(self) -> str:
        return to_svg(self.automaton)
