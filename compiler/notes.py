"""Notes the query's words for what a relating filter or a counter adds (pictures only).

:func:`note_relating` compares the automaton before and after one conjunct of a
relating filter (spec §5.1, :mod:`acel.compiler.relate`): every guard conjunct and
register that appeared serves that conjunct, so it is glossed with its canonical
text (``up[price > 1.05 * first.price]``).  The two guards that split a step on
whether ``FIRST(Y.a)`` is already set are glossed as such.  :func:`note_counter`
names the formula a repetition's counter counts.  See :mod:`acel.acea.model.glossary`.
"""

from __future__ import annotations

import re

from acel.acea.model.expressions import IsNull, PAnd, PNot, Reg, RPred, TrueP
from acel.acea.model.glossary import Glossary, Term
from acel.compiler.automaton import Auto

from acel.lang.ast import FirstLast, Formula, Pred, Prev, Running, VarAttr
from acel.lang.printer import format_expr, format_formula, format_pred
from acel.lang.relate import relating_terms

_EDGE = re.compile(r"^rel_(first|last)#(\d+)$")


def _conjuncts(pred: RPred) -> list[RPred]:
    if isinstance(pred, PAnd):
        return [c for p in pred.operands for c in _conjuncts(p)]
    return [] if isinstance(pred, TrueP) else [pred]


def _assigned(auto: Auto) -> set[str]:
    return {reg for t in auto.transitions for reg, _ in t.assignment}


def note_relating(words: Glossary, before: Auto, after: Auto, var: str, conjunct: Pred) -> None:
    """Gloss the guards and registers ``after`` has and ``before`` had not: all serve
    ``var[conjunct]`` (nothing noted when the conjunct reads only ``var``'s own event)."""
    terms = [t for t in relating_terms(conjunct) if not (isinstance(t, VarAttr) and t.var == var)]
    if not terms:
        return
    text = f"{var}[{format_pred(conjunct)}]"
    new_regs = _assigned(after) - _assigned(before)
    for reg in new_regs:
        words.registers[reg] = text
    edge_terms = [t for t in dict.fromkeys(terms) if isinstance(t, FirstLast)]
    by_reg = dict(zip(_numbered(new_regs, _EDGE), edge_terms))
    for reg, edge in by_reg.items():
        words.terms[reg] = words.carried[reg] = Term(format_expr(edge))
    history = [t for t in dict.fromkeys(terms) if isinstance(t, (Prev, Running))]
    if all(isinstance(t, (Prev, Running)) for t in terms):  # relate._history: the value at
        for stem, table in (("rel_old", words.terms), ("rel_(prev|run)", words.carried)):  # the
            for reg, held in zip(_numbered(new_regs, re.compile(rf"^{stem}#\d+$")), history):
                func = held.func if isinstance(held, Running) else None  # step, the next one
                table[reg] = Term(format_expr(held), func)
    old = {c for t in before.transitions for c in _conjuncts(t.predicate)}
    for t in after.transitions:
        for c in _conjuncts(t.predicate):
            if c in old:
                continue
            flag, unset = c, True
            if isinstance(flag, PNot):
                flag, unset = flag.operand, False
            if isinstance(flag, IsNull) and isinstance(flag.operand, Reg) and "_was#" in flag.operand.name:
                first = by_reg.get(flag.operand.name.replace("_was#", "#"))
                name = format_expr(first) if first is not None else "FIRST"
                owner = first.var if first is not None else "event"
                words.firsts[c] = (f"first {owner} (sets {name})" if unset
                                   else f"a later {owner} ({name} already set)")
            else:
                words.guards[c] = text


def _numbered(regs: set[str], pattern: re.Pattern[str]) -> list[str]:
    """The registers matching ``pattern`` in the order the compiler made them."""
    return sorted((r for r in regs if pattern.match(r)), key=lambda r: int(r.rsplit("#", 1)[1]))


def note_counter(words: Glossary, before: Auto, after: Auto, repeated: Formula) -> None:
    """Gloss the counter register a repetition of ``repeated`` adds."""
    text = format_formula(repeated)
    if len(text) > COUNTED_TEXT:  # a macro's expansion (NEXT, a nested {n,m}) runs on for pages
        text = text[:COUNTED_TEXT].rsplit(" ", 1)[0] + " …"
    for reg in _assigned(after) - _assigned(before):
        words.counters[reg] = text


COUNTED_TEXT = 60
"""The most characters of a counted formula's text a picture shows (then `…`)."""
