"""Shrinking a failing case: fewer events, a smaller query, smaller values.

:func:`shrink_case` keeps any change that still fails (the caller's ``fails``) and
makes the case strictly smaller by :func:`size` — events first (delta debugging,
Zeller's ddmin), then the query (a subformula for a formula, one side of a filter
or predicate, a clause dropped, a literal or window moved towards 0), then the
events' attribute values — until no change fails.  :func:`shape` names a shrunk
query up to renaming, so distinct bugs can be told apart (``--keep-going``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from acel.lang import ast
from acel.lang.errors import AcelError
from acel.lang.events import Event, Value
from acel.testing.conformance import Case

_CATEGORIES = (ast.FORMULA_TYPES, ast.FILTER_TYPES, ast.PRED_TYPES, ast.EXPR_TYPES)
_CLAUSES: dict[str, Any] = {"returns": None, "partition_by": (), "within": None, "slide": None,
            "select": "ALL", "skip": None}


def _category(node: object) -> tuple[type, ...] | None:
    for kinds in _CATEGORIES:
        if isinstance(node, kinds):
            return kinds
    return None


def _smaller_values(value: object) -> list[object]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        out = [0, value // 2 if value > 0 else -((-value) // 2), value - 1 if value > 0 else value + 1]
        return [v for v in dict.fromkeys(out) if abs(v) < abs(value)]
    if isinstance(value, float):
        return [0.0] if value != 0 else []
    if isinstance(value, str):
        return [""] if value else []
    return []


def variants(node: object) -> Iterator[object]:
    """Every node one step smaller than ``node``: a child of the same kind in its place,
    or one of its fields made smaller (recursively)."""
    kinds = _category(node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        if kinds is not None:
            for f in dataclasses.fields(node):
                value = getattr(node, f.name)
                items = value if isinstance(value, tuple) else (value,)
                for item in items:
                    if isinstance(item, kinds):
                        yield item
        if isinstance(node, ast.Lit):
            for smaller in _smaller_values(node.value):
                yield ast.Lit(smaller)  # type: ignore[arg-type]
            return
        if isinstance(node, ast.Window) and isinstance(node.size, int) and node.size > 1:
            for size in dict.fromkeys((1, node.size - 1)):
                yield dataclasses.replace(node, size=size)
            return
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if isinstance(value, tuple):
                for index, item in enumerate(value):
                    for smaller in variants(item):
                        changed = value[:index] + (smaller,) + value[index + 1:]
                        yield _replace(node, f.name, changed)
            else:
                for smaller in variants(value):
                    yield _replace(node, f.name, smaller)


def _replace(node: object, name: str, value: object) -> object:
    try:
        return dataclasses.replace(node, **{name: value})  # type: ignore[type-var]
    except (AcelError, ValueError, TypeError):
        return node


def query_variants(query: ast.Query) -> Iterator[ast.Query]:
    """Smaller queries: a clause dropped, then :func:`variants` of the rest."""
    for name, empty in _CLAUSES.items():
        if getattr(query, name) != empty:
            yield dataclasses.replace(query, **{name: empty})
    for smaller in variants(query):
        if isinstance(smaller, ast.Query) and smaller != query:
            yield smaller


def _magnitude(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return abs(value)
    if isinstance(value, float):
        return 0 if value == 0 else 1
    if isinstance(value, str):
        return len(value)
    return 0


def size(case: Case) -> tuple[int, int, int]:
    """How large a case is: events, query nodes, then the magnitude of its values."""
    nodes = list(ast.walk(case.query))
    clauses = sum(getattr(case.query, n) != e for n, e in _CLAUSES.items())
    magnitude = sum(_magnitude(n.value) for n in nodes if isinstance(n, ast.Lit))
    magnitude += sum(int(n.size) for n in nodes if isinstance(n, ast.Window)
                     and isinstance(n.size, int))
    magnitude += sum(_magnitude(v) for e in case.stream for k, v in e.attrs if k != "type")
    return len(case.stream), len(nodes) + clauses, magnitude


def renumber(events: Sequence[Event]) -> tuple[Event, ...]:
    """A sub-stream as a stream of its own: positions 0, 1, ..."""
    return tuple(e.at(k) for k, e in enumerate(events))


def _event_variants(case: Case) -> Iterator[Case]:
    for index, event in enumerate(case.stream):
        for name, value in event.attrs:
            if name == "type":
                continue
            for smaller in _smaller_values(value):
                attrs: dict[str, Value | None] = dict(event.attrs)
                attrs[name] = smaller  # type: ignore[assignment]
                stream = list(case.stream)
                stream[index] = Event.make(event.time, attrs)
                yield dataclasses.replace(case, stream=tuple(stream))


def _window_and_event(case: Case) -> Iterator[Case]:
    """One event dropped and an ``EVENTS`` window one smaller, together: a window bug
    on ``A x B`` with ``WITHIN 2`` shows on ``A B`` with ``WITHIN 1`` only (either change
    alone makes it pass)."""
    window = case.query.within
    if window is None or window.attr is not None or not isinstance(window.size, int) \
            or window.size <= 1:
        return
    query = dataclasses.replace(case.query, within=dataclasses.replace(window, size=window.size - 1))
    for index in range(len(case.stream)):
        stream = renumber(case.stream[:index] + case.stream[index + 1:])
        yield dataclasses.replace(case, query=query, stream=stream)


def _ddmin(case: Case, fails: Callable[[Case], bool]) -> Case:
    current = list(case.stream)
    chunks = 2
    while len(current) >= 1:
        size_ = max(1, len(current) // chunks)
        reduced = False
        for start in range(0, len(current), size_):
            candidate = current[:start] + current[start + size_:]
            trial = dataclasses.replace(case, stream=renumber(candidate))
            if fails(trial):
                current, reduced = candidate, True
                chunks = max(chunks - 1, 2)
                break
        if not reduced:
            if size_ == 1:
                break
            chunks = min(len(current), chunks * 2)
    return dataclasses.replace(case, stream=renumber(current))


def shrink_case(case: Case, fails: Callable[[Case], bool], *, budget: int = 2000) -> Case:
    """A smaller case on which ``fails`` still holds (at most ``budget`` trials)."""
    from acel.lang.checker import check_query

    trials = [0]

    def still(candidate: Case) -> bool:
        if trials[0] >= budget:
            return False
        trials[0] += 1
        try:
            return fails(candidate)
        except Exception:  # noqa: BLE001 - a candidate that breaks the harness is not kept
            return False

    def well_formed(query: ast.Query) -> bool:
        try:
            check_query(query, case.schema)
        except AcelError:
            return False
        return True

    improved = True
    while improved and trials[0] < budget:
        improved = False
        smaller = _ddmin(case, still)
        if size(smaller) < size(case):
            case, improved = smaller, True
        for query in query_variants(case.query):
            candidate = dataclasses.replace(case, query=query)
            if size(candidate) < size(case) and well_formed(query) and still(candidate):
                case, improved = candidate, True
                break
        if improved:
            continue
        for candidate in _window_and_event(case):
            if still(candidate):
                case, improved = candidate, True
                break
        if improved:
            continue
        for candidate in _event_variants(case):
            if size(candidate) < size(case) and still(candidate):
                case, improved = candidate, True
                break
    return case


_TOKEN = re.compile(r"'(?:[^']|'')*'|(?<![A-Za-z0-9_])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_][A-Za-z0-9_]*")


def shape(case: Case) -> str:
    """The query's canonical text up to renaming: event types ``T1, T2, …`` and
    variables ``V1, …`` by first appearance, literals as ``?``.  Two failures of the
    same shape are taken as one bug."""
    types = set(case.schema.type_names())
    variables = {n.var for n in ast.walk(case.query) if isinstance(n, ast.As)}
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in types or token in variables:
            prefix = "T" if token in types else "V"
            count = sum(v[0] == prefix for v in names.values())
            return names.setdefault(token, f"{prefix}{count + 1}")
        if token[0] in "'-0123456789":
            return "?"
        return token

    return _TOKEN.sub(rename, " ".join(case.text.split()))
