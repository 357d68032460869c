"""Readable text and Graphviz pictures of an ACEA.

``format_rexpr`` / ``format_rpred`` print register expressions and
predicates; ``transition_label`` prints one transition as three lines
(predicate, assignment, outputs).  An atom's copies ``a#n := a`` are shown
as ``e ▷ #n (a, b, ...)`` and a renaming ``{a ↦ a#n, ...}`` that copies
them all back as ``e#n``.  ``to_dot`` and ``summary`` always work (they only
build text); ``render`` and ``to_svg`` call Graphviz's ``dot`` program.

Negation (spec §3.1): the gap loop of ``φ1 ; NOT ψ ; φ2`` is drawn bold and
red, labelled ``¬ψ``; ψ's own automaton (what the gap register runs) is drawn
as a dashed cluster next to it, joined to the gap state by a dashed edge
(nested negations nest their clusters).

Graphviz is optional: ``render_or_dot`` writes the DOT source instead of a
picture when ``dot`` is missing (the command line and the demo use it and say
how to get the picture), and the notebook displays (``Diagram``,
``ACEA._repr_svg_``) fall back to the plain-text ``summary``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import graphviz
from acel.acea.model.automaton import ACEA, Renaming, Transition
from acel.acea.model.expressions import (
    Arith,
    Cmp,
    Combine,
    Const,
    Finish,
    GapClear,
    GapStep,
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


def format_value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, frozenset) and not value:
        return "∅"
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
    if isinstance(expr, GapStep):
        return f"δ[{expr.label or 'ψ'}]({format_rexpr(expr.operand)} ∪ {{q0}})"
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
    if isinstance(pred, GapClear):
        return f"no match of {pred.label or 'ψ'} in {format_rexpr(pred.operand)}"
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


def gap_of(t: Transition) -> GapStep | None:
    """The ``GapStep`` a gap loop assigns (``None`` for any other transition)."""
    for _, expr in t.assignment:
        if isinstance(expr, GapStep):
            return expr
    return None


def transition_label(t: Transition) -> str:
    """Predicate, assignment and outputs of a transition, one per line
    (a gap loop first says which formula it excludes: ``¬ψ``)."""
    gap = gap_of(t)
    lines = [f"¬({gap.label or 'ψ'})"] if gap is not None else []
    lines.append(format_rpred(t.predicate))
    assignment = format_assignment(t)
    lines.append(assignment if assignment else "∅ (erase)")
    output = format_output(t)
    if output:
        lines.append(output)
    return "\n".join(lines)


def to_graphviz(automaton: ACEA, name: str = "ACEA") -> graphviz.Digraph:
    """One node per state (initial: bold, filled; final: double circle).

    Each negated formula's automaton is a dashed cluster (its nodes named
    ``<gap register>/<state>``, so they never clash with the outer states).
    """
    dot = graphviz.Digraph(name=name, graph_attr={"rankdir": "LR"})
    dot.attr("node", shape="circle", fontname="Helvetica")
    dot.attr("edge", fontname="Helvetica", fontsize="10")
    _draw(dot, automaton, "")
    return dot


def _draw(dot: graphviz.Digraph, automaton: ACEA, prefix: str) -> None:
    """States and transitions of ``automaton`` (node names prefixed), and the
    clusters of the negated automata its gap loops run."""
    for q in automaton.states():
        attrs = {"shape": "doublecircle" if q in automaton.finals else "circle"}
        if q == automaton.initial:
            attrs.update(style="bold,filled", fillcolor="lightgrey")
        dot.node(f"{prefix}{q}", f"q{q}", **attrs)
    drawn: set[str] = set()
    for t in automaton.transitions:
        gap = gap_of(t)
        style = {} if gap is None else {"color": "firebrick", "fontcolor": "firebrick", "style": "bold"}
        dot.edge(f"{prefix}{t.source}", f"{prefix}{t.target}", label=transition_label(t), **style)
        if gap is None:
            continue
        register = next(reg for reg, expr in t.assignment if expr is gap)
        inner = f"{prefix}{register}/"
        if inner in drawn:
            continue
        drawn.add(inner)
        with dot.subgraph(name=f"cluster_{inner}") as cluster:
            cluster.attr(
                label=f"¬({gap.label or 'ψ'}): the runs held in {register}",
                style="dashed",
                color="firebrick",
                fontcolor="firebrick",
            )
            _draw(cluster, gap.automaton, inner)
        dot.edge(
            f"{prefix}{t.source}",
            f"{inner}{gap.automaton.initial}",
            style="dashed",
            color="firebrick",
            arrowhead="none",
            label=f"runs {register}",
            fontcolor="firebrick",
        )


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


INSTALL_HINT = "install Graphviz (sudo apt-get install graphviz, or brew install graphviz)"
"""How to get pictures, for messages shown when ``dot`` is missing."""


def render_or_dot(automaton: ACEA, path: str | Path, fmt: str | None = None) -> tuple[Path, bool]:
    """Like :func:`render`, but without Graphviz write the DOT source instead.

    Returns the file written and whether it is the picture asked for: without
    the ``dot`` program (``graphviz.ExecutableNotFound``) the DOT source goes
    to ``path`` with the suffix ``.dot``, from which ``dot -Tsvg`` draws the
    picture later.
    """
    try:
        return render(automaton, path, fmt), True
    except graphviz.ExecutableNotFound:
        target = Path(path).with_suffix(".dot")
        target.write_text(to_dot(automaton), encoding="utf-8")
        return target, False


def draw_command(dot_file: str | Path, picture: str | Path) -> str:
    """The command that turns a DOT file into the picture (format from its suffix)."""
    kind = Path(picture).suffix.lstrip(".").lower() or "svg"
    return f"dot -T{kind} {dot_file} -o {picture}"


def svg_or_none(automaton: ACEA) -> str | None:
    """The SVG picture, or ``None`` when Graphviz's ``dot`` is not installed."""
    try:
        return to_svg(automaton)
    except graphviz.ExecutableNotFound:
        return None


SUMMARY_TRANSITIONS = 40
"""The most transitions :func:`summary` lists."""


def summary(automaton: ACEA) -> str:
    """The automaton as plain text: its size, then one block per transition.

    What a notebook shows when it cannot draw (no ``dot``), with a line saying
    how to get the picture; also handy in a terminal.
    """
    size = automaton.size()
    finals = ", ".join(f"q{q}" for q in sorted(automaton.finals)) or "none"
    lines = [
        f"ACEA: {size['states']} states, {size['transitions']} transitions, "
        f"{size['registers']} registers; initial q{automaton.initial}, final {finals}"
    ]
    for t in automaton.transitions[:SUMMARY_TRANSITIONS]:
        head = f"  q{t.source} -> q{t.target}  "
        label = transition_label(t).split("\n")
        lines.append(head + label[0])
        lines.extend(" " * len(head) + rest for rest in label[1:])
    hidden = len(automaton.transitions) - SUMMARY_TRANSITIONS
    if hidden > 0:
        lines.append(f"  ... and {hidden} more transitions")
    if shutil.which("dot") is None:
        lines.append(f"(no picture: Graphviz's dot is not installed; {INSTALL_HINT})")
    return "\n".join(lines)


class Diagram:
    """A Jupyter-friendly wrapper: displays an automaton as SVG, or as text without dot."""

    def __init__(self, automaton: ACEA) -> None:
        self.automaton = automaton

    def _repr_svg_(self) -> str | None:
        return svg_or_none(self.automaton)  # None: the notebook shows _repr_pretty_

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(summary(self.automaton))

    def __str__(self) -> str:
        return summary(self.automaton)
