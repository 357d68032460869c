"""Issue 35: quantifiers, optional elements, histories and selections that cannot blow up.

Every query of the issue's hostile-input probe either answers or stops in one
clear line (exit 2, no traceback) within 20 s of CPU and 1 GiB peak RSS, run through
``acel run`` in a child process that reports both itself (``getrusage``). CPU, not wall
time, so a loaded machine does not fail the test; the child is killed past six times
that in wall time (a blow-up). ``ACEL_TEST_TIME_FACTOR`` stretches both limits.
The expansion's cost is known before expanding (:mod:`acel.lang.expansion`);
runs that keep too many partial matches stop (:mod:`acel.acea.engine.cost`);
a step listing too many complex events stops (:mod:`acel.app.runaway`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import acel
from acel.lang import ast
from acel.lang.errors import AcelCheckError
from acel.lang.expansion import MAX_EXPANDED_NODES, expansion_cost
from acel.lang.macros import expand_quantifiers
from acel.lang.schema import Schema

SCHEMA = Schema.of({t: ["v", "ts"] for t in "ABC"}, {})
SECONDS = 20 * float(os.environ.get("ACEL_TEST_TIME_FACTOR", "1"))
MIB = 1024
PEAK = "peak-rss-kib "
ACEL = [sys.executable, "-c",
        "import atexit, resource, sys\n"
        "atexit.register(lambda: sys.stderr.write("
        f"'\\n{PEAK}%d %f\\n' % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
        "sum(resource.getrusage(resource.RUSAGE_SELF)[:2]))))\n"
        "from acel.app.cli import main\n"
        "sys.exit(main())\n"]
"""``acel`` in a child that writes its own peak RSS last on its way out."""

OPTIONAL_30 = "A ; " + " ; ".join(["B?"] * 30) + " ; C"
VARIABLES_20 = "A ; " + " ; ".join(f"(B AS b{i})?" for i in range(20)) + " ; C"
STARS_25 = "A ; " + " ; ".join(["B*"] * 25) + " ; C"

BOUNDS = {
    "A{10^20}": "A{100000000000000000000}",
    "4,301 digits": "A{" + "9" * 4301 + "}",
}
"""Bounds past the documented maximum (10^6): refused where they stand."""
EXPANSIONS = {
    "30 B?": OPTIONAL_30,
    "20 optional variables": VARIABLES_20,
    "25 stars": STARS_25,
}
"""Optional elements: a located error before any data is read (their expansion)."""
COUNTED = {
    "A{1000000}": "A{1000000}",
    "A{1000000,}": "A{1000000,}",
    "A{20000}": "A{20000}",
    "A{10^5} ; B": "A{100000} ; B",
}
"""Large bounds the compiler counts (issue 35's counters): answered at once."""

RUNS: dict[str, Any] = {
    "RUNNING over 3,000 events":
        ("RETURN COUNT(*) PATTERN (A AS x)+ FILTER x[v > RUNNING AVG(v)]", "a4b"),
    "RUNNING per match": ("(A AS x)+ FILTER x[v > RUNNING AVG(v)]", "a4b"),
    "RUNNING with a huge window":
        ("RETURN COUNT(*) PATTERN (A AS x)+ FILTER x[v > RUNNING SUM(v)] "
         "WITHIN 1000000000 EVENTS", "a4b"),
    "PREV in a big nested iteration":
        ("RETURN COUNT(*) PATTERN ((A AS x)+ ; B)+ FILTER x[v > PREV(v)]", "a4b"),
    "FIRST/LAST over a huge bag":
        ("RETURN COUNT(*) PATTERN (A AS x)+ ; (B AS y) "
         "FILTER y[v >= FIRST(x.v) AND v <= LAST(x.v)]", "a4b"),
    "SELECT MAX": ("SELECT MAX (A AS x)+ ; B", "a4b"),
    "SELECT NEXT": ("SELECT NEXT (A AS x)+ ; B", "a4b"),
    "SELECT LAST": ("SELECT LAST (A AS x)+ ; B", "a4b"),
    "SELECT STRICT": ("SELECT STRICT (A AS x)+ ; B", "a4b"),
    "SKIP TO LAST": ("(A AS x)+ ; B AFTER MATCH SKIP TO LAST x", "a4b"),
    "2^29 per-match over 30 events": ("(A AS x)+ ; B", "a29b"),
    "A{1,3000}": ("A{1,3000}", "abc"),
    "A{1,100000}": ("A{1,100000}", "abc"),
    "nested {2,5}{3,7}{10,20}": ("A{2,5}{3,7}{10,20}", "a4b"),
    "{1,30} nested three deep": ("((A{1,30}){1,30}){1,30}", "a4b"),
}
"""Queries whose cost is in the run: an answer or one line, within the limits."""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    streams = {"a4b": ["A", "A", "A", "A", "B"] * 600, "a29b": ["A"] * 29 + ["B"], "abc": ["A", "B", "C"] * 10}
    for name, types in streams.items():
        with open(folder / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for i, kind in enumerate(types):
                out.write(json.dumps({"type": kind, "v": (i * 37) % 101, "ts": i}) + "\n")
    return folder


def run_limited(args: list[str], cwd: Path) -> tuple[int, str, float, float]:
    """``acel`` in a child: exit code, stderr, CPU seconds and peak RSS (MiB); killed past
    six times the time limit in wall time (a failure)."""
    child = subprocess.Popen([*ACEL, *args], cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    try:
        _, raw = child.communicate(timeout=6 * SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail(f"acel {args[:2]} ran past {6 * SECONDS:.0f} s of wall time")
    err, _, usage = raw.decode("utf-8", "replace").rpartition(PEAK)
    peak, cpu = usage.split()
    return child.returncode, err, float(cpu), int(peak) / 1024


def assert_one_clear_line(code: int, err: str) -> None:
    """An answer (exit 0), or exit 2 with one ``acel run:`` error line and no traceback."""
    assert "Traceback" not in err and "Error:" not in err.replace("error:", ""), err
    if code == 0:
        return
    assert code == 2, (code, err)
    errors = [line for line in err.splitlines() if line.startswith("acel run:") and "error" in line]
    assert len(errors) == 1, err


# ------------------------------------------------------------ the expansion's cost


@pytest.mark.parametrize("text", ["A{3}", "A{2,5}", "A{1,}", "A{3,}", "A:{2,4}", "A ; B? ; C",
                                  "A ; B? ; B? ; C", "A ; B* ; C", "(A ; B?){2,3}",
                                  "A{2,5}{3,7}", "(A;B?;C) OR (A{2};B?)", "A ; (B ; C? ; A)? ; C",
                                  "A{2,3} AS x FILTER x[v > 1]"])
def test_the_expansion_cost_is_its_size_and_depth(text: str) -> None:
    formula = acel.parse(text).ast.formula
    expanded = expand_quantifiers(formula)
    cost = expansion_cost(formula)
    assert cost.size == sum(1 for _ in ast.formula_nodes(expanded))
    depth, stack = 0, [(expanded, 1)]
    while stack:
        node, d = stack.pop()
        depth = max(depth, d)
        stack.extend((kid, d + 1) for kid in ast.children(node))
    assert cost.depth == depth


@pytest.mark.parametrize("name", sorted(EXPANSIONS))
def test_optional_elements_too_many_are_located_errors(name: str) -> None:
    text = EXPANSIONS[name]
    start = time.monotonic()
    with pytest.raises(AcelCheckError) as caught:
        acel.check(acel.parse(text), SCHEMA)
    assert time.monotonic() - start < 2
    err = caught.value
    assert err.line == 1 and err.column == 5  # the first optional element
    assert "expand to" in err.message and "(at most" in err.message
    with pytest.raises(AcelCheckError):  # every evaluator expands through the same guard
        expand_quantifiers(acel.parse(text).ast.formula)


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bounds_past_the_maximum_are_located_errors(name: str) -> None:
    with pytest.raises(acel.AcelError) as caught:
        acel.check(acel.parse(BOUNDS[name]), SCHEMA)
    assert "line 1" in str(caught.value) and "at most" in str(caught.value)


def test_expansion_guard_follows_what_is_kept_and_the_stream_length() -> None:
    """Counted repetitions are one node more than their φ; the oracle's clamp to its
    stream's length shrinks what it expands."""
    formula = acel.parse("A{20000} ; B").ast.formula
    assert expansion_cost(formula).size > 20_000  # every copy, were it expanded
    kept = expansion_cost(formula, keep=lambda node: True)
    assert kept.size == 4 and kept.depth == 3
    assert expansion_cost(formula, longest=5).size == 6 * 2 + 1  # A{6} ; B


def test_expansions_within_the_limit_still_answer() -> None:
    """Eight ``B?`` (3,071 nodes) and ``A{1,40}`` compile and agree with the oracle."""
    events = [{"type": t, "v": i, "ts": i} for i, t in enumerate("ABBCAB")]
    for text in ("A ; " + " ; ".join(["B?"] * 5) + " ; C", "A{1,4} ; B", "A ; B* ; B? ; A"):
        assert expansion_cost(acel.parse(text).ast.formula).size <= MAX_EXPANDED_NODES
        fast = list(acel.run(text, events, schema=SCHEMA))
        slow = list(acel.run(text, events, schema=SCHEMA, engine="oracle"))
        assert fast == slow and fast


def test_deep_nesting_answers_or_is_a_located_error() -> None:
    assert acel.parse("(" * 5000 + "A" + ")" * 5000).ast.formula == ast.Atom("A")
    with pytest.raises(acel.AcelError) as caught:
        acel.parse(" ; ".join(["A"] * 20000))
    assert "deeper than" in str(caught.value) and "line 1" in str(caught.value)


# ------------------------------------------------------------ the command line


@pytest.mark.parametrize("name", ["30 B?", "4,301 digits", "A{20000}", "A{10^5} ; B"])
def test_cli_quantifiers_answer_or_stop_in_one_line(name: str, data: Path) -> None:
    text = {**EXPANSIONS, **BOUNDS, **COUNTED}[name]
    code, err, seconds, peak = run_limited(["run", text, "--data", "abc.jsonl"], data)
    assert_one_clear_line(code, err)
    assert code == (0 if name in COUNTED else 2)
    assert seconds < SECONDS and peak < MIB


@pytest.mark.parametrize(
    "case", [pytest.param(RUNS[name], id=name) if not hasattr(RUNS[name], "values")
             else pytest.param(*RUNS[name].values, marks=RUNS[name].marks, id=name)
             for name in sorted(RUNS)])
def test_cli_costly_runs_answer_or_stop_in_one_line(case: tuple[str, str], data: Path) -> None:
    text, stream = case
    code, err, seconds, peak = run_limited(["run", text, "--data", f"{stream}.jsonl"], data)
    assert_one_clear_line(code, err)
    assert seconds < SECONDS and peak < MIB, (seconds, peak)
    if code == 2:
        assert any(word in err for word in ("WITHIN", "RETURN", "--limit")), err


def test_the_depth_limit_is_exact() -> None:
    """``A{400}`` is 400 levels deep once expanded (compiled, run by the oracle and the
    engine with the default recursion limit); ``A{401}`` is refused."""
    from acel.lang.expansion import MAX_EXPANDED_DEPTH, too_large

    assert too_large(acel.parse(f"A{{{MAX_EXPANDED_DEPTH}}}").ast.formula) is None
    why = too_large(acel.parse(f"A{{{MAX_EXPANDED_DEPTH + 1}}}").ast.formula)
    assert why is not None and f"{MAX_EXPANDED_DEPTH + 1} levels deep" in why


def test_next_counts_as_its_macro_under_quantifiers() -> None:
    """Each NEXT is its macro over the schema's types (the compiler expands it too):
    thirteen NEXT? in a sequence are 2^13 variants of 17 nodes each, refused at check."""
    from acel.lang.macros import expand_next

    schema = Schema.of({t: ["v"] for t in "ABCDE"}, {})
    for text in ("NEXT(A)", "NEXT(A){2} ; B?"):
        formula = acel.parse(text).ast.formula
        expanded = expand_next(expand_quantifiers(formula), schema.type_names())
        assert expansion_cost(formula, 5).size == sum(1 for _ in ast.formula_nodes(expanded))
    few = "A ; " + " ; ".join(["NEXT(B)?"] * 3) + " ; C"
    acel.check(acel.parse(few), schema)
    many = "A ; " + " ; ".join(["NEXT(B)?"] * 13) + " ; C"
    with pytest.raises(AcelCheckError, match="formula nodes"):
        acel.check(acel.parse(many), schema)
