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
:class:`acel.lang.clauses.Match` and :class:`acel.lang.clauses.TrendRow` objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

try:
    import orjson
except ImportError:  # a Spark worker with only pyarrow and pandas (_json_fallback)
    import acel.io._json_fallback as orjson  # type: ignore[no-redef]

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
        """``{"attrs":{...},"time":t}``, cached: a complex event's variables share events
        (the event is kept alive while cached, so its id is not reused)."""
        entry = self.events.get(id(event))
        if entry is not None and entry[0] is event:
            return entry[1]
        text = self.event_text(event)
        if len(self.events) >= self.limit:
            self.events.clear()
        self.events[id(event)] = (event, text)
        return text

    def event_text(self, event: Any) -> bytes:
        """``{"attrs":{...},"time":t}`` for one event, not cached."""
        names = self.names
        parts = []
        for name, value in event.attrs:
            key = names.get(name)
            if key is None:
                key = names[name] = string_json(name) + b":"
            parts.append(key + value_json(value))
        return b'{"attrs":{' + b",".join(parts) + b'},"time":' + str(event.time).encode() + b"}"

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


class _Emission:
    """One emission of the engine, its JSON made on first use (most runs die young)."""

    __slots__ = ("emission", "entries", "tied")

    def __init__(self, emission: Any) -> None:
        self.emission = emission
        self.entries: tuple[tuple[str, bytes, bytes, Any], ...] | None = None
        self.tied: tuple[str, ...] | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Emission) and self.emission == other.emission

    def __hash__(self) -> int:
        return hash(self.emission)

    def __getstate__(self) -> Any:
        return self.emission

    def __setstate__(self, state: Any) -> None:
        self.emission, self.entries, self.tied = state, None, None


class LineBuilder:
    """Builds each run's complex event straight into its §12 text (an engine ``build``).

    The engine emits each event once per transition and shares it between all
    the runs through that transition; :meth:`prepare` wraps such an emission
    when the transition fires, and the first complete run through it makes its
    ``(variable, "variable":, event JSON, event)`` entries, which every other
    run then only joins.
    """

    __slots__ = ("encoder",)

    native_make = PreparedEvent
    """What the native walk (``acea/engine/native/enumerate.c``) makes of a run's
    ``(start, end, vars JSON)``: it joins the entries :meth:`_load` prepares exactly as
    :meth:`__call__` does, and calls :meth:`__call__` itself for a run with tied events."""

    def __init__(self, encoder: LineEncoder) -> None:
        self.encoder = encoder

    def prepare(self, emission: Any) -> _Emission:
        """The engine's emission, to be written on first use (see the class doc)."""
        return _Emission(emission)

    def _load(self, prepared: _Emission) -> None:
        """The entries of an emission, and the variables it gives two events at once
        (they need the tie-break sort, spec §2); one emission is one step, so no
        other tie is possible."""
        name, text = self.encoder.name, self.encoder.event_text
        made: dict[int, bytes] = {}  # one emission shares an event between variables
        entries = []
        seen: set[str] = set()
        tied = []
        for var, e in prepared.emission:
            json = made.get(id(e))
            if json is None:
                json = made[id(e)] = text(e)
            entries.append((var, name(var), json, e))
            if var in seen:
                tied.append(var)
            seen.add(var)
        prepared.entries = tuple(entries)
        prepared.tied = tuple(tied) if tied else None

    def __call__(self, start: int, end: int, emitted: Any, last: Any) -> PreparedEvent:
        mu: dict[str, list[Any]] = {}
        ties: list[Any] = []
        get = mu.get
        for n in range(len(emitted), -1, -1):
            prepared = last if n == len(emitted) else emitted[n]
            if not prepared:
                continue
            entries = prepared.entries
            if entries is None:
                self._load(prepared)
                entries = prepared.entries
            if prepared.tied is not None:
                ties.append(prepared.tied)
            for entry in entries:
                bag = get(entry[0])
                if bag is None:
                    mu[entry[0]] = [entry]
                else:
                    bag.append(entry)
        if ties:
            self._sort_ties(mu, ties)
        return PreparedEvent(
            start,
            end,
            b"{"
            + b",".join([mu[v][0][1] + b"[" + b",".join([e[2] for e in mu[v]]) + b"]" for v in sorted(mu)])
            + b"}",
        )

    @staticmethod
    def _sort_ties(mu: dict[str, list[Any]], ties: list[Any]) -> None:
        """Events one step gave one variable twice: the canonical order (time, then
        attributes, spec §2); entries of other steps have other times."""
        for variables in ties:
            for var in variables:
                mu[var].sort(key=lambda entry: entry[3].sort_key())
