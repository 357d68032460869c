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

import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import graphviz
from acel.acea.model import expressions as ex
from acel.acea.model.expressions import AutomatonView
from acel.acea.model.glossary import Glossary
from acel.acea.model.layout import collisions
from acel.acea.model.transitions import Renaming, Transition
from acel.acea.model.words import Names, Speaker, guard_lines

_BOOKKEEPING = re.compile(r"^((inc|dec|same)_[a-z]+\d*|now|start)#")



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


def format_rexpr(expr: ex.RExpr) -> str:
    """An expression as text (``Combine`` as ``⊕F``, ``Lift`` as ``gF``, ``Finish`` as ``hF``)."""
    if isinstance(expr, ex.Reg):
        return expr.name
    if isinstance(expr, ex.Const):
        return format_value(expr.value)
    if isinstance(expr, ex.Arith):
        return f"({format_rexpr(expr.left)} {expr.op} {format_rexpr(expr.right)})"
    if isinstance(expr, ex.Negate):
        return f"-{format_rexpr(expr.operand)}"
    if isinstance(expr, ex.Lift):
        return f"g{expr.func}({format_rexpr(expr.operand)})"
    if isinstance(expr, ex.Combine):
        return f"{format_rexpr(expr.left)} ⊕{expr.func} {format_rexpr(expr.right)}"
    if isinstance(expr, ex.Finish):
        return f"h{expr.func}({format_rexpr(expr.operand)})"
    if isinstance(expr, ex.Identity):
        return f"1{expr.func}"
    if isinstance(expr, ex.GapStep):
        return f"δ[{expr.label or 'ψ'}]({format_rexpr(expr.operand)} ∪ {{q0}})"
    raise TypeError(f"not a register expression: {expr!r}")


def format_rpred(pred: ex.RPred) -> str:
    """A predicate as text (``≡`` is null-safe equality)."""
    if isinstance(pred, ex.TrueP):
        return "TRUE"
    if isinstance(pred, ex.Cmp):
        return f"{format_rexpr(pred.left)} {pred.op} {format_rexpr(pred.right)}"
    if isinstance(pred, ex.In):
        values = ", ".join(format_value(v) for v in pred.values)
        neg = "NOT " if pred.negated else ""
        return f"{format_rexpr(pred.operand)} {neg}IN ({values})"
    if isinstance(pred, ex.IsNull):
        return f"{format_rexpr(pred.operand)} IS NULL"
    if isinstance(pred, ex.SameValue):
        return f"{format_rexpr(pred.left)} ≡ {format_rexpr(pred.right)}"
    if isinstance(pred, ex.PNot):
        return f"NOT ({format_rpred(pred.operand)})"
    if isinstance(pred, ex.PAnd):
        return " AND ".join(_wrap(p) for p in pred.operands)
    if isinstance(pred, ex.POr):
        return " OR ".join(_wrap(p) for p in pred.operands)
    if isinstance(pred, ex.GapClear):
        return f"no match of {pred.label or 'ψ'} in {format_rexpr(pred.operand)}"
    raise TypeError(f"not a register predicate: {pred!r}")


def _wrap(pred: ex.RPred) -> str:
    text = format_rpred(pred)
    return f"({text})" if isinstance(pred, (ex.PAnd, ex.POr)) else text


def _copy_group(reg: str, expr: ex.RExpr) -> str | None:
    """``n`` when ``reg := expr`` is the copy ``a#n := a``."""
    if isinstance(expr, ex.Reg) and "#" not in expr.name and reg.startswith(expr.name + "#"):
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


def gap_of(t: Transition) -> ex.GapStep | None:
    """The ``GapStep`` a gap loop assigns (``None`` for any other transition)."""
    for _, expr in t.assignment:
        if isinstance(expr, ex.GapStep):
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


DETAILS = ("short", "full")
"""How much an edge label says: ``short`` (the default) gives the guard in the
query's words, the register updates behind a numbered legend; ``full`` gives
every predicate, assignment and output over registers."""

MAX_SIZE = (1600, 1200)
"""The largest picture, in points (a laptop screen): Graphviz scales larger ones down."""

LABEL_WIDTH = 38
"""Edge labels wrap at this many characters."""

LEGEND_WIDTH = 100
"""Legend lines wrap at this many characters."""

LABEL_LINES = 6
"""The most lines one transition's guard takes on an edge (more: ``...``)."""

_PLAIN = str.maketrans({"▷": ">", "↦": "->", "∅": "{}", "⊕": "+", "≡": "==", "δ": "step",
                        "∪": "u", "ψ": "psi"})


def plain(text: str) -> str:
    """``text`` with the symbols that fonts lack (▷ ↦ ∅ ⊕ ≡ δ ∪ ψ, boxes under cairosvg)
    written in ASCII; Latin-1 symbols such as ``¬`` stay."""
    return text.translate(_PLAIN)


def _wrap_lines(lines: list[str], width: int, most: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.extend(textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False)
                   or [""])
    return out if len(out) <= most else out[: most - 1] + ["..."]


def element_of(t: Transition, prefix: str = "") -> str:
    """The SVG id of what a short picture draws for ``t``: its skip loop (``skip-3``)
    or the edge it shares with the other transitions between its states (``edge-1-3``)."""
    if _is_skip(t):
        return element_id(prefix, "skip", t.source)
    return element_id(prefix, "edge", t.source, t.target)


def _is_skip(t: Transition) -> bool:
    """The skip loop of ``;`` / ``+``: reads any event and changes nothing but dropping
    or keeping registers."""
    return (isinstance(t.predicate, ex.TrueP) and not t.output and t.source == t.target
            and all(isinstance(e, ex.Reg) and e.name == r for r, e in t.assignment))


SKIP_KEY = "dashed grey loop: the run skips any event (waits for the next one it needs)"
"""The legend's line for the unlabelled skip loops of ``;`` and ``+``."""


class Legend:
    """The numbered register updates of a short picture (equal texts share a number)."""

    def __init__(self) -> None:
        self.items: dict[str, int] = {}
        self.skips = False
        """Whether the picture draws skip loops (dashed, unlabelled): the legend says so."""
        self.loops: set[str] = set()
        """The ids of the labelled self-loops drawn."""
        self.notes: list[str] = []
        """Lines before the numbered updates (a full picture's notation key)."""
        self.above: frozenset[str] = frozenset()
        """The labelled self-loops to draw above their state (below: the others)."""

    def number(self, text: str) -> int:
        """The number of ``text`` in the legend (a new one when it is new)."""
        return self.items.setdefault(text, len(self.items) + 1)

    def text(self) -> str:
        """The legend as a Graphviz label, lines left-justified (``\\l``)."""
        lines = [SKIP_KEY] if self.skips else []
        for note in self.notes:
            lines.extend(_wrap_lines([note], LEGEND_WIDTH, 10**6))
        if self.items:
            lines.append("register updates (acel compile --detail full shows all):")
        for text, n in self.items.items():
            lines.extend(_wrap_lines([f"[{n}] {text}"], LEGEND_WIDTH, 10**6))
        return "".join(line.replace("\\", "\\\\") + "\\l" for line in lines)


def updates_text(t: Transition, names: Names) -> str:
    """What a transition stores, in the query's words: ``store d; m.flights := ...``
    (bookkeeping of INC/DEC/SAME and WITHIN left out)."""
    if not t.assignment:
        return "forget every register"
    stored: dict[str, None] = {}
    for reg, expr in t.assignment:
        var = names.variable(reg) if _copy_group(reg, expr) is not None else None
        if var is not None:  # the copies of an event no variable keeps only test its type
            stored[var] = None
    speak = Speaker(names, event=next(iter(stored), "e"))
    parts: list[str] = []
    glossary = names.glossary
    for reg, expr in t.assignment:
        if _copy_group(reg, expr) is not None:
            continue
        elif isinstance(expr, ex.Reg) and expr.name == reg:
            continue
        elif glossary.register(reg) is not None:  # what a relating filter keeps: said once
            kept = f"track {glossary.register(reg)}"
            if kept not in parts:
                parts.append(kept)
        elif (formula := glossary.counter(reg)) is not None:
            parts.append(f"1st repetition of {formula}" if expr == ex.Const(1)
                         else f"next repetition of {formula}")
        elif isinstance(expr, ex.GapStep):
            parts.append(f"step the runs of NOT {expr.label or 'psi'}")
        elif isinstance(expr, ex.Const) and expr.value == frozenset():
            parts.append("no runs of the NOT yet")
        elif not (_BOOKKEEPING.match(reg)):
            parts.append(f"{speak.reg(reg)} := {speak.expr(expr)}")
    head = [f"store {', '.join(stored)}"] if stored else []
    types = set(names.types.values())
    emits = [var for var, _ in t.output if var not in stored and var not in types]
    tail = [f"emit {', '.join(emits)}"] if emits else []
    return "; ".join(head + parts + tail)


def short_label(t: Transition, names: Names, legend: Legend,
                width: int = LABEL_WIDTH) -> list[str]:
    """A transition's edge label: its guard in the query's words, wrapped, then the
    legend number of its updates."""
    if _is_skip(t):
        return ["any event (skip)"]
    try:
        guard, updates = guard_lines(t, names), updates_text(t, names)
    except TypeError:  # a node the words do not know yet: the register text, still readable
        guard, updates = [format_rpred(t.predicate)], format_assignment(t)
    lines = _wrap_lines(guard, width, LABEL_LINES)  # a gap loop says NOT psi
    if updates:
        lines[-1] += f"  [{legend.number(plain(updates))}]"
    return [plain(line) for line in lines]


def _type_only(t: Transition, names: Names) -> str | None:
    """The type ``t`` reads when its guard is that type alone (the other types
    ``NEXT(R)`` passes over), else ``None``."""
    lines = guard_lines(t, names)
    return lines[0] if len(lines) == 1 and lines[0] in names.types.values() else None


def _merged_types(transitions: list[Transition], names: Names, legend: Legend) -> list[str]:
    """One line for two or more transitions that differ only in the type they read:
    ``any type but Stock`` (the complement among the automaton's types) or ``one of: ...``."""
    read = sorted({_type_only(t, names) or "" for t in transitions})
    others = sorted(set(names.types.values()) - set(read))
    text = f"any type but {', '.join(others)}" if len(others) < len(read) else (
        f"one of: {', '.join(read)}")
    if not others:
        text = "any event"
    updates = updates_text(transitions[0], names)
    lines = _wrap_lines([text], LABEL_WIDTH, LABEL_LINES)
    if updates:
        lines[-1] += f"  [{legend.number(plain(updates))}]"
    return [plain(line) for line in lines]


def edge_label(transitions: list[Transition], names: Names, legend: Legend, detail: str) -> str:
    """The label of the one edge drawn for all transitions between two states (in
    ``short`` detail, transitions that differ only in the type read share a line)."""
    blocks = []
    if detail == "full":
        blocks = [_wrap_lines([plain(line) for line in transition_label(t).split("\n")],
                              FULL_WIDTH, 10**6) for t in transitions]
    else:
        by_updates: dict[str, list[Transition]] = {}
        for t in transitions:
            if _type_only(t, names) is not None:
                by_updates.setdefault(updates_text(t, names), []).append(t)
        merged = {id(t) for group in by_updates.values() if len(group) >= 2 for t in group}
        for t in transitions:
            if id(t) not in merged:
                blocks.append(short_label(t, names, legend))
        for group in by_updates.values():
            if len(group) >= 2:
                blocks.append(_merged_types(group, names, legend))
    lines: list[str] = []
    for block in blocks:
        if lines:
            lines.append("- or -")
        lines.extend(block)
    return "\n".join(lines)


def to_graphviz(automaton: AutomatonView, name: str = "ACEA", detail: str = "short") -> graphviz.Digraph:
    """One node per state (initial: bold, filled; final: double circle), one edge per
    pair of states (so self-loops never overlap); ``detail`` as in :data:`DETAILS`.

    Each negated formula's automaton is a dashed cluster (its nodes named
    ``<gap register>/<state>``, so they never clash with the outer states).
    Nodes and edges carry SVG ids (``state-3``, ``edge-1-3``) for the step-through view.
    """
    if detail not in DETAILS:
        raise ValueError(f"detail must be one of {', '.join(DETAILS)}, not {detail!r}")
    dot, loops = _picture(automaton, name, detail, frozenset())
    if shutil.which("dot") is None or not loops or automaton.num_states > LAYOUT_CHECKED:
        return dot
    try:  # a loop hangs below its state; one whose text lands on something goes above
        best, found = dot, collisions(dot.source)
        tried: set[frozenset[str]] = {frozenset()}
        for _ in range(3):
            moved = frozenset(a for a, _ in found if a in loops)
            for above in (moved, frozenset(loops) - moved, frozenset(loops)):
                if not found or above in tried:
                    continue
                tried.add(above)
                again, _ = _picture(automaton, name, detail, above)
                now = collisions(again.source)
                if len(now) < len(found):
                    best, found = again, now
        return best
    except (OSError, subprocess.SubprocessError, ValueError):  # no layout: the first picture
        return dot


LAYOUT_CHECKED = 60
"""Pictures of at most this many states are laid out again to move loops off collisions
(a layout takes about 0.1 s at 13 states and 290 transitions; larger ones, seconds)."""


def _picture(automaton: AutomatonView, name: str, detail: str,
             above: frozenset[str]) -> tuple[graphviz.Digraph, set[str]]:
    """The picture with the labelled loops ``above`` drawn above their state (the
    others below), and the ids of all labelled loops."""
    width, height = MAX_SIZE
    font = "10" if detail == "short" else FULL_FONT
    graph = {"rankdir": "LR", "nodesep": "0.3", "fontname": "Helvetica", "fontsize": font}
    if detail == "short":  # fits a screen; the full picture keeps its text size and scrolls
        graph["size"] = f"{width / 72:.2f},{height / 72:.2f}"
    dot = graphviz.Digraph(name=name, graph_attr=graph)
    dot.attr("node", shape="circle", fontname="Helvetica")
    dot.attr("edge", fontname="Helvetica", fontsize=font)
    legend = Legend()
    legend.above = above
    _draw(dot, automaton, "", detail, legend)
    if detail == "full":
        legend.notes = full_key(automaton.words) + legend.notes
    if legend.items or legend.skips or legend.notes:
        dot.attr(label=legend.text(), labeljust="l", labelloc="b")
    return dot, legend.loops


FULL_FONT = "12"
"""The text size of a ``full`` picture, in points: it is never scaled down."""

FULL_WIDTH = 64
"""Lines of a ``full`` edge label wrap at this many characters."""

NOTATION = (
    "notation: e > #n (a, b): copy the event's a, b into registers a#n, b#n;"
    " x -> {{e#n}}: emit that copy into variable x; {} (erase): keep no register",
    "+F: combine two values of aggregate F (+MAX: the larger; +COUNT: add counts);"
    " gF(v): v as one value of F; hF(r): the result of F (AVG: sum / count); 1F: F of nothing",
    "==: equal or both NULL; step[psi](r u {q0}): advance the runs of NOT psi held in r",
)
"""What the register notation of a ``full`` picture means (in its legend)."""


def full_key(words: Glossary) -> list[str]:
    """The legend of a ``full`` picture: the notation, then what the compiler's own
    registers serve (relating filters, repetition counters, the terms they hold)."""
    lines = list(NOTATION)
    served: dict[str, list[str]] = {}
    for reg, text in words.registers.items():
        served.setdefault(text, []).append(reg)
    for text, regs in served.items():
        lines.append(f"{', '.join(sorted(regs, key=_number))}: kept for {text}")
    for reg, term in {**words.carried, **words.terms}.items():
        lines.append(f"{reg}: {term.text}")
    for reg, formula in words.counters.items():
        lines.append(f"{reg}: counts the repetitions of {formula}")
    return lines


def _number(reg: str) -> int:
    tail = reg.rsplit("#", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def element_id(prefix: str, kind: str, *parts: int) -> str:
    """The SVG id of a state (``state-3``) or edge (``edge-1-3``) of the picture."""
    head = re.sub(r"[^A-Za-z0-9]+", "_", prefix).strip("_")
    return "-".join([head, kind] if head else [kind]) + "".join(f"-{p}" for p in parts)


def _draw(dot: graphviz.Digraph, automaton: AutomatonView, prefix: str, detail: str,
          legend: Legend, words: Glossary | None = None) -> None:
    """States and transitions of ``automaton`` (node names prefixed), and the
    clusters of the negated automata its gap loops run (``words``: the outer
    automaton's glossary, which covers them)."""
    names = Names.of(automaton, words)
    for q in automaton.states():
        attrs = {"shape": "doublecircle" if q in automaton.finals else "circle",
                 "id": element_id(prefix, "state", q)}
        if q == automaton.initial:
            attrs.update(style="bold,filled", fillcolor="lightgrey")
        dot.node(f"{prefix}{q}", f"q{q}", **attrs)
    edges: dict[tuple[int, int], list[Transition]] = {}
    skips: list[int] = []
    for t in automaton.transitions:
        if detail == "short" and _is_skip(t):
            skips.append(t.source)
        else:
            edges.setdefault((t.source, t.target), []).append(t)
    for q in dict.fromkeys(skips):  # unlabelled, opposite the labelled loop: no text to collide
        side = "s" if element_id(prefix, "edge", q, q) in legend.above else "n"
        dot.edge(f"{prefix}{q}", f"{prefix}{q}", tailport=side, headport=side, style="dashed",
                 color="grey50", arrowsize="0.6", tooltip="any event (skip)",
                 id=element_id(prefix, "skip", q))
        legend.skips = True
    for (source, target), group in edges.items():
        gapped = any(gap_of(t) is not None for t in group)
        style = ({"color": "firebrick", "fontcolor": "firebrick", "style": "bold"}
                 if gapped else {})
        ident = element_id(prefix, "edge", source, target)
        if source == target:  # loops hang below their state, clear of the edges beside it
            side = "n" if ident in legend.above else "s"
            style.update(tailport=side, headport=side)
            legend.loops.add(ident)
        label = edge_label(group, names, legend, detail)
        if source == target and detail == "full":  # long texts: in the legend, not on the loop
            where = f"loop at {plain(prefix)}q{source}"
            legend.notes.extend([f"{where}:", *label.split("\n")])
            style["tooltip"] = f"{where}: see the legend"
            label = ""  # no text of its own: nothing to land on the edges beside
        dot.edge(f"{prefix}{source}", f"{prefix}{target}", label=label, id=ident, **style)
    drawn: set[str] = set()
    for t in automaton.transitions:
        gap = gap_of(t)
        if gap is None:
            continue
        register = next(reg for reg, expr in t.assignment if expr is gap)
        inner = f"{prefix}{register}/"
        if inner in drawn:
            continue
        drawn.add(inner)
        with dot.subgraph(name=f"cluster_{inner}") as cluster:
            cluster.attr(
                label=plain(f"¬({gap.label or 'ψ'}): its runs, held in the state it joins"),
                style="dashed",
                color="firebrick",
                fontcolor="firebrick",
            )
            _draw(cluster, gap.automaton, inner, detail, legend, names.glossary)
        dot.edge(
            f"{prefix}{t.source}",
            f"{inner}{gap.automaton.initial}",
            style="dashed",
            color="firebrick",
            arrowhead="none",
            label="runs",
            fontcolor="firebrick",
        )


def to_dot(automaton: AutomatonView, detail: str = "short") -> str:
    """The DOT source of the automaton's picture (no ``dot`` program needed)."""
    return str(to_graphviz(automaton, detail=detail).source)


def to_svg(automaton: AutomatonView, detail: str = "short") -> str:
    """The picture as SVG text (needs the ``dot`` program)."""
    return to_graphviz(automaton, detail=detail).pipe(format="svg").decode("utf-8")


def render(automaton: AutomatonView, path: str | Path, fmt: str | None = None,
           detail: str = "short") -> Path:
    """Write the picture to ``path`` (format from ``fmt`` or the suffix: svg, png, pdf, dot)."""
    target = Path(path)
    kind = (fmt or target.suffix.lstrip(".") or "svg").lower()
    if kind in ("dot", "gv"):
        target.write_text(to_dot(automaton, detail), encoding="utf-8")
        return target
    target.write_bytes(to_graphviz(automaton, detail=detail).pipe(format=kind))
    return target


INSTALL_HINT = "install Graphviz (sudo apt-get install graphviz, or brew install graphviz)"
"""How to get pictures, for messages shown when ``dot`` is missing."""


def render_or_dot(automaton: AutomatonView, path: str | Path, fmt: str | None = None,
                  detail: str = "short") -> tuple[Path, bool]:
    """Like :func:`render`, but without Graphviz write the DOT source instead.

    Returns the file written and whether it is the picture asked for: without
    the ``dot`` program (``graphviz.ExecutableNotFound``) the DOT source goes
    to ``path`` with the suffix ``.dot``, from which ``dot -Tsvg`` draws the
    picture later.
    """
    try:
        return render(automaton, path, fmt, detail), True
    except graphviz.ExecutableNotFound:
        target = Path(path).with_suffix(".dot")
        target.write_text(to_dot(automaton, detail), encoding="utf-8")
        return target, False


def draw_command(dot_file: str | Path, picture: str | Path) -> str:
    """The command that turns a DOT file into the picture (format from its suffix)."""
    kind = Path(picture).suffix.lstrip(".").lower() or "svg"
    return f"dot -T{kind} {dot_file} -o {picture}"


def svg_or_none(automaton: AutomatonView) -> str | None:
    """The SVG picture, or ``None`` when Graphviz's ``dot`` is not installed."""
    try:
        return to_svg(automaton)
    except graphviz.ExecutableNotFound:
        return None


SUMMARY_TRANSITIONS = 40
"""The most transitions :func:`summary` lists."""


def transition_lines(automaton: AutomatonView, detail: str = "short") -> tuple[list[list[str]], Legend]:
    """Each transition's label as lines (``detail`` as in :data:`DETAILS`), and the
    legend of the register updates the short labels number."""
    names, legend = Names.of(automaton), Legend()
    if detail == "full":
        return [transition_label(t).split("\n") for t in automaton.transitions], legend
    return [short_label(t, names, legend, 10**6) for t in automaton.transitions], legend


def summary(automaton: AutomatonView, detail: str = "short") -> str:
    """The automaton as plain text: its size, then one block per transition (the guard in
    the query's words, the updates numbered below; ``detail="full"``: the registers).

    What a notebook shows when it cannot draw (no ``dot``), with a line saying
    how to get the picture; also handy in a terminal.
    """
    size = automaton.size()
    finals = ", ".join(f"q{q}" for q in sorted(automaton.finals)) or "none"
    lines = [
        f"ACEA: {size['states']} states, {size['transitions']} transitions, "
        f"{size['registers']} registers; initial q{automaton.initial}, final {finals}"
    ]
    labels, legend = transition_lines(automaton, detail)
    for t, label in list(zip(automaton.transitions, labels))[:SUMMARY_TRANSITIONS]:
        head = f"  q{t.source} -> q{t.target}  "
        lines.append(head + label[0])
        lines.extend(" " * len(head) + rest for rest in label[1:])
    hidden = len(automaton.transitions) - SUMMARY_TRANSITIONS
    if hidden > 0:
        lines.append(f"  ... and {hidden} more transitions")
    lines.extend(f"  [{n}] {text}" for text, n in legend.items.items())
    if shutil.which("dot") is None:
        lines.append(f"(no picture: Graphviz's dot is not installed; {INSTALL_HINT})")
    return "\n".join(lines)


class Diagram:
    """A Jupyter-friendly wrapper: displays an automaton as SVG, or as text without dot."""

    def __init__(self, automaton: AutomatonView) -> None:
        self.automaton = automaton

    def _repr_svg_(self) -> str | None:
        return svg_or_none(self.automaton)  # None: the notebook shows _repr_pretty_

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(summary(self.automaton))

    def __str__(self) -> str:
        return summary(self.automaton)
