"""A stream key's checkpoint with its buffer as columns (issue 31: one codec value per
column, not three per buffered event), checked on restore as the row lists are
(issue 36 D8).  No Spark: ``KeyStream`` alone."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from acel.acea.engine import Runner, codec
from acel.acea.engine.codec import StateMismatch
from acel.spark_backend.executor import UnitSpec
from acel.spark_backend.key_stream import _packed, decode_parts
from acel.spark_backend.streaming import SHIFT, KeyStream, StreamSpec, decode_checkpoint

from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v"]}, {"v": "int"})
QUERY = parse_query("A AS a ; B AS b")


def _spec() -> StreamSpec:
    unit = UnitSpec(QUERY, SCHEMA, "matches", (), (), (), None, pa.schema([]))  # type: ignore[arg-type]
    return StreamSpec(unit, contiguous=False, axis=False, out_names=())


def _blob(buffer: Any, last: int = -1) -> bytes:
    runner = Runner(QUERY, SCHEMA, positions_given=True).save()
    return codec.dumps({"runner": runner, "buffer": buffer, "last": last})


def test_a_saved_buffer_reads_back_as_its_rows_and_events() -> None:
    """The rows come back exactly (negative and large event times too), each event
    parsed once; the step after a restore finds the same match as without one."""
    rows = [(0, SHIFT - 5, '{"type":"A","v":1}'), (1, 2**62, '{"type":"B","v":"a\\nb"}')]
    keyed = KeyStream(_spec())
    assert keyed.step(list(rows), 0) == []  # the watermark has passed neither
    blob = keyed.save()
    saved = codec.loads(blob)["buffer"]  # three columns, not a list of rows
    assert sorted(saved) == ["et", "events", "pos"] and type(saved["pos"]) is bytes
    runner, buffer, last, events = decode_parts(blob)
    assert buffer == rows and last == -1
    assert events == [{"type": "A", "v": 1}, {"type": "B", "v": "a\nb"}]
    restored = KeyStream(_spec(), blob)
    assert restored.parsed == {0: events[0], 1: events[1]}
    found = restored.step([], 2**62)
    assert [(m.event.start, m.event.end) for m in found] == [(0, 1)]
    assert restored.parsed == {} and restored.buffer == []
    assert decode_checkpoint(KeyStream(_spec()).save())[1] == []  # an empty buffer too


@pytest.mark.parametrize(("buffer", "says"), [
    ({"pos": b"", "et": b""}, "buffer's columns are not"),
    ({"pos": "", "et": b"", "events": ""}, "buffer's columns are not"),
    ({"pos": b"1234567", "et": b"1234567", "events": ""}, "buffer's columns are not"),
    ({"pos": _packed([1]), "et": _packed([1, 2]), "events": "{}"}, "buffer's columns are not"),
    ({"pos": _packed([1, 2]), "et": _packed([1, 2]), "events": '{"type":"A"}'},
     "holds 2 positions and 1 events"),
    ({"pos": _packed([0]), "et": _packed([0]), "events": '{"type":"A"}'}, "position after the last"),
    ({"pos": _packed([5]), "et": _packed([0]), "events": '{"v": [[1]]}'}, "deeper than 2 levels"),
    ({"pos": _packed([5]), "et": _packed([0]), "events": "[1]"}, "buffered row 0 is not an event"),
    ({"pos": _packed([5, 6]), "et": _packed([0, 0]), "events": '{"v":1}\n{"v":{}}'},
     "buffered row 1 is not an event"),
])
def test_a_forged_buffer_is_refused_in_one_line(buffer: Any, says: str) -> None:
    with pytest.raises(StateMismatch, match=says) as caught:
        KeyStream(_spec(), _blob(buffer, last=0))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("texts", [
    ['{"type":"A","v":1}', '{"type":"B","v":"{"}'],  # a bracket inside a string: one by one
    ['{"type":"A","v":1},{"type":"B","v":2', '"w":3}'],  # two objects across two texts
    ['{"type":"A","v":{"x":1}}'],  # nested
    ['{"type":"A","v":1} ', '{"type":"B","v":-0.0,"w":null,"u":true}'],
    ['{"type":"A","v":1}', '{"type":"A","v":"x"}'],
])
def test_the_buffer_parsed_as_one_array_equals_text_by_text(texts: list[str]) -> None:
    """Issue 31: buffered texts are parsed in one ``json.loads`` only when that is certainly
    each parsed alone and flat (``_flat_array``); otherwise one by one, which refuses what
    is not an event, in one line."""
    from acel.spark_backend.key_stream import _event_text, _event_texts

    try:
        alone: Any = [_event_text(t, n) for n, t in enumerate(texts)]
    except StateMismatch as error:
        alone = str(error)
    try:
        together: Any = _event_texts(texts)
    except StateMismatch as error:
        together = str(error)
    assert repr(together) == repr(alone)
