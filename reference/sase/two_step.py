"""The two-step baseline for ACEL queries of the SASE+ fragment (spec §8).

An ACEL formula of the fragment is a sequence ``c1 ; c2 ; ... ; cn`` of
components ``T``, ``T AS v``, ``(T AS v)+``, ``T+`` or ``T+ AS v``, optionally
wrapped (outermost last) in ``FILTER`` and ``PROJECT[...]``.  It is the image
of the skip-till-any-match, negation-free SASE+ fragment under the
translation of seed 004 Appendix D, read backwards.

Step one runs the NFA^b under skip-till-any-match and builds every match
explicitly (one complex event per accepting run, deduplicated); step two
aggregates across them with ``acel.lang.clauses`` (``trend_rows``: PARTITION BY,
WITHIN, SLIDE).  This is the baseline that GRETA, A-Seq and HAMLET beat.

Filters are pushed into the edge formulas only where that is exact
(``X[P]`` on every component whose events land in ``X``, ``X[INC/DEC/SAME(a)]``
as an iterator predicate when a single Kleene component feeds ``X``); the
whole filter is then checked again on each complex event, so the result is
always the formula's semantics (spec §3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from acel.reference.sase.nfa import Buffer, ComponentSpec, EdgePred, NFAb, always, run_nfa

from acel.lang.ast import (
    As,
    Atom,
    BagPred,
    Filter,
    FilterAnd,
    FilterF,
    FilterOr,
    Formula,
    Plus,
    ProjectVars,
    Query,
    Seq,
    VarPred,
    Window,
)
from acel.lang.clauses import Match, TrendRow, run_query
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.events import ComplexEvent, Event
from acel.lang.predicates import bag_holds, compare, event_holds
from acel.lang.schema import Schema


class NotInFragment(UnsupportedQuery):
    """The ACEL query lies outside the SASE+ fragment the two-step baseline runs."""


@dataclass(frozen=True)
class FragmentComponent:
    """``T``, ``T AS v``, ``(T AS v)+`` (``var`` is ``None`` without AS)."""

    type: str
    var: str | None
    kleene: bool

    def targets(self) -> tuple[str, ...]:
        """The variables each event of this component lands in (type first)."""
        if self.var is None or self.var == self.type:
            return (self.type,)
        return (self.type, self.var)


Wrapper = Union[Filter, tuple[str, ...]]
"""A filter, or the variable list of a ``PROJECT[...]``."""


@dataclass(frozen=True)
class Fragment:
    """A formula of the fragment: components and wrappers, innermost first."""

    components: tuple[FragmentComponent, ...]
    wrappers: tuple[Wrapper, ...]
    groups: tuple[tuple[int, int], ...] = ()
    """Kleene groups ``(c_s ; ... ; c_e)+`` as ``(s, e)`` component indices."""

    def in_group(self, c: int) -> bool:
        return any(s <= c <= e for s, e in self.groups)


_CONSTRUCTS = {
    "Or": "OR",
    "And": "AND",
    "Contig": "':' (contiguity)",
    "ContigPlus": "':+' (contiguous iteration)",
    "Agg": "AGG",
    "Next": "NEXT",
    "ProjectAttrs": "PROJECT X[...]",
    "ProjectVars": "a PROJECT inside the sequence",
    "FilterF": "a FILTER inside the sequence",
    "Plus": "this iteration (nested deeper than (c1 ; ... ; cn)+)",
    "As": "this AS",
}


def _component(formula: Formula) -> FragmentComponent:
    if isinstance(formula, Atom):
        return FragmentComponent(formula.type, None, False)
    if isinstance(formula, As) and isinstance(formula.formula, Atom):
        return FragmentComponent(formula.formula.type, formula.var, False)
    if isinstance(formula, Plus):
        inner = formula.formula
        if isinstance(inner, Atom):
            return FragmentComponent(inner.type, None, True)
        if isinstance(inner, As) and isinstance(inner.formula, Atom):
            return FragmentComponent(inner.formula.type, inner.var, True)
    if isinstance(formula, As) and isinstance(formula.formula, Plus):
        # (T+) AS v gives v the same bag as (T AS v)+
        if isinstance(formula.formula.formula, Atom):
            return FragmentComponent(formula.formula.formula.type, formula.var, True)
    what = _CONSTRUCTS.get(type(formula).__name__, type(formula).__name__)
    raise NotInFragment(
        f"{what} has no SASE+ counterpart: the two-step "
        "baseline runs sequences (;) of T, T AS v, (T AS v)+ and groups (c1 ; ... ; cn)+, "
        "under FILTER and PROJECT[...]"
    )


def _flatten(formula: Formula) -> list[Formula]:
    if isinstance(formula, Seq):
        return _flatten(formula.left) + _flatten(formula.right)
    return [formula]


def _is_group(formula: Formula) -> bool:
    return isinstance(formula, Plus) and isinstance(formula.formula, Seq)


def fragment_of(formula: Formula) -> Fragment:
    """Split a formula into components, groups and wrappers, or raise :class:`NotInFragment`.

    Besides SASE+'s flat sequences, one level of GRETA's nested Kleene is
    accepted: ``(c1 ; ... ; cn)+`` with components inside.
    """
    wrappers: list[Wrapper] = []
    while True:
        if isinstance(formula, FilterF):
            wrappers.append(formula.filter)
            formula = formula.formula
        elif isinstance(formula, ProjectVars):
            wrappers.append(tuple(formula.vars))
            formula = formula.formula
        else:
            break
    components: list[FragmentComponent] = []
    groups: list[tuple[int, int]] = []
    for part in _flatten(formula):
        if _is_group(part):
            assert isinstance(part, Plus)
            first = len(components)
            components.extend(_component(inner) for inner in _flatten(part.formula))
            groups.append((first, len(components) - 1))
        else:
            components.append(_component(part))
    return Fragment(tuple(components), tuple(reversed(wrappers)), tuple(groups))


# ------------------------------------------------------------- complex events


def complex_event(
    fragment: Fragment, events: Sequence[Event], comps: Sequence[int], buf: Buffer
) -> ComplexEvent:
    """The complex event of a buffer: each event in its type and its AS variable.

    Segments come in time order and a variable receives each event at most
    once, so every bag is already in canonical order (spec §2) and the
    complex event is built directly, without ``ComplexEvent.make``'s sort.
    """
    mu: dict[str, list[Event]] = {}
    for c, positions in zip(comps, buf):
        for target in fragment.components[c].targets():
            bag = mu.get(target)
            if bag is None:
                bag = mu[target] = []
            bag.extend(events[k] for k in positions)
    return ComplexEvent(
        buf[0][0], buf[-1][-1], tuple((var, tuple(mu[var])) for var in sorted(mu))
    )


def filter_holds(filt: Filter, ce: ComplexEvent) -> bool:
    """Whether a complex event passes a filter (spec §3, CEL's AND/OR identities)."""
    if isinstance(filt, VarPred):
        return all(event_holds(filt.pred, e) for e in ce.bag(filt.var))
    if isinstance(filt, BagPred):
        return bag_holds(filt.kind, filt.attr, ce.bag(filt.var))
    if isinstance(filt, FilterAnd):
        return filter_holds(filt.left, ce) and filter_holds(filt.right, ce)
    if isinstance(filt, FilterOr):
        return filter_holds(filt.left, ce) or filter_holds(filt.right, ce)
    raise TypeError(f"not a filter: {filt!r}")


def finish(fragment: Fragment, ce: ComplexEvent) -> ComplexEvent | None:
    """Apply the wrappers in order: filters keep or drop, projections project."""
    for wrapper in fragment.wrappers:
        if isinstance(wrapper, tuple):
            ce = ce.project(wrapper)
        elif not filter_holds(wrapper, ce):
            return None
    return ce


# ------------------------------------------------------------------ pushdown


def _conjuncts(filt: Filter) -> list[Filter]:
    if isinstance(filt, FilterAnd):
        return _conjuncts(filt.left) + _conjuncts(filt.right)
    return [filt]


def _pushable(fragment: Fragment) -> list[Filter]:
    """The top-level AND conjuncts of filters that apply before any projection."""
    out: list[Filter] = []
    for wrapper in fragment.wrappers:
        if isinstance(wrapper, tuple):
            break
        out.extend(_conjuncts(wrapper))
    return out


def _all(preds: Sequence[EdgePred]) -> EdgePred:
    if not preds:
        return always
    if len(preds) == 1:
        return preds[0]
    frozen = tuple(preds)

    def check(events: Sequence[Event], buf: Buffer) -> bool:
        return all(p(events, buf) for p in frozen)

    return check


def _local(pred: VarPred) -> EdgePred:
    def check(events: Sequence[Event], buf: Buffer) -> bool:
        return event_holds(pred.pred, events[buf[-1][-1]])

    return check


_ITER_OP = {"INC": "<", "DEC": ">", "SAME": "="}


def _iterator(pred: BagPred) -> EdgePred:
    """``v[i-1].a op v[i].a`` on a take edge (seed 004 App. D: INC/DEC/SAME)."""
    op = _ITER_OP[pred.kind]
    attr = pred.attr

    def check(events: Sequence[Event], buf: Buffer) -> bool:
        run = buf[-1]
        return compare(op, events[run[-2]].get(attr), events[run[-1]].get(attr)) is True

    return check


def _feeding(fragment: Fragment, var: str) -> list[int]:
    """The components whose events land in ``var``."""
    return [c for c, comp in enumerate(fragment.components) if var in comp.targets()]


def _exact(conjunct: Filter, fragment: Fragment) -> bool:
    """Whether pushing ``conjunct`` onto the edges decides it exactly.

    ``X[P]`` is checked on every event landing in ``X``.  ``X[INC/DEC/SAME(a)]``
    is exact when at most one component outside a group feeds ``X``: a
    Kleene one gets the iterator predicate, a single one gives a bag of one.
    """
    if isinstance(conjunct, VarPred):
        return True
    if isinstance(conjunct, BagPred):
        feeding = _feeding(fragment, conjunct.var)
        return not feeding or (len(feeding) == 1 and not fragment.in_group(feeding[0]))
    return False


def residual(fragment: Fragment) -> Fragment:
    """The fragment with the exactly pushed conjuncts removed from its filters."""
    wrappers: list[Wrapper] = []
    projected = False
    for wrapper in fragment.wrappers:
        if isinstance(wrapper, tuple):
            projected = True
            wrappers.append(wrapper)
            continue
        if projected:
            wrappers.append(wrapper)
            continue
        left = [c for c in _conjuncts(wrapper) if not _exact(c, fragment)]
        if left:
            combined = left[0]
            for c in left[1:]:
                combined = FilterAnd(combined, c)
            wrappers.append(combined)
    return Fragment(fragment.components, tuple(wrappers), fragment.groups)


def compile_fragment(
    fragment: Fragment, window: Window | None = None, slide: Window | None = None
) -> NFAb:
    """The NFA^b of a fragment formula under skip-till-any-match, filters pushed down."""
    begins: list[list[EdgePred]] = [[] for _ in fragment.components]
    takes: list[list[EdgePred]] = [[] for _ in fragment.components]
    for conjunct in _pushable(fragment):
        if isinstance(conjunct, VarPred):
            for c in _feeding(fragment, conjunct.var):
                begins[c].append(_local(conjunct))
                takes[c].append(_local(conjunct))
        elif isinstance(conjunct, BagPred) and _exact(conjunct, fragment):
            for c in _feeding(fragment, conjunct.var):
                if fragment.components[c].kleene:
                    takes[c].append(_iterator(conjunct))
    specs = tuple(
        ComponentSpec(comp.type, comp.kleene, begin=_all(begins[c]), take=_all(takes[c]))
        for c, comp in enumerate(fragment.components)
    )
    loops = tuple((e, s) for s, e in fragment.groups)
    return NFAb(specs, "skip_till_any_match", window, loops, slide)


# --------------------------------------------------------------------- running


def _matches(
    fragment: Fragment, nfa: NFAb, events: Sequence[Event], positions: Sequence[int] | None
) -> set[ComplexEvent]:
    """Step one on one partition: every distinct complex event passing WITHIN."""
    found: set[ComplexEvent] = set()
    for comps, buf in run_nfa(nfa, events, positions):
        ce = finish(fragment, complex_event(fragment, events, comps, buf))
        if ce is not None:
            found.add(ce)
    return found


def run(query: Query, stream: Sequence[Event], schema: Schema | None = None
        ) -> list[Match] | list[TrendRow]:
    """An ACEL query of the fragment, by the two-step baseline (engine signature).

    Step one (every match of the fragment's NFA^b) is the formula evaluator of
    the one query driver, ``acel.lang.clauses.run_query``, which splits partitions,
    applies WITHIN and either reports matches at global positions or
    aggregates them per SLIDE window (step two), sorted as spec §12 says.
    """
    del schema  # the fragment has no NEXT, so the schema's types are not needed
    fragment = fragment_of(query.formula)
    slide = query.slide if query.returns is not None else None
    nfa = compile_fragment(fragment, query.within, slide)
    fragment = residual(fragment)

    def evaluate(formula: Formula, events: Sequence[Event]) -> set[ComplexEvent]:
        assert formula is query.formula, "the fragment has no leading/trailing negation"
        return _matches(fragment, nfa, events, None)

    return run_query(query, stream, evaluate)


def two_step_trend(query: Query, stream: Sequence[Event], schema: Schema) -> list[TrendRow]:
    """Trend aggregation (an ACEL RETURN query) by enumerating every match, then aggregating."""
    if query.returns is None:
        raise AcelError("two_step_trend needs an ACEL query with RETURN (trend aggregation)")
    rows = run(query, stream, schema)
    return [row for row in rows if isinstance(row, TrendRow)]
