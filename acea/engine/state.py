"""Saving and restoring a :class:`~acel.acea.engine.runner.Runner`'s state as bytes.

A runner's state is everything it has learnt from the events read so far:
per partition the live configurations (with the shared DAG of their pasts in
complex-event mode, or their trend vectors and Fenwick-indexed groups in
trend mode), open windows, accumulators, negation detectors and held
results.  Generated code (the compiled automaton) is not state: it is
compiled again from the query, and a fingerprint of the query, the schema
and the automaton makes sure the state is restored into the same automaton.

The DAG is written as a flat table in topological order (predecessors
first), so a run spanning a million events does not recurse in ``pickle``;
indexes are written as their entries and rebuilt on restore (they are derived
data).  The bytes are data only (:mod:`acel.acea.engine.codec`: versioned JSON
over a closed set of value kinds), so restoring a state never runs code; a
state that is not one, or that belongs to another query, is refused in one line.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import deque
from typing import TYPE_CHECKING, Any

from acel.acea.engine.aggregate import Propagator, TumblingPropagator
from acel.acea.engine.codec import Context, StateMismatch, dumps, loads
from acel.acea.engine.dag import Node
from acel.acea.engine.enumeration import Enumerator
from acel.acea.engine.identity_memo import IdentityMemo
from acel.acea.engine.output_order import OutputOrder
from acel.acea.engine.run_context import RunContext
from acel.acea.engine.state_check import check

from acel.lang.selection import start_order_key

if TYPE_CHECKING:
    from acel.lang.ast import Query

VERSION = 4
"""Version 1 was a pickle; 2 is data only; 3 adds the complex events an after-match
skip holds for start order, those a SLIDE window holds for its strategy, and the
events a replaying runner keeps; 4 the kept ones a skip holds for §12 order."""

__all__ = ["VERSION", "StateMismatch", "decode", "fingerprint", "options_of", "restore", "save"]


_FINGERPRINTS: IdentityMemo[str] = IdentityMemo()
"""Fingerprints by mode and the identities of the query, the schema and the compiled
automata (the automata are cached, :func:`acel.acea.engine.plan.compiled_for`): a Spark
stream restores and saves each key's runner every micro-batch, and the printing and
hashing cost 0.5 ms each time (issue 31)."""


def fingerprint(runner: RunContext) -> str:
    """What a saved state is valid for: the query, the schema and its automata."""
    held = (runner.query, runner.schema, runner.ca, *runner.leading, *runner.trailing)
    return _FINGERPRINTS.get(held, runner.mode, lambda: _fingerprint(runner))


def _fingerprint(runner: RunContext) -> str:
    from acel.lang.printer import format_query

    digest = hashlib.sha256()
    digest.update(format_query(runner.query).encode())
    digest.update(repr(runner.schema).encode())
    digest.update(repr(runner.ca.automaton).encode())
    for ca in runner.leading + runner.trailing:
        digest.update(repr(ca.automaton).encode())
    digest.update(runner.mode.encode())
    return digest.hexdigest()


# ------------------------------------------------------------------ DAG


def _flatten(roots: dict[Any, Node]) -> tuple[list[tuple[Any, ...]], dict[Any, int]]:
    """The nodes reachable from ``roots`` as ``(edges, best)`` rows, predecessors first.

    An edge's predecessor is written ``(True, row)`` for a node, ``(False, start)``
    for a run's start position.
    """
    index: dict[int, int] = {}
    rows: list[tuple[Any, ...]] = []
    for root in roots.values():
        if id(root) in index:
            continue
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in index:
                continue
            if not expanded:
                stack.append((node, True))
                for pred, _ in node.edges:
                    if isinstance(pred, Node) and id(pred) not in index:
                        stack.append((pred, False))
                continue
            edges = [
                ((True, index[id(pred)]) if isinstance(pred, Node) else (False, pred), emission)
                for pred, emission in node.edges
            ]
            index[id(node)] = len(rows)
            rows.append((edges, node.best, node.rank))
    return rows, {config: index[id(node)] for config, node in roots.items()}


def _unflatten(rows: list[tuple[Any, ...]], roots: dict[Any, int]) -> dict[Any, Node]:
    nodes: list[Node] = []
    for edges, best, *rank in rows:  # rank: since state version 3
        linked = [(nodes[ref] if is_node else ref, emission) for (is_node, ref), emission in edges]
        first = min((p.first if isinstance(p, Node) else p for p, _ in linked), default=0)
        nodes.append(Node(linked, best, first, rank[0] if rank else 0))
    return {config: nodes[row] for config, row in roots.items()}


# ------------------------------------------------------------------ evaluators


def _evaluator_state(evaluator: Any) -> dict[str, Any]:
    if isinstance(evaluator, Enumerator):
        rows, roots = _flatten(evaluator.active)
        return {
            "kind": "enumerator",
            "dag": rows,
            "roots": roots,
            "coords": evaluator.coords,
            "recent": list(evaluator.recent),
            "since_compaction": evaluator.since_compaction,
            "period": evaluator.period,
            "local": evaluator.local,
        }
    state: dict[str, Any] = {
        "kind": "tumbling" if isinstance(evaluator, TumblingPropagator) else "propagator",
        "rows": evaluator.rows,
        "active": evaluator.active,
        "local": evaluator.local,
        "groups": {
            q: {rest: dict(group.entries) for rest, group in by_rest.items()}
            for q, by_rest in evaluator.groups.items()
        },
    }
    if isinstance(evaluator, TumblingPropagator):
        state["current"] = evaluator.current
    else:
        state["max_class"] = evaluator.max_class
    return state


def _restore_evaluator(evaluator: Any, state: dict[str, Any]) -> None:
    if isinstance(evaluator, Enumerator):
        evaluator.active = _unflatten(state["dag"], state["roots"])
        evaluator.coords = state["coords"]
        evaluator.recent = deque(state["recent"])
        evaluator.since_compaction = state["since_compaction"]
        evaluator.period = state["period"]
        evaluator.local = state["local"]
        return
    assert isinstance(evaluator, (Propagator, TumblingPropagator))
    evaluator.rows = state["rows"]
    evaluator.active = state["active"]
    evaluator.local = state["local"]
    merge = evaluator.merge if isinstance(evaluator, TumblingPropagator) else evaluator.merge_classes
    for q, by_rest in state["groups"].items():
        for rest, entries in by_rest.items():
            group = evaluator._group(q, rest, merge)
            for value, item in entries.items():
                group.add(value, item)
    if isinstance(evaluator, TumblingPropagator):
        evaluator.current = state["current"]
    else:
        evaluator.max_class = state["max_class"]


# ------------------------------------------------------------------ runner


def save(runner: RunContext) -> bytes:
    """The runner's state as bytes (see the module doc)."""
    partitions = []
    for part in runner.partitions.values():
        neg = part.neg
        neg_state = None
        if neg is not None:
            neg_state = {
                "leading": [d.active for d in neg.leading],
                "leading_spans": [d.spans for d in neg.leading],
                "trailing": [d.active for d in neg.trailing],
                "trailing_spans": [d.spans for d in neg.trailing],
                "g": neg.g,
                "g_from": neg.g_from,
                "g_value": neg.g_value,
                "held": list(neg.held),
                "deadlines": neg.deadlines,
                "seq": neg.seq,
                "coords": neg.coords,
                "found": neg.found,
                "positions": neg.positions,
            }
        partitions.append(
            {
                "key": part.key,
                "local": part.local,
                "last": part.last,
                "open": part.open,
                "accs": part.accs,
                "neg": neg_state,
                "resume": None if part.skipper is None else part.skipper.resume,
                "seen": part.seen,
                "pending": [(seq, start, ce) for _, seq, start, ce in part.pending],
                "pending_seq": part.pending_seq,
                "window_held": part.window_held,
                "evaluator": _evaluator_state(part.evaluator),
            }
        )
    state = {
        "version": VERSION,
        "fingerprint": fingerprint(runner),
        "options": runner.options,
        "events": runner.events,
        "emitted": runner.emitted,
        "finished": runner.finished,
        "order": list(runner.order),
        "released": runner.released.waiting(),
        "replayed": runner.replayed,
        "partitions": partitions,
    }
    return dumps(state)


def decode(blob: bytes, query: Query) -> dict[str, Any]:
    """The saved state in ``blob`` as data (nothing runs), or a one-line refusal."""
    state = loads(blob, Context(tuple(query.returns or ())))
    if not isinstance(state, dict) or state.get("version") != VERSION:
        raise StateMismatch("not a saved runner state of this version of acel")
    return state


def options_of(state: dict[str, Any]) -> dict[str, Any]:
    """The options the saved runner was made with (to make its twin before :func:`restore`)."""
    options = state.get("options")
    if not isinstance(options, dict) or not set(options) <= _OPTIONS:
        raise StateMismatch("not a saved runner state: no runner options")
    if not (options.get("monotone") in (None, True, False)
            and options.get("positions_given", False) in (True, False)
            and options.get("start_positions") is None  # a range: never saved (Spark's slices)
            and options.get("trend_mode", "auto") in ("auto", "enumerate")
            and all(type(options.get(k)) in (bool, type(None)) for k in ("monotone", "positions_given"))):
        raise StateMismatch("not a saved runner state: runner options that no runner has")
    return options


_OPTIONS = {"monotone", "start_positions", "trend_mode", "positions_given"}


def restore(runner: RunContext, state: dict[str, Any]) -> None:
    """Load a decoded state (:func:`decode`) into a fresh runner of the same query and schema."""
    if state.get("fingerprint") != fingerprint(runner):
        raise StateMismatch(
            "the saved state belongs to another query, schema or engine version: "
            "restore it with the query and schema it was saved with"
        )
    check(runner, state)  # the whole state, before any of it is loaded (issue 36 D8)
    try:
        _load(runner, state)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise StateMismatch(f"not a saved runner state: a damaged entry ({error!r})"[:200]) from None


def _load(runner: RunContext, state: dict[str, Any]) -> None:
    runner.events = state["events"]
    runner.emitted = state["emitted"]
    runner.finished = state["finished"]
    runner.order = deque(state["order"])
    runner.replayed = list(state["replayed"])
    runner.partitions = {}
    for saved in state["partitions"]:
        part = runner.new_partition(saved["key"])
        part.local = saved["local"]
        part.last = saved["last"]
        part.open = saved["open"]
        part.accs = saved["accs"]
        if part.skipper is not None:
            part.skipper.resume = saved["resume"]
        part.seen = saved["seen"]
        part.pending = [(start_order_key(ce), seq, start, ce) for seq, start, ce in saved["pending"]]
        heapq.heapify(part.pending)
        part.pending_seq = saved["pending_seq"]
        part.window_held = list(saved["window_held"])
        _restore_evaluator(part.evaluator, saved["evaluator"])
        neg, neg_state = part.neg, saved["neg"]
        if neg is not None and neg_state is not None:
            for detector, active, spans in zip(
                neg.leading, neg_state["leading"], neg_state["leading_spans"]
            ):
                detector.active, detector.spans = active, spans
            for detector, active, spans in zip(
                neg.trailing, neg_state["trailing"], neg_state["trailing_spans"]
            ):
                detector.active, detector.spans = active, spans
            neg.g = neg_state["g"]
            neg.g_from = neg_state["g_from"]
            neg.g_value = neg_state["g_value"]
            neg.held = deque(neg_state["held"])
            neg.deadlines = neg_state["deadlines"]
            neg.seq = neg_state["seq"]
            neg.coords = neg_state["coords"]
            neg.found = neg_state["found"]
            neg.positions = neg_state["positions"]
        runner.partitions[saved["key"]] = part
    runner.released = OutputOrder.restored(
        state["released"],
        (entry[3].end for part in runner.partitions.values() for entry in part.pending),
    )
