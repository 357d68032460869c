"""Corner-seeking generation: bend a drawn case towards the corners where engines break.

The findings of ``papers/conformance.md`` sat at corners uniform generation rarely
reaches.  :func:`bend_query` and :func:`bend_stream` move a drawn query and stream to
one of them (chosen by weight, about half the cases) and name it, so a run can report
which corners it exercised:

- ``window_equals_span``: the formula's atoms placed left to right in the stream and
  ``WITHIN n EVENTS`` with ``n`` the distance from the first to the last: the span of a
  possible match (F1, an off-by-one window);
- ``literal_left``: ``k = 0`` written ``0 = k`` (N3);
- ``int64_edge``: literals and values at the edges of 64-bit integers, or of the
  engine's declared value range (N5);
- ``adjacent_loops``: ``T+ ; T+`` (N4, N2's ``A ; C:+``);
- ``skip_first``: ``AFTER MATCH SKIP TO FIRST`` the first stage (N1);
- ``equal_timestamps``: events sharing the value of an ``ON attr`` window's attribute.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from acel.lang import ast
from acel.lang.errors import AcelError
from acel.lang.events import Event
from acel.lang.schema import Schema

CORNERS = {"window_equals_span": 3, "literal_left": 2, "int64_edge": 1, "adjacent_loops": 2,
           "skip_first": 1, "equal_timestamps": 1}
"""Each corner and its weight when one is chosen."""
MIRROR = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
INT64_EDGES = (2**63 - 1, -(2**63), 2**63, 2**62, -(2**63) - 1)


def _map(node: Any, fn: Any) -> Any:
    """``node`` rebuilt bottom-up with ``fn`` applied to every dataclass node."""
    if isinstance(node, tuple):
        return tuple(_map(item, fn) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {f.name: _map(getattr(node, f.name), fn) for f in dataclasses.fields(node)}
        node = dataclasses.replace(node, **changes)
        return fn(node)
    return node


def edges(value_range: tuple[int, int] | None) -> tuple[int, ...]:
    """The integer edges to try: the declared range's ends (and halfway past them), or
    64-bit integers' edges and just beyond."""
    if value_range is None:
        return INT64_EDGES
    lo, hi = value_range
    return (hi, lo, hi // 2 + 1)


def _valid(query: ast.Query, schema: Schema) -> bool:
    from acel.lang.checker import check_query

    try:
        check_query(query, schema)
    except AcelError:
        return False
    return True


def _first_atom(formula: ast.Formula) -> ast.Atom | None:
    for node in ast.walk(formula):
        if isinstance(node, ast.Atom):
            return node
    return None


def _retyped(event: Event, type_name: str, schema: Schema) -> Event:
    """``event`` as an event of ``type_name``: its values where it has the attribute, 0
    elsewhere."""
    attrs: dict[str, Any] = {"type": type_name}
    for attr in schema.attributes(type_name)[1:]:
        value = event.get(attr)
        attrs[attr] = 0 if value is None else value
    return Event.make(event.time, attrs)


def _atom_types(formula: ast.Formula) -> list[str]:
    """The event types of a formula's atoms, left to right."""
    if isinstance(formula, ast.Atom):
        return [formula.type]
    out: list[str] = []
    for kid in ast.children(formula):
        out += _atom_types(kid)
    return out


def bend_query(draw: Any, query: ast.Query, schema: Schema, ops: frozenset[str],
               value_range: tuple[int, int] | None,
               corner: str | None = None) -> tuple[ast.Query, str | None]:
    """Maybe move ``query`` to a corner (about half the time, or always to ``corner``
    when given): the query and the corner."""
    from hypothesis import strategies as st

    if corner is None:
        if not draw(st.booleans()):
            return query, None
        names = [n for n, w in CORNERS.items() for _ in range(w)]
        corner = draw(st.sampled_from(names))
    bent = query
    if corner == "literal_left":
        def mirror(node: Any) -> Any:
            if isinstance(node, ast.Compare) and isinstance(node.right, ast.Lit) \
                    and not isinstance(node.left, ast.Lit):
                return ast.Compare(MIRROR[node.op], node.right, node.left)  # type: ignore[arg-type]
            return node
        bent = _map(query, mirror)
    elif corner == "int64_edge":
        edge = draw(st.sampled_from(edges(value_range)))

        def widen(node: Any) -> Any:
            if isinstance(node, ast.Lit) and isinstance(node.value, int) \
                    and not isinstance(node.value, bool):
                return ast.Lit(edge)
            return node
        bent = _map(query, widen)
        if bent == query:
            return query, corner  # no literal: the stream's values take the edges
    elif corner == "adjacent_loops" and "SEQ" in ops and ({"PLUS", "CONTIG_PLUS"} & ops):
        loop = draw(st.sampled_from(sorted({"PLUS", "CONTIG_PLUS"} & ops)))
        kind = ast.Plus if loop == "PLUS" else ast.ContigPlus
        first = _first_atom(query.formula)
        atom = first if first is not None else ast.Atom(schema.type_names()[0])
        other = ast.Atom(draw(st.sampled_from(schema.type_names())))
        second = draw(st.sampled_from([kind(atom), kind(other), other]))
        bent = dataclasses.replace(query, formula=ast.Seq(kind(atom), second), skip=None)
    elif corner == "skip_first" and "SKIP" in ops:
        start = _first_atom(query.formula)
        if start is not None:
            bent = dataclasses.replace(query, skip=ast.Skip("TO_FIRST", start.type))
    elif corner in ("window_equals_span", "equal_timestamps"):
        return query, corner  # the stream decides (bend_stream)
    if bent == query or not _valid(bent, schema):
        return query, None
    return bent, corner


def bend_stream(draw: Any, query: ast.Query, stream: Sequence[Event], corner: str | None,
                ops: frozenset[str], value_range: tuple[int, int] | None,
                schema: Schema) -> tuple[ast.Query, tuple[Event, ...], str | None]:
    """The stream's part of a corner: a window as long as a span of the stream, equal
    values of an ``ON`` window's attribute, 64-bit edges in the events."""
    from hypothesis import strategies as st

    events = tuple(stream)
    if corner == "window_equals_span":
        if "WITHIN" not in ops or (query.within is not None and query.within.attr is not None):
            return query, events, None
        atoms = [t for t in _atom_types(query.formula) if schema.has_type(t)]
        if 2 <= len(atoms) <= 8:
            while len(events) < len(atoms):  # room for a possible match
                events += (_retyped(Event.make(len(events), {}), atoms[0], schema),)
            # a possible match: the formula's atoms, left to right, at sorted positions
            chosen = sorted(draw(st.lists(st.integers(0, len(events) - 1), min_size=len(atoms),
                                          max_size=len(atoms), unique=True)))
            out = list(events)
            for k, wanted in zip(chosen, atoms):
                out[k] = _retyped(events[k], wanted, schema)
            events = tuple(out)
            i, j = chosen[0], chosen[-1]
        elif len(events) >= 2:
            i = draw(st.integers(0, len(events) - 2))
            j = draw(st.integers(i + 1, len(events) - 1))
        else:
            return query, events, None
        bent = dataclasses.replace(query, within=ast.Window(j - i))
        if query.slide is not None or not _valid(bent, schema):
            return query, events, None
        return bent, events, corner
    if corner == "equal_timestamps":
        attr = next((w.attr for w in (query.within, query.slide) if w is not None and w.attr),
                    None)
        if attr is None or len(events) < 2:
            return query, events, None
        i = draw(st.integers(0, len(events) - 2))
        value = events[i].get(attr)
        out = list(events)
        for k in range(i + 1, min(len(events), i + 3)):
            attrs = dict(events[k].attrs)
            if attr in attrs:
                attrs[attr] = value  # type: ignore[assignment]
            out[k] = Event.make(events[k].time, attrs)
        return query, tuple(out), corner
    if corner == "int64_edge" and events:
        k = draw(st.integers(0, len(events) - 1))
        names = [a for a, v in events[k].attrs
                 if a != "type" and isinstance(v, int) and not isinstance(v, bool)]
        if names:
            attrs = dict(events[k].attrs)
            attrs[draw(st.sampled_from(names))] = draw(st.sampled_from(edges(value_range)))
            out = list(events)
            out[k] = Event.make(events[k].time, attrs)
            events = tuple(out)
    return query, events, corner
