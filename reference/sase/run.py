"""Running SASE+ queries: step one (every match), step two (per-match RETURN rows).

``[attr]`` equivalence tests split the stream like ACEL's PARTITION BY
(spec §6): events lacking an attribute belong to no partition, positions and
``WITHIN n`` count inside the partition, outputs carry the key and global
positions.  A match is a complex event whose variables are the positive
components (a Kleene variable holds all its events), its interval the first
to the last selected event; matches are deduplicated.  Leading and trailing
negations (spec §3.1) are checked on each complete match.

SASE+ RETURN builds one row *per match* (ACEL's AGG, not ACEL's RETURN): a
``TrendRow`` with the partition key, no window, and values
``start``, ``end`` (global positions of the match) then the items as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acel.reference.sase.ast import AggRef, Ref, Reference, SaseQuery
from acel.reference.sase.compile import boundary_checks, compile_sase
from acel.reference.sase.nfa import run_nfa
from acel.reference.sase.parser import parse_sase

from acel.io.results import to_json_lines
from acel.lang import aggregates
from acel.lang.clauses import Match, TrendRow, check_window_attribute, split_partitions
from acel.lang.events import ComplexEvent, Event, OptValue


def sase_matches(query: SaseQuery, stream: Sequence[Event]) -> list[Match]:
    """Step one: every distinct match, sorted as spec §12 sorts complex events."""
    nfa = compile_sase(query)
    checks = boundary_checks(query)
    variables = [c.var for c in query.components if not c.negated]
    out: list[Match] = []
    for partition in split_partitions(stream, query.partition):
        check_window_attribute(query.within, partition.events)
        events = partition.events
        found: set[ComplexEvent] = set()
        for _, buf in run_nfa(nfa, events, partition.positions):
            if not all(check(events, buf) for check in checks):
                continue
            mu = {var: [events[k] for k in seq] for var, seq in zip(variables, buf)}
            found.add(ComplexEvent.make(buf[0][0], buf[-1][-1], mu))
        out.extend(Match(partition.key, ce.relabel(partition.positions)) for ce in found)
    return sorted(out, key=Match.sort_key)


def return_value(ref: Reference, ce: ComplexEvent) -> OptValue:
    """One RETURN item of one match (``a.x``, ``b[1].x``, ``b[b.len].x``, ``SUM(b[].x)``)."""
    bag = sorted(ce.bag(ref.var), key=lambda e: e.time)
    if isinstance(ref, Ref):
        event = bag[-1] if ref.index == "len" else bag[0]
        return event.get(ref.attr)
    assert isinstance(ref, AggRef)
    agg = aggregates.lookup(ref.func)
    assert agg is not None
    attr = ref.attr
    return agg.apply([1 if attr is None else e.get(attr) for e in bag])


def sase_rows(query: SaseQuery, matches: Sequence[Match]) -> list[TrendRow]:
    """Step two: one row per match with ``start``, ``end`` and the RETURN items."""
    assert query.returns is not None
    rows = []
    for match in matches:
        values: list[tuple[str, OptValue]] = [("start", match.event.start), ("end", match.event.end)]
        values.extend((ref.name(), return_value(ref, match.event)) for ref in query.returns)
        rows.append(TrendRow(match.key, None, tuple(values)))
    return rows


def run_sase(query: SaseQuery, stream: Sequence[Event]) -> list[Match] | list[TrendRow]:
    """A SASE+ query on a stream: its matches, or its per-match rows with RETURN."""
    matches = sase_matches(query, stream)
    if query.returns is None:
        return matches
    return sase_rows(query, matches)


def run_sase_text(text: str, stream: Sequence[Event]) -> list[Match] | list[TrendRow]:
    """Parse and run SASE+ query text."""
    return run_sase(parse_sase(text), stream)


def run_sase_file(path: str | Path, stream: Sequence[Event]) -> list[str]:
    """``acel run --engine sase --sase FILE``: results as JSON Lines (spec §12 shapes).

    Per-match rows keep the match order (end, start, ...) rather than the
    key order of trend rows.
    """
    results = run_sase_text(Path(path).read_text(encoding="utf-8"), stream)
    if results and isinstance(results[0], TrendRow):
        rows = [r for r in results if isinstance(r, TrendRow)]
        lines: list[str] = []
        for row in rows:
            lines.extend(to_json_lines([row]))
        return lines
    return to_json_lines(results)
