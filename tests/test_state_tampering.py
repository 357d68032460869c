"""Tampered saved states (issue 36 D8): every mutation of a saved runner state is refused
in one line (:class:`StateMismatch`) before anything is loaded, or the restored runner
runs on without a traceback; the located depth check; Spark's checkpoint decode
(:func:`acel.spark_backend.streaming.decode_checkpoint`, no Spark started)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from acel.acea.engine import Runner
from acel.acea.engine.codec import MAGIC, StateMismatch, check_depth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acel.lang.errors import AcelError
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"]})
QUERIES = [
    "A AS a ; B AS b",
    "(A AS a)+ ; B AS b WITHIN 4 EVENTS",
    "RETURN COUNT(*), AVG(a.v), MIN(a.v) PATTERN (A AS a)+ ; B WITHIN 3 EVENTS",
    "RETURN SUM(a.v) PATTERN (A AS a)+ ; B WITHIN 3 EVENTS SLIDE 3 EVENTS",
    "RETURN COUNT(*) PATTERN A AS a ; B AS b ; NOT C PARTITION BY v WITHIN 4 EVENTS",
    "NOT C ; A AS a ; B AS b ; NOT C WITHIN 3 EVENTS",
    "SELECT NEXT A AS a ; B AS b WITHIN 3 EVENTS",
    "RETURN COUNT(*), MAX(a.v) PATTERN A AS a ; B AS b PARTITION BY v",
    "A AS a ; B AS b ; NOT C WITHIN 4 ON v",
    "(A AS a)+ ; B AS b AFTER MATCH SKIP TO NEXT ROW",  # held for start order (§6.3)
    "SELECT NEXT A AS a ; B AS b WITHIN 4 EVENTS SLIDE 2 EVENTS",  # held per window (§6.2)
    "SELECT MAX (A AS a)+ ; B AS b",
    "SELECT MAX PROJECT[] (A)",
    "RETURN COUNT(*) PATTERN A AS a ; B AS b ; NOT C WITHIN 4 EVENTS SLIDE 2 EVENTS",  # k = -1
    "(A AS a)+ ; B AS b FILTER a[v >= RUNNING STDDEV(v)]",  # Fractions in a register  # a DAG rank -1 (MAX: no run took an event; Hypothesis)
]
STREAM = [{"type": t, "v": v} for t, v in zip("ABCABBACAB", [0, 1, 1, 2, 2, 3, 3, 4, 5, 5])]


def _run_on(runner: Runner, events: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for event in events:
        out.extend(runner.push(dict(event)))
    out.extend(runner.finish())
    return out


def _saved(query_text: str, cut: int) -> tuple[Any, bytes, list[Any]]:
    query = parse_query(query_text)
    runner = Runner(query, SCHEMA)
    for event in STREAM[:cut]:
        runner.push(dict(event))
    blob = runner.save()
    return query, blob, _run_on(runner, STREAM[cut:])


def _body(blob: bytes) -> Any:
    return json.loads(blob.partition(b"\n")[2])


def _blob(data: Any) -> bytes:
    return MAGIC + b" 2\n" + json.dumps(data, separators=(",", ":")).encode()


def _nodes(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(data, list):
        for n, item in enumerate(data):
            out.extend(_nodes(item, (*path, n)))
    elif isinstance(data, dict):
        for key, item in data.items():
            out.extend(_nodes(item, (*path, key)))
    return out


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, list):
        return [_replace(v, rest, value) if n == head else v for n, v in enumerate(data)]
    return {k: (_replace(v, rest, value) if k == head else v) for k, v in data.items()}


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


_JUNK = st.one_of(
    st.integers(-(2**70), 2**70), st.sampled_from([-1, 0, 1, 2, 3, 7, 10**6, 2**63 - 1]),
    st.floats(allow_nan=False), st.text(max_size=5), st.booleans(), st.none(),
    st.just([]), st.just({}), st.just({"t": []}), st.just({"l": [1]}), st.just({"d": []}),
    st.just({"@": 0}), st.just({"@": 3}), st.just({"@": 10**6}), st.just({"fs": [1]}),
    st.just({"r": "Event", "v": [0, {"t": []}]}), st.just({"r": "Held", "v": [0, 0, 0, 0, 0, 0]}),
    st.just({"i": "ff"}), st.just({"f": "nan"}), st.just({"t": [{"@": 1}, {"@": 2}]}),
)


@st.composite
def _mutations(draw: st.DrawFn) -> tuple[str, int, Any]:
    query = draw(st.sampled_from(QUERIES))
    cut = draw(st.integers(1, len(STREAM) - 1))
    return query, cut, draw(st.data())


def _mutate(data: Any, draw: Any) -> Any:
    nodes = _nodes(data)
    path = draw.draw(st.sampled_from(nodes[1:]))
    kind = draw.draw(st.sampled_from(["junk", "junk", "drop", "twice", "nest", "refs", "int"]))
    node = _get(data, path)
    if kind == "junk":
        return _replace(data, path, draw.draw(_JUNK))
    if kind == "int" and type(node) is int and not isinstance(node, bool):
        return _replace(data, path, node + draw.draw(st.sampled_from([-1, 1, -100, 100, 10**9])))
    if kind == "nest":
        return _replace(data, path, {"t": [node]})
    if kind == "refs":
        return _replace(data, path, {"l": [{"@": n} for n in range(draw.draw(st.integers(0, 300)))]})
    parent, last = _get(data, path[:-1]), path[-1]
    if isinstance(parent, list):
        items = list(parent)
        if kind == "drop":
            del items[last]
        else:
            items.insert(last, items[last])
        return _replace(data, path[:-1], items)
    return _replace(data, path, draw.draw(_JUNK))


def _restore_and_run(query: Any, blob: bytes, rest: list[dict[str, Any]]) -> list[Any] | None:
    """The results after restoring ``blob``, or None when it is refused (in one line)."""
    try:
        runner = Runner.restore(query, SCHEMA, blob)
    except StateMismatch as error:
        assert "\n" not in str(error) and str(error).startswith(("not a", "the saved", "a runner"))
        return None
    except AcelError as error:  # options a runner refuses (SELECT NEXT when enumerating)
        assert "\n" not in str(error)
        return None
    try:
        return _run_on(runner, rest)
    except AcelError as error:  # a one-line error of the run, never a traceback
        assert "\n" not in str(error)
        return None


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_mutations())
def test_a_tampered_state_is_refused_or_runs_on(case: tuple[str, int, Any]) -> None:
    query_text, cut, draw = case
    query, blob, clean = _saved(query_text, cut)
    mutated = _blob(_mutate(_body(blob), draw))
    if mutated == blob:
        assert _restore_and_run(query, mutated, STREAM[cut:]) == clean
        return
    _restore_and_run(query, mutated, STREAM[cut:])


@pytest.mark.parametrize("query_text", QUERIES)
def test_an_untouched_state_gives_the_clean_results(query_text: str) -> None:
    query, blob, clean = _saved(query_text, 5)
    assert _restore_and_run(query, blob, STREAM[5:]) == clean


# ------------------------------------------------------------------ the reported forgeries


def _forged(query_text: str, change: Any, cut: int = 5) -> tuple[Any, bytes]:
    query, blob, _ = _saved(query_text, cut)
    data = _body(blob)
    return query, _blob(change(data))


def _entry(pairs: list[Any], key: str) -> list[Any]:
    """The ``[key, value]`` pair of an encoded dict."""
    return next(p for p in pairs if p[0] == key)


def _evaluator(data: Any) -> Any:
    partitions = _entry(data["d"], "partitions")[1]["l"]
    return _entry(partitions[0]["d"], "evaluator")[1]["d"]


def _set_events(data: Any) -> Any:
    _entry(data["d"], "events")[1] = "x"
    return data


def _dag_edge_out_of_range(data: Any) -> Any:
    rows = _entry(_evaluator(data), "dag")[1]["l"]
    edges = rows[-1]["t"][0]["l"]
    edges[0]["t"][0]["t"] = [True, 99]  # (is node, row 99)
    return data


def _root_out_of_range(data: Any) -> Any:
    roots = _entry(_evaluator(data), "roots")[1]["d"]
    roots[0][1] = 7
    return data


def _state_out_of_range(data: Any) -> Any:
    roots = _entry(_evaluator(data), "roots")[1]["d"]
    roots[0][0]["t"][0] = 40  # automaton state 40
    return data


def _bad_trend_row(data: Any) -> Any:
    active = _entry(_evaluator(data), "active")[1]["d"]
    active[0][1] = {"d": [[3, {"t": ["x"]}]]}  # class 3: a vector ('x',)
    return data


def _many_refs(data: Any) -> Any:
    _entry(data["d"], "order")[1] = {"l": [{"@": 1}] * 100_000}
    return data


@pytest.mark.parametrize(("query_text", "change", "names"), [
    ("A AS a ; B AS b", _set_events, "events is 'x'"),
    ("A AS a ; B AS b", _dag_edge_out_of_range, "points to row 99"),
    ("A AS a ; B AS b", _root_out_of_range, "roots"),
    ("A AS a ; B AS b", _state_out_of_range, "state is 40"),
    ("RETURN COUNT(*) PATTERN (A AS a)+ ; B WITHIN 3 EVENTS", _bad_trend_row, "not a trend vector"),
    ("A AS a ; B AS b", _many_refs, "order[0] is"),
])
def test_the_reported_forgeries_are_refused_in_one_line(query_text: str, change: Any, names: str) -> None:
    query, blob = _forged(query_text, change)
    with pytest.raises(StateMismatch) as caught:
        Runner.restore(query, SCHEMA, blob)
    assert names in str(caught.value) and "\n" not in str(caught.value)


def test_the_api_refuses_a_forged_state_in_one_line() -> None:
    import acel

    query, blob = _forged("A AS a ; B AS b", _dag_edge_out_of_range)
    with pytest.raises(acel.AcelError, match="not a saved runner state: .*points to row 99"):
        acel.runner("A AS a ; B AS b", {"A": ["v"], "B": ["v"], "C": ["v"]}, state=blob)


@pytest.mark.parametrize("depth", [201, 5_000, 1_000_000])
def test_a_deeply_nested_state_is_refused_before_parsing(depth: int) -> None:
    body = b'{"t":[' * depth + b"]}" * depth
    with pytest.raises(StateMismatch, match=r"nested deeper than 200 levels \(at byte 613\)"):  # 13: the magic line
        Runner.restore(parse_query("A ; B"), SCHEMA, MAGIC + b" 2\n" + body)


def test_the_depth_check_skips_strings_and_escapes() -> None:
    check_depth(json.dumps(["]]]][[[[\\\"[[[", "x"]), "x", 1)
    check_depth('[{"a":[1]}]', "x", 3)
    check_depth("]]][", "x", 1)  # unbalanced: the parser says where
    with pytest.raises(StateMismatch, match=r"deeper than 1 levels \(at byte 1\)"):
        check_depth("[[[", "x", 1)  # unbalanced, and too deep already
    with pytest.raises(StateMismatch, match=r"deeper than 2 levels \(at byte 6\)"):
        check_depth('[{"a":[1]}]', "x", 2)
    with pytest.raises(StateMismatch, match=r"at byte 9"):
        check_depth('["[[[[",[[1]]]', "x", 2)


# ------------------------------------------------------------------ Spark's checkpoints


def _spec() -> Any:
    import pyarrow as pa
    from acel.spark_backend.executor import UnitSpec
    from acel.spark_backend.streaming import StreamSpec

    unit = UnitSpec(parse_query("A ; B"), SCHEMA, "matches", (), (), (), None, pa.schema([]))  # type: ignore[arg-type]
    return StreamSpec(unit, contiguous=True, axis=False, out_names=())


def _checkpoint(runner: Any = None, buffer: Any = (), last: Any = -1) -> bytes:
    from acel.acea.engine import codec

    if runner is None:
        runner = Runner(parse_query("A ; B"), SCHEMA, positions_given=True).save()
    return codec.dumps({"runner": runner, "buffer": list(buffer), "last": last})


def test_a_checkpoint_decodes_to_its_parts() -> None:
    from acel.spark_backend.streaming import KeyStream, decode_checkpoint

    row = (3, 1000, '{"type": "A", "v": 1}')
    runner, buffer, last = decode_checkpoint(_checkpoint(buffer=[row], last=2))
    assert buffer == [row] and last == 2 and runner.startswith(MAGIC)
    keyed = KeyStream(_spec(), _checkpoint(buffer=[row], last=2))
    assert keyed.buffer == [row] and keyed.last == 2


@pytest.mark.parametrize(("blob", "says"), [
    (_checkpoint(runner="x"), "not a saved streaming checkpoint"),
    (_checkpoint(last="2"), "not a saved streaming checkpoint"),
    (_checkpoint(last=-5), "not a saved streaming checkpoint"),
    (_checkpoint(buffer=[5]), "buffered row 0 is not"),
    (_checkpoint(buffer=[(1, 2)]), "buffered row 0 is not"),
    (_checkpoint(buffer=[(0, 0, '{"type":"A"}')], last=3), "position after the last"),
    (_checkpoint(buffer=[(1, 0, "{not json")]), "buffered row 0 is not an event"),
    (_checkpoint(buffer=[(1, 0, '["A"]')]), "buffered row 0 is not an event"),
    (_checkpoint(buffer=[(1, 0, '{"v": [1]}')]), "buffered row 0 is not an event"),
    (_checkpoint(buffer=[(1, 0, '{"v": [[1]]}')]), "deeper than 2 levels"),
    (_checkpoint(buffer=[(1, 0, "[" * 100_000)]), "deeper than 2 levels"),
    (_checkpoint(runner=b"garbage"), "not a saved runner state"),
    (b"ACEL-STATE 2\n{", "not a saved runner state"),
])
def test_a_forged_checkpoint_is_refused_in_one_line(blob: bytes, says: str) -> None:
    from acel.spark_backend.streaming import KeyStream

    with pytest.raises(StateMismatch, match=says) as caught:
        KeyStream(_spec(), blob)
    assert "\n" not in str(caught.value)
