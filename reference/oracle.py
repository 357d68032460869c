"""The reference oracle: ACEL's semantics (spec §3) transcribed operator by operator.

This module is the project's definition of truth.  It is deliberately *not*
clever: every operator of the table in spec §3 (seed 004 §3 for CEL, §5 for
AGG) is one function that computes the operator's set of complex events from
its operands' sets, exactly as the table says.  Everything else (engines,
automata, Spark) is checked against it.

The oracle enumerates every complex event, so it is exponential in the stream
length by nature.  Two guards keep it from running for hours:

* ``max_events`` (default 16, env ``ACEL_ORACLE_MAX_EVENTS``): a (sub-)stream
  longer than this is refused before anything is evaluated;
* ``max_complex_events`` (default 200,000, env
  ``ACEL_ORACLE_MAX_COMPLEX_EVENTS``): an intermediate set larger than this
  stops the evaluation.

Both raise :class:`OracleTooLarge` with a message saying why and how to lift
the limit.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import singledispatch

from acel.lang import aggregates
from acel.lang import ast as A
from acel.lang.clauses import Match, TrendRow, run_query, split_partitions
from acel.lang.errors import AcelCheckError, AcelError
from acel.lang.events import ComplexEvent, Event, OptValue
from acel.lang.macros import expand_quantifiers
from acel.lang.passes import declare
from acel.lang.predicates import bag_holds, event_holds
from acel.lang.relate import bag_holds_relating, edge_value, is_relating
from acel.lang.schema import Schema

DEFAULT_MAX_EVENTS = 16
DEFAULT_MAX_COMPLEX_EVENTS = 200_000
ENV_MAX_EVENTS = "ACEL_ORACLE_MAX_EVENTS"
ENV_MAX_COMPLEX_EVENTS = "ACEL_ORACLE_MAX_COMPLEX_EVENTS"

CESet = set[ComplexEvent]
"""``⟦φ⟧(S)``: a set of complex events in canonical form (spec §2)."""


class OracleTooLarge(AcelError):
    """The input is too large for the exponential reference oracle."""


# ------------------------------------------------------------------ guards


def _limit(explicit: int | None, env: str, default: int) -> int:
    """The limit given by argument, else by environment variable, else the default."""
    if explicit is not None:
        return explicit
    text = os.environ.get(env)
    if text is None or not text.strip():
        return default
    try:
        return int(text)
    except ValueError:
        raise AcelError(f"{env}={text!r} is not an integer") from None


def max_events_limit(explicit: int | None = None) -> int:
    """The stream-length limit in force (argument, ``ACEL_ORACLE_MAX_EVENTS``, 16)."""
    return _limit(explicit, ENV_MAX_EVENTS, DEFAULT_MAX_EVENTS)


def max_complex_events_limit(explicit: int | None = None) -> int:
    """The intermediate-set limit (argument, ``ACEL_ORACLE_MAX_COMPLEX_EVENTS``, 200,000)."""
    return _limit(explicit, ENV_MAX_COMPLEX_EVENTS, DEFAULT_MAX_COMPLEX_EVENTS)


def check_stream_size(length: int, max_events: int, what: str = "stream") -> None:
    """Refuse a stream longer than ``max_events`` before evaluating anything."""
    if length > max_events:
        raise OracleTooLarge(
            f"the reference oracle refuses a {what} of {length} events: it enumerates "
            f"every complex event, which can take time exponential in the stream length, "
            f"and the limit is {max_events} events. Use a faster engine (acel run "
            f"--engine optimized or automaton), or raise the limit with the environment "
            f"variable {ENV_MAX_EVENTS}={length} (max_events={length} in Python)."
        )


@dataclass(frozen=True)
class _Context:
    """What every operator may read: the stream, the schema's types, the set limit."""

    stream: tuple[Event, ...]
    types: tuple[str, ...]
    max_complex_events: int

    def guard(self, result: CESet, operator: str) -> CESet:
        """Stop when an intermediate set grows past the limit."""
        if len(result) > self.max_complex_events:
            raise OracleTooLarge(
                f"the reference oracle stopped: the sub-formula {operator} has more than "
                f"{self.max_complex_events} complex events on a stream of "
                f"{len(self.stream)} events. Use a shorter stream or a faster engine (acel "
                f"run --engine optimized or automaton), or raise the limit with the "
                f"environment variable {ENV_MAX_COMPLEX_EVENTS} (max_complex_events= in "
                f"Python)."
            )
        return result


# ------------------------------------------------------- one function per operator


def atom(ctx: _Context, type_name: str) -> CESet:
    """``⟦R⟧ = { (k, k, [R ↦ {{e_k}}]) : e_k(type) = R }``."""
    return {
        ComplexEvent.make(k, k, {type_name: [e]})
        for k, e in enumerate(ctx.stream)
        if e.type == type_name
    }


def bag_union_of_all(ce: ComplexEvent) -> Counter[Event]:
    """``⋃_Y μ(Y)``: the bag union (max multiplicity) of every variable's bag."""
    union: Counter[Event] = Counter()
    for var in ce.variables():
        union |= ce.counter(var)
    return union


def as_var(operand: CESet, var: str) -> CESet:
    """``⟦φ AS X⟧ = { (i, j, μ[X ↦ ⋃_Y μ(Y)]) }``, X included among the Y (spec §3)."""
    return {ce.with_bag(var, bag_union_of_all(ce).elements()) for ce in operand}


def filter_set(ctx: _Context, operand: CESet, filt: A.Filter) -> CESet:
    """``⟦φ FILTER f⟧``: unary and bag predicates per variable, AND/OR as CEL's identities.

    ``φ FILTER (f AND g) = (φ FILTER f) FILTER g`` and
    ``φ FILTER (f OR g) = (φ FILTER f) OR (φ FILTER g)``.
    """
    return _filtered(filt, ctx, operand)


@singledispatch
def _filtered(filt: A.Filter, ctx: _Context, operand: CESet) -> CESet:
    raise TypeError(f"not a filter: {filt!r}")


@_filtered.register(A.VarPred)
def _filtered_var(filt: A.VarPred, ctx: _Context, operand: CESet) -> CESet:
    if is_relating(filt.pred):  # spec §5.1: conjunct by conjunct, universally
        return {ce for ce in operand if bag_holds_relating(filt.pred, filt.var, ce.bag)}
    return {ce for ce in operand if all(event_holds(filt.pred, e) for e in ce.bag(filt.var))}


@_filtered.register(A.BagPred)
def _filtered_bag(filt: A.BagPred, ctx: _Context, operand: CESet) -> CESet:
    return {ce for ce in operand if bag_holds(filt.kind, filt.attr, ce.bag(filt.var))}


@_filtered.register(A.FilterAnd)
def _filtered_and(filt: A.FilterAnd, ctx: _Context, operand: CESet) -> CESet:
    return _filtered(filt.right, ctx, _filtered(filt.left, ctx, operand))


@_filtered.register(A.FilterOr)
def _filtered_or(filt: A.FilterOr, ctx: _Context, operand: CESet) -> CESet:
    return or_sets(_filtered(filt.left, ctx, operand), _filtered(filt.right, ctx, operand))


def or_sets(left: CESet, right: CESet) -> CESet:
    """``⟦φ1 OR φ2⟧ = ⟦φ1⟧ ∪ ⟦φ2⟧``."""
    return left | right


def and_sets(left: CESet, right: CESet) -> CESet:
    """``⟦φ1 AND φ2⟧ = ⟦φ1⟧ ∩ ⟦φ2⟧`` (the same complex event on both sides)."""
    return left & right


Follows = Callable[[ComplexEvent, ComplexEvent], bool]


def strictly_after(c1: ComplexEvent, c2: ComplexEvent) -> bool:
    """The condition of ``;``: ``end(C1) < start(C2)``."""
    return c1.end < c2.start


def right_after(c1: ComplexEvent, c2: ComplexEvent) -> bool:
    """The condition of ``:``: ``end(C1) + 1 = start(C2)``."""
    return c1.end + 1 == c2.start


def join(ctx: _Context, left: CESet, right: CESet, follows: Follows, operator: str) -> CESet:
    """``{ C1 ∪ C2 : C1 ∈ left, C2 ∈ right, follows(C1, C2) }`` (``;`` and ``:``).

    The right operand is grouped by start only to skip pairs that cannot
    follow; every pair that does is checked with ``follows`` itself.
    """
    by_start: dict[int, list[ComplexEvent]] = {}
    for c2 in right:
        by_start.setdefault(c2.start, []).append(c2)
    starts = sorted(by_start)
    out: CESet = set()
    for c1 in left:
        for start in starts:
            if start <= c1.end:
                continue
            for c2 in by_start[start]:
                if follows(c1, c2):
                    out.add(c1.union(c2))
            ctx.guard(out, operator)
    return out


def seq(ctx: _Context, left: CESet, right: CESet) -> CESet:
    """``⟦φ1 ; φ2⟧ = { C1 ∪ C2 : end(C1) < start(C2) }``."""
    return join(ctx, left, right, strictly_after, "';'")


def seq_not(ctx: _Context, left: CESet, excluded: Sequence[CESet], right: CESet) -> CESet:
    """``⟦φ1 ; NOT ψ1 ; … ; NOT ψn ; φ2⟧`` (spec §3.1): ``{ C1 ∪ C2 : end(C1) < start(C2)``,
    and no ``N ∈ ⟦ψ1⟧ ∪ … ∪ ⟦ψn⟧`` with ``end(C1) < start(N)`` and ``end(N) < start(C2) }``.

    Only the intervals of the ``N`` matter; the verdict for a gap
    ``(end(C1), start(C2))`` is computed once.
    """
    spans = {(n.start, n.end) for found in excluded for n in found}
    verdicts: dict[tuple[int, int], bool] = {}

    def gap_is_clear(c1: ComplexEvent, c2: ComplexEvent) -> bool:
        gap = (c1.end, c2.start)
        clear = verdicts.get(gap)
        if clear is None:
            clear = verdicts[gap] = not any(c1.end < s and e < c2.start for s, e in spans)
        return clear

    def follows(c1: ComplexEvent, c2: ComplexEvent) -> bool:
        return strictly_after(c1, c2) and gap_is_clear(c1, c2)

    return join(ctx, left, right, follows, "'; NOT'")


def contig(ctx: _Context, left: CESet, right: CESet) -> CESet:
    """``⟦φ1 : φ2⟧ = { C1 ∪ C2 : end(C1) + 1 = start(C2) }``."""
    return join(ctx, left, right, right_after, "':'")


def iterate(
    ctx: _Context, base: CESet, step: Callable[[_Context, CESet, CESet], CESet], operator: str
) -> CESet:
    """The least fixpoint of ``X = base ∪ step(base, X)`` (``φ+`` and ``φ:+``).

    Computed by Kleene iteration from ∅, adding at each round only what the
    complex events found in the previous round give (``step`` distributes
    over ∪ in its right operand, so nothing is missed); it stops when a
    round finds no new complex event.  It terminates because every new
    complex event starts strictly before the one it extends.
    """
    result: CESet = set(base)
    frontier: CESet = set(base)
    while frontier:
        new = step(ctx, base, frontier) - result
        result |= new
        ctx.guard(result, operator)
        frontier = new
    return result


def plus(ctx: _Context, operand: CESet) -> CESet:
    """``⟦φ+⟧ = ⟦φ⟧ ∪ ⟦φ ; φ+⟧`` (least fixpoint)."""
    return iterate(ctx, operand, seq, "'+'")


def contig_plus(ctx: _Context, operand: CESet) -> CESet:
    """``⟦φ:+⟧ = ⟦φ⟧ ∪ ⟦φ : φ:+⟧`` (least fixpoint; the paper's ⊕)."""
    return iterate(ctx, operand, contig, "':+'")


def project_vars(operand: CESet, keep: Iterable[str]) -> CESet:
    """``⟦PROJECT[X1..Xn](φ)⟧ = { π_L(C) }``: other variables emptied, interval kept."""
    wanted = tuple(keep)
    return {ce.project(wanted) for ce in operand}


def restrict_event(event: Event, attrs: Iterable[str]) -> Event:
    """An event keeping only ``attrs`` (and its time); without ``type`` it is untyped."""
    return Event.make(event.time, {a: event.get(a) for a in attrs})


def project_attrs(operand: CESet, var: str, attrs: Sequence[str]) -> CESet:
    """``⟦PROJECT X[a1..an](φ)⟧``: events of X keep only a1..an; other variables unchanged."""
    return {ce.with_bag(var, [restrict_event(e, attrs) for e in ce.bag(var)]) for ce in operand}


def aggregate_value(ce: ComplexEvent, output: A.AggOutput) -> OptValue:
    """``F`` applied to the bag ``{{ e(a) : e ∈ μ(X) }}`` (``COUNT(X)`` feeds 1 per event).

    NULL values are skipped (the monoid identity); the empty bag gives the
    finish of the identity (spec §4).  ``FIRST``/``LAST`` take the earliest / latest
    event's value (spec §5.1).
    """
    if output.func in ("FIRST", "LAST") and output.attr is not None:
        return edge_value(output.func, output.attr, ce.bag(output.var))
    agg = aggregates.lookup(output.func)
    if agg is None:
        raise AcelCheckError(f"unknown aggregate function {output.func!r} in AGG")
    bag = ce.bag(output.var)
    values: list[OptValue] = (
        [1 for _ in bag] if output.attr is None else [e.get(output.attr) for e in bag]
    )
    return agg.apply(values)


def created_event(ce: ComplexEvent, outputs: Sequence[A.AggOutput]) -> Event:
    """``e_C``: a new untyped event at time ``j = end(C)`` with one attribute per output.

    An output whose value is NULL (MIN of an empty bag, say) is simply absent,
    since a missing attribute reads as NULL (spec §1).
    """
    return Event.make(ce.end, {o.name: aggregate_value(ce, o) for o in outputs})


def agg(operand: CESet, var: str, outputs: Sequence[A.AggOutput]) -> CESet:
    """``⟦AGG Z[b := F(X.a), ...](φ)⟧ = { (i, j, μ[Z ↦ μ(Z) ⊎ {{e_C}}]) }`` (seed 004 §5)."""
    return {ce.with_bag(var, ce.bag(var) + (created_event(ce, outputs),)) for ce in operand}


def next_macro(ctx: _Context, node: A.Next) -> A.Formula:
    """``NEXT(R)`` through its macro (seed 004 App. D.1) over the schema's types."""
    from acel.lang.macros import expand_next  # the macro has one definition, in acel.lang.macros

    return expand_next(node, list(ctx.types))


# ---------------------------------------------------------------- the evaluator


def _eval(formula: A.Formula, ctx: _Context) -> CESet:
    """``⟦formula⟧(S)``, dispatching on the operator of spec §3 (:func:`_sets`), each
    intermediate set checked against the size limit."""
    case = _sets.dispatch(type(formula))  # called here: one stack frame less per level
    return ctx.guard(case(formula, ctx), type(formula).__name__)


@singledispatch
def _sets(formula: A.Formula, ctx: _Context) -> CESet:
    """The set of one operator from its operands' sets: one case per formula node."""
    raise TypeError(f"not a formula: {formula!r}")


@_sets.register(A.Atom)
def _sets_atom(f: A.Atom, ctx: _Context) -> CESet:
    return atom(ctx, f.type)


@_sets.register(A.As)
def _sets_as(f: A.As, ctx: _Context) -> CESet:
    return as_var(_eval(f.formula, ctx), f.var)


@_sets.register(A.FilterF)
def _sets_filter(f: A.FilterF, ctx: _Context) -> CESet:
    return filter_set(ctx, _eval(f.formula, ctx), f.filter)


@_sets.register(A.Derived)
def _sets_derived(f: A.Derived, ctx: _Context) -> CESet:  # type: ignore[misc]  # Derived: a base of formula nodes
    return _eval(f.expand(), ctx)


@_sets.register(A.Or)
def _sets_or(f: A.Or, ctx: _Context) -> CESet:
    return or_sets(_eval(f.left, ctx), _eval(f.right, ctx))


@_sets.register(A.And)
def _sets_and(f: A.And, ctx: _Context) -> CESet:
    return and_sets(_eval(f.left, ctx), _eval(f.right, ctx))


@_sets.register(A.Seq)
def _sets_seq(f: A.Seq, ctx: _Context) -> CESet:
    return seq(ctx, _eval(f.left, ctx), _eval(f.right, ctx))


@_sets.register(A.Contig)
def _sets_contig(f: A.Contig, ctx: _Context) -> CESet:
    return contig(ctx, _eval(f.left, ctx), _eval(f.right, ctx))


@_sets.register(A.Plus)
def _sets_plus(f: A.Plus, ctx: _Context) -> CESet:
    return plus(ctx, _eval(f.formula, ctx))


@_sets.register(A.ContigPlus)
def _sets_contig_plus(f: A.ContigPlus, ctx: _Context) -> CESet:
    return contig_plus(ctx, _eval(f.formula, ctx))


@_sets.register(A.ProjectVars)
def _sets_project_vars(f: A.ProjectVars, ctx: _Context) -> CESet:
    return project_vars(_eval(f.formula, ctx), f.vars)


@_sets.register(A.ProjectAttrs)
def _sets_project_attrs(f: A.ProjectAttrs, ctx: _Context) -> CESet:
    return project_attrs(_eval(f.formula, ctx), f.var, f.attrs)


@_sets.register(A.Agg)
def _sets_agg(f: A.Agg, ctx: _Context) -> CESet:
    return agg(_eval(f.formula, ctx), f.var, f.outputs)


@_sets.register(A.Next)
def _sets_next(f: A.Next, ctx: _Context) -> CESet:
    return _eval(next_macro(ctx, f), ctx)


@_sets.register(A.SeqNot)
def _sets_seq_not(f: A.SeqNot, ctx: _Context) -> CESet:
    return seq_not(
        ctx,
        _eval(f.left, ctx),
        [_eval(psi, ctx) for psi in f.excluded],
        _eval(f.right, ctx),
    )


@_sets.register(A.LeadingNot)
@_sets.register(A.TrailingNot)
def _sets_top_not(f: A.LeadingNot | A.TrailingNot, ctx: _Context) -> CESet:
    raise AcelCheckError(
        "leading and trailing negation depend on the query's window: they are evaluated "
        "by the query driver (acel.lang.clauses.run_query), only at the top of a query's "
        "pattern with WITHIN (spec §3.1)"
    )


@_sets.register(A.Repeat)
@_sets.register(A.Opt)
def _sets_quantified(f: A.Repeat | A.Opt, ctx: _Context) -> CESet:
    if isinstance(f, A.Repeat):
        return _eval(expand_quantifiers(f, longest=len(ctx.stream)), ctx)
    raise AcelCheckError(
        "ψ? and ψ* are elements of a sequence: evaluate expand_quantifiers(formula) (spec §3.2)"
    )


declare("oracle.formula", "formula", _sets)
declare("oracle.filter", "filter", _filtered)


def stream_types(stream: Iterable[Event]) -> tuple[str, ...]:
    """The event types present in a stream, sorted (NEXT's default type list)."""
    return tuple(sorted({e.type for e in stream if e.type is not None}))


def number_stream(stream: Sequence[Event]) -> tuple[Event, ...]:
    """The stream with ``time(e_k) = k`` (spec §1: a stream event's time is its position)."""
    return tuple(e if e.time == k else e.at(k) for k, e in enumerate(stream))


def evaluate(
    formula: A.Formula,
    stream: Sequence[Event],
    *,
    types: Sequence[str] | None = None,
    max_events: int | None = None,
    max_complex_events: int | None = None,
) -> CESet:
    """``⟦formula⟧(S)``: the set of complex events of a formula on a stream (spec §3).

    Event ``k`` of ``stream`` is taken at time ``k``.  ``types`` is the list
    of types that NEXT's macro ranges over (the schema's types); by default
    the types present in the stream.  Raises :class:`OracleTooLarge` past
    the size limits (see the module docstring).
    """
    check_stream_size(len(stream), max_events_limit(max_events))
    events = number_stream(stream)
    ctx = _Context(
        stream=events,
        types=tuple(types) if types is not None else stream_types(events),
        max_complex_events=max_complex_events_limit(max_complex_events),
    )
    # quantifiers by their expansion (§3.2), bounds above the stream's length lowered
    return _eval(expand_quantifiers(formula, longest=len(events)), ctx)


def run(
    query: A.Query,
    stream: Sequence[Event],
    schema: Schema,
    *,
    max_events: int | None = None,
    max_complex_events: int | None = None,
) -> list[Match] | list[TrendRow]:
    """A whole query (spec §6) on the oracle: the clauses of ``acel.lang.clauses.run_query``.

    The size guard applies to each sub-stream the formula runs on (the whole
    stream without PARTITION BY) and is checked for all of them before any
    evaluation starts.  Leading and trailing negations are applied by
    ``run_query``, which evaluates the body and each ``ψ`` here (spec §3.1).
    """
    limit = max_events_limit(max_events)
    sizes = [len(p.events) for p in split_partitions(stream, query.partition_by)]
    if sizes and max(sizes) > limit:
        what = "partition" if query.partition_by else "stream"
        check_stream_size(max(sizes), limit, what)
    types = schema.type_names()
    complex_limit = max_complex_events_limit(max_complex_events)

    def on_substream(formula: A.Formula, events: Sequence[Event]) -> CESet:
        return evaluate(
            formula,
            events,
            types=types,
            max_events=limit,
            max_complex_events=complex_limit,
        )

    return run_query(query, stream, on_substream)


__all__ = [
    "DEFAULT_MAX_COMPLEX_EVENTS",
    "DEFAULT_MAX_EVENTS",
    "ENV_MAX_COMPLEX_EVENTS",
    "ENV_MAX_EVENTS",
    "OracleTooLarge",
    "evaluate",
    "run",
]
