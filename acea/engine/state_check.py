"""The whole of a decoded runner state checked against the runner it is restored into,
before any of it is loaded (issue 36 D8).

The fingerprint (:func:`acel.acea.engine.state.fingerprint`) hashes public data,
so a forged state can carry the right one: the codec guarantees only that a
state is made of the closed set of value kinds.  This checks every field's kind
and shape as :func:`acel.acea.engine.state.save` writes it, and its indices
against the automaton and the state itself (automaton states in range, DAG
edges pointing to earlier rows, roots to rows, positions within the events
read, trend vectors shaped like the query's items, one evaluator of the
runner's kind per partition, negation detectors as many as the query has), so
that a forged or damaged state is refused in one line naming the field, instead
of failing at the next event.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from acel.acea.engine.aggregate import TumblingPropagator
from acel.acea.engine.codec import StateMismatch
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.held import Held
from acel.acea.engine.run_context import RunContext

from acel.lang.clauses import Match, TrendAccumulator
from acel.lang.events import ComplexEvent, Event

_SCALAR = (type(None), bool, int, float, str)
_PARTITION_FIELDS = {"key", "local", "last", "open", "accs", "neg", "resume", "seen", "pending",
                     "pending_seq", "window_held", "evaluator"}
_NEG_FIELDS = {"leading", "leading_spans", "trailing", "trailing_spans", "g", "g_from", "g_value",
               "held", "deadlines", "seq", "coords", "found", "positions"}
_TOP_FIELDS = {"version", "fingerprint", "options", "events", "emitted", "finished", "order",
               "released", "replayed", "partitions"}


def _refuse(path: str, what: str) -> StateMismatch:
    return StateMismatch(f"not a saved runner state: {path} {what}"[:300])


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _is_plain(value: Any, depth: int = 0) -> bool:
    """A scalar, or tuples of them (a coordinate, a window, a partition key's value)."""
    if isinstance(value, _SCALAR):
        return True
    return type(value) is tuple and depth < 8 and all(_is_plain(v, depth + 1) for v in value)


def _is_value(value: Any, depth: int = 0) -> bool:
    """A register's value: scalars, events, and tuples or frozensets of them."""
    if isinstance(value, _SCALAR) or type(value) is Event:
        return True
    if type(value).__name__ == "Fraction":  # STDDEV's exact sums in a RUNNING register
        return True
    return (type(value) in (tuple, frozenset) and depth < 16
            and all(_is_value(v, depth + 1) for v in value))


class _Checker:
    """Walks one decoded state (see the module doc); raises :class:`StateMismatch`."""

    def __init__(self, runner: RunContext, state: dict[str, Any]) -> None:
        self.runner = runner
        self.state = state
        self.states = runner.ca.automaton.num_states
        self.template = runner.empty_vector  # the identity trend vector: the shape of every vector
        self.events = 0
        self.queued: set[int] = set()  # the undecided held results of the partitions
        self.negated_classes = runner.negated and runner.mode == "propagate"
        self.by_start = int(getattr(runner.new_partition(()).evaluator, "by_start", False))
        """Configurations carry their runs' start (:attr:`Enumerator.by_start`)."""

    # -------------------------------------------------------------- helpers

    def fields(self, value: Any, names: set[str], path: str) -> dict[str, Any]:
        if type(value) is not dict or set(value) != names:
            missing = sorted(names - set(value)) if type(value) is dict else []
            raise _refuse(path, "is not the record a runner writes"
                          + (f" (no {', '.join(missing)})" if missing else ""))
        return value

    def integer(self, value: Any, path: str) -> int:
        """Any integer (a SLIDE window's k may be negative)."""
        if not _is_int(value):
            raise _refuse(path, f"is {_show(value)}, not an integer")
        return int(value)

    def count(self, value: Any, path: str, top: int | None = None) -> int:
        """A count or position: an int in ``0..top``."""
        if not _is_int(value) or value < 0 or (top is not None and value > top):
            bound = f"0..{top:,}" if top is not None else "0 or more"
            raise _refuse(path, f"is {_show(value)}, not an integer in {bound}")
        return int(value)

    def kind(self, value: Any, kinds: type | tuple[type, ...], path: str) -> Any:
        if not isinstance(value, kinds) or (type(value) is bool and bool not in _tuple(kinds)):
            raise _refuse(path, f"is {_show(value)}, not {_names(kinds)}")
        return value

    def number(self, value: Any, path: str) -> Any:
        if not _is_number(value):
            raise _refuse(path, f"is {_show(value)}, not a number")
        return value

    def klass(self, value: Any, path: str) -> None:
        """A start class: a coordinate, paired with the leading NOT's ``G`` under NOT."""
        if self.negated_classes:
            if not (type(value) is tuple and len(value) == 2 and _is_number(value[0])
                    and _is_number(value[1])):
                raise _refuse(path, f"is {_show(value)}, not a start class (coordinate, G)")
        else:
            self.number(value, path)

    def row(self, value: Any, path: str) -> None:
        """A RETURN row's key: its SLIDE window (``None`` without SLIDE), or a held class."""
        if type(value) is tuple and len(value) == 2 and value[0] == "held":
            self.klass(value[1], path)
        elif self.runner.rule.slide is None:
            if value is not None:
                raise _refuse(path, f"is {_show(value)}, not NULL (no SLIDE)")
        elif not _is_int(value):
            raise _refuse(path, f"is {_show(value)}, not a SLIDE window number")

    def plain(self, value: Any, path: str) -> Any:
        if not _is_plain(value):
            raise _refuse(path, f"is {_show(value)}, not a value or coordinate")
        return value

    def each(self, value: Any, path: str, check: Callable[[Any, str], Any]) -> list[Any]:
        self.kind(value, list, path)
        for n, item in enumerate(value):
            check(item, f"{path}[{n}]")
        return list(value)

    def mapping(self, value: Any, path: str, key: Callable[[Any, str], Any],
                item: Callable[[Any, str], Any]) -> dict[Any, Any]:
        self.kind(value, dict, path)
        for k, v in value.items():
            key(k, f"{path} key")
            item(v, f"{path}[{_show(k)}]")
        return dict(value)

    def config(self, value: Any, path: str) -> None:
        """``(automaton state, register values)``, and the runs' start for SELECT NEXT/LAST
        under WITHIN (``Enumerator.by_start``)."""
        by_start = self.by_start
        if not (type(value) is tuple and len(value) == 2 + by_start and type(value[1]) is tuple
                and (not by_start or _is_int(value[2]))):
            what = "(state, registers, start)" if by_start else "(state, registers)"
            raise _refuse(path, f"is {_show(value)}, not a configuration {what}")
        self.count(value[0], f"{path} state", self.states - 1)
        for n, reg in enumerate(value[1]):
            if not _is_value(reg):
                raise _refuse(f"{path} register {n}", f"is {_show(reg)}, not a register value")

    def vector(self, value: Any, path: str, template: Any = None) -> None:
        """A trend vector (or accumulator values) shaped like the query's identity vector."""
        template = self.template if template is None else template
        if not _same_shape(value, template):
            raise _refuse(path, f"is {_show(value)}, not a trend vector of this query "
                                f"(shaped like {_show(template)})")

    def maybe(self, check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
        return lambda value, path: None if value is None else check(value, path)

    # -------------------------------------------------------------- records

    def event(self, value: Any, path: str) -> None:
        if type(value) is not Event:
            raise _refuse(path, f"is {_show(value)}, not an event")
        self.count(value.time, f"{path} position")
        if type(value.attrs) is not tuple or not all(
            type(p) is tuple and len(p) == 2 and type(p[0]) is str and isinstance(p[1], _SCALAR)
            for p in value.attrs
        ):
            raise _refuse(path, "holds attributes that are not (name, value) pairs")

    def bags(self, value: Any, path: str) -> None:
        """A complex event's ``((variable, (events…)), …)``."""
        if type(value) is not tuple:
            raise _refuse(path, f"is {_show(value)}, not the variables' events")
        for n, pair in enumerate(value):
            if not (type(pair) is tuple and len(pair) == 2 and type(pair[0]) is str
                    and type(pair[1]) is tuple):
                raise _refuse(f"{path}[{n}]", f"is {_show(pair)}, not (variable, events)")
            for event in pair[1]:
                self.event(event, f"{path}[{n}]")

    def emission(self, value: Any, path: str) -> None:
        """A DAG edge's ``((variable, event), …)``."""
        if type(value) is not tuple:
            raise _refuse(path, f"is {_show(value)}, not the events a step emits")
        for n, pair in enumerate(value):
            if not (type(pair) is tuple and len(pair) == 2 and type(pair[0]) is str):
                raise _refuse(f"{path}[{n}]", f"is {_show(pair)}, not (variable, event)")
            self.event(pair[1], f"{path}[{n}]")

    def complex_event(self, value: Any, path: str) -> None:
        if type(value) is not ComplexEvent:
            raise _refuse(path, f"is {_show(value)}, not a complex event")
        self.count(value.start, f"{path} start")
        self.count(value.end, f"{path} end")
        if value.start > value.end:
            raise _refuse(path, "starts after it ends")
        self.bags(value.vars, f"{path} vars")

    def match(self, value: Any, path: str) -> None:
        """A kept complex event an after-match skip holds for §12 order."""
        if type(value) is not Match:
            raise _refuse(path, f"is {_show(value)}, not a complex event with its key")
        self.plain(value.key, f"{path} key")
        self.complex_event(value.event, f"{path} match")

    def held(self, value: Any, path: str) -> None:
        if type(value) is not Held:
            raise _refuse(path, f"is {_show(value)}, not a held result")
        self.count(value.end, f"{path} end")
        self.count(value.local, f"{path} local")
        self.number(value.deadline, f"{path} deadline")
        item = value.item
        if type(item) is Match:
            self.plain(item.key, f"{path} key")
            self.complex_event(item.event, f"{path} match")
        elif type(item) is ComplexEvent:
            self.complex_event(item, f"{path} item")
        else:
            self.vector(item, f"{path} item")
        self.each(value.windows, f"{path} windows",  # SLIDE's k: negative too (spec §6)
                  lambda v, p: v is None or self.integer(v, p))
        self.kind(value.status, (type(None), bool), f"{path} status")

    def accumulator(self, value: Any, path: str) -> None:
        if type(value) is not TrendAccumulator:
            raise _refuse(path, f"is {_show(value)}, not a RETURN accumulator")
        self.count(value.count, f"{path} count")
        identity = TrendAccumulator(value.items)
        if not _same_shape(tuple(value.accs), tuple(identity.accs)):
            raise _refuse(path, "does not fit the query's RETURN items")

    # -------------------------------------------------------------- the state

    def check(self) -> None:
        state = self.fields(self.state, _TOP_FIELDS, "the state")
        self.events = self.count(state["events"], "events")
        self.count(state["emitted"], "emitted")
        self.kind(state["finished"], bool, "finished")
        self.each(state["order"], "order", self.held)
        self.each(state["released"], "released", self.match)
        self.each(state["replayed"], "replayed", self.replayed)
        partitions = self.each(state["partitions"], "partitions", lambda v, p: None)
        keys = set()
        for n, saved in enumerate(partitions):
            key = self.partition(saved, f"partitions[{n}]")
            if key in keys:
                raise _refuse(f"partitions[{n}]", "repeats a partition key")
            keys.add(key)
        order = state["order"]
        if len({id(h) for h in order}) != len(order):
            raise _refuse("order", "holds a result twice")
        if any(h.status is None and id(h) not in self.queued for h in order):
            raise _refuse("order", "holds an undecided result no partition holds")

    def partition(self, saved: Any, path: str) -> Any:
        saved = self.fields(saved, _PARTITION_FIELDS, path)
        key = saved["key"]
        names = self.runner.partition_by
        if not (type(key) is tuple and len(key) == len(names) and all(
                type(p) is tuple and len(p) == 2 and p[0] == name and isinstance(p[1], _SCALAR)
                for p, name in zip(key, names))):
            raise _refuse(f"{path}.key", f"is {_show(key)}, not a key of PARTITION BY "
                                         f"{', '.join(names) or '(none)'}")
        local = self.count(saved["local"], f"{path}.local", self.events)
        if saved["last"] is not None:
            self.number(saved["last"], f"{path}.last")
        self.mapping(saved["open"], f"{path}.open", self.row,
                     lambda v, p: v is None or self.kind(v, type(None), p))
        self.mapping(saved["accs"], f"{path}.accs", self.row, self.accumulator)
        self.kind(saved["resume"], (type(None), int, float), f"{path}.resume")
        self.each(saved["seen"], f"{path}.seen", lambda v, p: self.count(v, p))
        seq = self.count(saved["pending_seq"], f"{path}.pending_seq")
        self.each(saved["pending"], f"{path}.pending", partial(self.pending, seq=seq))
        self.each(saved["window_held"], f"{path}.window_held", self.window_held)
        self.negation(saved["neg"], f"{path}.neg", local)
        self.evaluator(saved["evaluator"], f"{path}.evaluator", local)
        return key

    def replayed(self, value: Any, path: str) -> None:
        """An event a replaying runner keeps: (attributes, position)."""
        if not (type(value) is tuple and len(value) == 2 and type(value[0]) is dict
                and all(type(k) is str and _is_value(v) for k, v in value[0].items())):
            raise _refuse(path, f"is {_show(value)}, not a kept event (attributes, position)")
        self.count(value[1], f"{path} position")

    def pending(self, value: Any, path: str, seq: int) -> None:
        """A complex event an after-match skip holds for start order: (sequence, start, event)."""
        if not (type(value) is tuple and len(value) == 3):
            raise _refuse(path, f"is {_show(value)}, not a held match (sequence, start, event)")
        self.count(value[0], f"{path} sequence", seq)
        self.number(value[1], f"{path} start")  # a coordinate (ON attr: any number)
        self.complex_event(value[2], f"{path} match")

    def window_held(self, value: Any, path: str) -> None:
        """A complex event a SLIDE window holds for its strategy: (start, end, event)."""
        if not (type(value) is tuple and len(value) == 3):
            raise _refuse(path, f"is {_show(value)}, not a held match (start, end, event)")
        self.number(value[0], f"{path} start")
        self.number(value[1], f"{path} end")
        self.complex_event(value[2], f"{path} match")

    def negation(self, neg: Any, path: str, local: int) -> None:
        runner = self.runner
        if not runner.negated:
            if neg is not None:
                raise _refuse(path, "is present, but the query has no NOT")
            return
        neg = self.fields(neg, _NEG_FIELDS, path)
        for side, detectors in (("leading", runner.leading), ("trailing", runner.trailing)):
            actives = self.each(neg[side], f"{path}.{side}", lambda v, p: None)
            spans = self.each(neg[f"{side}_spans"], f"{path}.{side}_spans", lambda v, p: None)
            if len(actives) != len(detectors) or len(spans) != len(detectors):
                raise _refuse(f"{path}.{side}", f"has {len(actives)} detectors; the query has "
                                                f"{len(detectors)}")
            for n, (active, span) in enumerate(zip(actives, spans)):
                self.mapping(active, f"{path}.{side}[{n}]",
                             partial(self.detector_config, states=detectors[n].automaton.num_states),
                             self.detector_start)
                if runner.exact_negation:
                    self.each(span, f"{path}.{side}_spans[{n}]", self.span)
                elif span is not None:
                    raise _refuse(f"{path}.{side}_spans[{n}]", "is present on a monotone axis")
        self.number(neg["g"], f"{path}.g")
        self.each(neg["g_from"], f"{path}.g_from", lambda v, p: self.count(v, p))
        self.each(neg["g_value"], f"{path}.g_value", self.number)
        self.each(neg["held"], f"{path}.held", self.held)
        self.each(neg["deadlines"], f"{path}.deadlines", self.deadline)
        self.count(neg["seq"], f"{path}.seq")
        exact = runner.exact_negation
        for name in ("coords", "positions"):
            if exact:
                self.mapping(neg[name], f"{path}.{name}", lambda v, p: self.count(v, p), self.number)
            elif neg[name] is not None:
                raise _refuse(f"{path}.{name}", "is present on a monotone axis")
        self.each(neg["found"], f"{path}.found", self.found)
        self.held_queue(neg, path)

    def held_queue(self, neg: dict[str, Any], path: str) -> None:
        """Each held result once in the queue; the undecided ones each with one deadline
        (distinct sequence numbers: the heap never compares two results)."""
        held = neg["held"]
        if len({id(h) for h in held}) != len(held):
            raise _refuse(f"{path}.held", "holds a result twice")
        waiting = {id(entry[2]) for entry in neg["deadlines"]}
        seqs = {entry[1] for entry in neg["deadlines"]}
        if len(waiting) != len(neg["deadlines"]) or len(seqs) != len(neg["deadlines"]):
            raise _refuse(f"{path}.deadlines", "holds a result or a sequence number twice")
        if any(seq > neg["seq"] for seq in seqs):
            raise _refuse(f"{path}.deadlines", "holds a sequence number not yet given")
        queued = {id(h) for h in held}
        undecided = {id(entry[2]) for entry in neg["deadlines"] if entry[2].status is None}
        if not undecided <= queued or any(h.status is None and id(h) not in waiting for h in held):
            raise _refuse(f"{path}.deadlines", "do not match the held results")
        for n, entry in enumerate(neg["deadlines"]):
            if n and neg["deadlines"][(n - 1) // 2][:2] > entry[:2]:
                raise _refuse(f"{path}.deadlines", "are not in deadline order")
            if entry[0] != entry[2].deadline:
                raise _refuse(f"{path}.deadlines[{n}]", "is not its result's deadline")
        self.queued.update(id(h) for h in held if h.status is None)

    def detector_config(self, value: Any, path: str, states: int) -> None:
        if not (type(value) is tuple and len(value) == 2 and type(value[1]) is tuple):
            raise _refuse(path, f"is {_show(value)}, not a configuration (state, registers)")
        self.count(value[0], f"{path} state", states - 1)
        for n, reg in enumerate(value[1]):
            if not _is_value(reg):
                raise _refuse(f"{path} register {n}", f"is {_show(reg)}, not a register value")

    def detector_start(self, value: Any, path: str) -> None:
        if type(value) is frozenset:
            for start in value:
                self.count(start, path)
        elif not (type(value) is tuple and len(value) == 2 and _is_int(value[0])
                  and _is_number(value[1])):
            raise _refuse(path, f"is {_show(value)}, not a run's start (position, coordinate)")

    def span(self, value: Any, path: str) -> None:
        if not (type(value) is tuple and len(value) == 2 and all(_is_int(v) for v in value)):
            raise _refuse(path, f"is {_show(value)}, not a span (start, end)")

    def deadline(self, value: Any, path: str) -> None:
        if not (type(value) is tuple and len(value) == 3 and _is_int(value[1])):
            raise _refuse(path, f"is {_show(value)}, not (deadline, sequence, held)")
        self.number(value[0], f"{path} deadline")
        self.held(value[2], f"{path} held")

    def found(self, value: Any, path: str) -> None:
        if not (type(value) is tuple and len(value) == 3 and _is_int(value[0]) and _is_int(value[1])):
            raise _refuse(path, f"is {_show(value)}, not a negated match (start, end, coordinate)")
        self.number(value[2], path)

    # -------------------------------------------------------------- evaluators

    def evaluator(self, saved: Any, path: str, local: int) -> None:
        probe = self.runner.new_partition(()).evaluator
        if isinstance(probe, Enumerator):
            self.enumerator(saved, path, local)
        elif isinstance(probe, TumblingPropagator):
            self.propagator(saved, path, "tumbling")
        else:
            self.propagator(saved, path, "propagator")

    def enumerator(self, saved: Any, path: str, local: int) -> None:
        saved = self.fields(saved, {"kind", "dag", "roots", "coords", "recent", "since_compaction",
                                    "period", "local"}, path)
        if saved["kind"] != "enumerator":
            raise _refuse(f"{path}.kind", f"is {_show(saved['kind'])}, not this query's "
                                          "evaluator (enumerator)")
        rows = self.kind(saved["dag"], list, f"{path}.dag")
        for n, row in enumerate(rows):
            where = f"{path}.dag[{n}]"
            if not (type(row) is tuple and len(row) == 3 and type(row[0]) is list):
                raise _refuse(where, f"is {_show(row)}, not a DAG row (edges, best, rank)")
            self.number(row[1], f"{where} best")
            if not _is_int(row[2]) or row[2] < -1:  # SELECT MAX's code -1: no run took an event
                raise _refuse(f"{where} rank", f"is {_show(row[2])}, not a rank (-1 or more)")
            for k, edge in enumerate(row[0]):
                self.edge(edge, f"{where} edge {k}", n)
        self.mapping(saved["roots"], f"{path}.roots", self.config,
                     lambda v, p: self.count(v, p, len(rows) - 1))
        self.kind(saved["coords"], (type(None), dict), f"{path}.coords")
        if saved["coords"] is not None:
            self.mapping(saved["coords"], f"{path}.coords", lambda v, p: self.count(v, p), self.number)
        self.each(saved["recent"], f"{path}.recent", self.number)
        self.count(saved["since_compaction"], f"{path}.since_compaction")
        if self.count(saved["period"], f"{path}.period") < 1:
            raise _refuse(f"{path}.period", "is 0")
        self.count(saved["local"], f"{path}.local")

    def edge(self, edge: Any, path: str, row: int) -> None:
        if not (type(edge) is tuple and len(edge) == 2 and type(edge[0]) is tuple
                and len(edge[0]) == 2 and type(edge[0][0]) is bool):
            raise _refuse(path, f"is {_show(edge)}, not an edge ((is node, predecessor), emission)")
        (is_node, ref), emission = edge
        if is_node:
            if not _is_int(ref) or not 0 <= ref < row:
                raise _refuse(path, f"points to row {_show(ref)}, not to one of the {row} rows "
                                    "before it")
        elif not _is_number(ref):
            raise _refuse(path, f"starts at {_show(ref)}, not at a position")
        if emission is not None:
            self.emission(emission, f"{path} emission")

    def propagator(self, saved: Any, path: str, kind: str) -> None:
        tumbling = kind == "tumbling"
        names = {"kind", "rows", "active", "local", "groups"} | ({"current"} if tumbling else {"max_class"})
        saved = self.fields(saved, names, path)
        if saved["kind"] != kind:
            raise _refuse(f"{path}.kind", f"is {_show(saved['kind'])}, not this query's "
                                          f"evaluator ({kind})")
        self.mapping(saved["rows"], f"{path}.rows", self.row, self.vector)
        if tumbling:
            self.mapping(saved["active"], f"{path}.active", self.config, self.vector)
            self.plain(saved["current"], f"{path}.current")
        else:
            self.mapping(saved["active"], f"{path}.active", self.config,
                         lambda v, p: self.mapping(v, p, self.klass, self.vector))
            if saved["max_class"] is not None:
                self.klass(saved["max_class"], f"{path}.max_class")
        self.count(saved["local"], f"{path}.local")
        def classes(value: Any, where: str) -> None:
            self.mapping(value, where, self.klass, self.vector)

        item = self.vector if tumbling else classes  # what a group's entry folds
        self.mapping(saved["groups"], f"{path}.groups", lambda v, p: self.count(v, p, self.states - 1),
                     lambda v, p: self.mapping(v, p, self.plain,
                                               lambda w, q: self.mapping(w, q, self.plain, item)))


def check(runner: RunContext, state: dict[str, Any]) -> None:
    """Refuse (:class:`StateMismatch`, one line naming the field) a decoded state that
    ``runner`` could not continue from; see the module doc."""
    _Checker(runner, state).check()


def _same_shape(value: Any, template: Any) -> bool:
    """``value`` has ``template``'s shape: tuples of its length, numbers where it has numbers
    (a value where it has NULL: MIN/MAX; anything for another kind: a user's aggregate)."""
    if type(template) is tuple:
        return (type(value) is tuple and len(value) == len(template)
                and all(_same_shape(v, t) for v, t in zip(value, template)))
    if type(template) in (int, float):  # a Fraction: STDDEV's exact sums of floats
        return type(value) in (int, float) or type(value).__name__ == "Fraction"
    if template is None:  # MIN/MAX: NULL or an event's value
        return isinstance(value, _SCALAR)
    return _is_plain(value) or type(value) in (list, dict, set, frozenset)


def _tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _names(kinds: type | tuple[type, ...]) -> str:
    words = {type(None): "NULL", bool: "a boolean", int: "an integer", float: "a number",
             str: "text", list: "a list", dict: "a dict", tuple: "a tuple"}
    return " or ".join(words.get(k, k.__name__) for k in _tuple(kinds))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = ["check"]
