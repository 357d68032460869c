"""Which RETURN queries a shared trend plan can take, and their groups (:mod:`.shared`)."""

from __future__ import annotations

from acel.acea.engine.plan import compiled_for, events_bound, propagation_applies, trend_items

from acel.lang import aggregates
from acel.lang.ast import Query, top_negation
from acel.lang.schema import Schema


def unshared_reason(query: Query, schema: Schema) -> str | None:
    """Why ``query`` cannot join a shared trend plan (``None``: it can)."""
    if query.returns is None:
        return "per-match query (complex events out)"
    if query.select != "ALL" or query.skip is not None:
        return "SELECT or AFTER MATCH SKIP (counts need enumeration)"
    if top_negation(query.formula).negated:
        return "leading/trailing NOT"
    within, slide = query.within, query.slide
    if within is not None:
        if within.attr is not None:
            return "WITHIN ... ON attr"
        if slide is None:
            return "WITHIN without SLIDE (one class per start)"
        if not isinstance(within.size, int) or not isinstance(slide.size, int):
            return "non-integer window"
    items = trend_items(query)
    for item in items:
        agg = aggregates.lookup(item.func)
        if agg is None or agg.power is None:
            return f"aggregate {item.func} has no known power"
        if agg.power != "additive":
            return f"{item.func} is not linear (MIN/MAX)"
    automaton, _ = compiled_for(query.formula, schema, events=events_bound(query))
    if not propagation_applies(query, automaton):
        return "counts need enumeration (ambiguous automaton)"
    _, ca = compiled_for(query.formula, schema, items, events_bound(query))
    if any(ca.live[q] for q in ca.live):
        return "registers live between events (bag predicates, AGG, negation)"
    finals = ca.automaton.finals
    if any(t.source in finals for t in ca.automaton.transitions):
        return "a final state has outgoing transitions"
    return None


def group_key(query: Query) -> tuple[tuple[str, ...], int | None]:
    """Shareable queries with the same key run in one plan: PARTITION BY and SLIDE."""
    slide = query.slide.size if query.slide is not None else None
    return tuple(query.partition_by), slide  # type: ignore[return-value]
