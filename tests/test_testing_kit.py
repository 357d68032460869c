"""acel.testing, the conformance kit: knobs, comparison, adapters, assert_conforms.

The project's own engines go through the kit exactly as an outside engine
would (:func:`test_project_engines_conform`); a planted bug is found and
shrunk to a minimal case.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import acel
from acel.engines import ENGINES
from acel.lang.ast import Query
from acel.lang.checker import check_query
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import ComplexEvent, Event
from acel.lang.operators import OPERATORS, operator_names, operators_of
from acel.lang.schema import Schema
from acel.testing import (
    TEST_SCHEMA,
    Case,
    NonConformance,
    assert_conforms,
    cases,
    check_case,
    engine_from_command,
    engine_from_function,
    queries,
    same_results,
    schemas,
    streams,
    trend_queries,
)

ROOT = Path(__file__).resolve().parents[1]
TOY = f"{sys.executable} {ROOT / 'examples' / 'conformance' / 'seq_engine.py'} {{query}} {{data}}"


# ------------------------------------------------------------------ knobs


@settings(max_examples=60)
@given(st.data())
def test_operators_knob_limits_what_is_generated(data: st.DataObject) -> None:
    allowed = data.draw(
        st.sets(st.sampled_from(sorted(OPERATORS)), max_size=6).map(frozenset)
    )
    case = data.draw(cases(operators=allowed))
    assert operators_of(case.query) <= allowed
    check_query(case.query, TEST_SCHEMA)


@settings(max_examples=40)
@given(queries(without={"AND", "OR", "NEXT", "NOT", "PARTITION_BY"}))
def test_without_knob_removes_operators(query: Query) -> None:
    assert not operators_of(query) & {"AND", "OR", "NEXT", "NOT", "PARTITION_BY"}


@settings(max_examples=40)
@given(trend_queries(operators={"SEQ", "PLUS", "AS", "RETURN", "WITHIN"}))
def test_trend_queries_follow_the_knob(query: Query) -> None:
    assert query.returns is not None and query.slide is None and not query.partition_by
    assert operators_of(query) <= {"SEQ", "PLUS", "AS", "RETURN", "WITHIN"}


@settings(max_examples=30)
@given(streams(null_rate=0.0), streams(null_rate=1.0))
def test_null_rate(full: list[Event], empty: list[Event]) -> None:
    for event in full:
        assert len(event.attrs) == len(TEST_SCHEMA.attributes(event.type or ""))
    assert all(event.attrs == (("type", event.type),) for event in empty)


@settings(max_examples=30)
@given(streams(max_len=3))
def test_stream_length(stream: list[Event]) -> None:
    assert len(stream) <= 3 and [e.time for e in stream] == list(range(len(stream)))


@settings(max_examples=40)
@given(schemas().flatmap(lambda s: st.tuples(st.just(s), queries(s, max_depth=3))))
def test_generated_schemas_take_generated_queries(pair: tuple[Schema, Query]) -> None:
    schema, query = pair
    check_query(query, schema)


def test_operator_names_are_checked() -> None:
    assert operator_names([";", "plus", "and"]) == {"SEQ", "PLUS", "AND"}
    with pytest.raises(acel.AcelError, match="unknown operator 'ANDD'"):
        operator_names(["ANDD"])


def test_operators_of_a_query() -> None:
    query = acel.parse(
        "RETURN COUNT(*) PATTERN (A AS x ; NOT C ; B)+ FILTER x[INC(v)] "
        "PARTITION BY k WITHIN 5 ON t SLIDE 5 ON t"
    ).ast
    assert operators_of(query) == {
        "AS", "NOT", "PLUS", "FILTER", "BAG", "PARTITION_BY", "WITHIN", "WITHIN_ON",
        "SLIDE", "RETURN",
    }


# ------------------------------------------------------------------ comparison


def _match(start: int, end: int, value: object) -> Match:
    return Match((), ComplexEvent.make(start, end, {"z": [Event.make(end, {"m": value})]}))


def _row(value: object, count: int = 1) -> TrendRow:
    return TrendRow((), None, (("COUNT(*)", count), ("AVG(x.v)", value)))


def test_comparison_rules() -> None:
    matches = acel.parse("A").ast
    rows = acel.parse("RETURN COUNT(*), AVG(x.v) PATTERN A AS x").ast
    assert same_results([_match(0, 1, 2)], [_match(0, 1, 2.0)], matches)  # numbers by value
    assert not same_results([_match(0, 1, 1)], [_match(0, 1, True)], matches)
    assert same_results([_match(0, 1, 0.1 + 0.2)], [_match(0, 1, 0.3)], matches)
    assert not same_results([_match(0, 1, 0.3)], [_match(0, 1, 0.31)], matches)
    assert not same_results([_match(0, 1, 2)], [_match(0, 1, 2)] * 2, matches)  # a duplicate
    two = [_match(0, 1, 2), _match(1, 2, 3)]
    assert same_results(two, list(reversed(two)), matches)  # order does not matter
    assert same_results([_row(1 / 3)], [_row(0.3333333333333333)], rows)
    assert not same_results([_row(None)], [_row(0.0)], rows)
    assert not same_results([_row(1.0, 2)], [_row(1.0, 3)], rows)
    line = '{"COUNT(*)": 1, "AVG(x.v)": 0.5}'
    assert same_results([_row(0.5)], [line], rows)  # §12 lines are normalised


# ------------------------------------------------------------------ engines through the kit


@pytest.mark.parametrize("engine", ["automaton", "optimized"])
def test_project_engines_conform(engine: str) -> None:
    """The project's engines pass through the public kit as any engine would."""
    assert assert_conforms(engine, max_depth=4, seed=1) > 0


def test_sase_conforms_on_its_fragment() -> None:
    fragment = {"SEQ", "PLUS", "AS", "FILTER", "PROJECT", "PARTITION_BY", "WITHIN", "RETURN"}
    assert assert_conforms("sase", operators=fragment, max_examples=60, seed=1) > 0


def test_a_planted_bug_is_shrunk_to_a_minimal_case() -> None:
    def loses_the_last(query: Query, stream: list[Event], schema: Schema) -> list[object]:
        good = ENGINES["oracle"].batch(query, stream, schema)
        return good[:-1] if query.returns is None and len(good) >= 2 else good

    with pytest.raises(NonConformance) as caught:
        assert_conforms(loses_the_last, max_examples=200, seed=2)
    failure = caught.value
    # two complex events are needed, so at least two events; shrinking keeps it small
    assert 2 <= len(failure.case.stream) <= 3
    assert len(failure.missing) == 1 and not failure.unexpected
    # Where shrinking stops depends on what the process ran before (Hypothesis's own
    # state): alone this gives `A`, after another kit run `NOT A ; C WITHIN 1 ON x`.
    # So bound it: at most two constructs, WITHIN ... ON counting once.
    constructs = operators_of(failure.case.query)
    if "WITHIN_ON" in constructs:
        constructs -= {"WITHIN"}
    assert len(constructs) <= 2, failure.case.text
    text = str(failure)
    assert "loses_the_last does not conform to oracle" in text
    indented = failure.case.text.replace("\n", "\n          ")
    assert f"query:  {indented}" in text and "missing from loses_the_last" in text


def test_a_crash_is_a_finding() -> None:
    def crashes(query: Query, stream: list[Event], schema: Schema) -> list[object]:
        if len(stream) > 1:
            raise RuntimeError("boom")
        return ENGINES["oracle"].batch(query, stream, schema)

    with pytest.raises(NonConformance, match="crashes failed: RuntimeError: boom") as caught:
        assert_conforms(crashes, max_examples=50, seed=0)
    assert len(caught.value.case.stream) == 2


def test_a_text_engine_round_trips_the_interchange_formats() -> None:
    """A function that sees only query text, event dictionaries and a schema dictionary,
    and answers in §12 lines (here: the oracle through the public API)."""

    def by_text(query: str, events: list[dict[str, object]], schema: dict[str, list[str]]) -> list[str]:
        return acel.run(query, events, "oracle", schema=schema).to_json_lines()

    engine = engine_from_function(by_text, unsupported=["NEXT"])
    assert engine.unsupported == {"NEXT"}
    assert assert_conforms(engine, reference="automaton", max_examples=40, seed=4) > 0


def test_external_engine_and_unsupported_cases() -> None:
    toy = engine_from_command(TOY, name="toy")
    assert assert_conforms(toy, operators={"SEQ"}, max_examples=15, seed=0) > 0
    case = Case(acel.parse("A AS x").ast, (Event.make(0, {"type": "A"}),), TEST_SCHEMA)
    assert check_case(toy, case) is False  # exit status 3: skipped, not a failure


# ------------------------------------------------------------------ issue 33: case files, outcomes,
# shrinking of queries and values, reports, persistent adapters, corners


from acel.lang.parser import parse_query  # noqa: E402
from acel.testing.casefile import (  # noqa: E402
    CaseFileError,
    CaseRecord,
    Expectation,
    format_record,
    parse_records,
    read_records,
)
from acel.testing.outcomes import INT64, judge, outside_range  # noqa: E402

CORPUS = ROOT / "tests" / "conformance"
WINDOW = f"{sys.executable} {ROOT / 'examples' / 'conformance' / 'window_engine.py'}"


def _record(**changes: object) -> CaseRecord:
    import dataclasses

    base = CaseRecord(
        name="r1", query="A ; B\nWITHIN 2 EVENTS", schema=TEST_SCHEMA,
        stream=(Event.make(0, {"type": "A", "x": 1}), Event.make(1, {"type": "B", "x": 2})),
        expected=('{"end":1,"start":0,"vars":{"A":[{"attrs":{"type":"A","x":1},"time":0}],'
                  '"B":[{"attrs":{"type":"B","x":2},"time":1}]}}',),
        engine="core", expects=(Expectation("disagree", ("core",)),), verdict="a verdict",
        notes=("one", "two"), got=(("core", ()),),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_case_record_reads_back_equal() -> None:
    record = _record()
    text = format_record(record)
    assert text.splitlines()[0] == "case r1" and text.endswith("end\n")
    (back,) = parse_records(text.splitlines(), "x.case")
    assert back.source == "x.case:1"
    assert back == _record(source="x.case:1")
    assert back.expectation("core") == ("disagree", True)
    assert back.expectation("flink") == ("agree", False)


@pytest.mark.parametrize(("text", "message"), [
    ("query:\nA\n", "x.case:1: expected 'case NAME'"),
    ("case a\nquery:\nA\nstream:\nexpected:\nend\n", "no schema line"),
    ('case a\nschema {"A": []}\nquery:\nA\nstream:\nexpected:\n', "no 'end' line"),
    ('case a\nexpect maybe\nschema {"A": []}\n', "expect needs one of"),
    ('case a\nschema {"A": []}\nquery:\nA\nstream:\n{"type": \nexpected:\nend\n', "event 0"),
])
def test_a_bad_case_file_is_one_line_naming_the_place(text: str, message: str) -> None:
    with pytest.raises(CaseFileError, match=message) as caught:
        list(parse_records(text.splitlines(), "x.case"))
    assert "\n" not in str(caught.value) and "x.case:" in str(caught.value)


def test_replay_ignores_the_order_of_expected_lines(tmp_path: Path) -> None:
    from acel.testing.campaign import replay
    from acel.testing.casefile import write_records

    query = parse_query("A ; B")
    stream = tuple(Event.make(k, {"type": t, "x": 0}) for k, t in enumerate("AABB"))
    from acel.io.results import to_json_lines

    lines = to_json_lines(ENGINES["oracle"].batch(query, list(stream), TEST_SCHEMA))
    assert len(lines) == 4
    record = _record(query="A ; B", stream=stream, expected=tuple(reversed(lines)),
                     expects=(), engine=None, got=())
    write_records(tmp_path / "one.case", [record])
    run = replay("optimized", [tmp_path])
    assert [r.ok for r in run.replayed] == [True] and run.counts["agreed"] == 1


def test_the_shipped_corpus_replays_against_the_in_process_engines() -> None:
    """CI's replay of tests/conformance (the real engines: tests/test_replay_real.py)."""
    from acel.testing.campaign import replay

    names = {r.name for path in CORPUS.glob("*.case") for r in read_records(path)}
    assert {"F1", "F2", "F3", "N1", "N2", "N3", "N4", "N5-product", "N5-literal", "N6"} <= names
    for engine in ("optimized", "automaton"):
        run = replay(engine, [CORPUS])
        assert len(run.replayed) == len(names)
        assert all(r.ok for r in run.replayed), [r.message for r in run.replayed if not r.ok]
        assert run.counts["agreed"] == len(names)


def test_a_recorded_finding_that_changes_fails_the_replay(tmp_path: Path) -> None:
    import dataclasses

    from acel.testing.campaign import replay

    (record,) = read_records(CORPUS / "n2_core_seq_contig_plus.case")
    changed = dataclasses.replace(record, expects=(Expectation("disagree", ("optimized",)),))
    (tmp_path / "n2.case").write_text(format_record(changed))
    (done,) = replay("optimized", [tmp_path]).replayed
    assert not done.ok and done.message == "expected disagree, found agree"


def test_judge_keeps_the_five_outcomes_apart() -> None:
    from acel.engines import Engine
    from acel.lang.errors import UnsupportedQuery
    from acel.testing import as_engine

    oracle = as_engine("oracle")
    small = Case(parse_query("A ; B"), (Event.make(0, {"type": "A"}), Event.make(1, {"type": "B"})))

    def refusing(query, stream, schema):  # type: ignore[no-untyped-def]
        raise UnsupportedQuery("no thanks")

    def crashing(query, stream, schema):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    assert judge(as_engine("optimized"), oracle, small).kind == "agreed"
    assert judge(as_engine(lambda q, s, sc: []), oracle, small).kind == "disagreed"
    refused = judge(as_engine(refusing), oracle, small)
    assert (refused.kind, refused.reason) == ("unsupported", "no thanks")
    crashed = judge(as_engine(crashing), oracle, small)
    assert crashed.kind == "adapter_error" and "boom" in crashed.reason
    big = Case(parse_query("A+"), tuple(Event.make(k, {"type": "A"}) for k in range(40)))
    assert judge(as_engine("optimized"), oracle, big).kind == "too_large"
    declared = Engine("d", "lacks SEQ", fn=ENGINES["oracle"].batch, unsupported=frozenset({"SEQ"}))
    assert judge(declared, oracle, small).reason == "d declares SEQ unsupported"


@pytest.mark.parametrize(("query", "value", "why"), [
    ("A FILTER A[x < 9223372036854775808]", 1, "the literal 9223372036854775808"),
    ("A FILTER A[x * 4611686018427387904 > 0]", 2, "an intermediate result 9223372036854775808"),
    ("A FILTER A[x * 4611686018427387904 > 0]", 1, None),
    ("A FILTER A[x > 0]", -(2**63) - 1, "event 0: x = -9223372036854775809"),
    ("A FILTER A[x IN (1, 9223372036854775808)]", 1, "a literal of IN"),
])
def test_the_declared_value_range(query: str, value: int, why: str | None) -> None:
    found = outside_range(parse_query(query), [Event.make(0, {"type": "A", "x": value})], INT64)
    assert (found is None) if why is None else (found is not None and why in found
                                               and found.startswith("value range"))


def test_shrinking_reduces_the_query_and_the_values() -> None:
    """A bug that needs only a B whose x is positive: the shrunk case is the atom B on one
    event with x = 1, from a large query and stream."""
    from acel.testing.shrink import shape, shrink_case

    def broken(query, stream, schema):  # type: ignore[no-untyped-def]
        good = ENGINES["oracle"].batch(query, stream, schema)
        return [m for m in good
                if not any(e.type == "B" and (e.get("x") or 0) > 0
                           for _v, bag in m.event.vars for e in bag)]

    tested, oracle = acel.testing.as_engine(broken), acel.testing.as_engine("oracle")
    query = parse_query("(A AS a ; (B AS b)+) FILTER a[x >= 0] AND b[y < 3] PARTITION BY k "
                        "WITHIN 6 EVENTS")
    stream = tuple(Event.make(k, {"type": "AB"[k % 2], "x": 3, "y": 2, "k": 0}) for k in range(6))
    case = Case(query, stream)
    assert judge(tested, oracle, case).kind == "disagreed"
    small = shrink_case(case, lambda c: judge(tested, oracle, c).kind == "disagreed")
    assert small.text == "B" and shape(small) == "T1"
    assert [e.as_dict() for e in small.stream] == [{"type": "B", "x": 1, "y": 0, "k": 0}]


def test_shapes_name_queries_up_to_renaming() -> None:
    from acel.testing.shrink import shape

    def of(text: str) -> str:
        return shape(Case(parse_query(text), ()))

    assert of("A ; C:+") == of("B ; A:+") == "T1 ; T2:+"
    assert of("A+ ; A+") != of("A+ ; B+")
    assert of("A AS p FILTER p[x = 3]") == of("B AS q FILTER q[x = 0]")


def test_corners_are_drawn_and_reported() -> None:
    from acel.testing.campaign import run_generated

    run = run_generated("optimized", operators={"SEQ", "PLUS", "AS", "FILTER", "WITHIN",
                                                "WITHIN_ON", "SKIP"},
                        max_examples=150, seed=2)
    corners = {name for name in run.coverage if name.startswith("corner:")}
    assert len(corners) >= 2
    assert run.counts["agreed"] == 150 and not run.failures


CORNER_QUERIES = {
    "literal_left": "A AS a ; B FILTER a[x = 1]",
    "int64_edge": "A AS a ; B FILTER a[x > 1]",
    "adjacent_loops": "A ; B",
    "skip_first": "A ; B",
    "window_equals_span": "A ; B WITHIN 6 EVENTS",
    "equal_timestamps": "A ; B WITHIN 2 ON x",
}


@pytest.mark.parametrize("corner", sorted(CORNER_QUERIES))
@settings(max_examples=20, database=None, deadline=None)
@given(data=st.data())
def test_each_corner_bends_a_case_its_way(corner: str, data: st.DataObject) -> None:
    from acel.lang.ast import Compare, Lit, Plus, Seq, walk
    from acel.testing.corners import bend_query, bend_stream

    ops = frozenset({"SEQ", "PLUS", "AS", "FILTER", "WITHIN", "WITHIN_ON", "SKIP"})
    query, got = bend_query(data.draw, parse_query(CORNER_QUERIES[corner]), TEST_SCHEMA, ops,
                            None, corner=corner)
    assert got == corner
    stream = tuple(data.draw(streams(null_rate=0.0).filter(lambda s: len(s) >= 3)))
    query, stream, got = bend_stream(data.draw, query, stream, corner, ops, None, TEST_SCHEMA)
    assert got == corner
    check_query(query, TEST_SCHEMA)
    nodes = list(walk(query))
    if corner == "literal_left":
        assert any(isinstance(n, Compare) and isinstance(n.left, Lit) for n in nodes)
    elif corner == "adjacent_loops":
        assert isinstance(query.formula, Seq) and isinstance(query.formula.left, Plus)
    elif corner == "window_equals_span":
        assert query.within is not None and 1 <= query.within.size < len(stream)
    elif corner == "int64_edge":
        values = [n.value for n in nodes if isinstance(n, Lit)]
        values += [v for e in stream for _a, v in e.attrs]
        assert any(isinstance(v, int) and abs(v) >= 2**62 for v in values)
    elif corner == "skip_first":
        assert query.skip is not None and query.skip.kind == "TO_FIRST" and query.skip.var == "A"
    else:
        xs = [e.get("x") for e in stream]
        assert any(a == b for a, b in zip(xs, xs[1:]))


@settings(max_examples=40)
@given(cases(operators={"SEQ", "FILTER", "AS", "WITHIN"}, corners=True, value_range=(-5, 5)))
def test_corners_stay_inside_a_declared_range_of_literals(case: Case) -> None:
    from acel.lang.ast import Lit, walk

    if "int64_edge" in case.corners:
        lits = [n.value for n in walk(case.query) if isinstance(n, Lit)]
        assert all(-5 <= v <= 5 for v in lits if isinstance(v, int))


def test_the_example_adapter_finds_the_planted_window_bug() -> None:
    """Done-when of issue 33: a persistent adapter written from papers/conformance.md alone
    finds an off-by-one window in its first default run of 300 cases, shrunk to at most 2
    events and a one-operator query."""
    from acel.lang.operators import operators_of
    from acel.testing.campaign import run_generated

    good = engine_from_command(WINDOW)
    assert good.name == "window-engine" and "AS" in good.unsupported
    run = run_generated(good, max_examples=100)
    assert not run.failures and run.counts["agreed"] == 100
    planted = run_generated(engine_from_command(WINDOW + " --off-by-one"), max_examples=300)
    (failure,) = planted.failures
    assert failure.outcome.kind == "disagreed" and len(failure.case.stream) <= 2
    formula_ops = operators_of(failure.case.query) - {"WITHIN"}
    assert formula_ops == {"SEQ"} and failure.case.query.within is not None
    assert failure.case.text.count(";") == 1
    good.fn.close()  # type: ignore[union-attr]


def test_a_persistent_adapter_that_breaks_the_protocol(tmp_path: Path) -> None:
    from acel.lang.errors import AcelError

    silent = tmp_path / "silent.py"
    silent.write_text("print('hello')\n")
    with pytest.raises(AcelError, match="not a persistent adapter's hello"):
        engine_from_command(f"{sys.executable} {silent}")
    rude = tmp_path / "rude.py"
    rude.write_text("import json, sys\nprint(json.dumps({'acel_adapter': 1}), flush=True)\n"
                    "for line in sys.stdin:\n    print('nonsense', flush=True)\n")
    engine = engine_from_command(f"{sys.executable} {rude}")
    case = Case(parse_query("A"), (Event.make(0, {"type": "A"}),))
    outcome = judge(engine, acel.testing.as_engine("oracle"), case)
    assert outcome.kind == "adapter_error" and "not JSON" in outcome.reason
