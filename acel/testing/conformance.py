"""``assert_conforms``: an engine against the oracle on generated queries and streams.

Hypothesis draws a :class:`Case` (a checked query, a stream and its schema)
with the knobs of :mod:`acel.testing.strategies`, runs the reference engine
(the oracle by default) and the engine under test on it, and compares the
answers (:mod:`acel.testing.compare`).  On a difference it shrinks the case
and fails with :class:`NonConformance`, whose message shows the minimal
query, the stream, both answers and what differs.

Cases the reference cannot decide (the exponential oracle refusing a large
one) and cases the engine declares unsupported (it raises
:class:`~acel.lang.errors.UnsupportedQuery`, or exits 3 through the adapter
protocol) are skipped; operators the engine declares unsupported
(:attr:`~acel.engines.Engine.unsupported`) are never generated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from acel.lang.ast import Query
from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing.adapters import EngineLike, Tally, as_engine
from acel.testing.compare import Answer, normalise, unmatched
from acel.testing.strategies import (
    NULL_RATE,
    TEST_SCHEMA,
    allowed,
    queries,
    streams,
    trend_queries,
)


@dataclass(frozen=True)
class Case:
    """One conformance case: a checked query, a stream numbered from 0, its schema."""

    query: Query
    stream: tuple[Event, ...]
    schema: Schema = TEST_SCHEMA
    corners: frozenset[str] = frozenset()
    """The corners it was drawn at (:mod:`acel.testing.corners`), for coverage."""

    @property
    def text(self) -> str:
        """The query's canonical text."""
        from acel.lang.printer import format_query

        return format_query(self.query)

    def events(self) -> list[dict[str, Any]]:
        """The events as dictionaries, in stream order (what an adapter's data file holds)."""
        return [event.as_dict() for event in self.stream]

    def describe(self) -> str:
        """The query, the schema and the stream, one event per line with its position."""
        schema = ", ".join(f"{t}({', '.join(a)})" for t, a in self.schema.types)
        query = self.text.replace("\n", "\n          ")
        lines = [f"  query:  {query}", f"  schema: {schema}",
                 f"  stream ({len(self.stream)} event{'s' if len(self.stream) != 1 else ''}):"]
        lines += [f"    {e.time}  {json.dumps(e.as_dict(), sort_keys=True)}" for e in self.stream]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Case({self.text!r}, {len(self.stream)} events)"


@st.composite
def cases(
    draw: Any,
    schema: Schema = TEST_SCHEMA,
    *,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
    max_depth: int = 3,
    max_len: int = 7,
    null_rate: float = NULL_RATE,
    of: st.SearchStrategy[Query] | None = None,
    corners: bool = False,
    value_range: tuple[int, int] | None = None,
) -> Case:
    """A query (complex events or, when ``RETURN`` is allowed, sometimes RETURN rows)
    and then a stream over ``schema``; the knobs are those of :mod:`~acel.testing.strategies`
    (``of`` replaces the query strategy, say ``trend_queries(of=negation_formulas_with_env())``).
    ``corners`` bends about half the cases to a corner (:mod:`acel.testing.corners`),
    staying inside ``value_range`` when the engine declares one."""
    ops = allowed(operators, without)
    top = "TOP_NOT" in ops
    if of is not None:
        query = draw(of)
    elif "RETURN" in ops and draw(st.booleans()):
        query = draw(trend_queries(schema, max_depth, top, operators=ops, windows_on=True))
    else:
        query = draw(queries(schema, max_depth, top, operators=ops, windows_on=True))
    corner = None
    if corners:
        from acel.testing.corners import bend_query

        query, corner = bend_query(draw, query, schema, ops, value_range)
    # a WITHIN/SLIDE ... ON attr window places every event by attr: never NULL there
    present = {w.attr for w in (query.within, query.slide) if w is not None and w.attr}
    stream = tuple(draw(streams(schema, max_len, null_rate, present)))
    if corner is not None:
        from acel.testing.corners import bend_stream

        query, stream, corner = bend_stream(draw, query, stream, corner, ops, value_range, schema)
    return Case(query, stream, schema, frozenset({corner} if corner else ()))


class NonConformance(AssertionError):
    """An engine gave another answer than the reference on a case (or failed on it).

    ``missing`` and ``unexpected`` list the results only the reference gave
    and only the engine gave; the message shows them with the case.
    """

    def __init__(
        self,
        case: Case,
        reference: str,
        expected: Answer,
        engine: str,
        got: Answer | None = None,
        error: BaseException | None = None,
    ) -> None:
        self.case = case
        self.reference = reference
        self.expected = expected
        self.engine = engine
        self.got = got
        self.error = error
        self.missing: list[Any] = []
        self.unexpected: list[Any] = []
        if got is not None:
            self.missing, self.unexpected = unmatched(expected, got)
        super().__init__(case, reference, expected, engine, got, error)

    def __str__(self) -> str:
        from acel.io.results import to_json_lines

        lines = [f"{self.engine} does not conform to {self.reference} on this case:",
                 self.case.describe()]
        want = to_json_lines(self.expected)
        lines.append(f"  {self.reference} ({len(want)} result{'s' if len(want) != 1 else ''}):")
        lines += [f"    {line}" for line in want] or ["    (none)"]
        if self.error is not None:
            lines.append(f"  {self.engine} failed: {type(self.error).__name__}: {self.error}")
            return "\n".join(lines)
        if self.missing:
            lines.append(f"  missing from {self.engine}:")
            lines += [f"    {line}" for line in to_json_lines(self.missing)]
        if self.unexpected:
            lines.append(f"  {self.engine} also gave:")
            lines += [f"    {line}" for line in to_json_lines(self.unexpected)]
        return "\n".join(lines)


def _answer(engine: Any, case: Case) -> Answer:
    return normalise(engine.batch(case.query, list(case.stream), case.schema), case.query)


def _views(tested: Any, expected: Answer, got: Answer, case: Case) -> tuple[Answer, Answer]:
    """Both answers as the tested engine can show them (:func:`~acel.testing.adapters.view_of`)."""
    from acel.testing.adapters import view_of

    view = view_of(tested)
    if view is None:
        return expected, got
    return view(expected, case.query), view(got, case.query)


def check_case(engine: EngineLike, case: Case, *, reference: EngineLike = "oracle") -> bool:
    """Run both engines on one case: ``True`` when they agree, ``False`` when the
    case is skipped (too large for the reference, or unsupported by the engine);
    raises :class:`NonConformance` otherwise."""
    from acel.reference.oracle import OracleTooLarge

    tested, ref = as_engine(engine), as_engine(reference)
    try:
        expected = _answer(ref, case)
    except (OracleTooLarge, UnsupportedQuery):
        return False
    try:
        got = _answer(tested, case)
    except UnsupportedQuery:
        return False
    except Exception as error:  # noqa: BLE001 - any failure of the engine is a finding
        raise NonConformance(case, ref.name, expected, tested.name, error=error) from error
    expected, got = _views(tested, expected, got, case)
    failure = NonConformance(case, ref.name, expected, tested.name, got)
    if failure.missing or failure.unexpected:
        raise failure
    return True


def assert_conforms(
    engine: EngineLike,
    *,
    reference: EngineLike = "oracle",
    schema: Schema | None = None,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
    max_depth: int = 3,
    max_len: int = 7,
    null_rate: float = NULL_RATE,
    max_examples: int | None = None,
    seed: int | None = None,
    strategy: st.SearchStrategy[Case] | None = None,
    tally: Tally | None = None,
) -> int:
    """Check ``engine`` against ``reference`` on generated cases; return how many agreed.

    ``engine``: a registry name, an :class:`~acel.engines.Engine` (say from
    :func:`~acel.testing.engine_from_command`) or a function
    ``fn(query, events, schema)``.  The operators generated are ``operators``
    (default: all) minus ``without`` minus what either engine declares
    unsupported.  ``max_examples`` defaults to the active Hypothesis profile's;
    ``seed`` makes the run reproducible; ``strategy`` replaces the cases;
    ``tally`` counts the cases skipped (unsupported, too large for the reference).
    On a difference, raises :class:`NonConformance` with the shrunk case.
    """
    tested, ref = as_engine(engine), as_engine(reference)
    ops = allowed(operators, without) - tested.unsupported - ref.unsupported
    drawn = strategy if strategy is not None else cases(
        schema or TEST_SCHEMA, operators=ops, max_depth=max_depth, max_len=max_len,
        null_rate=null_rate,
    )
    agreed = [0]

    def check(case: Case) -> None:
        if check_case(tested, case, reference=ref):
            agreed[0] += 1
        else:
            if tally is not None:
                tally.skipped += 1
            reject()

    options: dict[str, Any] = {
        "deadline": None,
        "database": None,
        "suppress_health_check": [
            HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large,
        ],
    }
    if max_examples is not None:
        options["max_examples"] = max_examples
    run = settings(**options)(given(drawn)(check))
    if seed is not None:
        run = hypothesis_seed(seed)(run)
    run()
    return agreed[0]
