"""Structures and shapes: the generated per-signature maps of a shared plan and
their cached affine powers over a burst (HAMLET's graphlets; :mod:`.shared`)."""

from __future__ import annotations

import math
from typing import Any, Protocol

START = -1
"""The pseudo-entry of a run starting at the event (its value is 1 in the current pane)."""

CALL_COST = 3
"""The cost model's price of one generated-function call, in terms (one term: one
multiply-add on a vector entry)."""

SMALL_OP = 0.1
"""The price of one operation of a shape's power (small coefficients), in terms."""


def _coef_text(coef: list[Any]) -> str:
    const, params = coef
    parts = ([str(const)] if const else []) + [f"P[{i}]" for i in params]
    if not parts:
        return "0"
    return parts[0] if len(parts) == 1 else "(" + " + ".join(parts) + ")"


class Shape:
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


class ShapeBook(Protocol):
    """What a structure needs of its shared plan (:class:`acel.acea.engine.shared_plan.SharedPlan`):
    the plan's one copy of each shape and its cache of their powers."""

    composites: dict[tuple[Any, ...], tuple[Any, ...]]

    def shape(self, key: tuple[Any, ...]) -> Shape:
        """The plan's shape of ``key`` (made once)."""
        ...

    def composite(self, shape: Shape, params: tuple[Any, ...], b: int) -> tuple[Any, ...]:
        """``shape``'s power over a burst of ``b`` events with ``params`` (cached)."""
        ...


class Struct:
    """What one event signature does to the merged vector, as generated code.

    ``step(V, P)`` / ``step0(V, P)`` apply one event (with / without a run
    starting at it); ``burst(V, K)`` / ``burst0(V, K)`` apply a burst from the
    shapes' powers ``K``.  ``terms`` maps each written entry to its sources
    (an entry or :data:`START`) and symbolic coefficients ``[const, params]``.
    """

    def __init__(
        self,
        plan: ShapeBook,
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
        self.shapes: list[Shape] = []
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
