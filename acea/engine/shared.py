"""Shared trend aggregation for a workload of RETURN queries (HAMLET seed 003, A-Seq seed 001).

A workload's trend queries whose automata keep no register in any state
(sequences, Kleene ``+``, ``OR``, ``AS``, event predicates: the HAMLET and
A-Seq fragment) are counted together by a :class:`SharedPlan`, one per
(PARTITION BY, SLIDE) group.  Everything here is exact (Python integers) and
gives the rows each query gives alone (:class:`acel.acea.engine.Runner`).

**Linear propagation.**  Without registers, a configuration is just a state,
and each query's trend vectors (``[n, acc…]`` per state, :mod:`.trend`) are a
vector of scalars that every event maps *affinely*: reading an event adds to
each state the scalars of the states it is reached from (a count ``n``, or
``acc + c·n`` with the transition's contribution ``c``), keeps the states
that have a skip loop, clears the others, and injects ``1`` for a run that
starts at the event.  Final states are sinks, so each query's results are a
cumulative accumulator ``R`` (a scalar per component).

**One vector for the workload (A-Seq's prefix sharing, generalised).**  The
scalars of all queries of a group are merged by partition refinement: two
scalars whose in-edges (source class, transition label) are the same
multiset hold the same value at every step, so they get one entry.  Queries
with a common prefix (``A ; B ; C`` and ``A ; B ; D``) share the prefix's
entries, and a query that is a prefix of another (``A ; B``) reads its rows
from the other's state.  Transition labels are canonical (registers renamed),
so equal atoms of different queries have one label and are evaluated once per
event.

**Bursts (HAMLET's shared graphlets and snapshots).**  An event's effect is
fixed by its *signature*: its type, which transition labels fire and their
contributions.  Consecutive events with the same signature form a *burst*;
the workload's map for the burst is the signature's map to the power ``b``.
That map splits into small *cells* (the entries one signature writes, with
the entries they read): a query's Kleene sub-pattern ``T+`` is one cell, and
the cells of all queries sharing ``T+`` have the same *shape*.  The burst is
propagated once per shape (an affine power, computed from the shape's
coefficients and cached by length: HAMLET's shared graphlet), and each query
is touched once per burst to apply it to its entries at the burst start (its
snapshot): ``y ← 2^b·y + (2^b − 1)·x`` for ``T+`` counts.  Per-event work is
one signature per event, independent of the number of queries.

**The dynamic decision.**  When a burst ends, the plan compares the cost of
stepping its events one by one through every query's entries (``b`` times
the step's terms) with the cost of the shared burst (the burst code's terms
plus the shapes' powers not yet cached), and takes the cheaper (HAMLET's
benefit test of Definition 4.2, made per burst).  Either way the result is
the same exact integer.

**Windows.**  Queries of a group share the SLIDE ``s``: a run's class is
``⌊start/s⌋`` (the *pane*), one vector per live pane.  A pane's ``R`` entries
are cumulative, so the row of window ``k`` of a query is the sum of ``R`` over
panes ``≥ k`` at the moment the axis passes ``k·s + w`` (the query's own
``w``): queries with different WITHIN sizes share the panes (HAMLET's panes).
Bursts are cut where a pane starts or a window closes.  Without WITHIN
there is one pane.  What is not here (``WITHIN`` without ``SLIDE``, ``ON
attr`` windows, registers, MIN/MAX, enumeration) runs on its own runner in
the same pass (:mod:`acel.acea.engine.workload`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from acel.acea.engine.closures import CompiledTransition, TrendItem, is_skip_loop
from acel.acea.engine.plan import compiled_for, propagation_applies, trend_items
from acel.acea.engine.trend import KINDS
from acel.acea.model import expressions
from acel.acea.model.automaton import Transition
from acel.acea.model.expressions import Cmp, Const, Reg, is_register

from acel.lang.ast import Query, ReturnAgg, top_negation
from acel.lang.clauses import Key, TrendAccumulator, TrendRow
from acel.lang.schema import Schema

START = -1
"""The pseudo-entry of a run starting at the event (its value is 1 in the current pane)."""

COMPOSITE_CACHE = 4096
"""Burst powers kept per plan (shape, contributions, length); cleared when full."""

MAX_STRUCTS = 256
"""Generated structures per event type; further verdict combinations are interpreted."""

CALL_COST = 3
"""The cost model's price of one generated-function call, in terms (one term: one
multiply-add on a vector entry)."""

SMALL_OP = 0.1
"""The price of one operation of a shape's power (small coefficients), in terms."""


# ------------------------------------------------------------------ eligibility


def unshared_reason(query: Query, schema: Schema) -> str | None:
    """Why ``query`` cannot join a shared trend plan (``None``: it can)."""
    if query.returns is None:
        return "per-match query (complex events out)"
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
        kind = KINDS.get(item.func.upper())
        if kind is None:
            return f"aggregate {item.func} has no known power"
        if kind not in ("add", "avg"):
            return f"{item.func} is not linear (MIN/MAX)"
    automaton, _ = compiled_for(query.formula, schema)
    if not propagation_applies(query, automaton):
        return "counts need enumeration (ambiguous automaton)"
    _, ca = compiled_for(query.formula, schema, items)
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


# ------------------------------------------------------------------ canonical labels


def _rename(obj: Any, names: dict[str, str]) -> Any:
    """``obj`` with registers renamed in order of first appearance (``r0#``, ``r1#``…)."""
    if isinstance(obj, Reg):
        if is_register(obj.name):
            return Reg(names.setdefault(obj.name, f"r{len(names)}#"))
        return obj
    if isinstance(obj, tuple):
        return tuple(_rename(o, names) for o in obj)
    if dataclasses.is_dataclass(obj) and type(obj).__module__ == expressions.__name__:
        changes = {f.name: _rename(getattr(obj, f.name), names) for f in dataclasses.fields(obj)}
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    return obj


def labels_of(
    transition: Transition, types: frozenset[str] | None, items: Sequence[TrendItem]
) -> tuple[Any, Any]:
    """``(verdict label, payload label)`` of a transition, equal for transitions of any
    query that fire on the same events (and contribute the same values)."""
    names: dict[str, str] = {}
    assigned = [(names.setdefault(reg, f"r{len(names)}#"), reg) for reg, _ in transition.assignment]
    assignment = tuple(
        (canon, _rename(expr, names)) for (canon, _), (_, expr) in zip(assigned, transition.assignment)
    )
    predicate = _rename(transition.predicate, names)
    verdict = (types, assignment, predicate)
    assigned_regs = {reg for reg, _ in transition.assignment}
    by_var = dict(transition.output)
    payload = []
    for item in items:
        values = []
        for renaming in by_var.get(item.var, ()):
            if item.attr is None:
                values.append("1")
            else:
                reg = dict(renaming.items).get(item.attr)
                values.append(names.get(reg) if reg in assigned_regs else None)  # type: ignore[arg-type]
        payload.append((item.func.upper(), tuple(values)))
    return verdict, (verdict, tuple(payload))


# ------------------------------------------------------------------ the plan


@dataclasses.dataclass
class Member:
    """One query of a shared plan."""

    name: str
    query: Query
    items: tuple[TrendItem, ...]
    kinds: tuple[str, ...]
    """Per item: ``add`` or ``avg``."""
    window: int | None
    """WITHIN size (EVENTS), ``None`` without WITHIN."""
    rows: list[int] = dataclasses.field(default_factory=list)
    """Entry of each component of its result accumulator ``R`` (``[n, acc…]``)."""
    scalars: int = 0
    """Scalars before merging (states × components, and ``R``)."""


class _Key:
    """A payload label evaluated once per event: a representative transition."""

    __slots__ = ("ct", "verdict", "kinds", "width", "types")

    def __init__(self, ct: CompiledTransition, verdict: int, kinds: tuple[str, ...]) -> None:
        self.ct = ct
        self.verdict = verdict
        self.kinds = kinds
        self.width = sum(2 if k == "avg" else 1 for k in kinds)
        self.types = ct.types


class SharedPlan:
    """The shared trend plan of one group of queries (see the module doc)."""

    def __init__(self, members: Sequence[tuple[str, Query]], schema: Schema) -> None:
        if not members:
            raise ValueError("a shared plan needs at least one query")
        first = members[0][1]
        self.partition_by = tuple(first.partition_by)
        self.slide: int | None = first.slide.size if first.slide is not None else None  # type: ignore[assignment]
        self.members: list[Member] = []
        self.verdicts: dict[Any, int] = {}
        self.keys: list[_Key] = []
        self._key_of: dict[Any, int] = {}
        nodes: list[tuple[Any, ...]] = []
        node_of: dict[tuple[Any, ...], int] = {}
        in_edges: list[list[tuple[int, tuple[Any, ...]]]] = []

        def node(name: tuple[Any, ...]) -> int:
            found = node_of.get(name)
            if found is None:
                found = node_of[name] = len(nodes)
                nodes.append(name)
                in_edges.append([])
            return found

        for qi, (name, query) in enumerate(members):
            if group_key(query) != (self.partition_by, self.slide):
                raise ValueError(f"query {name!r} belongs to another group")
            items = trend_items(query)
            kinds = tuple(KINDS[i.func.upper()] for i in items)
            member = Member(name, query, items, kinds, query.within.size if query.within else None)  # type: ignore[arg-type]
            self.members.append(member)
            width = 1 + sum(2 if k == "avg" else 1 for k in kinds)
            _, ca = compiled_for(query.formula, schema, items)
            automaton = ca.automaton
            initial, finals = automaton.initial, automaton.finals
            tracked_initial = any(t.target == initial for t in automaton.transitions)
            skip_seen: set[int] = set()
            for ct in ca.transitions:
                t = ct.transition
                if (
                    t.source not in skip_seen
                    and t.source != initial
                    and is_skip_loop(t, ca.live)
                ):
                    skip_seen.add(t.source)
                    for j in range(width):
                        x = node(("s", qi, t.source, j))
                        in_edges[x].append((x, ("carry",)))
                    continue
                verdict, payload = labels_of(t, ct.types, items)
                vid = self.verdicts.setdefault(verdict, len(self.verdicts))
                pid = self._key_of.get(payload)
                if pid is None:
                    pid = self._key_of[payload] = len(self.keys)
                    self.keys.append(_Key(ct, vid, kinds))
                target = ("R", qi) if t.target in finals else ("s", qi, t.target)
                # a run starting at this event, and the runs waiting in the source state
                origins: list[bool] = []
                if t.source == initial:
                    origins.append(True)
                if t.source != initial or tracked_initial:
                    origins.append(False)
                for fresh in origins:
                    n_src = START if fresh else node(("s", qi, t.source, 0))
                    n_dst = node((*target, 0))
                    in_edges[n_dst].append((n_src, ("v", vid)))  # n' += n
                    slot, j = 0, 1
                    for kind in kinds:
                        for part in range(2 if kind == "avg" else 1):
                            dst = node((*target, j))
                            if not fresh:  # acc' += acc
                                in_edges[dst].append((node(("s", qi, t.source, j)), ("v", vid)))
                            in_edges[dst].append((n_src, ("p", pid, slot + part)))  # acc' += c·n
                            j += 1
                        slot += 2 if kind == "avg" else 1
            # R accumulates: it carries its value
            for j in range(width):
                x = node(("R", qi, j))
                in_edges[x].append((x, ("carry",)))
            member.scalars = sum(1 for n in nodes if n[1] == qi)
        self.scalars = len(nodes)
        self._merge(nodes, in_edges)
        self._by_type: dict[Any, Any] = {}
        self._slots: dict[Any, tuple[dict[tuple[int, int], int], dict[int, int]]] = {}
        self._structs: dict[tuple[Any, int], _Struct] = {}
        self.composites: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.stats = {"structs": 0, "shapes": 0}
        """Structures and shapes generated so far (lazily, on their first event)."""
        self._shapes: dict[tuple[Any, ...], _Shape] = {}

    # ----------------------------------------------------------- merging

    def _merge(self, nodes: list[tuple[Any, ...]], in_edges: list[list[tuple[int, Any]]]) -> None:
        """Partition refinement: scalars with the same in-edges (by class) share an entry."""
        n = len(nodes)
        cls = [0] * n
        count = 1
        while True:
            sigs: dict[Any, int] = {}
            new = []
            for x in range(n):
                sig = (
                    cls[x],
                    tuple(sorted((cls[s] if s >= 0 else s, label) for s, label in in_edges[x])),
                )
                new.append(sigs.setdefault(sig, len(sigs)))
            cls = new
            if len(sigs) == count:
                break
            count = len(sigs)
        # one representative per class; its in-edges (by class) define the entry
        rep: dict[int, int] = {}
        for x in range(n):
            rep.setdefault(cls[x], x)
        edges = {
            c: [(cls[s] if s >= 0 else s, label) for s, label in in_edges[x]] for c, x in rep.items()
        }
        r_classes = {cls[x] for x in range(n) if nodes[x][0] == "R"}
        forward = {START}
        changed = True
        while changed:
            changed = False
            for c, ins in edges.items():
                if c not in forward and any(s in forward and s != c for s, _ in ins):
                    forward.add(c)
                    changed = True
        backward = set(r_classes)
        changed = True
        while changed:
            changed = False
            for c, ins in edges.items():
                if c in backward:
                    for s, _ in ins:
                        if s >= 0 and s not in backward:
                            backward.add(s)
                            changed = True
        keep = sorted(c for c in edges if (c in forward and c in backward) or c in r_classes)
        entry = {c: i for i, c in enumerate(keep)}
        self.size = len(keep)
        """Entries of the merged vector."""
        self.edges: list[list[tuple[int, Any]]] = []
        for c in keep:
            ins = []
            for s, label in edges[c]:
                if s == START:
                    ins.append((START, label))
                elif s in entry and s in forward:
                    ins.append((entry[s], label))
            self.edges.append(ins)
        self.holders: list[list[str]] = [[] for _ in keep]
        """Per entry: the scalars it holds (``q1:s3.n`` a state's count, ``q1:rows.n`` a
        result), for drawings."""
        for x, name in enumerate(nodes):
            if name[0] == "R":
                self.members[name[1]].rows.append(entry[cls[x]])
            e = entry.get(cls[x])
            if e is not None:
                where = "rows" if name[0] == "R" else f"s{name[2]}"
                comp = "n" if name[-1] == 0 else f"a{name[-1]}"
                self.holders[e].append(f"{self.members[name[1]].name}:{where}.{comp}")
        self.carry = [any(label == ("carry",) for _, label in ins) for ins in self.edges]

    # ----------------------------------------------------------- signatures

    def signature(self, attrs: dict[str, Any], time: int) -> tuple[_Struct, tuple[Any, ...]] | None:
        """The event's structure and contributions (``None``: it changes nothing)."""
        ty = attrs.get("type")
        entry = self._by_type.get(ty)
        if entry is None:
            entry = self._by_type[ty] = self._type_entry(ty)
        if entry is False:
            return None
        evaluate, structs = entry
        if evaluate is None:  # the type alone decides: one structure, no contributions
            return structs
        bits, params = evaluate(attrs, time)
        struct = structs.get(bits)
        if struct is None:
            if len(structs) < MAX_STRUCTS:
                struct = structs[bits] = self._struct(ty, bits)
            else:  # predicates that fire in ever new combinations: interpret, do not generate
                struct = self._struct(ty, bits, interpreted=True)
        if struct.identity:
            return None
        return struct, params

    def _type_entry(self, ty: Any) -> Any:
        """For one event type: its keys' evaluator and its structures by verdict bits."""
        keys = [
            (pid, k)
            for pid, k in enumerate(self.keys)
            if k.types is None or (ty is not None and ty in k.types)
        ]
        if not keys and all(self.carry):
            return False  # nothing fires and every entry keeps its value
        verdicts = sorted({k.verdict for _, k in keys})
        bit = {v: 1 << i for i, v in enumerate(verdicts)}
        if all(not key.width and _type_test(key.ct.transition) is not None for _, key in keys):
            # atoms without predicates: the verdicts follow from the type
            self._slots[ty] = ({}, bit)
            bits = 0
            for _, key in keys:
                if _type_test(key.ct.transition) == ty:
                    bits |= bit[key.verdict]
            struct = self._struct(ty, bits)
            return None, (None if struct.identity else (struct, ()))
        lines = ["def evaluate(a, t):", "    b = 0", "    p = []"]
        ns: dict[str, Any] = {}
        slots: list[tuple[int, int]] = []  # (key, slot) per parameter position
        for i, (pid, key) in enumerate(keys):
            ct = key.ct
            ns[f"f{i}"] = ct.fire
            call = f"f{i}((), a, t)"
            if ct.guard is not None:
                ns[f"g{i}"] = ct.guard
                call = f"({call} if g{i}(a, t) else None)"
            lines.append(f"    r = {call}")
            if key.width:
                lines.append("    if r is not None:")
                lines.append(f"        b |= {bit[key.verdict]}")
                lines.append("        c = r[1]")
                lines.append(f"        p.extend(_flat(c, {key.kinds!r}))")
                lines.append("    else:")
                lines.append(f"        p.extend({(0,) * key.width!r})")
                slots.extend((pid, s) for s in range(key.width))
            else:
                lines.append(f"    if r is not None: b |= {bit[key.verdict]}")
        lines.append("    return b, tuple(p)")
        ns["_flat"] = _flat
        exec(compile("\n".join(lines), f"<shared evaluator {ty!r}>", "exec"), ns)  # noqa: S102
        self._slots[ty] = ({s: i for i, s in enumerate(slots)}, bit)
        return ns["evaluate"], {}

    def _struct(self, ty: Any, bits: int, interpreted: bool = False) -> _Struct:
        slot_index, bit = self._slots[ty]
        fired = {v for v, b in bit.items() if bits & b}
        terms: dict[int, dict[int, list[Any]]] = {}
        for e, ins in enumerate(self.edges):
            firing: dict[int, list[Any]] = {}
            carry = False
            for src, label in ins:
                kind = label[0]
                if kind == "carry":
                    carry = True
                    continue
                if kind == "v":
                    if label[1] not in fired:
                        continue
                    coef = firing.setdefault(src, [0, []])
                    coef[0] += 1
                else:
                    key = self.keys[label[1]]
                    if key.verdict not in fired:
                        continue
                    coef = firing.setdefault(src, [0, []])
                    coef[1].append(slot_index[(label[1], label[2])])
            if carry and not firing:
                continue  # unchanged
            if carry:
                coef = firing.setdefault(e, [0, []])
                coef[0] += 1
            terms[e] = firing
        self.stats["structs"] += 1
        return _Struct(self, ty, bits, terms, interpreted)

    # ----------------------------------------------------------- shapes

    def shape(self, key: tuple[Any, ...]) -> _Shape:
        found = self._shapes.get(key)
        if found is None:
            found = self._shapes[key] = _Shape(len(self._shapes), key)
            self.stats["shapes"] += 1
        return found

    def composite(self, shape: _Shape, params: tuple[Any, ...], b: int) -> tuple[Any, ...]:
        """The shape's map over ``b`` events with these contributions (cached)."""
        key = (shape.id, params, b)
        found = self.composites.get(key)
        if found is None:
            if len(self.composites) >= COMPOSITE_CACHE:
                self.composites.clear()
            found = self.composites[key] = shape.power(params, b)
        return found

    # ----------------------------------------------------------- description

    def describe(self) -> str:
        """A few lines for ``acel compile``: queries, entries, merging."""
        names = ", ".join(m.name for m in self.members)
        by = "PARTITION BY " + ", ".join(self.partition_by) if self.partition_by else "no PARTITION BY"
        window = f"SLIDE {self.slide} EVENTS (panes of {self.slide})" if self.slide else "no WITHIN"
        return (
            f"shared trend plan [{by}; {window}]: {len(self.members)} queries ({names}); "
            f"{self.scalars} scalars merged into {self.size} entries; "
            f"{len(self.verdicts)} transition labels evaluated once per event"
        )

    def to_dot(self) -> str:
        """The merged entries as a Graphviz graph: each entry lists the scalars it
        holds (``query:state.component``; ``rows`` is a query's result), edges are
        labelled by the event types that drive them; result entries are boxes."""
        lines = ["digraph shared {", "  rankdir=LR;", '  node [shape=ellipse, fontsize=10];',
                 '  start [shape=point];']
        results = {e for m in self.members for e in m.rows}
        verdict_types: dict[int, str] = {}
        for key in self.keys:
            types = key.types
            verdict_types[key.verdict] = "any" if types is None else "|".join(sorted(types))
        for e in range(self.size):
            text = "\\n".join(self.holders[e])
            shape = ", shape=box" if e in results else ""
            lines.append(f'  e{e} [label="{text}"{shape}];')
        drawn: set[tuple[int, int, str]] = set()
        for e, ins in enumerate(self.edges):
            for src, label in ins:
                if label[0] == "carry":
                    continue
                vid = label[1] if label[0] == "v" else self.keys[label[1]].verdict
                text = verdict_types.get(vid, "?")
                edge = (src, e, text)
                if edge in drawn or (label[0] == "p"):
                    continue
                drawn.add(edge)
                name = "start" if src == START else f"e{src}"
                lines.append(f'  {name} -> e{e} [label="{text}", fontsize=9];')
        lines.append("}")
        return "\n".join(lines)


def _type_test(transition: Transition) -> Any:
    """``T`` when the transition fires exactly on the events of type ``T`` (its
    predicate is ``r = 'T'`` with ``r := type``), else ``None``."""
    pred = transition.predicate
    if not isinstance(pred, Cmp) or pred.op != "=":
        return None
    sides = (pred.left, pred.right)
    reg = next((x for x in sides if isinstance(x, Reg)), None)
    const = next((x for x in sides if isinstance(x, Const)), None)
    if reg is None or const is None or not isinstance(const.value, str):
        return None
    if dict(transition.assignment).get(reg.name) != Reg("type"):
        return None
    return const.value


def _flat(payload: Any, kinds: tuple[str, ...]) -> tuple[Any, ...]:
    """A transition's contributions as scalars (``None``, the identity, as 0)."""
    if payload is None:
        return (0,) * sum(2 if k == "avg" else 1 for k in kinds)
    out: list[Any] = []
    for value, kind in zip(payload, kinds):
        if kind == "avg":
            out.extend((0, 0) if value is None else value)
        else:
            out.append(0 if value is None else value)
    return tuple(out)


# ------------------------------------------------------------------ structures and shapes


def _coef_text(coef: list[Any]) -> str:
    const, params = coef
    parts = ([str(const)] if const else []) + [f"P[{i}]" for i in params]
    if not parts:
        return "0"
    return parts[0] if len(parts) == 1 else "(" + " + ".join(parts) + ")"


class _Shape:
    """A cell's single-event affine map, up to renaming of entries (shared by queries)."""

    __slots__ = ("id", "k", "m", "a_sym", "b_sym", "params", "a_support", "b_support", "ones")

    def __init__(self, sid: int, key: tuple[Any, ...]) -> None:
        self.id = sid
        k, m, a_sym, b_sym = key
        self.k, self.m = k, m
        self.a_sym, self.b_sym = a_sym, b_sym
        self.params = tuple(sorted({p for row in (*a_sym, *b_sym) for c in row if c for p in c[1]}))
        # structural support of A^b and of (I + A + … + A^{b-1})·B
        reach = [[bool(a_sym[i][j]) for j in range(k)] for i in range(k)]
        for mid in range(k):
            for i in range(k):
                if reach[i][mid]:
                    for j in range(k):
                        if reach[mid][j]:
                            reach[i][j] = True
        self.a_support = tuple((i, j) for i in range(k) for j in range(k) if reach[i][j])
        # a diagonal 1 outside any cycle stays 1 in every power (an entry that keeps its value)
        self.ones = frozenset(
            (i, i)
            for i in range(k)
            if a_sym[i][i] == (1, ()) and not any(reach[i][j] and reach[j][i] for j in range(k) if j != i)
        )
        b_support = []
        for i in range(k):
            for j in range(m):
                if b_sym[i][j] or any(reach[i][x] and b_sym[x][j] for x in range(k)):
                    b_support.append((i, j))
        self.b_support = tuple(b_support)

    def power(self, params: tuple[Any, ...], b: int) -> tuple[Any, ...]:
        """``A^b`` and ``(I + … + A^{b-1})·B`` on the support, for contributions ``params``
        (the values of ``self.params`` in order)."""
        value = dict(zip(self.params, params))

        def num(c: Any) -> Any:
            if not c:
                return 0
            return c[0] + sum(value[p] for p in c[1])

        k, m = self.k, self.m
        A = [[num(c) for c in row] for row in self.a_sym]
        B = [[num(c) for c in row] for row in self.b_sym]
        RA = [[1 if i == j else 0 for j in range(k)] for i in range(k)]
        RB = [[0] * m for _ in range(k)]
        while True:
            if b & 1:
                RA, RB = _mul(A, RA), _add(_mul(A, RB), B)
            b >>= 1
            if not b:
                break
            A, B = _mul(A, A), _add(_mul(A, B), B)
        return tuple(RA[i][j] for i, j in self.a_support) + tuple(RB[i][j] for i, j in self.b_support)


def _mul(X: list[list[Any]], Y: list[list[Any]]) -> list[list[Any]]:
    cols = len(Y[0]) if Y else 0
    return [
        [sum(X[i][t] * Y[t][j] for t in range(len(Y)) if X[i][t]) for j in range(cols)]
        for i in range(len(X))
    ]


def _add(X: list[list[Any]], Y: list[list[Any]]) -> list[list[Any]]:
    return [[a + b for a, b in zip(rx, ry)] for rx, ry in zip(X, Y)]


class _Struct:
    """What one event signature does to the merged vector, as generated code.

    ``step(V, P)`` / ``step0(V, P)`` apply one event (with / without a run
    starting at it); ``burst(V, K)`` / ``burst0(V, K)`` apply a burst from the
    shapes' powers ``K``.  ``terms`` maps each written entry to its sources
    (an entry or :data:`START`) and symbolic coefficients ``[const, params]``.
    """

    def __init__(
        self,
        plan: SharedPlan,
        ty: Any,
        bits: int,
        terms: dict[int, dict[int, list[Any]]],
        interpreted: bool = False,
    ) -> None:
        self.plan = plan
        self.type = ty
        self.bits = bits
        self.identity = not terms
        if self.identity:
            return
        self.written = sorted(terms)
        written = set(self.written)
        self.shapes: list[_Shape] = []
        """The distinct shapes of the cells (one power each per burst)."""
        if interpreted:
            self.ops_step = sum(len(t) for t in terms.values())
            self.ops_burst = math.inf
            self.step = lambda V, P: _interpret(terms, V, P, True)
            self.step0 = lambda V, P: _interpret(terms, V, P, False)
            return
        self.step = self._lazy("step", lambda: _gen_step(terms, True))
        self.step0 = self._lazy("step0", lambda: _gen_step(terms, False))
        self.ops_step = sum(len(t) for t in terms.values())
        # cells: connected components of the written entries
        parent = {e: e for e in self.written}

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for e, srcs in terms.items():
            for s in srcs:
                if s in written:
                    parent[find(s)] = find(e)
        cells: dict[int, list[int]] = {}
        for e in self.written:
            cells.setdefault(find(e), []).append(e)
        index: dict[int, int] = {}
        body: list[str] = []
        body0: list[str] = []
        stores: list[str] = []
        ops = 0
        for members in cells.values():
            inputs = sorted({s for e in members for s in terms[e] if s not in written and s != START})
            has_start = any(START in terms[e] for e in members)
            columns = inputs + ([START] if has_start else [])
            a_sym = tuple(tuple(_sym(terms[e].get(f)) for f in members) for e in members)
            b_sym = tuple(tuple(_sym(terms[e].get(s)) for s in columns) for e in members)
            shape = plan.shape((len(members), len(columns), a_sym, b_sym))
            n = index.get(shape.id)
            if n is None:
                n = index[shape.id] = len(self.shapes)
                self.shapes.append(shape)
            coeff = 0
            exprs: dict[int, list[str]] = {i: [] for i in range(len(members))}
            exprs0: dict[int, list[str]] = {i: [] for i in range(len(members))}
            for i, j in shape.a_support:
                factor = "" if (i, j) in shape.ones else f"K{n}[{coeff}]*"
                text = f"{factor}V[{members[j]}]"
                exprs[i].append(text)
                exprs0[i].append(text)
                coeff += 1
            for i, j in shape.b_support:
                source = columns[j]
                if source == START:
                    exprs[i].append(f"K{n}[{coeff}]")
                else:
                    text = f"K{n}[{coeff}]*V[{source}]"
                    exprs[i].append(text)
                    exprs0[i].append(text)
                coeff += 1
            for i, e in enumerate(members):
                body.append(f"    x{e} = " + (" + ".join(exprs[i]) or "0"))
                body0.append(f"    x{e} = " + (" + ".join(exprs0[i]) or "0"))
                stores.append(f"    V[{e}] = x{e}")
                ops += len(exprs[i])
        self.ops_burst = ops
        head = ["    " + ", ".join(f"K{n}" for n in range(len(self.shapes))) + ", = K"]
        self.burst = self._lazy(
            "burst", lambda: _exec("burst", ["def burst(V, K):", *head, *body, *stores])
        )
        self.burst0 = self._lazy(
            "burst0", lambda: _exec("burst0", ["def burst0(V, K):", *head, *body0, *stores])
        )

    def _lazy(self, name: str, make: Any) -> Any:
        """A stand-in that generates the function on its first call (most structures
        only ever need one or two of their four functions)."""

        def first(*args: Any) -> Any:
            fn = make()
            setattr(self, name, fn)
            return fn(*args)

        return first

    def powers(self, params: tuple[Any, ...], b: int) -> list[tuple[Any, ...]]:
        plan = self.plan
        return [
            plan.composite(shape, tuple(params[p] for p in shape.params), b)
            for shape in self.shapes
        ]

    def step_cost(self, b: int) -> float:
        """Stepping ``b`` events one by one through every entry (HAMLET's NonShared())."""
        return b * (self.ops_step + CALL_COST)

    def burst_cost(self, params: tuple[Any, ...], b: int) -> float:
        """The burst code once, plus the shapes' powers not cached yet (HAMLET's Shared())."""
        cost: float = self.ops_burst + CALL_COST
        cache = self.plan.composites
        for shape in self.shapes:
            if (shape.id, tuple(params[p] for p in shape.params), b) not in cache:
                size = shape.k + shape.m
                cost += CALL_COST + SMALL_OP * size * size * shape.k * max(1, b.bit_length())
        return cost


def _interpret(terms: dict[int, dict[int, list[Any]]], V: list[Any], P: tuple[Any, ...], start: bool) -> None:
    """What the generated ``step`` does, without generating it."""
    new = {}
    for e, srcs in terms.items():
        total: Any = 0
        for src, (const, params) in srcs.items():
            coef = const + sum(P[i] for i in params)
            if src == START:
                if start:
                    total = total + coef
            else:
                total = total + coef * V[src]
        new[e] = total
    for e, value in new.items():
        V[e] = value


def _sym(coef: list[Any] | None) -> Any:
    if coef is None:
        return None
    const, params = coef
    if not const and not params:
        return None
    return (const, tuple(sorted(params)))


def _gen_step(terms: dict[int, dict[int, list[Any]]], start: bool) -> Any:
    lines = ["def step(V, P):"]
    stores = []
    for e in sorted(terms):
        parts = []
        for src, coef in sorted(terms[e].items()):
            c = _coef_text(coef)
            if src == START:
                if start:
                    parts.append(c)
                continue
            if c == "0":
                continue
            parts.append(f"V[{src}]" if c == "1" else f"{c}*V[{src}]")
        expr = " + ".join(parts) or "0"
        if expr == f"V[{e}]":
            continue
        lines.append(f"    x{e} = {expr}")
        stores.append(f"    V[{e}] = x{e}")
    if not stores:
        lines.append("    return")
    return _exec("step", lines + stores)


def _exec(name: str, lines: list[str]) -> Any:
    ns: dict[str, Any] = {}
    exec(compile("\n".join(lines), f"<shared {name}>", "exec"), ns)  # noqa: S102
    return ns[name]


# ------------------------------------------------------------------ running


class _Part:
    """One partition of a shared plan: its panes and its pending burst."""

    __slots__ = ("key", "n", "panes", "current", "pending", "params", "b", "boundary", "next_close")

    def __init__(self, key: Key, windows: int) -> None:
        self.key = key
        self.n = 0
        self.panes: dict[int, list[Any]] = {}
        self.current: int | None = None
        self.pending: _Struct | None = None
        self.params: tuple[Any, ...] = ()
        self.b = 0
        self.boundary = 0
        self.next_close = [0] * windows
        """Per distinct WITHIN size: the next window index to close."""


class SharedRunner:
    """A :class:`SharedPlan` fed one event at a time (the incremental interface).

    :meth:`push` returns ``(query name, TrendRow)`` pairs final now (windows
    closed by the event's arrival); :meth:`finish` the rest.
    """

    def __init__(self, plan: SharedPlan) -> None:
        self.plan = plan
        self.partitions: dict[Key, _Part] = {}
        slide = plan.slide
        self.windowed = slide is not None
        sizes = sorted({m.window for m in plan.members if m.window is not None})
        self.sizes: list[int] = sizes
        self.by_size = [[m for m in plan.members if m.window == w] for w in sizes]
        self.w_max = max(sizes) if sizes else 0
        self.finished = False
        self.stats = {"events": 0, "bursts_shared": 0, "bursts_stepped": 0,
                      "events_shared": 0, "events_stepped": 0}
        """The dynamic decisions: bursts (and their events) propagated shared or stepped."""
        self.policy = "dynamic"
        """``dynamic`` (per burst, by the cost model), or always ``share`` / ``step``
        (static policies, for the benchmarks)."""

    # ------------------------------------------------------------ feeding

    def push(self, attrs: dict[str, Any], position: int) -> list[tuple[str, TrendRow]]:
        plan = self.plan
        if plan.partition_by:
            values = tuple(attrs.get(a) for a in plan.partition_by)
            if None in values:
                return []
            key: Key = tuple(zip(plan.partition_by, values))  # type: ignore[arg-type]
        else:
            key = ()
        part = self.partitions.get(key)
        if part is None:
            part = self.partitions[key] = self._new_part(key)
        v = part.n
        part.n = v + 1
        out: list[tuple[str, TrendRow]] = []
        if v >= part.boundary:
            self._flush(part)
            out = self._boundaries(part, v)
        sig = plan.signature(attrs, position)
        if sig is not None:
            struct, params = sig
            if struct is part.pending and params == part.params:
                part.b += 1
            else:
                if part.pending is not None:
                    self._flush(part)
                part.pending = struct
                part.params = params
                part.b = 1
        if v + 1 >= part.boundary:
            # windows whose last position is ``v`` are complete now (as in the Runner)
            self._flush(part)
            out.extend(self._boundaries(part, v + 1))
        return out

    def finish(self) -> list[tuple[str, TrendRow]]:
        if self.finished:
            return []
        self.finished = True
        plan = self.plan
        if not plan.partition_by and () not in self.partitions:
            self.partitions[()] = self._new_part(())
        out: list[tuple[str, TrendRow]] = []
        for part in self.partitions.values():
            self._flush(part)
            if not self.windowed:
                pane = part.panes[0]
                for m in plan.members:
                    out.append((m.name, _row(m, part.key, None, [pane])))
                continue
            for index, members in enumerate(self.by_size):
                k = part.next_close[index]
                while part.n and k * self.plan.slide <= part.n - 1:  # type: ignore[operator]
                    out.extend(self._rows(part, members, k))
                    k += 1
                part.next_close[index] = k
        return out

    # ------------------------------------------------------------ helpers

    def _new_part(self, key: Key) -> _Part:
        part = _Part(key, len(self.sizes))
        if not self.windowed:
            part.panes[0] = [0] * self.plan.size
            part.current = 0
            part.boundary = math.inf  # type: ignore[assignment]
        return part

    def _flush(self, part: _Part) -> None:
        struct = part.pending
        if struct is None:
            return
        b = part.b
        params = part.params
        part.pending = None
        stats = self.stats
        stats["events"] += b
        current = part.current
        policy = self.policy
        if struct.ops_burst != math.inf and (
            policy == "share"
            or (policy == "dynamic" and b > 1 and struct.step_cost(b) > struct.burst_cost(params, b))
        ):
            stats["bursts_shared"] += 1
            stats["events_shared"] += b
            powers = struct.powers(params, b)
            for c, V in part.panes.items():
                (struct.burst if c == current else struct.burst0)(V, powers)
            return
        stats["bursts_stepped"] += 1
        stats["events_stepped"] += b
        for c, V in part.panes.items():
            fn = struct.step if c == current else struct.step0
            for _ in range(b):
                fn(V, params)

    def _boundaries(self, part: _Part, v: int) -> list[tuple[str, TrendRow]]:
        """The next event can be at ``v`` at the earliest: close the windows that end
        before it, drop the panes no window needs, open ``v``'s pane; the next boundary."""
        s = self.plan.slide
        assert s is not None
        out: list[tuple[str, TrendRow]] = []
        nxt = math.inf
        for index, w in enumerate(self.sizes):
            k = part.next_close[index]
            while k * s + w <= v:
                out.extend(self._rows(part, self.by_size[index], k))
                k += 1
            part.next_close[index] = k
            nxt = min(nxt, k * s + w)
        for c in [c for c in part.panes if c * s + self.w_max <= v]:
            del part.panes[c]
        c = v // s
        if v - c * s < self.w_max:
            part.current = c
            if c not in part.panes:
                part.panes[c] = [0] * self.plan.size
            nxt = min(nxt, c * s + self.w_max, (c + 1) * s)
        else:
            part.current = None
            nxt = min(nxt, (c + 1) * s)
        part.boundary = nxt  # type: ignore[assignment]
        return out

    def _rows(self, part: _Part, members: list[Member], k: int) -> list[tuple[str, TrendRow]]:
        s = self.plan.slide
        assert s is not None
        panes = [V for c, V in part.panes.items() if c >= k]
        out = []
        for m in members:
            assert m.window is not None
            out.append((m.name, _row(m, part.key, (k * s, k * s + m.window), panes)))
        return out


def _row(member: Member, key: Key, window: Any, panes: list[list[Any]]) -> TrendRow:
    """A query's row from the sum of its ``R`` entries over ``panes``."""
    values = [sum(V[e] for V in panes) for e in member.rows]
    vec: list[Any] = [values[0]]
    j = 1
    for kind in member.kinds:
        if kind == "avg":
            vec.append((values[j], values[j + 1]))
            j += 2
        else:
            vec.append(values[j])
            j += 1
    query = member.query
    assert query.returns is not None
    acc = TrendAccumulator(query.returns)
    acc.count = vec[0]
    index = {item: n for n, item in enumerate(member.items, start=1)}
    for n, item in enumerate(query.returns):
        if isinstance(item, ReturnAgg):
            value = vec[index[TrendItem(item.func.upper(), item.var, item.attr)]]
            if value is not None:
                acc.accs[n] = value
    return acc.row(key, window)
