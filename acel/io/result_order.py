"""The order of results in a file (spec §12): complex events by end, start and the rest
of their line; RETURN rows by key, then window."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acel.io.lines import LineEncoder
from acel.lang.clauses import Match, TrendRow, key_sort_key


def is_match(item: object) -> bool:
    return hasattr(item, "event")


def row_order(row: Any) -> tuple[object, ...]:
    """The order of RETURN rows (spec §12): key, then window."""
    return (key_sort_key(row.key), row.window or ())


def ordered_lines(results: Iterable[Any], encoder: LineEncoder | None = None) -> list[bytes]:
    """Canonical lines (no newline) of complex events or rows, in the order of spec §12."""
    encoder = encoder or LineEncoder()
    items = list(results)
    if all(is_match(item) for item in items):
        keyed = [(m.event.end, m.event.start, encoder.match(m)) for m in items]
        keyed.sort()
        return [line for _, _, line in keyed]
    if all(hasattr(item, "values") and not is_match(item) for item in items):
        rows = [(row_order(r), encoder.row(r)) for r in items]
        rows.sort(key=lambda pair: (pair[0], pair[1]))
        return [line for _, line in rows]
    raise TypeError("results must be all complex events (Match) or all rows (TrendRow)")


def sort_results(results: Iterable[Any]) -> list[Any]:
    """Results in the order of their JSON Lines (spec §12).

    Complex events by (end, start, the rest of the line); rows by key then
    window.  Row-like objects (``key``, ``window``, ``values``, e.g. the SASE+
    per-match rows) are accepted beside :class:`TrendRow`.
    """
    encoder = LineEncoder()
    items = list(results)
    if all(is_match(item) for item in items):
        keyed = [((m.event.end, m.event.start, encoder.match(m)), m) for m in items]
        keyed.sort(key=lambda pair: pair[0])
        return [m for _, m in keyed]
    if all(hasattr(item, "values") and not is_match(item) for item in items):
        return [
            item[1]
            for item in sorted(
                (((row_order(r), encoder.row(r)), r) for r in items), key=lambda pair: pair[0]
            )
        ]
    raise TypeError("results must be all complex events (Match) or all rows (TrendRow)")


def to_json_lines(results: Iterable[Match] | Iterable[TrendRow]) -> list[str]:
    """Canonical JSON Lines (no newline characters), in the order of spec §12."""
    return [line.decode("utf-8") for line in ordered_lines(results)]
