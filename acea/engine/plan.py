"""What a query needs before its first event: automaton, closures, mode, cached.

Compilation goes through the compiler's one pipeline
(:func:`acel.compiler.compile_formula`: NEXT expanded, built, trimmed) and
code generation happens once per formula, schema and RETURN items, however
many partitions, slices, runners or calls evaluate it.
"""

from __future__ import annotations

from functools import lru_cache

from acel.acea.engine.closures import CompiledAutomaton, TrendItem, compile_automaton
from acel.acea.engine.indexed import IndexPlan, plan_indexes
from acel.acea.engine.trend import needs_unambiguity, supported
from acel.acea.engine.unfold import unfold
from acel.acea.model.ambiguity import is_unambiguous
from acel.acea.model.automaton import ACEA
from acel.compiler import compile_formula
from acel.compiler import events_bound as events_bound  # the engines pass it to compiled_for

from acel.lang.ast import CountStar, Formula, Query, ReturnAgg
from acel.lang.schema import Schema


@lru_cache(maxsize=512)  # a workload of 100+ queries holds two entries per query
def compiled_for(
    formula: Formula, schema: Schema, items: tuple[TrendItem, ...] | None = None,
    events: int | None = None,
) -> tuple[ACEA, CompiledAutomaton]:
    """The trimmed ACEA of a formula and its compiled closures (trend payloads for ``items``;
    ``events``: the query's :func:`acel.compiler.events_bound`)."""
    automaton = automaton_for(formula, schema, events)
    return automaton, compile_automaton(automaton, items)


@lru_cache(maxsize=512)
def trend_compiled(
    formula: Formula, schema: Schema, items: tuple[TrendItem, ...], events: int | None = None
) -> CompiledAutomaton:
    """What trend counting runs: the compiled ACEA with its event-blind carried registers
    (counters) unfolded into states (:mod:`acel.acea.engine.unfold`), else as compiled."""
    automaton, ca = compiled_for(formula, schema, items, events)
    flat = unfold(automaton)
    return ca if flat is None else compile_automaton(flat, items)


@lru_cache(maxsize=512)
def automaton_for(formula: Formula, schema: Schema, events: int | None = None) -> ACEA:
    """The trimmed ACEA of a formula, compiled once however many item sets ask for its
    closures (a trend query asks twice: to choose its mode, then with its items); exact
    inside ``WITHIN events EVENTS`` when a relating filter needs that bound."""
    return compile_formula(formula, schema, events)


unambiguous = lru_cache(maxsize=512)(is_unambiguous)
"""Whether accepting runs and complex events correspond one to one (cached)."""

_INDEX_PLANS: dict[int, tuple[CompiledAutomaton, dict[int, IndexPlan]]] = {}


def index_plans(ca: CompiledAutomaton, items: tuple[TrendItem, ...]) -> dict[int, IndexPlan]:
    """:func:`plan_indexes` once per compiled automaton (they are cached, so ids are stable)."""
    entry = _INDEX_PLANS.get(id(ca))
    if entry is None or entry[0] is not ca:
        if len(_INDEX_PLANS) > 256:
            _INDEX_PLANS.clear()
        entry = _INDEX_PLANS[id(ca)] = (ca, plan_indexes(ca, items))
    return entry[1]


def trend_items(query: Query) -> tuple[TrendItem, ...]:
    """The distinct aggregates of the RETURN list (COUNT(*) and attributes excluded)."""
    assert query.returns is not None
    out: dict[TrendItem, None] = {}
    for item in query.returns:
        if isinstance(item, ReturnAgg):
            out[TrendItem(item.func.upper(), item.var, item.attr)] = None
    return tuple(out)


def propagation_applies(query: Query, automaton: ACEA) -> bool:
    """Whether RETURN can be computed by propagation (else: enumerate, then aggregate)."""
    assert query.returns is not None
    items = trend_items(query)
    if not supported(items):
        return False
    count_star = any(isinstance(item, CountStar) for item in query.returns)
    return not needs_unambiguity(items, count_star) or unambiguous(automaton)
