"""The two-step baseline for ACEL queries of the SASE+ fragment (spec §8).

The fragment (:mod:`acel.reference.sase.fragment`) is a sequence of components
``T``, ``T AS v``, ``(T AS v)+``, ``(T AS v):+`` joined by ``;`` or ``:``, with ``OR``
between whole alternatives, wrapped (outermost last) in ``FILTER``, ``PROJECT`` and
``AGG``.  It is the image of the negation-free SASE+ fragment under the translation of
seed 004 Appendix D, read backwards.

Step one runs the NFA^b of each alternative under skip-till-any-match and builds every
match explicitly (one complex event per accepting run, deduplicated, unioned over the
alternatives); step two aggregates across them with ``acel.lang.clauses``
(``trend_rows``: PARTITION BY, WITHIN, SLIDE).  This is the baseline that GRETA, A-Seq
and HAMLET beat.

Filters are pushed into the edge formulas only where that is exact: ``X[P]`` on every
component whose events land in ``X``; ``X[INC/DEC/SAME(a)]`` as an iterator predicate
when a single Kleene component feeds ``X``; a conjunct relating events (spec §5.1) on
the begin and take edges of the one component feeding ``X`` when every term it reads is
known there, as SASE+ places ``a[i].price > avg(a[..i-1].price)`` on the take edge
(seed 002 §3.2, Step 2): ``PREV``, ``RUNNING``, ``FIRST(X.a)``, and ``Y.a``, ``F(Y.a)``,
``FIRST``/``LAST(Y.a)`` of variables fed only by earlier components.  Every other
conjunct is checked on each complete match (``acel.lang.relate``, the oracle's reading),
so the result is always the formula's semantics (spec §3, §5.1).
"""

from __future__ import annotations

from collections.abc import Sequence

from acel.reference.oracle import agg, project_attrs
from acel.reference.sase.fragment import (
    Fragment,
    NotInFragment,
    Wrapper,
    fragments_of,
)
from acel.reference.sase.nfa import Buffer, ComponentSpec, EdgePred, NFAb, always, run_nfa

from acel.lang.ast import (
    Agg,
    BagAgg,
    BagPred,
    Filter,
    FilterAnd,
    FilterOr,
    FirstLast,
    Formula,
    Prev,
    ProjectAttrs,
    Query,
    Running,
    VarAttr,
    VarPred,
    Window,
)
from acel.lang.clauses import Match, TrendRow, run_query
from acel.lang.errors import AcelError
from acel.lang.events import ComplexEvent, Event
from acel.lang.predicates import bag_holds, compare, event_holds
from acel.lang.relate import bag_holds_relating, conjuncts, holds_for, is_relating, relating_terms
from acel.lang.schema import Schema

__all__ = ["NotInFragment", "run", "two_step_trend"]


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
    """Whether a complex event passes a filter (spec §3, CEL's AND/OR identities; §5.1)."""
    if isinstance(filt, VarPred):
        if is_relating(filt.pred):
            return bag_holds_relating(filt.pred, filt.var, ce.bag)
        return all(event_holds(filt.pred, e) for e in ce.bag(filt.var))
    if isinstance(filt, BagPred):
        return bag_holds(filt.kind, filt.attr, ce.bag(filt.var))
    if isinstance(filt, FilterAnd):
        return filter_holds(filt.left, ce) and filter_holds(filt.right, ce)
    if isinstance(filt, FilterOr):
        return filter_holds(filt.left, ce) or filter_holds(filt.right, ce)
    raise TypeError(f"not a filter: {filt!r}")


def _apply(wrapper: Wrapper, ce: ComplexEvent) -> ComplexEvent | None:
    """One wrapper on one match: a projection or AGG rebuilds it, a filter keeps or drops."""
    if isinstance(wrapper, tuple):
        return ce.project(wrapper)
    if isinstance(wrapper, ProjectAttrs):
        (out,) = project_attrs({ce}, wrapper.var, wrapper.attrs)
        return out
    if isinstance(wrapper, Agg):
        (out,) = agg({ce}, wrapper.var, wrapper.outputs)
        return out
    return ce if filter_holds(wrapper, ce) else None


def finish(fragment: Fragment, ce: ComplexEvent) -> ComplexEvent | None:
    """Apply the wrappers in order (innermost first); ``None`` when a filter drops it."""
    for wrapper in fragment.wrappers:
        found = _apply(wrapper, ce)
        if found is None:
            return None
        ce = found
    return ce


# ------------------------------------------------------------------ pushdown


def _filter_conjuncts(filt: Filter) -> list[Filter]:
    """Top-level AND conjuncts; ``X[P1 AND P2]`` splits into ``X[P1]``, ``X[P2]`` (the
    universal reading of spec §5.1 is conjunct by conjunct, so this is exact)."""
    if isinstance(filt, FilterAnd):
        return _filter_conjuncts(filt.left) + _filter_conjuncts(filt.right)
    if isinstance(filt, VarPred) and is_relating(filt.pred):
        return [VarPred(filt.var, c) for c in conjuncts(filt.pred)]
    return [filt]


def _leading_filters(fragment: Fragment) -> int:
    """How many wrappers, innermost first, are filters (they apply before any rebuild)."""
    n = 0
    for wrapper in fragment.wrappers:
        if not isinstance(wrapper, (VarPred, BagPred, FilterAnd, FilterOr)):
            break
        n += 1
    return n


def _pushable(fragment: Fragment) -> list[Filter]:
    """The conjuncts of the filters that apply before any projection or AGG."""
    out: list[Filter] = []
    for wrapper in fragment.wrappers[: _leading_filters(fragment)]:
        assert not isinstance(wrapper, (tuple, ProjectAttrs, Agg))
        out.extend(_filter_conjuncts(wrapper))
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


def _adjacent(events: Sequence[Event], buf: Buffer) -> bool:
    """``:`` before a component: its first event directly follows the previous segment."""
    return buf[-1][0] == buf[-2][-1] + 1


def _contiguous(events: Sequence[Event], buf: Buffer) -> bool:
    """``:+``: the event taken directly follows the component's previous event."""
    return buf[-1][-1] == buf[-1][-2] + 1


def _feeding(fragment: Fragment, var: str) -> list[int]:
    """The components whose events land in ``var``."""
    return [c for c, comp in enumerate(fragment.components) if var in comp.targets()]


def _relating_home(conjunct: VarPred, fragment: Fragment) -> int | None:
    """The component whose edges decide a relating conjunct exactly, or ``None``.

    ``X`` must be fed by one component ``c`` (no groups); ``PREV``/``RUNNING`` read the
    events of ``c`` taken so far, ``FIRST(X.a)`` the first of them; a term over another
    variable ``Y`` needs ``Y`` fed only by components before ``c`` (complete there).
    """
    if fragment.groups:
        return None
    feeding = _feeding(fragment, conjunct.var)
    if len(feeding) != 1:
        return None
    home = feeding[0]
    for term in relating_terms(conjunct.pred):
        if isinstance(term, (Prev, Running)):
            continue
        assert isinstance(term, (VarAttr, BagAgg, FirstLast))
        if term.var == conjunct.var:
            if isinstance(term, VarAttr) or (isinstance(term, FirstLast) and term.which == "FIRST"):
                continue
            return None
        other = _feeding(fragment, term.var)
        if isinstance(term, VarAttr) and not other:
            return None  # an empty bag: the conjunct holds; left to the final check
        if any(c >= home for c in other):
            return None
    return home


def _relating(conjunct: VarPred, fragment: Fragment) -> EdgePred:
    """The conjunct for the event just read into ``X``, against the segments so far."""
    named = {t.var for t in relating_terms(conjunct.pred) if isinstance(t, (VarAttr, BagAgg, FirstLast))}
    feeding = {v: _feeding(fragment, v) for v in named | {conjunct.var}}
    pred, var = conjunct.pred, conjunct.var

    def check(events: Sequence[Event], buf: Buffer) -> bool:
        def bags(name: str) -> list[Event]:
            return [events[k] for c in feeding[name] if c < len(buf) for k in buf[c]]

        return holds_for(pred, var, events[buf[-1][-1]], bags)

    return check


def _exact(conjunct: Filter, fragment: Fragment) -> bool:
    """Whether pushing ``conjunct`` onto the edges decides it exactly.

    ``X[P]`` (unary) is checked on every event landing in ``X``.  ``X[INC/DEC/SAME(a)]``
    is exact when at most one component outside a group feeds ``X``: a Kleene one gets
    the iterator predicate, a single one gives a bag of one.  A relating conjunct: see
    :func:`_relating_home`.
    """
    if isinstance(conjunct, VarPred):
        if is_relating(conjunct.pred):
            return _relating_home(conjunct, fragment) is not None
        return True
    if isinstance(conjunct, BagPred):
        feeding = _feeding(fragment, conjunct.var)
        return not feeding or (len(feeding) == 1 and not fragment.in_group(feeding[0]))
    return False


def residual(fragment: Fragment) -> Fragment:
    """The fragment with the exactly pushed conjuncts removed from its filters."""
    lead = _leading_filters(fragment)
    left = [c for c in _pushable(fragment) if not _exact(c, fragment)]
    wrappers: list[Wrapper] = []
    if left:
        combined = left[0]
        for c in left[1:]:
            combined = FilterAnd(combined, c)
        wrappers.append(combined)
    wrappers.extend(fragment.wrappers[lead:])
    return Fragment(fragment.components, tuple(wrappers), fragment.groups)


def compile_fragment(
    fragment: Fragment, window: Window | None = None, slide: Window | None = None
) -> NFAb:
    """The NFA^b of a fragment formula under skip-till-any-match, filters pushed down."""
    begins: list[list[EdgePred]] = [[] for _ in fragment.components]
    takes: list[list[EdgePred]] = [[] for _ in fragment.components]
    for c, comp in enumerate(fragment.components):
        if comp.adjacent:
            begins[c].append(_adjacent)
        if comp.contiguous:
            takes[c].append(_contiguous)
    for conjunct in _pushable(fragment):
        if isinstance(conjunct, VarPred) and is_relating(conjunct.pred):
            home = _relating_home(conjunct, fragment)
            if home is not None:
                check = _relating(conjunct, fragment)
                begins[home].append(check)
                takes[home].append(check)
        elif isinstance(conjunct, VarPred):
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


def check_fragment(query: Query) -> list[Fragment]:
    """The fragments of ``query``'s alternatives, or :class:`NotInFragment` (no data read)."""
    return fragments_of(query.formula)


def run(query: Query, stream: Sequence[Event], schema: Schema | None = None
        ) -> list[Match] | list[TrendRow]:
    """An ACEL query of the fragment, by the two-step baseline (engine signature).

    Step one (every match of each alternative's NFA^b) is the formula evaluator of the
    one query driver, ``acel.lang.clauses.run_query``, which splits partitions, applies
    WITHIN and either reports matches at global positions or aggregates them per SLIDE
    window (step two), sorted as spec §12 says.
    """
    del schema  # the fragment has no NEXT, so the schema's types are not needed
    slide = query.slide if query.returns is not None else None
    plans: list[tuple[Fragment, NFAb]] = [
        (residual(f), compile_fragment(f, query.within, slide)) for f in check_fragment(query)
    ]

    def evaluate(formula: Formula, events: Sequence[Event]) -> set[ComplexEvent]:
        assert formula is query.formula, "the fragment has no leading/trailing negation"
        found: set[ComplexEvent] = set()
        for fragment, nfa in plans:
            found |= _matches(fragment, nfa, events, None)
        return found

    return run_query(query, stream, evaluate)


def two_step_trend(query: Query, stream: Sequence[Event], schema: Schema) -> list[TrendRow]:
    """Trend aggregation (an ACEL RETURN query) by enumerating every match, then aggregating."""
    if query.returns is None:
        raise AcelError("two_step_trend needs an ACEL query with RETURN (trend aggregation)")
    rows = run(query, stream, schema)
    return [row for row in rows if isinstance(row, TrendRow)]
