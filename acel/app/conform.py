"""``acel conform``: run several engines on one query and compare their answers.

On the user's data, or on random streams generated over the query's schema,
every chosen engine must give the same JSON Lines (spec §12).  At the first
disagreement the stream is shrunk by delta debugging (Zeller's ddmin: drop
chunks of events while the engines still disagree) to a small example, which
is printed with each engine's answer.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Union

from acel.engines import Engine, resolve
from acel.lang.ast import Attr, Compare, InList, Lit, Query, walk
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.events import Event, Value
from acel.lang.schema import Schema
from acel.testing.adapters import Tally
from acel.testing.compare import Answer, normalise, unmatched

ORACLE_LIMIT = 12
"""Streams longer than this are not given to the (exponential) oracle by default."""


EngineLike = Union[str, Engine]


def answer(engine: EngineLike, query: Query, stream: Sequence[Event], schema: Schema) -> Answer | str:
    """An engine's answer (sorted results), or one line naming its error.

    :class:`UnsupportedQuery` is not an answer: it propagates (the engine does not
    run this query, so there is nothing to compare).
    """
    try:
        return normalise(resolve(engine).batch(query, stream, schema), query)
    except UnsupportedQuery:
        raise
    except AcelError as error:
        return f"error: {error}"


def _lines(answer_: Answer | str) -> list[str]:
    from acel.io.results import to_json_lines

    return [answer_] if isinstance(answer_, str) else to_json_lines(answer_)


def _agree(a: Answer | str, b: Answer | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    missing, unexpected = unmatched(a, b)
    return not missing and not unexpected


@dataclass(frozen=True)
class Disagreement:
    """A stream on which the engines' answers differ."""

    stream: tuple[Event, ...]
    answers: dict[str, list[str]]

    def report(self) -> str:
        lines = [f"the engines disagree on this stream of {len(self.stream)} event(s):"]
        lines += ["  " + json.dumps(e.as_dict(), sort_keys=True) for e in self.stream]
        for engine, out in self.answers.items():
            lines.append(f"{engine} ({len(out)} line(s)):")
            lines += ["  " + line for line in out] or ["  (nothing)"]
        return "\n".join(lines)


def disagree(engines: Sequence[EngineLike], query: Query, stream: Sequence[Event], schema: Schema) -> dict[str, list[str]] | None:
    """The engines' answers (JSON Lines) when they differ, else ``None``.

    Complex events are compared exactly, RETURN floats up to relative 1e-9
    (spec §4), and the order of an engine's lines does not matter.  When an
    engine cannot show whole complex events (CORE: no variables), every answer
    is compared on its view (:func:`acel.testing.adapters.view_of`).
    """
    from acel.testing.adapters import view_of

    found = [(resolve(engine).name, answer(engine, query, stream, schema)) for engine in engines]
    for engine in engines:
        view = view_of(resolve(engine))
        if view is not None:
            found = [(name, out if isinstance(out, str) else view(out, query)) for name, out in found]
    first = found[0][1]
    if all(_agree(first, other) for _, other in found[1:]):
        return None
    return {name: _lines(out) for name, out in found}


def renumber(events: Iterable[Event]) -> tuple[Event, ...]:
    """A sub-stream as a stream of its own: positions 0, 1, ..."""
    return tuple(e.at(k) for k, e in enumerate(events))


def _still_disagrees(engines: Sequence[EngineLike], query: Query, stream: Sequence[Event], schema: Schema) -> bool:
    try:
        return disagree(engines, query, stream, schema) is not None
    except UnsupportedQuery:  # a sub-stream an engine does not run shows nothing
        return False


def shrink(engines: Sequence[EngineLike], query: Query, stream: Sequence[Event], schema: Schema) -> Disagreement:
    """Delta debugging: a small sub-stream on which the engines still disagree."""
    current = list(stream)
    chunks = 2
    while len(current) >= 2:
        size = max(1, len(current) // chunks)
        reduced = False
        for start in range(0, len(current), size):
            candidate = current[:start] + current[start + size:]
            if candidate and _still_disagrees(engines, query, renumber(candidate), schema):
                current = candidate
                chunks = max(chunks - 1, 2)
                reduced = True
                break
        if not reduced:
            if size == 1:
                break
            chunks = min(len(current), chunks * 2)
    final = renumber(current)
    answers = disagree(engines, query, final, schema)
    assert answers is not None
    return Disagreement(final, answers)


# ------------------------------------------------------------ generated streams


def _literals_by_attribute(query: Query) -> dict[str, set[Value]]:
    """Literals the query compares each attribute with, to aim generated values
    (negated formulas included)."""
    found: dict[str, set[Value]] = {}

    def attributes(expr: object) -> list[str]:
        return [node.name for node in walk(expr) if isinstance(node, Attr)]

    for node in walk(query.formula):
        if isinstance(node, Compare):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(other, Lit):
                    for name in attributes(side):
                        found.setdefault(name, set()).add(other.value)
        elif isinstance(node, InList):
            for name in attributes(node.expr):
                found.setdefault(name, set()).update(node.values)
    return found


def generate_stream(query: Query, schema: Schema, length: int, rng: random.Random, sample: Sequence[Event] = (),
                    null_rate: float = 0.05) -> tuple[Event, ...]:
    """A random stream over the schema, values drawn near the query's literals.

    With ``sample`` (events of the user's data), values are also drawn from it;
    an attribute is NULL with chance ``null_rate`` (never the attribute of an
    ``ON attr`` window, which must place every event).
    """
    on = {w.attr for w in (query.within, query.slide) if w is not None and w.attr}
    pools: dict[str, list[Value]] = {}
    literals = _literals_by_attribute(query)
    for attr in schema.all_attributes():
        pool: list[Value] = []
        for value in literals.get(attr, ()):
            pool.append(value)
            if isinstance(value, int) and not isinstance(value, bool):
                pool += [value - 1, value + 1]
        pool += [e.get(attr) for e in sample[:200] if e.get(attr) is not None]  # type: ignore[misc]
        kind = schema.kind(attr)
        if kind == "str" or any(isinstance(v, str) for v in pool):
            pool += ["a", "b"]
        else:
            pool += [0, 1, 2, 3]
        pools[attr] = pool
    types = list(schema.type_names())
    events = []
    for k in range(length):
        type_name = rng.choice(types)
        attrs: dict[str, Value | None] = {"type": type_name}
        for attr in schema.attributes(type_name)[1:]:
            missing = attr not in on and rng.random() < null_rate
            attrs[attr] = None if missing else rng.choice(pools[attr])
        events.append(Event.make(k, attrs))
    return tuple(events)


def conform(
    query: Query,
    schema: Schema,
    engines: Sequence[EngineLike],
    *,
    stream: Sequence[Event] | None = None,
    generate: int = 0,
    length: int = 8,
    seed: int = 0,
    progress: Callable[[str], None] = lambda _m: None,
    null_rate: float = 0.05,
    tally: Tally | None = None,
) -> tuple[int, Disagreement | None]:
    """Compare the engines on ``stream`` and/or ``generate`` random streams.

    Returns how many streams were compared and the first disagreement, shrunk.
    A stream an engine declares unsupported (exit 3, :class:`UnsupportedQuery`)
    is skipped and counted in ``tally``; when every stream is, that is an error.
    """
    tally = tally if tally is not None else Tally()
    for engine in engines:
        refused = resolve(engine).refuses(query)  # an unknown name is an error naming the choices
        if refused:
            raise UnsupportedQuery(
                f"engine {resolve(engine).name} declares {', '.join(sorted(refused))} unsupported"
            )
    if len(engines) < 2:
        raise AcelError("conform needs at least two engines")
    compared = 0
    refusal: UnsupportedQuery | None = None
    rng = random.Random(seed)
    candidates: list[tuple[str, Callable[[], tuple[Event, ...]]]] = []
    if stream is not None:
        data = tuple(stream)
        candidates.append(("the data", lambda: data))
    for index in range(generate):
        candidates.append((f"generated stream {index + 1}", lambda: generate_stream(
            query, schema, rng.randint(1, length), rng, stream or (), null_rate)))
    for label, make in candidates:
        candidate = make()
        try:
            differs = disagree(engines, query, candidate, schema) is not None
        except UnsupportedQuery as error:
            tally.skipped += 1
            refusal = error
            continue
        compared += 1
        if differs:
            progress(f"disagreement on {label}; shrinking it")
            return compared, shrink(engines, query, candidate, schema)
    if compared == 0 and refusal is not None:
        raise refusal
    return compared, None
