"""Constants, schemas and streams the strategies share (TEST_SCHEMA, DOMAINS, the aggregate
registry's names, :func:`allowed`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from hypothesis import strategies as st

from acel.lang import aggregates
from acel.lang.events import Event, Value
from acel.lang.operators import OPERATORS, operator_names
from acel.lang.schema import Schema

TEST_SCHEMA = Schema.of({"A": ["x", "y", "k"], "B": ["x", "y", "k"], "C": ["x", "k"]})
"""A(x, y, k), B(x, y, k), C(x, k); x, y in 0..3 and k in 0..1."""

SPEC_STOCK_ROWS = [
    ("SELL", "MSFT", 101),
    ("SELL", "MSFT", 102),
    ("SELL", "INTL", 80),
    ("BUY", "INTL", 80),
    ("SELL", "AMZN", 1900),
    ("SELL", "INTL", 81),
    ("SELL", "AMZN", 1920),
]
"""The stock stream of spec §10 (Examples 3.2 and 5.1) as (type, name, price), by position."""
SPEC_STOCK_SCHEMA = Schema.of({"SELL": ["name", "price"], "BUY": ["name", "price"]})
SPEC_STOCK_EVENTS = [
    Event.make(i, {"type": t, "name": n, "price": p}) for i, (t, n, p) in enumerate(SPEC_STOCK_ROWS)
]
"""The stock stream of spec §10 as numbered events."""

DOMAINS: dict[str, list[Value]] = {"x": [0, 1, 2, 3], "y": [0, 1, 2, 3], "k": [0, 1]}
"""Value domains of the test attributes; any other attribute takes 0..3."""

NULL_RATE = 0.1
"""The default chance that a generated event lacks one of its attributes."""

ALL_OPERATORS: frozenset[str] = frozenset(OPERATORS)
"""Every operator and clause name (see :data:`acel.lang.operators.OPERATORS`)."""

AS_VARS = ("p", "q", "r")
AGG_VARS = ("z", "w")
OUT_NAMES = ("n", "s", "m", "v")


def aggregate_names(*, attribute: bool | None = None) -> tuple[str, ...]:
    """The aggregate registry's names (:func:`acel.lang.aggregates.names`), read when a
    strategy draws, so an aggregate registered later is generated too; ``attribute``
    True keeps those written ``F(X.a)`` only, False those also written ``F(X)``
    (``COUNT``), ``None`` all."""
    return tuple(
        name for name in aggregates.names()
        if attribute is None or _aggregate(name).needs_attribute == attribute
    )


def _aggregate(name: str) -> aggregates.Aggregate:
    found = aggregates.lookup(name)
    assert found is not None, name
    return found


@st.composite
def aggregate_funcs(draw: Any, attribute: bool | None = None) -> str:
    """One registered aggregate's name (see :func:`aggregate_names`)."""
    return draw(st.sampled_from(aggregate_names(attribute=attribute)))


@st.composite
def _aggregate_call(draw: Any, attrs: Sequence[str]) -> tuple[str, str | None]:
    """``F`` and its attribute over a variable with ``attrs`` (``None``: ``COUNT(X)``-like)."""
    func = draw(aggregate_funcs(attribute=None if attrs else False))
    if not _aggregate(func).needs_attribute and (not attrs or draw(st.booleans())):
        return func, None
    return func, draw(st.sampled_from(list(attrs)))

Env = dict[str, frozenset[str]]
"""Variables that may be non-empty after a formula, with the attributes they may carry."""


def allowed(operators: Iterable[str] | None = None, without: Iterable[str] = ()) -> frozenset[str]:
    """The operator names a strategy may use: ``operators`` (default all) minus ``without``."""
    base = ALL_OPERATORS if operators is None else operator_names(operators)
    return base - operator_names(without)


# ----------------------------------------------------------------- schemas


@st.composite
def schemas(draw: Any, max_types: int = 3) -> Schema:
    """A schema of 1..``max_types`` types named ``A``, ``B``, … over the attributes of
    :data:`DOMAINS`; every type has ``k`` (the partition attribute of :func:`queries`)."""
    names = ["A", "B", "C", "D", "E"][: max(1, min(max_types, 5))]
    count = draw(st.integers(1, len(names)))
    types: dict[str, list[str]] = {}
    for name in names[:count]:
        extra = draw(st.lists(st.sampled_from(["x", "y"]), max_size=2, unique=True))
        types[name] = sorted(extra) + ["k"]
    return Schema.of(types)


# ----------------------------------------------------------------- streams


@st.composite
def events_of(
    draw: Any, schema: Schema, time: int, null_rate: float = NULL_RATE,
    present: frozenset[str] = frozenset(),
) -> Event:
    """One typed event at ``time``; each attribute but those of ``present`` is missing
    with chance ``null_rate`` (shrinking makes it present)."""
    type_name = draw(st.sampled_from(schema.type_names()))
    attrs: dict[str, Value | None] = {"type": type_name}
    cut = 1000 - round(1000 * min(max(null_rate, 0.0), 1.0))
    for attr in schema.attributes(type_name):
        if attr == "type":
            continue
        domain = DOMAINS.get(attr, [0, 1, 2, 3])
        missing = attr not in present and cut < 1000 and draw(st.integers(0, 999)) >= cut
        attrs[attr] = None if missing else draw(st.sampled_from(domain))
    return Event.make(time, attrs)


@st.composite
def streams(
    draw: Any, schema: Schema = TEST_SCHEMA, max_len: int = 7, null_rate: float = NULL_RATE,
    present: Iterable[str] = (),
) -> list[Event]:
    """A stream of 0..max_len typed events with times 0..n-1.

    Mostly long ones: drawn after a large formula, Hypothesis often gives the
    smallest length, and empty streams test little.  The second branch keeps
    at least ``max_len - 3`` events; the first covers every length (and is
    where shrinking goes, towards the shortest failing stream).
    """
    n = draw(st.integers(0, max_len) | st.integers(max(0, max_len - 3), max_len))
    keep = frozenset(present)
    return [draw(events_of(schema, t, null_rate, keep)) for t in range(n)]
