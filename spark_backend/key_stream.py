"""One PARTITION BY key of a Spark stream: its state, its step, its checkpoint (split
from :mod:`acel.spark_backend.streaming`, issue 34: one job per module).

:class:`KeyStream` is what ``applyInPandasWithState`` calls for a group (:func:`handler`):
the key's incremental :class:`~acel.acea.engine.Runner` and the events the watermark has
not reached yet, saved as data-only bytes between micro-batches.  Pure Python: the
tests drive it without Spark.  papers/spark.md, "One key's state and step".
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from acel.acea.engine import codec

from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import DataError

from .event_time import ENDED_MS, SHIFT, TICK_POS
from .executor import UnitSpec, match_columns, rows_columns

POS = "__acel_pos"
ET_MS = "__acel_et_ms"
ET = "__acel_et"
ATTRS = "__acel_attrs"
KEY = "__acel_key"
STATE = "blob binary"


@dataclass(frozen=True)
class StreamSpec:
    """What each stateful task needs (pickled with the function)."""

    unit: UnitSpec
    contiguous: bool
    """No PARTITION BY: positions are evaluated as soon as all earlier ones were."""
    axis: bool
    """``WITHIN … ON`` the event-time column: the watermark closes windows."""
    out_names: tuple[str, ...]
    pos_col: str = "pos"


# ------------------------------------------------------------------ one key


def coordinate_of(watermark_ms: int) -> int:
    """The ``ON`` coordinate no later event is below, the watermark being ``watermark_ms``.

    Spark drops arrivals at or below the watermark (checked: an event time equal
    to it is dropped too), and the events at or below it have just been
    evaluated, so every later event has ``⌊v⌋ + SHIFT > watermark_ms``.
    """
    return watermark_ms + 1 - SHIFT


def timeout_of(coord: Any) -> int:
    """A timeout (ms) that fires once ``coordinate_of(watermark) ≥ coord``
    (Spark fires it when the watermark passes it)."""
    return math.ceil(coord + SHIFT) - 2


_CHECKPOINT = "not a saved streaming checkpoint of this acel"
_EVENT_DEPTH = 2
"""An event's JSON text is one flat object."""
_COLUMNS = ("pos", "et", "events")
"""The buffer as columns (``KeyStream.save``): positions and event times packed as
little-endian int64 bytes, the events' JSON texts joined by newlines (``to_json``
escapes a newline inside a string, so none is raw)."""


def decode_checkpoint(blob: bytes) -> tuple[bytes, list[tuple[int, int, str]], int]:
    """A :class:`KeyStream` checkpoint's parts, ``(runner state, buffer, last position)``,
    each checked (issue 36 D8): a forged or damaged one is refused in one line, never a
    ``TypeError`` or ``JSONDecodeError`` at the next step.  The runner state is checked
    by :meth:`~acel.acea.engine.Runner.restore`."""
    runner, buffer, last, _ = decode_parts(blob)
    return runner, buffer, last


def decode_parts(blob: bytes) -> tuple[bytes, list[tuple[int, int, str]], int, list[dict[str, Any]]]:
    """:func:`decode_checkpoint` and the buffered events parsed (each text is parsed once,
    to check it, and the dict kept for the step).  The buffer is either the columns
    ``KeyStream.save`` writes or, as checkpoints written before them hold, a list of
    ``(position, event time, event)`` rows."""
    state = codec.loads(blob)
    if not (type(state) is dict and set(state) == {"runner", "buffer", "last"}
            and type(state["runner"]) is bytes and type(state["buffer"]) in (list, dict)
            and type(state["last"]) is int and state["last"] >= -1):
        raise codec.StateMismatch(_CHECKPOINT)
    rows = state["buffer"]
    if type(rows) is dict:
        rows = _buffer_rows(rows)
    buffer = []
    for n, row in enumerate(rows):
        if not (type(row) in (tuple, list) and len(row) == 3 and type(row[0]) is int
                and row[0] > state["last"] and type(row[1]) is int and type(row[2]) is str):
            raise codec.StateMismatch(f"{_CHECKPOINT}: buffered row {n} is not "
                                      "(position after the last, event time, event)")
        buffer.append((row[0], row[1], row[2]))
    return state["runner"], buffer, state["last"], _event_texts([r[2] for r in buffer])


def _flat_array(texts: list[str]) -> list[dict[str, Any]] | None:
    """The texts parsed in one ``json.loads`` as one JSON array, when that is certainly
    each text parsed alone and each a flat object (issue 31: half the cost of a parse per
    text); ``None``: parse them one by one.

    Each text starts with ``{`` and the texts hold, all told, one bracket (``{`` or ``[``)
    each, so every ``{`` must open one of the array's objects for it to have one per text:
    then object ``k`` opens at text ``k``'s start, closes inside it (only a comma may
    follow), and nests nothing (no bracket is left), so its values are scalars."""
    if not texts or not all(t[:1] == "{" for t in texts):
        return None
    joined = ",".join(texts)
    if joined.count("{") + joined.count("[") != len(texts):
        return None
    try:
        events = json.loads(f"[{joined}]")
    except ValueError:
        return None
    if len(events) != len(texts) or not all(type(e) is dict for e in events):
        return None
    return events  # type: ignore[no-any-return]


def _event_texts(texts: list[str]) -> list[dict[str, Any]]:
    """Buffered events' attributes (:func:`_event_text` each, or :func:`_flat_array` when
    it applies: the same dicts)."""
    events = _flat_array(texts)
    return events if events is not None else [_event_text(t, n) for n, t in enumerate(texts)]


def _packed(values: list[int]) -> bytes:
    """Integers as little-endian int64 bytes."""
    from array import array

    packed = array("q", values)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def _unpacked(blob: bytes) -> list[int]:
    """:func:`_packed`'s integers back."""
    from array import array

    packed = array("q")
    packed.frombytes(blob)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tolist()


def _buffer_rows(columns: dict[Any, Any]) -> list[tuple[int, int, str]]:
    """The buffer's rows from its columns (:data:`_COLUMNS`), their shapes checked."""
    if not (set(columns) == set(_COLUMNS) and type(columns["pos"]) is bytes
            and type(columns["et"]) is bytes and type(columns["events"]) is str
            and len(columns["pos"]) % 8 == 0 and len(columns["pos"]) == len(columns["et"])):
        raise codec.StateMismatch(f"{_CHECKPOINT}: the buffer's columns are not "
                                  "(positions, event times, events) of one length")
    positions, times = _unpacked(columns["pos"]), _unpacked(columns["et"])
    texts = columns["events"].split("\n") if positions else []
    if len(texts) != len(positions):
        raise codec.StateMismatch(f"{_CHECKPOINT}: the buffer holds {len(positions)} positions "
                                  f"and {len(texts)} events")
    return list(zip(positions, times, texts))


def _parse_arrived(events: list[Any]) -> None:
    """Replace, in place, the JSON texts among ``events`` (rows of this micro-batch, from
    Spark's ``to_json``) by their attributes, in one parse where :func:`_flat_array` applies."""
    at = [k for k, e in enumerate(events) if type(e) is str]
    if not at:
        return
    texts = [events[k] for k in at]
    parsed = _flat_array(texts) or [json.loads(t) for t in texts]
    for k, event in zip(at, parsed):
        events[k] = event


def _event_text(text: str, n: int) -> dict[str, Any]:
    """A buffered event's attributes; one that is not one flat JSON object of values is
    refused.  Its brackets are counted first (those inside strings too, so the count is
    at least the depth): more than a flat object may have, its depth is checked before
    parsing; one only, the object's own, and its values cannot be containers."""
    brackets = text.count("{") + text.count("[")
    if brackets > _EVENT_DEPTH:
        codec.check_depth(text, f"saved streaming checkpoint (buffered row {n})", _EVENT_DEPTH)
    try:
        event = json.loads(text)
    except ValueError:
        event = None
    if type(event) is not dict or (brackets > 1 and not all(
            type(v) in (type(None), bool, int, float, str) for v in event.values())):
        raise codec.StateMismatch(f"{_CHECKPOINT}: buffered row {n} is not an event")
    return event


class KeyStream:
    """One group's state: the runner and the events it may not evaluate yet.

    ``step(rows, watermark_ms)`` adds the group's new rows ``(pos, et_ms,
    attrs_json)`` and evaluates, in position order, every buffered event the
    watermark has reached (Spark drops later arrivals at or below it, so none
    can come before them), or, with ``contiguous``, the next position; then
    lets the watermark close windows (``axis``), and finishes at the end.
    Pure Python: the tests drive it without Spark.
    """

    def __init__(self, spec: StreamSpec, blob: bytes | None = None) -> None:
        from acel.acea.engine import Runner

        self.spec = spec
        unit = spec.unit
        self.buffer: list[tuple[int, int, str]] = []
        self.parsed: dict[int, dict[str, Any]] = {}
        """Buffered events already parsed (those read back from the checkpoint), by position."""
        self.last = -1
        self.done = False
        if blob is None:
            self.runner = Runner(unit.query, unit.schema, positions_given=True)
        else:
            runner, self.buffer, self.last, events = decode_parts(blob)
            self.parsed = {pos: event for (pos, _, _), event in zip(self.buffer, events)}
            self.runner = Runner.restore(unit.query, unit.schema, runner)

    def save(self) -> bytes:
        """The group's state as data-only bytes (:mod:`acel.acea.engine.codec`): a
        checkpoint that is read back never runs code.  The buffer goes as three columns
        (:data:`_COLUMNS`): one value each for the codec, not three per event."""
        buffer = self.buffer
        columns = {"pos": _packed([r[0] for r in buffer]), "et": _packed([r[1] for r in buffer]),
                   "events": "\n".join(r[2] for r in buffer)}
        return codec.dumps({"runner": self.runner.save(), "buffer": columns, "last": self.last})

    def step(self, rows: list[tuple[int, int, str]], watermark_ms: int) -> list[Any]:
        from acel.acea.engine import paused_gc

        if self.done:
            return []
        watermark = max(watermark_ms, 0)
        ended = watermark >= ENDED_MS
        buffer = self.buffer
        buffer.extend(rows)
        buffer.sort()
        runner = self.runner
        parsed = self.parsed
        contiguous = self.spec.contiguous
        events: list[dict[str, Any]] = []
        positions: list[int] = []
        last = self.last
        with paused_gc():
            for pos, et_ms, text in buffer:
                if not (ended or et_ms <= watermark or (contiguous and pos == last + 1)):
                    break
                if pos <= last:
                    raise DataError(
                        f"event at position {pos} arrived after position {last} of the same "
                        "PARTITION BY key had been evaluated: positions must follow the event-time "
                        "column, and events may arrive at most the watermark delay late"
                    )
                event = parsed.pop(pos, None)
                events.append(text if event is None else event)  # type: ignore[arg-type]
                positions.append(pos)
                last = pos
            _parse_arrived(events)
            # one call: a native core reads the run in C (Runner.push_batch)
            out: list[Any] = runner.push_batch(events, positions) if events else []
            self.last = last
            del buffer[:len(events)]
            if ended:
                out.extend(runner.finish())
                self.done = True
            elif self.spec.axis and watermark > 0:
                out.extend(runner.advance(coordinate_of(watermark)))
        return out

    def timeout_ms(self, watermark_ms: int) -> int:
        """When this key must be called again without new rows (event time, ms)."""
        candidates = [ENDED_MS]
        if self.buffer:
            candidates.append(min(et for _, et, _ in self.buffer) - 1)
        if self.spec.axis:
            deadline = self.runner.next_deadline()
            if deadline is not None:
                candidates.append(timeout_of(deadline))
        return max(min(candidates), watermark_ms, 1)


def _columns(spec: StreamSpec, results: list[Any]) -> dict[str, list[Any]]:
    unit = spec.unit
    if unit.mode == "matches":
        return match_columns(unit, [r for r in results if isinstance(r, Match)])
    return rows_columns(unit, [r for r in results if isinstance(r, TrendRow)])


def _pandas(spec: StreamSpec, results: list[Any]) -> Any:
    import pandas as pd

    columns = _columns(spec, results)
    return pd.DataFrame({name: pd.Series(columns[name], dtype=object) for name in spec.out_names})


def handler(spec: StreamSpec) -> Any:
    """The ``applyInPandasWithState`` function of a planned stream."""

    def handle(key: Any, frames_in: Iterator[Any], state: Any) -> Iterator[Any]:
        rows: list[tuple[int, int, str]] = []
        ended = False
        for frame in frames_in:
            for pos, et_ms, text in zip(frame[POS].tolist(), frame[ET_MS].tolist(),
                                        frame[ATTRS].tolist()):
                if et_ms >= ENDED_MS:
                    ended = True  # the end row: its event time moves the watermark
                    continue
                if pos == TICK_POS:
                    continue  # a tick: its event time moved the watermark, nothing else
                rows.append((int(pos), int(et_ms), text))
        if not rows and not state.exists and not (ended and spec.contiguous):
            return  # the end row's own group (its PARTITION BY key is NULL)
        blob = state.get[0] if state.exists else None
        keyed = KeyStream(spec, bytes(blob) if blob is not None else None)
        watermark = state.getCurrentWatermarkMs()
        results = keyed.step(rows, watermark)
        if keyed.done:
            state.remove()
        else:
            state.update((keyed.save(),))
            state.setTimeoutTimestamp(keyed.timeout_ms(watermark))
        if results:
            yield _pandas(spec, results)

    return handle
