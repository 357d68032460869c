"""Results as flat tables and as HTML, for notebooks (issue 25 §3).

Three forms of the complex events of a run (``Results.to_pandas(form=...)``,
``Results.to_arrow(form=...)``):

``nested`` (the default, what ``acel run --out FILE.parquet`` writes)
    one row per match: ``start``, ``end``, ``key`` and ``vars``, a map from
    variable to its events (:class:`acel.io.results.MatchLayout`).
``flat``
    one row per match: ``start``, ``end``, the PARTITION BY attributes, then one
    column ``X.a`` per variable ``X`` and attribute ``a`` its events carry
    (``X.type`` only where X's events have several types; the variables in the
    order of their first events, those named after their type, ``SELL`` of
    ``SELL AS msft``, last).  The
    rule for bags: a variable that every match binds to exactly one event gives
    plain values; any other variable (``X+``, a bag, a variable some match leaves
    empty) gives, in every row, the list of its events' values in time order
    (``[]`` where the match binds none, ``None`` in the list where an event lacks
    the attribute).
``long``
    one row per (match, variable, event): ``match`` (the row of the match in the
    flat form), ``start``, ``end``, the PARTITION BY attributes, ``variable``,
    ``time``, then one column per attribute (``None`` where the event lacks it).

RETURN rows are flat already: every form gives the nested form's columns, except
``long``, which has no events to list and is refused.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import AcelError

if TYPE_CHECKING:
    import pyarrow

FORMS = ("nested", "flat", "long")
"""The table forms of :mod:`acel.tables`."""

HTML_ROWS = 20
"""The most results ``Results._repr_html_`` shows (the count says how many there are)."""

Columns = dict[str, list[Any]]

POSITIONS = frozenset({"start", "end", "match", "time"})
"""The columns that hold positions (int64 even in an empty table)."""


def check_form(form: str) -> str:
    """``form`` if it is one of :data:`FORMS`; a one-line error otherwise."""
    if form not in FORMS:
        raise AcelError(f"form must be one of {', '.join(FORMS)}, not {form!r}")
    return form


def _key_names(matches: Sequence[Match]) -> list[str]:
    return list(dict.fromkeys(name for m in matches for name, _ in m.key))


def _attributes(matches: Sequence[Match], *, flat: bool = False) -> dict[str, list[str]]:
    """Each variable's attributes, in sorted order (``type`` first); the variables in
    the order of their first events, the ones named after their event type last.
    ``flat`` leaves out ``type`` where all of a variable's events have one type."""
    found: dict[str, set[str]] = {}
    types: dict[str, set[object]] = {}
    first: dict[str, int] = {}
    for m in matches:
        for var, bag in m.event.vars:
            names = found.setdefault(var, set())
            for event in bag:
                names.update(name for name, _ in event.attrs)
                types.setdefault(var, set()).add(event.get("type"))
            first.setdefault(var, min(e.time for e in bag) - m.event.start)
    if flat:
        for var, seen in types.items():
            if len(seen) == 1:
                found[var].discard("type")

    def order(var: str) -> tuple[bool, int, str]:
        return (types.get(var) == {var}, first[var], var)

    return {var: sorted(found[var], key=lambda n: (n != "type", n))
            for var in sorted(found, key=order)}


def flat_columns(matches: Sequence[Match]) -> Columns:
    """The ``flat`` form (module doc) as columns of Python values."""
    keys = _key_names(matches)
    attributes = _attributes(matches, flat=True)
    single = {var for var in attributes
              if all(len(m.event.bag(var)) == 1 for m in matches)}
    columns: Columns = {"start": [m.event.start for m in matches],
                        "end": [m.event.end for m in matches]}
    for name in keys:
        columns[name] = [dict(m.key).get(name) for m in matches]
    for var, names in attributes.items():
        for name in names:
            if var in single:
                columns[f"{var}.{name}"] = [m.event.bag(var)[0].get(name) for m in matches]
            else:
                columns[f"{var}.{name}"] = [[e.get(name) for e in m.event.bag(var)]
                                            for m in matches]
    return columns


def long_columns(matches: Sequence[Match]) -> Columns:
    """The ``long`` form (module doc) as columns of Python values."""
    keys = _key_names(matches)
    attributes = _attributes(matches)
    names = sorted({n for attrs in attributes.values() for n in attrs},
                   key=lambda n: (n != "type", n))
    heads = ["match", "start", "end", *keys, "variable", "time"]
    columns: Columns = {name: [] for name in heads + names}
    for row, m in enumerate(matches):
        key = dict(m.key)
        for var in attributes:
            for event in m.event.bag(var):
                columns["match"].append(row)
                columns["start"].append(m.event.start)
                columns["end"].append(m.event.end)
                for name in keys:
                    columns[name].append(key.get(name))
                columns["variable"].append(var)
                columns["time"].append(event.time)
                for name in names:
                    columns[name].append(event.get(name))
    return columns


def row_columns(rows: Sequence[TrendRow]) -> Columns:
    """RETURN rows as columns: the key attributes, ``window_lo, window_hi`` (with
    SLIDE), one column per item."""
    columns: Columns = {}
    for name in _key_names(rows):  # type: ignore[arg-type]
        columns[name] = [dict(r.key).get(name) for r in rows]
    if any(r.window is not None for r in rows):
        columns["window_lo"] = [r.window[0] if r.window else None for r in rows]
        columns["window_hi"] = [r.window[1] if r.window else None for r in rows]
    for name in dict.fromkeys(n for r in rows for n, _ in r.values):
        columns[name] = [dict(r.values).get(name) for r in rows]
    return columns


def columns_of(results: Sequence[Any], form: str, returns: bool) -> Columns:
    """The results in ``form`` (``flat`` or ``long``) as columns."""
    if returns:
        if form == "long":
            raise AcelError("form='long' lists the events of complex events; RETURN rows "
                            "have none (use form='flat')")
        return row_columns(results)
    return flat_columns(results) if form == "flat" else long_columns(results)


def _array(values: list[Any]) -> Any:
    """A pyarrow array of ``values``; text (JSON for lists) when their kinds are mixed."""
    import json

    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else v if isinstance(v, str) else json.dumps(v)
                         for v in values], pa.string())


def arrow_table(columns: Columns) -> pyarrow.Table:
    """Columns as a pyarrow Table (types inferred; mixed kinds as text)."""
    import pyarrow as pa

    return pa.table({name: pa.array(values, pa.int64()) if name in POSITIONS else _array(values)
                     for name, values in columns.items()})


def _cell(value: Any, width: int = 40) -> str:
    if isinstance(value, list):
        text = "[" + ", ".join("NULL" if v is None else str(v) for v in value) + "]"
    else:
        text = "NULL" if value is None else str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def html_table(results: Iterable[Any], returns: bool, title: str,
               limit: int | None = None) -> str:
    """An HTML table of the first ``limit`` (:data:`HTML_ROWS`) results in the flat form,
    with the count of all."""
    limit = HTML_ROWS if limit is None else limit
    shown: list[Any] = []
    total = 0
    for item in results:
        if total < limit:
            shown.append(item)
        total += 1
    what = "rows" if returns else "complex events"
    caption = f"{total:,} {what}" + (f" (the first {limit} shown)" if total > limit else "")
    parts = [f"<div class='acel-results'><p><b>{html.escape(title)}</b>: "
             f"{html.escape(caption)}</p>"]
    if shown:
        columns = row_columns(shown) if returns else flat_columns(shown)
        parts.append("<table><thead><tr>")
        parts.extend(f"<th>{html.escape(name)}</th>" for name in columns)
        parts.append("</tr></thead><tbody>")
        for i in range(len(shown)):
            parts.append("<tr>" + "".join(f"<td>{html.escape(_cell(values[i]))}</td>"
                                          for values in columns.values()) + "</tr>")
        parts.append("</tbody></table>")
        if total > limit:
            parts.append(f"<p>... and {total - limit:,} more</p>")
    parts.append("</div>")
    return "".join(parts)
