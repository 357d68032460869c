"""Compile a SASE+ query into its NFA^b (seed 002 §3.2, Steps 1-4 and 6).

Step 2 places every WHERE conjunct on the edge of its *last identifier's
instantiation state*.  The instantiation order of the references of a
component ``v`` is: ``v`` (single) and ``v[1]`` on the begin edge; ``v[i]``,
``v[i-1]`` and ``v[..i-1]`` on the take edge of ``v[i]``; ``v[v.len]`` and
``v[]`` on the proceed edge leaving ``v``.  A conjunct whose only reference to
``v`` is ``v[i]`` holds for *every* ``i`` (begin and take edges); one that also
names ``v[i-1]``, ``v[..i-1]`` or ``v[1]`` holds for ``i > 1`` (take only).
Conjuncts naming a negated variable become the negation's check, run on the
begin edge of the next positive component over the events between the two
neighbours.  A negation before the first or after the last positive component
(spec §3.1: leading/trailing, needs WITHIN) is checked on each match once it
is complete (:func:`boundary_checks`): no event of its type that satisfies
its conjuncts lies before (after) the match inside the match's window.
Step 3 (ignore edges) lives in :mod:`acel.reference.sase.nfa`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from acel.reference.sase.ast import AggRef, Component, Ref, Reference, SaseQuery
from acel.reference.sase.nfa import Buffer, ComponentSpec, EdgePred, NFAb, always

from acel.lang import aggregates
from acel.lang.ast import Attr, BinOp, Compare, Expr, InList, Neg, Pred, PredAnd, PredNot, PredOr
from acel.lang.clauses import window_value
from acel.lang.events import Event, OptValue
from acel.lang.predicates import holds


class PlacementError(Exception):
    """A conjunct that no NFA^b edge can evaluate; ``ref`` is the name to point at."""

    def __init__(self, message: str, ref: str) -> None:
        super().__init__(message)
        self.message = message
        self.ref = ref


def ref_names(node: Pred | Expr) -> list[str]:
    """The reference names (``Attr`` nodes) of a predicate, in order of writing."""
    if isinstance(node, Attr):
        return [node.name]
    if isinstance(node, (Compare, BinOp)):
        return ref_names(node.left) + ref_names(node.right)
    if isinstance(node, InList):
        return ref_names(node.expr)
    if isinstance(node, Neg):
        return ref_names(node.operand)
    if isinstance(node, (PredAnd, PredOr)):
        return ref_names(node.left) + ref_names(node.right)
    if isinstance(node, PredNot):
        return ref_names(node.operand)
    return []


_ITERATOR = ("i", "i-1")


def _is_iterator(ref: Reference) -> bool:
    return (isinstance(ref, Ref) and ref.index in _ITERATOR) or (
        isinstance(ref, AggRef) and ref.range == "prev"
    )


def _stage(ref: Reference) -> int:
    """0: begin edge, 1: take edge, 2: proceed edge (within one component)."""
    if isinstance(ref, AggRef):
        return 1 if ref.range == "prev" else 2
    return {"single": 0, "1": 0, "i": 1, "i-1": 1, "len": 2}[ref.index]


@dataclass(frozen=True)
class NegationCheck:
    """``!(T v)`` between positive components ``before`` and ``after``
    (``before = -1``: leading; ``after`` = the number of positive components:
    trailing)."""

    component: Component
    before: int
    after: int
    preds: tuple[Pred, ...]


@dataclass(frozen=True)
class Placement:
    """The conjuncts of each positive component's begin, take and proceed edges."""

    positive: tuple[Component, ...]
    begin: tuple[tuple[Pred, ...], ...]
    take: tuple[tuple[Pred, ...], ...]
    proceed: tuple[tuple[Pred, ...], ...]
    negations: tuple[NegationCheck, ...]


def place(query: SaseQuery) -> Placement:
    """Step 2 of seed 002 §3.2; raise :class:`PlacementError` for conjuncts no edge can hold."""
    positive = tuple(c for c in query.components if not c.negated)
    index = {c.var: p for p, c in enumerate(positive)}
    begin: list[list[Pred]] = [[] for _ in positive]
    take: list[list[Pred]] = [[] for _ in positive]
    proceed: list[list[Pred]] = [[] for _ in positive]
    neg_preds: dict[str, list[Pred]] = {c.var: [] for c in query.components if c.negated}
    neighbours: dict[str, tuple[int, int]] = {}
    seen_positive = -1
    for comp in query.components:
        if comp.negated:
            neighbours[comp.var] = (seen_positive, seen_positive + 1)
        else:
            seen_positive += 1
    for conjunct in query.where:
        names = ref_names(conjunct)
        refs = [(n, query.reference(n)) for n in names]
        negs = {r.var for _, r in refs if r.var in neg_preds}
        if negs:
            _place_negation(conjunct, refs, negs, neighbours, index, neg_preds)
            continue
        if not refs:
            begin[0].append(conjunct)
            continue
        last = max((index[r.var], _stage(r)) for _, r in refs)
        p, stage = last
        for name, ref in refs:
            if _is_iterator(ref) and index[ref.var] != p:
                raise PlacementError(
                    f"{name} iterates over {ref.var}, but this predicate also names "
                    f"{positive[p].var}, which comes later: compare {ref.var}[{ref.var}.len] "
                    "or an aggregate over the whole array instead",
                    name,
                )
        if stage == 2:
            iterators = [n for n, r in refs if r.var == positive[p].var and _is_iterator(r)]
            if iterators:
                raise PlacementError(
                    f"{iterators[0]} and {positive[p].var}[{positive[p].var}.len] (or a whole-array "
                    "aggregate) cannot be evaluated on the same edge",
                    iterators[0],
                )
            proceed[p].append(conjunct)
        elif stage == 1:
            take[p].append(conjunct)
            own = {r.index for _, r in refs if isinstance(r, Ref) and r.var == positive[p].var}
            own_aggs = [r for _, r in refs if isinstance(r, AggRef) and r.var == positive[p].var]
            if own <= {"i"} and not own_aggs:
                begin[p].append(conjunct)
        else:
            begin[p].append(conjunct)
    negations = tuple(
        NegationCheck(c, neighbours[c.var][0], neighbours[c.var][1], tuple(neg_preds[c.var]))
        for c in query.components
        if c.negated
    )

    return Placement(
        positive,
        tuple(map(tuple, begin)),
        tuple(map(tuple, take)),
        tuple(map(tuple, proceed)),
        negations,
    )


def _place_negation(
    conjunct: Pred,
    refs: list[tuple[str, Reference]],
    negs: set[str],
    neighbours: dict[str, tuple[int, int]],
    index: dict[str, int],
    neg_preds: dict[str, list[Pred]],
) -> None:
    var = sorted(negs)[0]
    if len(negs) > 1:
        name = next(n for n, r in refs if r.var != var and r.var in negs)
        raise PlacementError("a predicate can name only one negated variable", name)
    before, after = neighbours[var]
    boundary = before < 0 or after >= len(index)  # checked on the complete match
    for name, ref in refs:
        if ref.var == var:
            continue
        if _is_iterator(ref):
            raise PlacementError(f"{name}: iterator indexes cannot meet a negated variable", name)
        p = index[ref.var]
        if not boundary and (p > after or (p == after and _stage(ref) > 0)):
            raise PlacementError(
                f"{name} is not known yet when the negation of {var} is checked "
                "(at the first event of the component after it)",
                name,
            )
    neg_preds[var].append(conjunct)


# ------------------------------------------------------------------ evaluation

Resolver = Callable[[Sequence[Event], Buffer], OptValue]


def resolver(ref: Reference, p: int) -> Resolver:
    """Read a reference from the (tentative) buffer of positive component ``p``."""
    if isinstance(ref, Ref):
        attr = ref.attr
        offset = {"single": 0, "1": 0, "i": -1, "i-1": -2, "len": -1}[ref.index]

        def read(events: Sequence[Event], buf: Buffer) -> OptValue:
            return events[buf[p][offset]].get(attr)

        return read
    agg = aggregates.lookup(ref.func)
    assert agg is not None
    attr_ = ref.attr
    prev = ref.range == "prev"

    def fold(events: Sequence[Event], buf: Buffer) -> OptValue:
        seq = buf[p][:-1] if prev else buf[p]
        values = [1 if attr_ is None else events[k].get(attr_) for k in seq]
        return agg.apply(values)

    return fold


def edge(query: SaseQuery, preds: Sequence[Pred], index: dict[str, int]) -> EdgePred:
    """An edge formula: the conjunction of ``preds`` over the buffer."""
    if not preds:
        return always
    names = {n for pred in preds for n in ref_names(pred)}
    readers = {n: resolver(query.reference(n), index[query.reference(n).var]) for n in names}
    frozen = tuple(preds)

    def check(events: Sequence[Event], buf: Buffer) -> bool:
        def lookup(name: str) -> OptValue:
            return readers[name](events, buf)

        return all(holds(pred, lookup) for pred in frozen)

    return check


def _negated_event_test(
    query: SaseQuery, neg: NegationCheck, index: dict[str, int]
) -> Callable[[Event, Sequence[Event], Buffer], bool]:
    """Whether a candidate event is a negated one: of the negated type, satisfying the
    negation's conjuncts (its own attributes read from the candidate, the others from the
    match's buffer)."""
    var, type_ = neg.component.var, neg.component.type
    names = {n for pred in neg.preds for n in ref_names(pred)}
    readers: dict[str, Resolver] = {}
    own: dict[str, str] = {}
    for name in names:
        ref = query.reference(name)
        if ref.var == var:
            assert isinstance(ref, Ref)
            own[name] = ref.attr
        else:
            readers[name] = resolver(ref, index[ref.var])
    preds = neg.preds

    def negated(candidate: Event, events: Sequence[Event], buf: Buffer) -> bool:
        if candidate.type != type_:
            return False

        def lookup(name: str) -> OptValue:
            if name in own:
                return candidate.get(own[name])
            return readers[name](events, buf)

        return all(holds(pred, lookup) for pred in preds)

    return negated


def _negation_edge(query: SaseQuery, neg: NegationCheck, index: dict[str, int]) -> EdgePred:
    """No event of the negated type between the neighbours satisfies the negation's conjuncts."""
    negated = _negated_event_test(query, neg, index)
    before, after = neg.before, neg.after

    def check(events: Sequence[Event], buf: Buffer) -> bool:
        return not any(
            negated(events[k], events, buf)
            for k in range(buf[before][-1] + 1, buf[after][0])
        )

    return check


def _boundary_check(query: SaseQuery, neg: NegationCheck, index: dict[str, int]) -> EdgePred:
    """A leading/trailing negation on a complete match: no event of the negated type
    satisfying its conjuncts lies before (leading) or after (trailing) the match
    with the span from it to the match's far end below WITHIN (spec §3.1)."""
    window = query.within
    assert window is not None, "the parser demands WITHIN for leading/trailing negation"
    negated = _negated_event_test(query, neg, index)
    type_ = neg.component.type
    leading = neg.before < 0

    def check(events: Sequence[Event], buf: Buffer) -> bool:
        first, last = buf[0][0], buf[-1][-1]
        candidates = range(0, first) if leading else range(last + 1, len(events))
        far = window_value(window, events, last if leading else first)
        for k in candidates:
            if events[k].type != type_:
                continue
            span = far - window_value(window, events, k) if leading else (
                window_value(window, events, k) - far
            )
            if span < window.size and negated(events[k], events, buf):
                return False
        return True

    return check


def boundary_checks(query: SaseQuery) -> tuple[EdgePred, ...]:
    """The leading/trailing negations of a query, as checks of complete matches."""
    placement = place(query)
    index = {c.var: p for p, c in enumerate(placement.positive)}
    n = len(placement.positive)
    return tuple(
        _boundary_check(query, neg, index)
        for neg in placement.negations
        if neg.before < 0 or neg.after >= n
    )


def _both(first: EdgePred, second: EdgePred) -> EdgePred:
    if first is always:
        return second

    def check(events: Sequence[Event], buf: Buffer) -> bool:
        return first(events, buf) and second(events, buf)

    return check


def compile_sase(query: SaseQuery) -> NFAb:
    """The NFA^b of a SASE+ query: component states, edge formulas, strategy, window."""
    placement = place(query)
    index = {c.var: p for p, c in enumerate(placement.positive)}
    begins = [edge(query, preds, index) for preds in placement.begin]
    for neg in placement.negations:
        if neg.before < 0 or neg.after >= len(placement.positive):
            continue  # leading/trailing: boundary_checks, on complete matches
        begins[neg.after] = _both(begins[neg.after], _negation_edge(query, neg, index))
    specs = tuple(
        ComponentSpec(
            comp.type,
            comp.kleene,
            begin=begins[p],
            take=edge(query, placement.take[p], index),
            proceed=edge(query, placement.proceed[p], index),
        )
        for p, comp in enumerate(placement.positive)
    )
    return NFAb(specs, query.strategy, query.within)
