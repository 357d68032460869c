"""Leading and trailing negation in the streaming engine (spec §3.1), by hand.

The properties of ``test_negation_properties.py`` check the engine against the
oracle on generated queries; these cases pin down what a streaming user sees:
when a held result comes out, and the regressions Hypothesis found.
"""

from __future__ import annotations

from acel.acea import engine
from acel.acea.engine import Runner
from acel.reference import oracle

from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["t"], "B": ["t"], "E": ["t"]})


def _stream(types: str, times: list[int] | None = None) -> list[Event]:
    return [
        Event.make(k, {"type": t, "t": k if times is None else times[k]})
        for k, t in enumerate(types)
    ]


def test_regression_trailing_not_with_slide_blocks_only_windows_that_hold_psi() -> None:
    """Found by Hypothesis: a ψ match ending exactly where a window ends must not
    block the complex event in that window (it lies outside it)."""
    query = parse_query("RETURN COUNT(*) PATTERN NEXT(A) ; NOT NEXT(A) WITHIN 2 EVENTS SLIDE 1 EVENTS")
    schema = Schema.of({"A": []})
    stream = [Event.make(k, {"type": "A"}) for k in range(4)]
    rows = engine.run(query, stream, schema)
    assert rows == oracle.run(query, stream, schema)
    assert [(r.window, r.value("COUNT(*)")) for r in rows if isinstance(r, TrendRow)] == [
        ((-1, 1), 1), ((0, 2), 1), ((1, 3), 1), ((2, 4), 1), ((3, 5), 1)  # k = -1 too (spec §6)
    ]


def test_a_trailing_not_holds_each_result_until_its_window_closes() -> None:
    """``A ; NOT E WITHIN 3 EVENTS``: the A at 0 is final once position 2 passed
    without an E; the A at 3 is blocked by the E at 4."""
    query = parse_query("A ; NOT E WITHIN 3 EVENTS")
    runner = Runner(query, SCHEMA)
    out = []
    for k, event in enumerate(_stream("ABBAEB")):
        out.append((k, [(m.event.start, m.event.end) for m in runner.push(dict(event.attrs))]))
    tail = [(m.event.start, m.event.end) for m in runner.finish() if isinstance(m, Match)]
    assert out == [(0, []), (1, []), (2, [(0, 0)]), (3, []), (4, []), (5, [])]
    assert tail == []


def test_results_after_a_held_one_wait_for_it_in_order() -> None:
    """Output stays end-major: a later complex event is held behind an undecided one."""
    query = parse_query("A ; NOT E WITHIN 4 EVENTS")
    runner = Runner(query, SCHEMA)
    got = []
    for event in _stream("AABBBB"):
        got.extend((m.event.start, m.event.end) for m in runner.push(dict(event.attrs)))
    assert got == [(0, 0), (1, 1)]


def test_a_leading_not_on_an_attribute_axis() -> None:
    """``NOT E ; A WITHIN 10 ON t``: an A is blocked when an E lies less than 10 before."""
    query = parse_query("NOT E ; A WITHIN 10 ON t")
    stream = _stream("EAAAB", [0, 5, 12, 20, 21])
    got = [(m.event.start, m.event.end) for m in engine.run(query, stream, SCHEMA)]
    assert got == [(2, 2), (3, 3)]
    assert engine.run(query, stream, SCHEMA) == oracle.run(query, stream, SCHEMA)


def test_a_decreasing_axis_is_decided_exactly_at_the_end() -> None:
    """The ``ON t`` axis goes down: nothing is pruned, every verdict waits for the end."""
    query = parse_query("A ; NOT E WITHIN 5 ON t")
    stream = _stream("AEAEA", [10, 12, 3, 30, 0])
    assert engine.run(query, stream, SCHEMA) == oracle.run(query, stream, SCHEMA)
