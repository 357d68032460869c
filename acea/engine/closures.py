"""Compile an ACEA's transitions into Python closures, once (spec §7).

The optimized engine never interprets expression trees per event: every
transition ``(p, α, P, m, q)`` becomes one generated Python function that takes
the source registers, the event's attribute dictionary and its time, evaluates
``α`` on ``τ ◁ e``, checks ``P`` on ``τ'`` and returns the target registers
(projected on the registers still *live* at ``q``) with what the transition
emits.  The generated code calls the very helpers of :mod:`acel.lang.predicates`
and :mod:`acel.lang.aggregates`, so its results are those of :func:`acea.model.fire`.

Liveness (the key to merging runs): every transition replaces ``τ`` by the
registers it assigns, so the registers that matter in state ``q`` are exactly
those read by the assignments of the transitions leaving ``q``.  Two runs that
reach ``q`` with registers equal on that set have the same future; the engine
keeps one configuration for both.  Registers are stored as a tuple in the
sorted order of ``live(q)``, ``None`` for NULL (a missing register reads NULL).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from acel.acea.model import expressions as ex
from acel.acea.model.automaton import ACEA, Transition, required_types
from acel.acea.model.expressions import TIME, is_register, names_in_expr, names_in_pred

from acel.lang import aggregates
from acel.lang.events import Event
from acel.lang.predicates import OPERATORS, arith, compare

V = TypeVar("V")

Tau = tuple[Any, ...]
"""Registers of a configuration: values in the order of ``live(state)``."""

Emission = tuple[tuple[str, Event], ...]
"""What one transition emits: ``(variable, event)`` pairs (a bag)."""

FireFn = Callable[[Tau, dict[str, Any], int], Any]


def live_registers(automaton: ACEA) -> dict[int, tuple[str, ...]]:
    """``live(q)``: registers read by the assignments of transitions leaving ``q``."""
    live: dict[int, set[str]] = {q: set() for q in automaton.states()}
    for t in automaton.transitions:
        for _, expr in t.assignment:
            live[t.source] |= {n for n in names_in_expr(expr) if is_register(n)}
    return {q: tuple(sorted(regs)) for q, regs in live.items()}


# ------------------------------------------------------------- code generation


_FAST = (int, float, str)


def _fast_compare(op: str) -> Callable[[Any, Any], Any]:
    """``compare(op, ·, ·)`` with a fast path for two ints, floats or strings."""
    fn = OPERATORS[op]

    def cmp(left: Any, right: Any) -> Any:
        tl = type(left)
        if tl is type(right) and tl in _FAST:
            return fn(left, right)
        return compare(op, left, right)

    return cmp


def _and3(*values: Any) -> Any:
    unknown = False
    for v in values:
        if v is False:
            return False
        unknown = unknown or v is None
    return None if unknown else True


def _or3(*values: Any) -> Any:
    unknown = False
    for v in values:
        if v is True:
            return True
        unknown = unknown or v is None
    return None if unknown else False


def _not3(value: Any) -> Any:
    return None if value is None else not value


def _in3(value: Any, options: tuple[Any, ...], negated: bool) -> Any:
    if value is None:
        return None
    found = any(compare("=", value, v) for v in options)
    return (not found) if negated else found


def _event(time: int, items: tuple[tuple[str, Any], ...]) -> Event:
    """``Event(time, items)`` without the NULL (``None``) attributes (spec §1)."""
    for item in items:
        if item[1] is None:
            return Event(time, tuple(p for p in items if p[1] is not None))
    return Event(time, items)


def _neg(value: Any) -> Any:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return -value if ok else None


def _agg(name: str) -> aggregates.Aggregate:
    agg = aggregates.lookup(name)
    if agg is None:
        raise ValueError(f"unknown aggregate function {name!r}")
    return agg


def _lift(name: str) -> Callable[[Any], Any]:
    agg = _agg(name)
    identity, lift = agg.identity, agg.lift
    return lambda v: identity if v is None else lift(v)


def _combine(name: str) -> Callable[[Any, Any], Any]:
    agg = _agg(name)
    identity, comb = agg.identity, agg.combine
    return lambda a, b: comb(identity if a is None else a, identity if b is None else b)


def _finish(name: str) -> Callable[[Any], Any]:
    agg = _agg(name)
    identity, fin = agg.identity, agg.finish
    return lambda v: fin(identity if v is None else v)


_OPNAMES = {"=": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


class _Gen:
    """Accumulates constants/helpers in a namespace while writing source text."""

    def __init__(self, special: ex.RPred | None = None) -> None:
        self.special = special
        self.ns: dict[str, Any] = {
            "_arith": arith,
            "_cmp": compare,
            "_and3": _and3,
            "_or3": _or3,
            "_not3": _not3,
            "_in3": _in3,
            "_neg": _neg,
            "_Event": Event,
            "_event": _event,
        }

    def helper(self, name: str, make: Callable[[], Any]) -> str:
        if name not in self.ns:
            self.ns[name] = make()
        return name

    def const(self, value: Any) -> str:
        name = f"_k{len(self.ns)}"
        self.ns[name] = value
        return name

    def expr(self, e: ex.RExpr, regs: dict[str, str]) -> str:
        """Source of an expression; ``regs`` maps register names to source text."""
        if isinstance(e, ex.Reg):
            if e.name == TIME:
                return "t"
            if is_register(e.name):
                return regs.get(e.name, "None")
            return f"a.get({e.name!r})"
        if isinstance(e, ex.Const):
            if e.value is None or isinstance(e.value, (bool, int, str)):
                return repr(e.value)
            return self.const(e.value)
        if isinstance(e, ex.Arith):
            return f"_arith({e.op!r}, {self.expr(e.left, regs)}, {self.expr(e.right, regs)})"
        if isinstance(e, ex.Negate):
            return f"_neg({self.expr(e.operand, regs)})"
        if isinstance(e, ex.Lift):
            return f"{self.const(_lift(e.func))}({self.expr(e.operand, regs)})"
        if isinstance(e, ex.Combine):
            fn = self.const(_combine(e.func))
            return f"{fn}({self.expr(e.left, regs)}, {self.expr(e.right, regs)})"
        if isinstance(e, ex.Finish):
            return f"{self.const(_finish(e.func))}({self.expr(e.operand, regs)})"
        if isinstance(e, ex.Identity):
            return self.const(_agg(e.func).identity)
        if isinstance(e, ex.GapStep):
            return f"{self.const(gap_stepper(e.automaton))}({self.expr(e.operand, regs)}, a, t)"
        raise TypeError(f"not a register expression: {e!r}")

    def pred3(self, p: ex.RPred, regs: dict[str, str]) -> str:
        """Source of a three-valued predicate (True / False / None)."""
        if self.special is not None and p is self.special:
            return "K"
        if isinstance(p, ex.TrueP):
            return "True"
        if isinstance(p, ex.Cmp):
            fn = self.helper(f"_cmp_{_OPNAMES[p.op]}", lambda: _fast_compare(p.op))
            return f"{fn}({self.expr(p.left, regs)}, {self.expr(p.right, regs)})"
        if isinstance(p, ex.In):
            values = self.const(tuple(p.values))
            return f"_in3({self.expr(p.operand, regs)}, {values}, {p.negated!r})"
        if isinstance(p, ex.IsNull):
            return f"({self.expr(p.operand, regs)} is None)"
        if isinstance(p, ex.SameValue):
            return f"({self.expr(p.left, regs)} == {self.expr(p.right, regs)})"
        if isinstance(p, ex.PNot):
            return f"_not3({self.pred3(p.operand, regs)})"
        if isinstance(p, ex.PAnd):
            return "_and3(" + ", ".join(self.pred3(o, regs) for o in p.operands) + ")"
        if isinstance(p, ex.POr):
            return "_or3(" + ", ".join(self.pred3(o, regs) for o in p.operands) + ")"
        if isinstance(p, ex.GapClear):
            return f"{self.const(gap_clear(p.automaton.finals))}({self.expr(p.operand, regs)})"
        raise TypeError(f"not a register predicate: {p!r}")


# ------------------------------------------------------------ negation gaps

GapFn = Callable[[Any, dict[str, Any], int], frozenset[tuple[int, Tau]]]


@lru_cache(maxsize=256)
def gap_stepper(automaton: ACEA) -> GapFn:
    """``GapStep`` as a function ``(configurations, attrs, time)`` (spec §3.1).

    ψ's automaton is compiled to closures once (cached per automaton); a
    configuration is ``(state, τ)`` with ``τ`` in the order of ``live(state)``,
    as in the engine.  Every run waiting in a gap steps the same ψ on the same
    event, and runs that entered the gap together hold equal sets, so the
    result is memoised per set for the current event (the memo is dropped when
    another event comes: a new ``attrs`` object or time).
    """
    ca = compile_automaton(automaton)
    fresh: tuple[tuple[int, Tau], ...] = ((automaton.initial, ()),)
    ready = ca.ready
    memo: dict[Any, frozenset[tuple[int, Tau]]] = {}
    cache: dict[int, tuple[CompiledTransition, ...]] = {}
    current: list[Any] = [None, None]

    def step(configurations: Any, a: dict[str, Any], t: int) -> frozenset[tuple[int, Tau]]:
        if a is not current[0] or t != current[1]:
            memo.clear()
            cache.clear()
            current[0], current[1] = a, t
        found = memo.get(configurations)
        if found is not None:
            return found
        reached: set[tuple[int, Tau]] = set()
        sources = (*configurations, *fresh) if configurations else fresh
        for state, tau in sources:
            for ct in ready(state, a, t, cache):
                if ct.identity:
                    reached.add((state, tau))
                    continue
                res = ct.fire(tau, a, t)
                if res is not None:
                    reached.add((ct.target, res[0]))
        found = memo[configurations] = frozenset(reached)
        return found

    return step


def gap_clear(finals: frozenset[int]) -> Callable[[Any], bool]:
    """``GapClear``: no configuration of the set is in a final state of ψ."""

    def clear(configurations: Any) -> bool:
        if configurations:
            for state, _ in configurations:
                if state in finals:
                    return False
        return True

    return clear


@dataclass(frozen=True)
class TrendItem:
    """What a trend query needs from emissions: ``F(var.attr)`` (attr None: COUNT(X))."""

    func: str
    var: str
    attr: str | None

    def values(self, transition: Transition, of_register: Callable[[str | None], V]) -> list[str | V]:
        """What each renaming of ``var`` on ``transition`` contributes: ``"1"`` for
        COUNT(X), else ``of_register`` of the register holding ``attr`` (``None``
        when that renaming binds no such attribute); shared by the code generator
        and :mod:`.shared_labels`, so both read emissions alike (spec §6)."""
        if self.attr is None:
            return ["1" for _ in dict(transition.output).get(self.var, ())]
        return [of_register(dict(renaming.items).get(self.attr))
                for renaming in dict(transition.output).get(self.var, ())]


@dataclass(frozen=True)
class CompiledTransition:
    """A transition as generated code.

    ``fire(tau, attrs, time)`` returns ``None`` when the predicate fails (its
    event-only conjuncts, ``guard``, excepted), else
    ``(tau', payload)``: ``payload`` is the emission (enumeration mode) or the
    tuple of per-item monoid contributions (trend mode), ``None`` when the
    transition emits nothing relevant.
    """

    transition: Transition
    index: int
    target: int
    types: frozenset[str] | None
    fire: FireFn
    source_code: str
    guard: Callable[[dict[str, Any], int], bool] | None = None
    guard_key: str = ""
    """Equal for guards with the same code (their verdicts are shared per event)."""
    """The conjuncts of ``P`` that read only the event (through registers assigned
    from the event alone), evaluated once per event instead of once per
    configuration; ``fire`` assumes they hold, so callers must check them
    (:meth:`CompiledAutomaton.ready`)."""
    identity: bool = False
    """A non-emitting ``TRUE`` self-loop copying every live register: ``fire``
    returns ``(tau, None)`` with ``tau`` unchanged, so callers may skip it."""


def is_skip_loop(transition: Transition, live: dict[int, tuple[str, ...]]) -> bool:
    """``TRUE``, non-emitting, ``x := x`` for every register live at its (own) state."""
    t = transition
    if t.source != t.target or t.output or not isinstance(t.predicate, ex.TrueP):
        return False
    assignment = dict(t.assignment)
    return all(assignment.get(x) == ex.Reg(x) for x in live[t.source])


def compile_transition(
    transition: Transition,
    index: int,
    live: dict[int, tuple[str, ...]],
    items: Sequence[TrendItem] | None = None,
) -> CompiledTransition:
    """Generate ``fire`` for one transition (see :class:`CompiledTransition`).

    With ``items`` the payload is the trend contribution of each item (spec §6):
    the monoid element ``⊕ lift(v)`` over the values ``v`` (non-NULL; ``1`` for
    COUNT(X)) of the events this transition emits into the item's variable.
    """
    gen = _Gen()
    src_regs = {reg: f"o[{i}]" for i, reg in enumerate(live[transition.source])}
    lines = ["def fire(o, a, t):"]
    new_regs: dict[str, str] = {}
    for n, (reg, expr) in enumerate(transition.assignment):
        local = f"v{n}"
        lines.append(f"    {local} = {gen.expr(expr, src_regs)}")
        new_regs[reg] = local
    pred = transition.predicate
    conjuncts = pred.operands if isinstance(pred, ex.PAnd) else (pred,)
    event_only = {
        reg
        for reg, expr in transition.assignment
        if not any(is_register(n) for n in names_in_expr(expr))
    }
    guard_lines = ["def guard(a, t):"]
    for n, (reg, expr) in enumerate(transition.assignment):
        if reg in event_only:
            guard_lines.append(f"    v{n} = {gen.expr(expr, {})}")
    has_guard = False
    for c in conjuncts:
        if isinstance(c, ex.TrueP):
            continue
        if isinstance(c, ex.IsNull):
            check = f"{gen.expr(c.operand, new_regs)} is not None"
        else:
            check = f"{gen.pred3(c, new_regs)} is not True"
        if names_in_pred(c) <= event_only:
            guard_lines.append(f"    if {check}: return False")
            has_guard = True
        else:
            lines.append(f"    if {check}: return None")
    guard_lines.append("    return True")
    tau, payload = _tau_and_payload(gen, transition, live, items, new_regs)
    lines.append(f"    return ({tau}, {payload})")
    source = "\n".join(lines)
    if has_guard:
        source += "\n" + "\n".join(guard_lines)
    namespace = gen.ns
    exec(compile(source, f"<acea transition {index}>", "exec"), namespace)  # noqa: S102
    return CompiledTransition(
        transition,
        index,
        transition.target,
        required_types(transition),
        namespace["fire"],
        source,
        namespace.get("guard"),
        _guard_key(guard_lines, index),
        items is None and is_skip_loop(transition, live),
    )


def _guard_key(lines: list[str], index: int) -> str:
    """The guard's code when it names no generated constant, else a unique key."""
    body = "\n".join(lines[1:])
    return f"#{index}" if "_k" in body else body


def _tau_and_payload(
    gen: _Gen,
    transition: Transition,
    live: dict[int, tuple[str, ...]],
    items: Sequence[TrendItem] | None,
    new_regs: dict[str, str],
) -> tuple[str, str]:
    """Source of the target registers and of the payload (see :class:`CompiledTransition`)."""
    target_live = live[transition.target]
    tau = "(" + "".join(f"{new_regs.get(r, 'None')}, " for r in target_live) + ")"
    if items is None:
        parts = []
        built: dict[str, str] = {}
        for var, renamings in transition.output:
            for renaming in renamings:
                attrs = "(" + "".join(
                    f"({attr!r}, {new_regs.get(reg, 'None')}), " for attr, reg in renaming.items
                ) + ")"
                # equal renamings (e.g. the type variable and the atom's
                # variable) emit one shared, immutable event object
                name = built.get(attrs)
                if name is None:
                    name = built[attrs] = f"_e{len(built)}"
                    parts.append(f"({var!r}, ({name} := _event(t, {attrs})))")
                else:
                    parts.append(f"({var!r}, {name})")
        payload = "(" + "".join(p + ", " for p in parts) + ")" if parts else "None"
    else:
        contribs = []
        relevant = False
        for item in items:
            values = item.values(
                transition, lambda reg: new_regs.get(reg, "None") if reg is not None else "None"
            )
            if not values:
                contribs.append("None")
                continue
            relevant = True
            fold = gen.const(_fold(item.func))
            contribs.append(f"{fold}((" + "".join(v + ", " for v in values) + "))")
        payload = "(" + "".join(c + ", " for c in contribs) + ")" if relevant else "None"
    return tau, payload


def _fold(func: str) -> Callable[[tuple[Any, ...]], Any]:
    """``⊕ lift(v)`` over the non-NULL values of a tuple; ``None`` if all are NULL."""
    agg = _agg(func)
    lift, combine = agg.lift, agg.combine

    def fold(values: tuple[Any, ...]) -> Any:
        acc: Any = None
        for v in values:
            if v is not None:
                acc = lift(v) if acc is None else combine(acc, lift(v))
        return acc

    return fold


@dataclass(frozen=True)
class CompiledAutomaton:
    """An ACEA ready to run: closures indexed by source state and event type."""

    automaton: ACEA
    live: dict[int, tuple[str, ...]]
    transitions: tuple[CompiledTransition, ...]
    by_type: tuple[dict[str | None, tuple[CompiledTransition, ...]], ...]
    """Per state: event type → transitions that may fire (key ``None``: untyped)."""
    any_type: tuple[tuple[CompiledTransition, ...], ...]
    """Per state: the transitions that test no type (fire on every event)."""
    guarded: tuple[bool, ...] = ()
    """Per state: whether some outgoing transition has a ``guard``."""

    def candidates(self, state: int, event_type: str | None) -> tuple[CompiledTransition, ...]:
        """Transitions of ``state`` that may fire on an event of ``event_type``
        (their ``guard`` still to be checked: use :meth:`ready`)."""
        return self.by_type[state].get(event_type, self.any_type[state])

    def ready(
        self,
        state: int,
        attrs: dict[str, Any],
        time: int,
        cache: dict[int, tuple[CompiledTransition, ...]],
    ) -> tuple[CompiledTransition, ...]:
        """The transitions of ``state`` whose event-only conjuncts hold on this event.

        ``cache`` must be fresh for every event: it shares the guards'
        verdicts between all configurations of a state.
        """
        found = cache.get(state)
        if found is None:
            candidates = self.by_type[state].get(attrs.get("type"), self.any_type[state])
            if self.guarded and not self.guarded[state]:
                found = cache[state] = candidates
                return found
            kept = []
            # key -1 of the per-event cache holds the guards' shared verdicts
            verdicts: dict[str, bool] = cache.setdefault(-1, {})  # type: ignore[arg-type, assignment]
            for ct in candidates:
                if ct.guard is not None:
                    ok = verdicts.get(ct.guard_key)
                    if ok is None:
                        ok = verdicts[ct.guard_key] = ct.guard(attrs, time)
                    if not ok:
                        continue
                kept.append(ct)
            found = cache[state] = tuple(kept)
        return found


def compile_automaton(
    automaton: ACEA, items: Sequence[TrendItem] | None = None
) -> CompiledAutomaton:
    """Compile every transition and index them by source state and tested type."""
    live = live_registers(automaton)
    compiled = tuple(
        compile_transition(t, i, live, items) for i, t in enumerate(automaton.transitions)
    )
    n = automaton.num_states
    any_type: list[list[CompiledTransition]] = [[] for _ in range(n)]
    typed: list[dict[str, list[CompiledTransition]]] = [{} for _ in range(n)]
    for ct in compiled:
        s = ct.transition.source
        if ct.types is None:
            any_type[s].append(ct)
        else:
            for ty in ct.types:
                typed[s].setdefault(ty, []).append(ct)
    by_type: list[dict[str | None, tuple[CompiledTransition, ...]]] = []
    for s in range(n):
        table: dict[str | None, tuple[CompiledTransition, ...]] = {}
        for ty, lst in typed[s].items():
            # keep the automaton's transition order: typed and untyped interleaved
            table[ty] = tuple(sorted(lst + any_type[s], key=lambda c: c.index))
        by_type.append(table)
    return CompiledAutomaton(
        automaton,
        live,
        compiled,
        tuple(by_type),
        tuple(tuple(lst) for lst in any_type),
        tuple(
            any(ct.guard is not None and ct.transition.source == s for ct in compiled)
            for s in range(n)
        ),
    )


def compile_range_transition(
    transition: Transition,
    index: int,
    live: dict[int, tuple[str, ...]],
    items: Sequence[TrendItem] | None,
    copies: frozenset[str],
    key_atom: ex.Cmp,
) -> FireFn:
    """Generate ``parts(tau, attrs, time)`` for a transition indexed on one register.

    The transition reads the source's key register only through ``copies``
    (registers assigned ``Reg(key)``), and those only in ``key_atom`` (a
    comparison of a copy with an expression ``y`` that reads no copy).  So,
    for the fixed other registers in ``tau`` (the key slot may hold anything),
    ``parts`` returns ``None`` when the predicate fails whatever the key atom
    says, else ``(tau', payload, y, when_true, when_false, when_null)``: the
    target, the payload and ``y`` do not depend on the key, and the three
    flags say whether the predicate holds when the key atom is true, false
    or unknown.
    """
    gen = _Gen(special=key_atom)
    src_regs = {reg: f"o[{i}]" for i, reg in enumerate(live[transition.source])}
    lines = ["def parts(o, a, t):"]
    new_regs: dict[str, str] = {}
    for n, (reg, expr) in enumerate(transition.assignment):
        if reg in copies:
            continue
        local = f"v{n}"
        lines.append(f"    {local} = {gen.expr(expr, src_regs)}")
        new_regs[reg] = local
    other = key_atom.right if isinstance(key_atom.left, ex.Reg) and key_atom.left.name in copies else key_atom.left
    pred = transition.predicate
    conjuncts = pred.operands if isinstance(pred, ex.PAnd) else (pred,)
    with_key: list[ex.RPred] = []
    for c in conjuncts:
        if not _mentions(c, key_atom):
            lines.append(f"    if {gen.pred3(c, new_regs)} is not True: return None")
        else:
            with_key.append(c)
    lines.append(f"    y = {gen.expr(other, new_regs)}")
    body = gen.pred3(with_key[0] if len(with_key) == 1 else ex.PAnd(tuple(with_key)), new_regs)
    lines.append(f"    p = lambda K: {body}")
    lines.append("    w1 = p(True) is True")
    lines.append("    w0 = p(False) is True")
    lines.append("    wn = p(None) is True")
    lines.append("    if not (w1 or w0 or wn): return None")
    tau, payload = _tau_and_payload(gen, transition, live, items, new_regs)
    lines.append(f"    return ({tau}, {payload}, y, w1, w0, wn)")
    source = "\n".join(lines)
    namespace = gen.ns
    exec(compile(source, f"<acea range transition {index}>", "exec"), namespace)  # noqa: S102
    fn: FireFn = namespace["parts"]
    return fn


def _mentions(pred: ex.RPred, atom: ex.RPred) -> bool:
    if pred is atom:
        return True
    if isinstance(pred, (ex.PAnd, ex.POr)):
        return any(_mentions(o, atom) for o in pred.operands)
    if isinstance(pred, ex.PNot):
        return _mentions(pred.operand, atom)
    return False


def compile_event_expr(expr: ex.RExpr) -> Callable[[dict[str, Any], int], Any]:
    """An expression that reads no register, as a function of ``(attrs, time)``."""
    gen = _Gen()
    source = f"def value(a, t):\n    return {gen.expr(expr, {})}"
    namespace = gen.ns
    exec(compile(source, "<acea event expression>", "exec"), namespace)  # noqa: S102
    fn: Callable[[dict[str, Any], int], Any] = namespace["value"]
    return fn
