"""The shared trend plan of one group of queries: merged entries, labels, bursts (:mod:`.shared`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from acel.acea.engine.closures import CompiledTransition, TrendItem, is_skip_loop
from acel.acea.engine.plan import compiled_for, events_bound, trend_items
from acel.acea.engine.shared_eligibility import group_key
from acel.acea.engine.shared_labels import labels_of, type_test
from acel.acea.engine.shared_shapes import START, Shape, Struct
from acel.acea.engine.trend import aggregate_of

from acel.lang.ast import Query
from acel.lang.schema import Schema

COMPOSITE_CACHE = 4096
"""Burst powers kept per plan (shape, contributions, length); cleared when full."""

MAX_STRUCTS = 256
"""Generated structures per event type; further verdict combinations are interpreted."""


@dataclasses.dataclass
class Member:
    """One query of a shared plan."""

    name: str
    query: Query
    items: tuple[TrendItem, ...]
    kinds: tuple[int | None, ...]
    """Per item: the width of its additive state (``None``: a scalar, ``Aggregate.width``)."""
    window: int | None
    """WITHIN size (EVENTS), ``None`` without WITHIN."""
    rows: list[int] = dataclasses.field(default_factory=list)
    """Entry of each component of its result accumulator ``R`` (``[n, acc…]``)."""
    scalars: int = 0
    """Scalars before merging (states × components, and ``R``)."""


class PayloadKey:
    """A payload label evaluated once per event: a representative transition."""

    __slots__ = ("ct", "verdict", "kinds", "width", "types")

    def __init__(self, ct: CompiledTransition, verdict: int, kinds: tuple[int | None, ...]) -> None:
        self.ct = ct
        self.verdict = verdict
        self.kinds = kinds
        self.width = width_of(kinds)
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
        self.keys: list[PayloadKey] = []
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
            kinds = tuple(aggregate_of(i).width for i in items)
            member = Member(name, query, items, kinds, query.within.size if query.within else None)  # type: ignore[arg-type]
            self.members.append(member)
            width = 1 + width_of(kinds)
            _, ca = compiled_for(query.formula, schema, items, events_bound(query))
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
                    self.keys.append(PayloadKey(ct, vid, kinds))
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
                        for part in range(kind or 1):
                            dst = node((*target, j))
                            if not fresh:  # acc' += acc
                                in_edges[dst].append((node(("s", qi, t.source, j)), ("v", vid)))
                            in_edges[dst].append((n_src, ("p", pid, slot + part)))  # acc' += c·n
                            j += 1
                        slot += kind or 1
            # R accumulates: it carries its value
            for j in range(width):
                x = node(("R", qi, j))
                in_edges[x].append((x, ("carry",)))
            member.scalars = sum(1 for n in nodes if n[1] == qi)
        self.scalars = len(nodes)
        self._merge(nodes, in_edges)
        self._by_type: dict[Any, Any] = {}
        self._slots: dict[Any, tuple[dict[tuple[int, int], int], dict[int, int]]] = {}
        self._structs: dict[tuple[Any, int], Struct] = {}
        self.composites: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.stats = {"structs": 0, "shapes": 0}
        """Structures and shapes generated so far (lazily, on their first event)."""
        self._shapes: dict[tuple[Any, ...], Shape] = {}

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

    def signature(self, attrs: dict[str, Any], time: int) -> tuple[Struct, tuple[Any, ...]] | None:
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
        if all(not key.width and type_test(key.ct.transition) is not None for _, key in keys):
            # atoms without predicates: the verdicts follow from the type
            self._slots[ty] = ({}, bit)
            bits = 0
            for _, key in keys:
                if type_test(key.ct.transition) == ty:
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
                lines.append(f"        p.extend(flat_contributions(c, {key.kinds!r}))")
                lines.append("    else:")
                lines.append(f"        p.extend({(0,) * key.width!r})")
                slots.extend((pid, s) for s in range(key.width))
            else:
                lines.append(f"    if r is not None: b |= {bit[key.verdict]}")
        lines.append("    return b, tuple(p)")
        ns["flat_contributions"] = flat_contributions
        exec(compile("\n".join(lines), f"<shared evaluator {ty!r}>", "exec"), ns)  # noqa: S102
        self._slots[ty] = ({s: i for i, s in enumerate(slots)}, bit)
        return ns["evaluate"], {}

    def _struct(self, ty: Any, bits: int, interpreted: bool = False) -> Struct:
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
        return Struct(self, ty, bits, terms, interpreted)

    # ----------------------------------------------------------- shapes

    def shape(self, key: tuple[Any, ...]) -> Shape:
        found = self._shapes.get(key)
        if found is None:
            found = self._shapes[key] = Shape(len(self._shapes), key)
            self.stats["shapes"] += 1
        return found

    def composite(self, shape: Shape, params: tuple[Any, ...], b: int) -> tuple[Any, ...]:
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


def width_of(kinds: tuple[int | None, ...]) -> int:
    """Scalars of the items' additive states (a tuple state of width ``k`` is ``k`` scalars)."""
    return sum(kind or 1 for kind in kinds)


def flat_contributions(payload: Any, kinds: tuple[int | None, ...]) -> tuple[Any, ...]:
    """A transition's contributions as scalars (``None``, the identity, as 0)."""
    if payload is None:
        return (0,) * width_of(kinds)
    out: list[Any] = []
    for value, kind in zip(payload, kinds):
        if kind is not None:
            out.extend((0,) * kind if value is None else value)
        else:
            out.append(0 if value is None else value)
    return tuple(out)
