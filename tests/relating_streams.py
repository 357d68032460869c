"""Short random streams for the relating-filter tests (compiler, refusals): three types
over small integer values, so ties of values and NULLs (missing attributes) are common."""

from __future__ import annotations

import random

from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_query
from acel.reference import oracle

from acel.lang.checker import check_text
from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v", "w"], "C": ["v"]})


def relating_stream(rng: random.Random, shortest: int, longest: int) -> list[Event]:
    """A stream over SCHEMA of ``shortest..longest`` events: ``v`` (and ``w`` on B) in
    0..3, each missing with probability 0.15."""
    out = []
    for k in range(rng.randint(shortest, longest)):
        kind = rng.choice("ABC")
        attrs: dict[str, object] = {"type": kind}
        if rng.random() < 0.85:
            attrs["v"] = rng.randint(0, 3)
        if kind == "B" and rng.random() < 0.85:
            attrs["w"] = rng.randint(0, 3)
        out.append(Event.make(k, attrs))  # type: ignore[arg-type]
    return out


def agrees_where_it_compiles(text: str, stream: list[Event]) -> bool:
    """Where the automaton compiler takes ``text`` (over SCHEMA), both compiled engines
    give the oracle's results on ``stream``; False (nothing checked) when it refuses."""
    query = check_text(text, SCHEMA)
    try:
        compile_query(query, SCHEMA)
    except UnsupportedQuery:
        return False
    expected = oracle.run(query, stream, SCHEMA)
    assert naive.run(query, stream, SCHEMA) == expected
    assert engine.run(query, stream, SCHEMA) == expected
    return True
