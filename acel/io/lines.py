"""The canonical JSON text of spec §12, built fast and once per line.

Every line is compact (``,`` and ``:`` without spaces), its object keys
sorted, UTF-8 without ``\\u`` escapes except for U+0085, U+2028 and U+2029
(line breaks to ``str.splitlines``, escaped so that every reader sees one
object per line).  NaN and ±infinity are written as ``null`` (JSON has no
such numbers); integers are exact at any size; floats are written as
Python's ``repr`` (as the standard library's ``json`` does).

A complex event's line is assembled from the JSON of its events, and an
event emitted by the engine is shared by many complex events (every run
through it), so :class:`LineEncoder` keeps each event's JSON until the
window has moved on.  Nothing here depends on an engine: results are
:class:`acel.clauses.Match` and :class:`acel.clauses.TrendRow` objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import orjson

from acel.io.values import int_text

CACHED = 16_384
"""How many events (and emissions) keep their JSON text cached.  Each entry keeps
its event alive, so the caches are most of a long run's memory: 200,000 entries
made a partitioned run with ``WITHIN 20 EVENTS`` grow by about 100 MiB per 10^5
events until full (issue 17); runs only reuse an event's text inside its window,
so a small cache is as fast."""

_BREAKS = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def string_json(text: str) -> bytes:
    """A JSON string (escapes as spec §12 wants)."""
    out = orjson.dumps(text)
    if b"\xc2\x85" in out or b"\xe2\x80" in out:
        for raw, escaped in _BREAKS:
            out = out.replace(raw, escaped)
    return out


def value_json(value: Any) -> bytes:
    """One JSON value: str, int (any size), float, bool, NULL, or nested lists/dicts."""
    t = type(value)
    if t is str:
        return string_json(value)
    if t is int:
        return int_text(value).encode()
    if t is bool:
        return b"true" if value else b"false"
    if value is None:
        return b"null"
    if t is float:
        return repr(value).encode() if math.isfinite(value) else b"null"
    if isinstance(value, Mapping):
        return object_json(value)
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(value_json(v) for v in value) + b"]"
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        return int_text(int(value)).encode()
    if isinstance(value, float):
        return value_json(float(value))
    return string_json(str(value))


def object_json(obj: Mapping[str, Any]) -> bytes:
    """A JSON object with its keys sorted."""
    return (
        b"{"
        + b",".join(string_json(k) + b":" + value_json(obj[k]) for k in sorted(obj))
        + b"}"
    )


def clean(value: Any) -> Any:
    """A value as written: NaN and ±infinity become NULL (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class LineEncoder:
    """Lines of complex events and RETURN rows, with each event's JSON cached."""

    __slots__ = ("events", "names", "limit", "workload")

    def __init__(self, limit: int = CACHED, workload: bool = False) -> None:
        self.events: dict[int, tuple[Any, bytes]] = {}
        self.names: dict[str, bytes] = {}
        self.limit = limit
        self.workload = workload

    def event(self, event: Any) -> bytes:
        """``{"attrs":{...},"time":t}`` (the event is kept alive while cached)."""
        entry = self.events.get(id(event))
        if entry is not None and entry[0] is event:
            return entry[1]
        names = self.names
        parts = []
        for name, value in event.attrs:
            key = names.get(name)
            if key is None:
                key = names[name] = string_json(name) + b":"
            parts.append(key + value_json(value))
        text = b'{"attrs":{' + b",".join(parts) + b'},"time":' + str(event.time).encode() + b"}"
        if len(self.events) >= self.limit:
            self.events.clear()
        self.events[id(event)] = (event, text)
        return text

    def name(self, name: str) -> bytes:
        """``"name":`` (a variable or attribute name as an object key)."""
        key = self.names.get(name)
        if key is None:
            key = self.names[name] = string_json(name) + b":"
        return key

    def match(self, match: Any, query: str | None = None) -> bytes:
        """One complex event's line (spec §12), without the newline."""
        ce = match.event
        if type(ce) is PreparedEvent:
            body = ce.vars_json
        else:
            event = self.event
            name = self.name
            body = (
                b"{"
                + b",".join([name(n) + b"[" + b",".join([event(e) for e in bag]) + b"]" for n, bag in ce.vars])
                + b"}"
            )
        head = b'{"end":' + str(ce.end).encode()
        if match.key:
            head += b',"key":' + object_json(dict(match.key))
        if query is not None:
            head += b',"query":' + string_json(query)
        return head + b',"start":' + str(ce.start).encode() + b',"vars":' + body + b"}"

    def row(self, row: Any, query: str | None = None) -> bytes:
        """One RETURN row's line: its items, ``"key"`` and ``"window"`` when it has them."""
        obj: dict[str, Any] = {name: value for name, value in row.values}
        if row.key:
            obj["key"] = dict(row.key)
        if row.window is not None:
            obj["window"] = [row.window[0], row.window[1]]
        if query is not None:
            obj["query"] = query
        return object_json(obj)


class PreparedEvent:
    """A complex event already written as the ``"vars"`` object of its §12 line.

    Equal complex events have equal text (the form is canonical, spec §2), so
    equality and hashing compare ``(start, end, vars_json)``.
    """

    __slots__ = ("start", "end", "vars_json")

    def __init__(self, start: int, end: int, vars_json: bytes) -> None:
        self.start = start
        self.end = end
        self.vars_json = vars_json

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PreparedEvent)
            and self.start == other.start
            and self.end == other.end
            and self.vars_json == other.vars_json
        )

    def __hash__(self) -> int:
        return hash((self.start, self.end, self.vars_json))

    def __getstate__(self) -> tuple[int, int, bytes]:
        return (self.start, self.end, self.vars_json)

    def __setstate__(self, state: tuple[int, int, bytes]) -> None:
        self.start, self.end, self.vars_json = state


class LineBuilder:
    """Builds each run's complex event straight into its §12 text (an engine ``build``).

    The engine emits each event once per transition and shares it between all
    the runs through that transition, so the JSON of every emission is made
    once and kept while its runs are alive.
    """

    __slots__ = ("encoder", "emissions", "limit")

    def __init__(self, encoder: LineEncoder, limit: int = CACHED) -> None:
        self.encoder = encoder
        self.emissions: dict[int, tuple[Any, tuple[tuple[str, Any, bytes], ...]]] = {}
        self.limit = limit

    def _parts(self, emission: Any) -> tuple[tuple[str, Any, bytes], ...]:
        entry = self.emissions.get(id(emission))
        if entry is not None and entry[0] is emission:
            return entry[1]
        event = self.encoder.event
        parts = tuple((var, e, event(e)) for var, e in emission)
        if len(self.emissions) >= self.limit:
            self.emissions.clear()
        self.emissions[id(emission)] = (emission, parts)
        return parts

    def __call__(self, start: int, end: int, emitted: Any, last: Any) -> PreparedEvent:
        mu: dict[str, list[tuple[Any, bytes]]] = {}
        tied: list[str] | None = None
        parts = self._parts
        if last:
            for var, e, text in parts(last):
                bag = mu.get(var)
                if bag is None:
                    mu[var] = [(e, text)]
                else:
                    bag.append((e, text))
                    if tied is None:
                        tied = [var]
                    elif var not in tied:
                        tied.append(var)
        for n in range(len(emitted) - 1, -1, -1):
            emission = emitted[n]
            if not emission:
                continue
            for var, e, text in parts(emission):
                bag = mu.get(var)
                if bag is None:
                    mu[var] = [(e, text)]
                else:
                    if bag[-1][0].time == e.time:
                        if tied is None:
                            tied = [var]
                        elif var not in tied:
                            tied.append(var)
                    bag.append((e, text))
        if tied is not None:
            for var in tied:
                mu[var].sort(key=lambda pair: pair[0].sort_key())
        name = self.encoder.name
        body = b",".join([name(var) + b"[" + b",".join([t for _, t in mu[var]]) + b"]" for var in sorted(mu)])
        return PreparedEvent(start, end, b"{" + body + b"}")
