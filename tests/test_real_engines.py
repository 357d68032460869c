"""The real engines the kit checks (issue 22 §3-6): CORE (pycer) and Flink CEP.

The translators are tested everywhere; the engines themselves install on first use
(a venv with pycer from PyPI; Flink's jars from PyPI and javac) and are skipped only
when a prerequisite cannot exist here (no Python 3.13, no Java).  The tests that install or
run an engine are marked ``external``: CI runs them in their own stage (``make
test-external``), so the default suite never waits on an install (issue 37).  Each runs on a small
generated set, and a deliberately broken copy (it never sees the last event) is caught.
"""

from __future__ import annotations

import shutil

import pytest

from acel.lang.errors import UnsupportedQuery
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.testing import TEST_SCHEMA, Case, NonConformance, assert_conforms, check_case
from acel.testing.compare import positions_view
from acel.testing.core import to_ceql
from acel.testing.flink import to_pattern
from acel.testing.real import REAL_ENGINES, against

CASES = 40
"""Generated cases per engine in CI (each adapter: well under a minute once installed)."""


# ------------------------------------------------------------------ translators


@pytest.mark.parametrize(("acel", "ceql"), [
    ("A AS p ; B", "SELECT ALL * FROM S WHERE ((A AS p) ; B)"),
    ("(A : B+) FILTER A[x > 1 AND type = 'A']",
     "SELECT ALL * FROM S WHERE ((A : (B)+) FILTER A[(x > 1 AND acel_type = 'A')])"),
    ("A ; B FILTER B[x IN (1, 2)] PARTITION BY k",
     "SELECT ALL * FROM S WHERE ((A ; B) FILTER B[(x = 1 OR x = 2)]) PARTITION BY [k]"),
    ("A ; B WITHIN 3 EVENTS",  # CORE's WITHIN n EVENTS keeps j - i <= n (finding F1)
     "SELECT ALL * FROM S WHERE (A ; B) WITHIN 2 EVENTS"),
    ("(A OR B):+", "SELECT ALL * FROM S WHERE ((A OR B)):+"),
])
def test_ceql_translation(acel: str, ceql: str) -> None:
    assert to_ceql(parse_query(acel)) == ceql


@pytest.mark.parametrize("acel", [
    "A AND B", "NEXT(A)", "A ; NOT C ; B", "PROJECT[A](A ; B)", "A ; B FILTER A[x / 2 > 1]",
    "(A AS p)+ FILTER p[INC(x)]", "RETURN COUNT(*) PATTERN A ; B", "A ; B WITHIN 2 ON x",
    "A ; B PARTITION BY k WITHIN 2 EVENTS",  # finding F2
])
def test_core_declares_what_it_lacks(acel: str) -> None:
    with pytest.raises(UnsupportedQuery):
        to_ceql(parse_query(acel))


def test_flink_pattern_description() -> None:
    job, stages = to_pattern(parse_query("(A AS p ; B:+) FILTER p[x > 1] WITHIN 3 EVENTS"))
    assert [s["link"] for s in job["stages"]] == ["begin", "followedByAny"]
    assert job["stages"][1]["consecutive"] and not job["stages"][1]["combinations"]
    assert job["within"] == 3 and job["skip"] == "NO_SKIP"
    assert stages[0].variables == {"A", "p"} and len(stages[0].preds) == 1
    job, _ = to_pattern(parse_query("A : B+"))
    assert job["stages"][1]["link"] == "next" and job["stages"][1]["combinations"]


@pytest.mark.parametrize("acel", [
    "A OR B", "(A ; B)+", "A ; B FILTER A[x > 1] OR B[x > 1]", "A AND B", "A ; NOT C ; B",
])
def test_flink_declares_what_it_lacks(acel: str) -> None:
    with pytest.raises(UnsupportedQuery):
        to_pattern(parse_query(acel))


def test_positions_view_forgets_variables_and_repeats() -> None:
    query = parse_query("(A AS p ; B) OR (A ; B AS q)")
    stream = [Event.make(0, {"type": "A", "x": 0, "y": 0, "k": 0}),
              Event.make(1, {"type": "B", "x": 0, "y": 0, "k": 0})]
    from acel.engines import ENGINES

    answer = ENGINES["oracle"].batch(query, stream, TEST_SCHEMA)
    assert len(answer) == 2
    (only,) = positions_view(answer, query)
    assert [v for v, _ in only.event.vars] == ["*"] and len(only.event.vars[0][1]) == 2


def test_against_takes_a_name_or_a_command() -> None:
    engine, real = against("CORE")
    assert real is not None and engine.name == "core" and "AND" in engine.unsupported
    engine, real = against("python3 x.py {query} {data}")
    assert real is None
    from acel.lang.errors import AcelError

    with pytest.raises(AcelError, match="not a real engine"):
        against("corez")


# ------------------------------------------------------------------ the engines


def _ready(name: str) -> None:
    from acel.testing.cache import PrerequisiteMissing

    if name == "flink" and (shutil.which("java") is None or shutil.which("javac") is None):
        pytest.skip("Flink CEP needs Java 17 (java and javac)")
    try:
        if name == "core":
            from acel.testing.core import core_python

            core_python()
        else:
            from acel.testing.flink import flink_classpath

            flink_classpath()
    except PrerequisiteMissing as missing:
        pytest.skip(str(missing))


@pytest.mark.external
@pytest.mark.parametrize("name", ["core", "flink"])
def test_real_engine_conforms_on_a_small_generated_set(name: str) -> None:
    _ready(name)
    real = REAL_ENGINES[name]
    agreed = assert_conforms(real.engine(), null_rate=real.null_rate, max_examples=CASES, seed=7)
    assert agreed >= CASES // 2


@pytest.mark.external
@pytest.mark.parametrize("name", ["core", "flink"])
def test_a_broken_copy_is_caught(name: str) -> None:
    _ready(name)
    broken = REAL_ENGINES[name].engine(drop_last=True)
    with pytest.raises(NonConformance) as found:
        assert_conforms(broken, null_rate=0.0, max_examples=CASES, seed=1)
    assert found.value.missing and not found.value.unexpected
    assert len(found.value.case.stream) <= 2  # shrunk


@pytest.mark.external
@pytest.mark.parametrize("name", ["core", "flink"])
def test_a_stream_with_null_is_declared_not_compared(name: str) -> None:
    _ready(name)
    stream = (Event.make(0, {"type": "A", "x": None, "y": 0, "k": 0}),)
    case = Case(parse_query("A"), stream, TEST_SCHEMA)
    assert check_case(REAL_ENGINES[name].engine(), case) is False


def _events(*rows: tuple[str, int]) -> tuple[Event, ...]:
    return tuple(Event.make(i, {"type": t, "x": 0, "k": k} if t == "C" else
                            {"type": t, "x": 0, "y": 0, "k": k}) for i, (t, k) in enumerate(rows))


@pytest.mark.external
def test_core_findings_stay_explained() -> None:
    """F1 and F2 of papers/conformance.md, on their minimal streams."""
    _ready("core")
    core = REAL_ENGINES["core"].engine()
    # F1: CORE's WITHIN n EVENTS keeps j - i <= n; translated as n - 1, the answers agree.
    f1 = Case(parse_query("B ; C WITHIN 1 EVENTS"), _events(("B", 0), ("C", 0)), TEST_SCHEMA)
    assert check_case(core, f1) is True and core.batch(f1.query, list(f1.stream), TEST_SCHEMA) == []
    # F2: CORE's EVENTS windows count the whole stream, not the partition: declared.
    f2 = Case(parse_query("C ; C PARTITION BY k WITHIN 2 EVENTS"),
              _events(("C", 1), ("C", 0), ("C", 1)), TEST_SCHEMA)
    assert check_case(core, f2) is False


# ------------------------------------------------------------------ MATCH_RECOGNIZE


def test_match_recognize_translation() -> None:
    from acel.testing.mr import to_sql

    sql, stages = to_sql(parse_query("(A AS p : B) FILTER p[x > 1] PARTITION BY k"))
    assert "PATTERN (v0 v1)" in sql and "AFTER MATCH SKIP TO NEXT ROW" in sql
    assert "v0 AS v0.type = 'A' AND (v0.x > (1))" in sql and "PARTITION BY acel_key" in sql
    sql, _ = to_sql(parse_query("A FILTER A[type != 'B']"))  # finding F3: no <>
    assert "(NOT (v0.type = 'B'))" in sql and "<>" not in sql
    assert stages[0].variables == {"A", "p"}
    for text in ("A ; B", "A : B+", "A : B WITHIN 2 EVENTS", "A OR B"):
        with pytest.raises(UnsupportedQuery):
            to_sql(parse_query(text))


@pytest.mark.external
def test_match_recognize_broken_copy_is_caught() -> None:
    """One explicit case (each run of pandas-match-recognize takes a second or two)."""
    from acel.testing.mr import mr_python

    mr_python()
    case = Case(parse_query("(A AS p : B) FILTER p[x = 0] PARTITION BY k"),
                _events(("A", 0), ("A", 1), ("B", 0), ("B", 1)), TEST_SCHEMA)
    good = REAL_ENGINES["pandas-mr"].engine()
    assert check_case(good, case) is True
    with pytest.raises(NonConformance) as found:
        check_case(REAL_ENGINES["pandas-mr"].engine(drop_last=True), case)
    assert found.value.missing and not found.value.unexpected
