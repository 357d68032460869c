"""Data-dependent equality of emitted events, decided at compile time when possible.

Two renamings ``ρ`` and ``σ`` emit equal events on a transition iff, for every
attribute written by either, the registers they read hold the same value
(a missing attribute is NULL; events drop NULL attributes, spec §1).  Python
equality is the spec's equality of events (:mod:`acel.lang.events`), so the
comparison is the null-safe :class:`SameValue`.  ``AS`` (bag union) and
``AND`` (equal bags) need these comparisons; see ``papers/compiler.md``.

Results are ``True``/``False`` when decided at compile time, else a predicate.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import permutations
from typing import TypeAlias, Union

from acel.acea.model.automaton import Renaming
from acel.acea.model.expressions import Const, IsNull, PAnd, PNot, POr, Reg, RExpr, RPred, SameValue

from acel.lang.events import Value

Decided: TypeAlias = Union[bool, RPred]
"""A compile-time truth value or a predicate left for run time."""


def value(renaming: Renaming, attr: str) -> RExpr:
    """``ρ(τ')(attr)`` as an expression over ``τ'``: its register, or NULL."""
    for name, reg in renaming.items:
        if name == attr:
            return Reg(reg)
    return Const(None)


def _same(left: RExpr, right: RExpr, constants: Mapping[str, Value]) -> Decided:
    def known(e: RExpr) -> tuple[bool, object]:
        if isinstance(e, Const):
            return True, e.value
        if isinstance(e, Reg) and e.name in constants:
            return True, constants[e.name]
        return False, None

    if left == right:
        return True
    lk, lv = known(left)
    rk, rv = known(right)
    if lk and rk:
        return bool(lv == rv)
    if isinstance(left, Const) and left.value is None:
        return IsNull(right)
    if isinstance(right, Const) and right.value is None:
        return IsNull(left)
    return SameValue(left, right)


def all_of(parts: Sequence[Decided]) -> Decided:
    """Conjunction with compile-time folding."""
    preds: list[RPred] = []
    for part in parts:
        if part is False:
            return False
        if part is True:
            continue
        assert not isinstance(part, bool)
        if isinstance(part, PAnd):
            preds.extend(part.operands)
        else:
            preds.append(part)
    if not preds:
        return True
    return preds[0] if len(preds) == 1 else PAnd(tuple(dict.fromkeys(preds)))


def any_of(parts: Sequence[Decided]) -> Decided:
    """Disjunction with compile-time folding."""
    preds: list[RPred] = []
    for part in parts:
        if part is True:
            return True
        if part is False:
            continue
        assert not isinstance(part, bool)
        preds.append(part)
    if not preds:
        return False
    preds = list(dict.fromkeys(preds))
    return preds[0] if len(preds) == 1 else POr(tuple(preds))


def negate(part: Decided) -> Decided:
    """Negation; only applied to two-valued comparisons (SameValue/IsNull)."""
    if isinstance(part, bool):
        return not part
    return PNot(part)


def events_equal(rho: Renaming, sigma: Renaming, constants: Mapping[str, Value]) -> Decided:
    """Whether ``ρ(τ') = σ(τ')``, two-valued."""
    if rho == sigma:
        return True
    attrs = sorted({a for a, _ in rho.items} | {a for a, _ in sigma.items})
    return all_of([_same(value(rho, a), value(sigma, a), constants) for a in attrs])


def bags_equal(
    left: Sequence[Renaming], right: Sequence[Renaming], constants: Mapping[str, Value]
) -> Decided:
    """Whether the bags ``{{ρ(τ') : ρ ∈ left}}`` and ``{{σ(τ') : σ ∈ right}}`` are equal.

    Equal sizes are needed; then some bijection must pair equal events.
    Renamings common to both sides cancel first (they emit the same event).
    """
    rest_left = list(left)
    rest_right: list[Renaming] = []
    for sigma in right:
        if sigma in rest_left:
            rest_left.remove(sigma)
        else:
            rest_right.append(sigma)
    if len(rest_left) != len(rest_right):
        return False
    if not rest_left:
        return True
    options: list[Decided] = []
    seen: set[tuple[Renaming, ...]] = set()
    for perm in permutations(rest_right):
        if perm in seen:
            continue
        seen.add(perm)
        options.append(
            all_of([events_equal(r, s, constants) for r, s in zip(rest_left, perm)])
        )
        if options[-1] is True:
            return True
    return any_of(options)


def set_partitions(items: Sequence[Renaming]) -> Iterator[list[list[Renaming]]]:
    """Every partition of ``items`` into non-empty classes (Bell-many)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        yield [[first], *partition]
        for index in range(len(partition)):
            yield [*partition[:index], [first, *partition[index]], *partition[index + 1 :]]
