"""When two engines give the same answer (spec §2, §4, §12).

Complex events are equal when their canonical forms are (spec §2); RETURN
rows when their keys, windows and items are, with floats equal up to
relative 1e-9 (spec §4: summation order may differ).  Numbers compare by
value (``2`` and ``2.0`` are the same number, as in Python), so an engine
written in a language whose JSON writer prints ``2.0`` as ``2`` is not
blamed for it; ``true`` is never the number 1.  The order of results is not
compared: :func:`normalise` sorts them as spec §12 does.

Answers may come as :class:`~acel.lang.clauses.Match` / :class:`~acel.lang.clauses.TrendRow`
objects (the project's engines), as §12 objects (dictionaries) or as §12
JSON Lines (text or bytes): :func:`normalise` turns each into the first form.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from acel.lang.ast import Query
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import DataError
from acel.lang.events import ComplexEvent, Event, OptValue

Answer = Union[list[Match], list[TrendRow]]
"""An engine's results in the project's objects, in the order of spec §12."""

REL_TOL = 1e-9
"""Relative tolerance on floats (spec §4)."""
ABS_TOL = 1e-12
"""Absolute tolerance on floats near zero (a sum that cancels out)."""


def normalise(results: Iterable[Any], query: Query) -> Answer:
    """``results`` (objects, §12 dictionaries or lines) as sorted Match/TrendRow objects.

    Raises :class:`~acel.lang.errors.DataError` for something that is not a result of spec §12
    (say, a complex event for a RETURN query).
    """
    from acel.io.results import from_json_lines, rows_from_json_lines, sort_results

    items = list(results)
    if not items:
        return []
    if all(isinstance(item, (Match, TrendRow)) for item in items):
        kind = Match if query.returns is None else TrendRow
        if not all(isinstance(item, kind) for item in items):
            raise DataError(
                f"expected {'complex events' if kind is Match else 'RETURN rows'} for this query"
            )
        return sort_results(items)
    lines = [_line(item, number) for number, item in enumerate(items, start=1)]
    if query.returns is None:
        return from_json_lines(lines, query.partition_by)
    return rows_from_json_lines(lines, query.partition_by)


def _line(item: Any, number: int) -> str:
    if isinstance(item, bytes):
        return item.decode("utf-8")
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        return json.dumps(item)
    raise DataError(f"result {number}: expected a §12 object or line, got {type(item).__name__}")


# ------------------------------------------------------------------ equality


def close(a: OptValue, b: OptValue) -> bool:
    """Two values as spec §4 compares results: floats up to relative 1e-9, the rest exactly."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return a == b


def _events_close(a: Sequence[Event], b: Sequence[Event]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.time != y.time or [k for k, _ in x.attrs] != [k for k, _ in y.attrs]:
            return False
        if not all(close(u, v) for (_, u), (_, v) in zip(x.attrs, y.attrs)):
            return False
    return True


def matches_close(a: Match, b: Match) -> bool:
    """The same complex event, created values equal up to float tolerance."""
    ea, eb = a.event, b.event
    if a.key != b.key or (ea.start, ea.end) != (eb.start, eb.end):
        return False
    if ea.variables() != eb.variables():
        return False
    return all(_events_close(x, y) for (_, x), (_, y) in zip(ea.vars, eb.vars))


def rows_close(a: TrendRow, b: TrendRow) -> bool:
    """The same RETURN row: key, window and every item (floats up to relative 1e-9)."""
    if a.key != b.key or a.window != b.window:
        return False
    va, vb = dict(a.values), dict(b.values)
    return va.keys() == vb.keys() and all(close(va[name], vb[name]) for name in va)


def unmatched(expected: Answer, got: Answer) -> tuple[list[Any], list[Any]]:
    """``(missing, unexpected)``: results of ``expected`` that ``got`` lacks, and the
    reverse, as multisets (a result given twice counts twice).

    Equal §12 lines pair first; what is left pairs by :func:`close` values.
    """
    from acel.io.lines import LineEncoder

    encoder = LineEncoder()

    def line(item: Any) -> bytes:
        return encoder.match(item) if isinstance(item, Match) else encoder.row(item)

    left: dict[bytes, list[Any]] = {}
    for item in expected:
        left.setdefault(line(item), []).append(item)
    unexpected: list[Any] = []
    for item in got:
        same = left.get(line(item))
        if same:
            same.pop()
        else:
            unexpected.append(item)
    missing = [item for items in left.values() for item in items]
    if not missing or not unexpected:
        return missing, unexpected
    still: list[Any] = []
    for item in missing:
        for index, other in enumerate(unexpected):
            if _close_results(item, other):
                del unexpected[index]
                break
        else:
            still.append(item)
    return still, unexpected


def _close_results(a: object, b: object) -> bool:
    if isinstance(a, TrendRow) and isinstance(b, TrendRow):
        return rows_close(a, b)
    if isinstance(a, Match) and isinstance(b, Match):
        return matches_close(a, b)
    return False


POSITIONS = "*"
"""The one variable of :func:`positions_view`."""


def positions_view(answer: Answer, query: Query) -> Answer:
    """Each complex event as its key, span and set of events, all under one variable
    (:data:`POSITIONS`), without repeats: what an engine that does not report which
    variable holds which event (CORE) can be compared on.  RETURN rows stay as they are."""
    out: dict[bytes, Match] = {}
    from acel.io.lines import LineEncoder

    encoder = LineEncoder()
    for item in answer:
        if not isinstance(item, Match):
            return answer
        events = {e.time: e for _var, bag in item.event.vars for e in bag}
        ce = ComplexEvent.make(item.event.start, item.event.end,
                               {POSITIONS: [events[t] for t in sorted(events)]})
        seen = Match(item.key, ce)
        out.setdefault(encoder.match(seen), seen)
    from acel.io.results import sort_results

    return sort_results(list(out.values()))


def same_results(expected: Iterable[Any], got: Iterable[Any], query: Query) -> bool:
    """Whether two answers to ``query`` are the same (see the module doc)."""
    missing, unexpected = unmatched(normalise(expected, query), normalise(got, query))
    return not missing and not unexpected
