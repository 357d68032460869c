"""Canonical labels of transitions, equal across queries that fire alike (:mod:`.shared`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from acel.acea.engine.closures import TrendItem
from acel.acea.model import expressions
from acel.acea.model.automaton import Transition
from acel.acea.model.expressions import Cmp, Const, Reg, is_register


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
    payload = []
    for item in items:
        values = item.values(
            transition, lambda reg: names[reg] if reg is not None and reg in assigned_regs else None
        )
        payload.append((item.func.upper(), tuple(values)))
    return verdict, (verdict, tuple(payload))


def type_test(transition: Transition) -> Any:
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
