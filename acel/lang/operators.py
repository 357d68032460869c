"""ACEL's operators and query clauses by name, and which of them a query uses.

An engine that runs only part of ACEL declares the rest *unsupported* in
these names (:attr:`acel.engines.Engine.unsupported`, ``acel conform
--without``, the ``operators`` knob of :mod:`acel.testing`): conformance
checks then generate only queries it supports, and ``acel conform`` leaves it
out of the queries it cannot run.  ``papers/conformance.md`` has the table.
"""

from __future__ import annotations

from collections.abc import Iterable

from acel.lang.ast import AggOutput, Query, walk
from acel.lang.errors import AcelError

OPERATORS: dict[str, str] = {
    "AS": "φ AS X",
    "FILTER": "φ FILTER X[P] (unary predicates: comparisons, arithmetic, IN, NOT, AND, OR)",
    "BAG": "φ FILTER X[SAME(a)], X[INC(a)], X[DEC(a)] (bag predicates)",
    "OR": "φ1 OR φ2",
    "AND": "φ1 AND φ2",
    "SEQ": "φ1 ; φ2",
    "CONTIG": "φ1 : φ2",
    "PLUS": "φ+",
    "CONTIG_PLUS": "φ:+",
    "PROJECT": "PROJECT[X, …](φ)",
    "PROJECT_ATTRS": "PROJECT X[a, …](φ)",
    "AGG": "AGG Z[b := F(X.a), …](φ)",
    "NEXT": "NEXT(R)",
    "REPEAT": "φ{n}, φ{n,m}, φ{n,} and φ:{n}, φ:{n,m}, φ:{n,} (counted repetition)",
    "OPTIONAL": "ψ? and ψ* as elements of a ; or : sequence",
    "RELATE": "X[P] with Y.a, F(Y.a), COUNT(Y), FIRST/LAST(Y.a), PREV(a), RUNNING F(a) (spec §5.1)",
    "NOT": "φ1 ; NOT ψ ; φ2 (middle negation)",
    "TOP_NOT": "NOT ψ ; φ and φ ; NOT ψ (leading and trailing negation)",
    "PARTITION_BY": "PARTITION BY a, …",
    "WITHIN": "WITHIN n EVENTS",
    "WITHIN_ON": "WITHIN d ON attr, SLIDE d ON attr",
    "SLIDE": "SLIDE s (with RETURN and WITHIN)",
    "RETURN": "RETURN items PATTERN φ (trend aggregation across matches)",
    "SELECT": "SELECT STRICT|NEXT|LAST|MAX φ (selection strategies, spec §6.2)",
    "SKIP": "AFTER MATCH SKIP TO NEXT ROW|PAST LAST ROW|TO FIRST X|TO LAST X",
}
"""Every name an engine can declare unsupported, with the syntax it stands for.
An atom ``R`` is always supported.  Each formula node names its own entry
(:attr:`acel.lang.ast.Seq.operator` and so on), and so does ``BagPred`` (``BAG``)."""

def operator_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` checked against :data:`OPERATORS` (case-insensitive; ``;`` ``:`` ``+``
    ``:+`` accepted for SEQ, CONTIG, PLUS, CONTIG_PLUS)."""
    aliases = {";": "SEQ", ":": "CONTIG", "+": "PLUS", ":+": "CONTIG_PLUS"}
    out = set()
    for raw in names:
        name = raw.strip()
        name = aliases.get(name, name.upper().replace(" ", "_"))
        if not name:
            continue
        if name not in OPERATORS:
            raise AcelError(f"unknown operator {raw!r} (choose from {', '.join(OPERATORS)})")
        out.add(name)
    return frozenset(out)


def operators_of(query: Query) -> frozenset[str]:
    """The names of :data:`OPERATORS` that ``query`` uses (negated ``ψ`` included)."""
    # every node below the formula, negated ψ and filters included, declares its entry
    declared = (getattr(type(node), "operator", None) for node in walk(query.formula))
    used: set[str] = {name for name in declared if name is not None}
    if any(
        isinstance(node, AggOutput) and node.func in ("FIRST", "LAST")
        for node in walk(query.formula)
    ):
        used.add("RELATE")  # FIRST/LAST as AGG outputs (spec §5.1)
    if query.partition_by:
        used.add("PARTITION_BY")
    if query.within is not None:
        used.add("WITHIN")
    if any(w is not None and w.attr is not None for w in (query.within, query.slide)):
        used.add("WITHIN_ON")
    if query.slide is not None:
        used.add("SLIDE")
    if query.returns is not None:
        used.add("RETURN")
    if query.select != "ALL":
        used.add("SELECT")
    if query.skip is not None:
        used.add("SKIP")
    return frozenset(used)
