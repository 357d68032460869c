"""The native trend core's planner and its propagator (issue 23; ``papers/engine.md``, "Native core").

:func:`plan` decides whether a trend query is in the fragment the C core
(:mod:`acel.acea.engine._native_core`, source ``acea/engine/native/core.c``)
handles, and encodes its automaton for it: every live-register set empty
(a configuration is a state), guards reading the event alone (attributes and
constants compared with the three-valued logic of
:mod:`acel.acea.engine.closures`), items COUNT/SUM/AVG/MIN/MAX, no WITHIN or
``WITHIN n`` with or without ``SLIDE s`` (integers) on a monotone axis, start
positions (Spark's slices) a plain range.
Anything else gets a one-line reason and runs in Python.

:class:`NativePropagator` is a drop-in evaluator for the runner.  When the core
meets what it cannot do exactly (an int64 about to overflow, a value that is not
an int64 or a float, a coordinate beyond 2^52), the state is handed to the
pure-Python propagator *before* that event, which goes on with exact Python
ints: same rows, bit for bit.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from typing import Any

from acel.acea.engine.aggregate import (
    Propagator,
    TumblingPropagator,
    need_pruning,
    propagator_for,
)
from acel.acea.engine.closures import CompiledAutomaton, TrendItem
from acel.acea.engine.identity_memo import IdentityMemo
from acel.acea.engine.native_protocol import (
    AGG_CODES,
    CMP_CODES,
    COORD_LIMIT,
    MODE_NONE,
    MODE_SLIDE,
    MODE_TUMBLE,
    MODE_WITHIN,
    PLAN_COLUMNS,
    PLAN_FIELDS,
    PLAN_TYPE_NAMES,
    PRED_AND,
    PRED_COMPARE,
    PRED_IN,
    PRED_IS_NULL,
    PRED_NOT,
    PRED_OR,
    PRED_TRUE,
    SRC_ATTR,
    SRC_CONST,
    SRC_ONE,
)
from acel.acea.engine.plan import index_plans
from acel.acea.engine.trend import Vec
from acel.acea.engine.unfold import UNFOLD_LIMIT
from acel.acea.engine.windows import Row, WindowRule
from acel.acea.model.automaton import Transition
from acel.acea.model.expressions import (
    TIME,
    Cmp,
    Const,
    In,
    IsNull,
    PAnd,
    PNot,
    POr,
    Reg,
    RExpr,
    RPred,
    TrueP,
    is_register,
)

from acel.io import native_switch
from acel.lang import aggregates

_native_core: Any
try:  # the extension is optional: pure Python is the fallback
    _native_core = importlib.import_module("acel.acea.engine._native_core")
except ImportError:  # pragma: no cover - exercised by monkeypatching in the tests
    _native_core = None

Program = tuple[Any, ...]
"""A guard or value source for the core, as nested tuples (tags: :mod:`.native_protocol`)."""


class OutsideFragment(Exception):
    """The query needs the pure-Python propagator (the message says why)."""


def available() -> bool:
    """Whether the extension was built and imports."""
    return _native_core is not None


def native_module() -> Any:
    """The extension module (its batch feeds: ``feed_keyed``, ``feed_keyed_columns``)."""
    assert _native_core is not None
    return _native_core


# ------------------------------------------------------------------ encoding


def _source(expr: RExpr, regs: dict[str, RExpr]) -> Program:
    """A value the core reads: ``(SRC_ATTR, attr)`` the event's attribute, ``(SRC_CONST, v)`` a constant."""
    if isinstance(expr, Reg):
        if expr.name == TIME:
            raise OutsideFragment("a predicate reads the event's position")
        if is_register(expr.name):
            return _source(regs.get(expr.name, Const(None)), {})
        return (SRC_ATTR, expr.name)
    if isinstance(expr, Const) and (expr.value is None or isinstance(expr.value, (bool, int, float, str))):
        return (SRC_CONST, expr.value)
    raise OutsideFragment(f"an expression the native core does not evaluate ({type(expr).__name__})")


def _program(pred: RPred, regs: dict[str, RExpr]) -> Program:
    """The three-valued predicate as a program of ``core.c``'s ``eval3``."""
    if isinstance(pred, TrueP):
        return (PRED_TRUE,)
    if isinstance(pred, Cmp):
        return (PRED_COMPARE, CMP_CODES[pred.op], _source(pred.left, regs), _source(pred.right, regs))
    if isinstance(pred, In):
        values = tuple(pred.values)
        if not all(v is None or isinstance(v, (bool, int, float, str)) for v in values):
            raise OutsideFragment("an IN list of values the native core does not compare")
        return (PRED_IN, _source(pred.operand, regs), values, bool(pred.negated))
    if isinstance(pred, IsNull):
        return (PRED_IS_NULL, _source(pred.operand, regs))
    if isinstance(pred, PNot):
        return (PRED_NOT, _program(pred.operand, regs))
    if isinstance(pred, (PAnd, POr)):
        return (PRED_AND if isinstance(pred, PAnd) else PRED_OR, tuple(_program(o, regs) for o in pred.operands))
    raise OutsideFragment(f"a predicate the native core does not evaluate ({type(pred).__name__})")


def _contributions(t: Transition, items: Sequence[TrendItem], regs: dict[str, RExpr]) -> Program | None:
    """Per item, the value sources its contribution folds (``None``: emits nothing into it)."""
    by_var = dict(t.output)
    out: list[Any] = []
    for item in items:
        sources: list[Program] = []
        for renaming in by_var.get(item.var, ()):
            if item.attr is None:
                sources.append((SRC_ONE,))
                continue
            reg = dict(renaming.items).get(item.attr)
            sources.append((SRC_CONST, None) if reg is None else _source(Reg(reg), regs))
        out.append(tuple(sources) if sources else None)
    return tuple(out) if any(s is not None for s in out) else None


_REGISTERS = (
    "registers carried between events that read the events (a filter relating events, "
    f"AGG; a counted repetition runs here unless it has over {UNFOLD_LIMIT:,} configurations: "
    "acea/engine/unfold.py)"
)

def _transition(t: Transition, items: Sequence[TrendItem], types: frozenset[str] | None,
                ids: dict[Any, int]) -> Program:
    """``(target, types, guard, contributions, check id, contribution id)``: equal checks
    and equal contributions share one id, so the core evaluates each once per event."""
    regs = dict(t.assignment)
    for _reg, expr in t.assignment:  # assignments read the event only
        if isinstance(expr, Reg) and is_register(expr.name):
            raise OutsideFragment(_REGISTERS)
        _source(expr, {})
    pred = t.predicate
    conjuncts = pred.operands if isinstance(pred, PAnd) else (pred,)
    kept = tuple(c for c in conjuncts if not _implied_by(c, types, regs))
    guard = None if not kept else _program(kept[0] if len(kept) == 1 else PAnd(kept), regs)
    if guard == (PRED_TRUE,):
        guard = None
    contributions = _contributions(t, items, regs)
    check = ids.setdefault(("check", types, guard), len(ids))
    emits = ids.setdefault(("emits", contributions), len(ids))
    return (t.target, types, guard, contributions, check, emits)


def _implied_by(conjunct: RPred, types: frozenset[str] | None, regs: dict[str, RExpr]) -> bool:
    """``type = 'T'`` where the transition's type set is ``{T}`` (the core checks it first)."""
    if types is None or len(types) != 1 or not isinstance(conjunct, Cmp) or conjunct.op != "=":
        return False
    try:
        sides = {_source(conjunct.left, regs), _source(conjunct.right, regs)}
    except OutsideFragment:
        return False
    return sides == {(SRC_ATTR, "type"), (SRC_CONST, next(iter(types)))}


def plan(ca: CompiledAutomaton, items: Sequence[TrendItem], rule: WindowRule,
         starts: range | None, negated: bool = False) -> tuple[Any, ...]:
    """The arguments of ``Core(...)`` for this query, or :class:`OutsideFragment`."""
    if negated or type(rule) is not WindowRule:
        raise OutsideFragment("leading or trailing NOT")
    if starts is not None and starts.step != 1:
        raise OutsideFragment("start positions with a step")
    within, slide = rule.within, rule.slide
    mode = (MODE_NONE if within is None else MODE_WITHIN if slide is None
            else MODE_TUMBLE if rule.single_class() else MODE_SLIDE)
    if within is None and slide is not None:
        raise OutsideFragment("SLIDE without WITHIN")
    for window in (within, slide):
        if window is None:
            continue
        if not rule.monotone:
            raise OutsideFragment("a WITHIN axis not known to be monotone")
        if type(window.size) is not int or not 0 < window.size < COORD_LIMIT:
            raise OutsideFragment("a window size that is not a positive integer below 2^52")
    aggs = []
    for item in items:
        agg = aggregates.lookup(item.func)
        if item.func not in AGG_CODES or agg is not getattr(aggregates, item.func):
            raise OutsideFragment(f"the aggregate {item.func}")
        aggs.append(AGG_CODES[item.func])
    if any(ca.live.values()):
        raise OutsideFragment(_REGISTERS)
    if index_plans(ca, tuple(items)):
        raise OutsideFragment("indexed states")
    automaton = ca.automaton
    by_state: list[list[Program]] = [[] for _ in range(automaton.num_states)]
    ids: dict[Any, int] = {}
    types: set[str] = set()
    for ct in ca.transitions:
        by_state[ct.transition.source].append(_transition(ct.transition, items, ct.types, ids))
        types |= ct.types or set()
    columns: dict[str, int] = {"type": 0}
    encoded = tuple(tuple(_column_transition(t, columns) for t in ts) for ts in by_state)
    readable = "type" not in _read_by(encoded)
    arguments = (automaton.num_states, automaton.initial, tuple(sorted(automaton.finals)), mode,
                 0 if within is None else within.size, 0 if slide is None else slide.size,
                 tuple(aggs), encoded, None if starts is None else (starts.start, starts.stop),
                 tuple(columns) if readable else None, tuple(sorted(types)), need_pruning(ca, rule))
    assert len(arguments) == PLAN_FIELDS
    return arguments


def with_starts(arguments: tuple[Any, ...], starts: range | None) -> tuple[Any, ...]:
    """The core's plan with another start range (a PARTITION BY key's own, Spark's keyed
    time slices); the rest of :func:`plan` does not depend on it."""
    if starts is not None and starts.step != 1:
        raise OutsideFragment("start positions with a step")
    return (*arguments[:8], None if starts is None else (starts.start, starts.stop), *arguments[9:])


# ------------------------------------------------------------------ columns


def _column_source(src: Program, columns: dict[str, int]) -> Program:
    """``(SRC_ATTR, attr)`` as ``(SRC_ATTR, attr, column)`` (the column path reads the cell;
    a new attribute takes the next column)."""
    if src[0] != SRC_ATTR:
        return src
    return (SRC_ATTR, src[1], columns.setdefault(src[1], len(columns)))


def _column_program(node: Program, columns: dict[str, int]) -> Program:
    """A guard program whose attribute operands name their columns too."""
    tag = node[0]
    if tag == PRED_COMPARE:
        return (tag, node[1], _column_source(node[2], columns), _column_source(node[3], columns))
    if tag == PRED_IN:
        return (tag, _column_source(node[1], columns), node[2], node[3])
    if tag == PRED_IS_NULL:
        return (tag, _column_source(node[1], columns))
    if tag == PRED_NOT:
        return (tag, _column_program(node[1], columns))
    if tag in (PRED_AND, PRED_OR):
        return (tag, tuple(_column_program(o, columns) for o in node[1]))
    return node


def _column_transition(t: Program, columns: dict[str, int]) -> Program:
    """A transition of :func:`_transition` with its operands' columns."""
    target, types, guard, contributions, check, emits = t
    guard = None if guard is None else _column_program(guard, columns)
    if contributions is not None:
        contributions = tuple(
            None if sources is None else tuple(_column_source(src, columns) for src in sources)
            for sources in contributions
        )
    return (target, types, guard, contributions, check, emits)


def _read_by(by_state: tuple[tuple[Program, ...], ...]) -> set[str]:
    """The attributes the transitions' programs read as operands."""
    out: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, tuple):
            if len(node) == 3 and node[0] == SRC_ATTR and isinstance(node[1], str) and isinstance(node[2], int):
                out.add(node[1])
                return
            for part in node:
                walk(part)

    for ts in by_state:
        for _target, _types, guard, contributions, _check, _emits in ts:
            walk(guard)
            walk(contributions)
    return out


def column_names(arguments: tuple[Any, ...]) -> tuple[str, ...] | None:
    """The columns a core of this plan reads, ``type`` first (``None``: it reads the type
    as a value, so it takes attribute maps only)."""
    names: tuple[str, ...] | None = arguments[PLAN_COLUMNS]
    return names


def type_names(arguments: tuple[Any, ...]) -> tuple[str, ...]:
    """The type names whose codes the core's columns path knows (the rest match nothing)."""
    names: tuple[str, ...] = arguments[PLAN_TYPE_NAMES]
    return names


def choose(ca: CompiledAutomaton, items: Sequence[TrendItem], rule: WindowRule,
           starts: range | None, negated: bool = False) -> tuple[Any, ...] | None:
    """The core's plan when ``ACEL_NATIVE`` and the fragment allow it (else ``None``;
    ``ACEL_NATIVE=1`` outside the fragment stops with one line saying why)."""
    if native_switch.mode() == "off":
        return None
    if not available():
        native_switch.wanted(False, "the extension acel.acea.engine._native_core is not built")
        return None
    try:
        arguments = _planned(ca, items, rule, starts, negated)
    except OutsideFragment as why:
        native_switch.wanted(False, f"trend aggregation with {why} runs in Python")
        return None
    return arguments


_PLANS: IdentityMemo[tuple[Any, ...] | str] = IdentityMemo()
""":func:`plan`'s answers (the plan, or why not) by the compiled automaton's identity (held)
and the rest of its arguments: a Spark stream makes a runner per key and micro-batch,
and planning cost 0.25 ms each time (issue 31)."""


def _planned(ca: CompiledAutomaton, items: Sequence[TrendItem], rule: WindowRule,
             starts: range | None, negated: bool) -> tuple[Any, ...]:
    """:func:`plan`, remembered."""
    if type(rule) is not WindowRule:
        return plan(ca, items, rule, starts, negated)

    def answer() -> tuple[Any, ...] | str:
        try:
            return plan(ca, items, rule, starts, negated)
        except OutsideFragment as why:
            return str(why)

    extra = (tuple(items), type(rule), rule.within, rule.slide, rule.monotone, starts, negated)
    found = _PLANS.get((ca,), extra, answer)
    if isinstance(found, str):
        raise OutsideFragment(found)
    return found


# ------------------------------------------------------------------ the evaluator


class _Rows:
    """``rows`` of a native propagator: what the runner pops at the end."""

    def __init__(self, owner: NativePropagator) -> None:
        self.owner = owner

    def pop(self, row: Row, default: Vec) -> Vec:
        """The row's vector (``default``: no run ended in it), removed."""
        found = self.owner.core.take_row(row)
        return default if found is None else found


class NativePropagator:
    """The runner's evaluator on the C core; hands over to Python when it must."""

    def __init__(self, arguments: tuple[Any, ...], ca: CompiledAutomaton,
                 items: Sequence[TrendItem], rule: WindowRule, starts: range | None = None) -> None:
        assert _native_core is not None
        self.core = _native_core.Core(*arguments)
        self.ca, self.items, self.rule, self.starts = ca, tuple(items), rule, starts
        self.python: Propagator | TumblingPropagator | None = None
        """The pure-Python propagator once the core handed over (then it runs everything)."""
        self.why: str | None = None

    def step(self, attrs: dict[str, Any], position: int, coord: Any) -> None:
        """Read one event at ``coord`` (see :meth:`Propagator.step`)."""
        if self.python is None:
            if self.core.step(attrs, coord):
                return
            self.hand_over()
        assert self.python is not None
        self.python.step(attrs, position, coord)

    @classmethod
    def restored(cls, arguments: tuple[Any, ...], ca: CompiledAutomaton, items: Sequence[TrendItem],
                 rule: WindowRule, starts: range | None, python: Any,
                 last: Any) -> NativePropagator | None:
        """A core continuing from the pure-Python propagator ``python`` (a restored state;
        ``last``: the partition's last coordinate), or ``None`` when its state holds a value
        a core does not hold exactly (then ``python`` goes on)."""
        state = from_python(python)
        if state is None:
            return None
        out = cls(arguments, ca, items, rule, starts)
        return out if out.core.load(state, last) else None

    def feed(self, events: list[dict[str, Any]], start: int, attr: str | None, check: bool,
             last: Any, index: int) -> tuple[int, Any]:
        """Read ``events[start:]`` with the core while it can: how many, and the last
        coordinate (``attr`` ``None``: the partition index, ``index`` for the first one)."""
        if self.python is not None:
            return 0, last
        read, last = self.core.feed(events, start, attr, check, last, index)
        return int(read), last

    def feed_columns(self, block: Any, start: int, coord: int, check: bool, last: Any,
                     index: int) -> tuple[int, Any]:
        """:meth:`feed` on rows ``start:`` of a block of typed columns (``coord``: the
        coordinate's column, -1 for the partition index)."""
        if self.python is not None:
            return 0, last
        read, last = self.core.feed_columns(block.kinds, block.vals, block.cap, start, len(block), coord,
                                            check, last, index)
        return int(read), last

    def hand_over(self) -> Propagator | TumblingPropagator:
        """The state as a pure-Python propagator, which reads every later event."""
        if self.python is None:
            self.why = self.core.why()
            self.python = to_python(self.core.export(), self.ca, self.items, self.rule, self.starts)
        return self.python

    @property
    def rows(self) -> Any:
        """The finished rows (the runner pops them)."""
        return _Rows(self) if self.python is None else self.python.rows

    @property
    def local(self) -> int:
        """Events read so far."""
        return int(self.core.local) if self.python is None else self.python.local

    def has_work(self) -> bool:
        """Some run is alive."""
        return bool(self.core.has_work()) if self.python is None else self.python.has_work()

    def exhausted(self) -> bool:
        """No run is alive and none may start: later events cannot change the rows."""
        if self.python is not None:
            return self.python.exhausted()
        starts = self.starts
        return starts is not None and self.local >= starts.stop and not self.has_work()


def to_python(state: tuple[Any, ...], ca: CompiledAutomaton, items: Sequence[TrendItem],
              rule: WindowRule, starts: range | None = None) -> Propagator | TumblingPropagator:
    """The pure-Python propagator in exactly the state the core exported."""
    local, has_min, low, has_max, high, rows, configs, current = state
    out = propagator_for(ca, items, rule, starts=starts)
    out.local = local
    out.rows = dict(rows)
    if isinstance(out, TumblingPropagator):
        out.active = {(q, ()): dict(entries)[0] for q, entries in configs}
        out.current = current
        return out
    out.active = {(q, ()): dict(entries) for q, entries in configs}
    out.min_class = low if has_min else None
    out.max_class = high if has_max else None
    return out


def python_views(partitions: Iterable[Any]) -> list[tuple[Any, NativePropagator]]:
    """Put, in place of every native evaluator, its pure-Python twin in the same state (a
    save writes the Python evaluators' format); the ``(partition, native evaluator)`` pairs
    swapped, for the caller to put back.  The cores are not changed."""
    swapped = []
    for part in partitions:
        evaluator = part.evaluator
        if isinstance(evaluator, NativePropagator):
            swapped.append((part, evaluator))
            part.evaluator = evaluator.python if evaluator.python is not None else to_python(
                evaluator.core.export(), evaluator.ca, evaluator.items, evaluator.rule, evaluator.starts)
    return swapped


def from_python(evaluator: Any) -> tuple[Any, ...] | None:
    """A pure-Python propagator's state in the form ``Core.export`` gives (:func:`to_python`'s
    inverse), for ``Core.load``; ``None``: it holds what no core holds (indexed groups, a
    configuration with registers)."""
    if isinstance(evaluator, TumblingPropagator):
        if any(evaluator.groups.values()) or any(tau != () for _, tau in evaluator.active):
            return None
        configs = [(q, [(0, vec)]) for (q, _), vec in evaluator.active.items()]
        return (evaluator.local, False, 0, False, 0, list(evaluator.rows.items()), configs,
                evaluator.current)
    if not isinstance(evaluator, Propagator) or any(evaluator.groups.values()) or any(
            tau != () for _, tau in evaluator.active):
        return None
    configs = [(q, list(classes.items())) for (q, _), classes in evaluator.active.items()]
    low, high = evaluator.min_class, evaluator.max_class
    return (evaluator.local, low is not None, 0 if low is None else low, high is not None,
            0 if high is None else high, list(evaluator.rows.items()), configs, 0)
