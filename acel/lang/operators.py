"""ACEL's operators and query clauses by name, and which of them a query uses.

An engine that runs only part of ACEL declares the rest *unsupported* in
these names (:attr:`acel.engines.Engine.unsupported`, ``acel conform
--without``, the ``operators`` knob of :mod:`acel.testing`): conformance
checks then generate only queries it supports, and ``acel conform`` leaves it
out of the queries it cannot run.  ``papers/conformance.md`` has the table.
"""

from __future__ import annotations

from collections.abc import Iterable

from acel.lang.ast import NODE_KINDS, RELATING_TYPES, AggOutput, BagPred, Query, walk
from acel.lang.errors import AcelError

CLAUSES: dict[str, str] = {
    "PARTITION_BY": "PARTITION BY a, …",
    "WITHIN": "WITHIN n EVENTS",
    "WITHIN_ON": "WITHIN d ON attr, SLIDE d ON attr",
    "SLIDE": "SLIDE s (with RETURN and WITHIN)",
    "RETURN": "RETURN items PATTERN φ (trend aggregation across matches)",
    "SELECT": "SELECT STRICT|NEXT|LAST|MAX φ (selection strategies, spec §6.2)",
    "SKIP": "AFTER MATCH SKIP TO NEXT ROW|PAST LAST ROW|TO FIRST X|TO LAST X",
}
"""The query clauses an engine can declare unsupported, with the syntax they stand for
(:func:`operators_of` reads each from the :class:`acel.lang.ast.Query`)."""


def declared_operators() -> dict[str, str]:
    """Every operator a node of the AST declares (its ClassVars ``operator`` and
    ``syntax``): the formula nodes, ``BagPred`` (``BAG``) and the terms of spec §5.1
    (``RELATE``); a new node is listed without an entry here (issue 34)."""
    found: dict[str, str] = {}
    for cls in (*NODE_KINDS["formula"], BagPred, *RELATING_TYPES):
        name = getattr(cls, "operator", None)
        if name is not None:
            found.setdefault(name, cls.syntax)  # type: ignore[attr-defined]
    return found


OPERATORS: dict[str, str] = {**declared_operators(), **CLAUSES}
"""Every name an engine can declare unsupported, with the syntax it stands for: the
operators the AST's nodes declare, then the clauses.  An atom ``R`` is always supported."""


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
