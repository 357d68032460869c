"""Workloads (issue 14, spec §6.1): files, the command line, the shared plan's sharing.

The property tests (tests/test_workload_properties.py) check results against
each query alone and the oracle; these check what those cannot see: how a
workload is read and written, and that the work really is shared.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acel.acea import engine
from acel.acea.engine.closures import compile_automaton
from acel.acea.engine.plan import compiled_for
from acel.acea.engine.shared import SharedPlan, SharedRunner, unshared_reason
from acel.acea.engine.workload import WorkloadRunner, merge_prefixes, relevant_types

from acel.app.cli import main
from acel.lang.errors import QueryError
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.lang.schema import Schema
from acel.workload import (
    WorkloadError,
    is_workload,
    load_workload,
    parse_workload,
    run_workload,
)

DATA = Path(__file__).parent / "data"
STOCKS = DATA / "stocks.jsonl"
QUERY = DATA / "example_3_2.acel"
BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

from workload_gen import Params, schema, stream, workload  # noqa: E402

ABC = Schema.of({"A": ["x"], "B": ["x"], "C": ["x"], "D": ["x"]})


def events(types: str, x: int = 1) -> list[Event]:
    return [Event.make(k, {"type": t, "x": x}) for k, t in enumerate(types)]


# ------------------------------------------------------------------ files


MULTI = """-- two queries in one file
QUERY msft_then_intl:
  (SELL AS m ; SELL AS i) FILTER m[name = 'MSFT'] AND i[name = 'INTL']

QUERY sales: RETURN COUNT(*) PATTERN SELL AS s
"""


def test_a_file_of_named_queries() -> None:
    queries = parse_workload(MULTI, "multi.acel")
    assert [q.name for q in queries] == ["msft_then_intl", "sales"]
    assert queries[1].query.returns is not None
    # each query's text keeps the file's line numbers (the others are blanked)
    assert queries[1].text.splitlines()[4].strip().startswith("RETURN")


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("QUERY a: A\nQUERY a: B\n", "appears twice", None),
        ("A ; B\nQUERY a: A\n", "before the first 'QUERY name:' header has no name", 1),
        ("QUERY a:\n-- nothing\nQUERY b: B\n", "QUERY a: has no query text", 1),
        ("QUERY 9x: A\n", "is not a query name", 1),
        ("QUERY a: A\nQUERY b:\n  A ; ; B\n", "query b: found ';'", 3),
    ],
)
def test_workload_file_errors(text: str, message: str, line: int | None) -> None:
    with pytest.raises(QueryError) as info:
        parse_workload(text, "w.acel")
    assert message in str(info.value)
    assert info.value.line == line


def test_files_and_folders(tmp_path: Path) -> None:
    folder = tmp_path / "queries"
    folder.mkdir()
    (folder / "b.acel").write_text("A ; B\n")
    (folder / "a.acel").write_text("RETURN COUNT(*) PATTERN A+\n")
    (folder / "notes.txt").write_text("not a query")
    multi = tmp_path / "more.acel"
    multi.write_text("QUERY c: C\nQUERY d: D\n")
    names = [q.name for q in load_workload([folder, multi])]
    assert names == ["a", "b", "c", "d"]
    assert is_workload([str(folder)]) and is_workload([str(multi)])
    assert is_workload([str(folder / "a.acel"), str(folder / "b.acel")])
    assert not is_workload([str(folder / "a.acel")]) and not is_workload(["A ; B"])
    (tmp_path / "c.acel").write_text("C\n")
    with pytest.raises(WorkloadError, match="'c' appears twice"):
        load_workload([multi, tmp_path / "c.acel"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WorkloadError, match="no .acel query files"):
        load_workload([empty])


# ------------------------------------------------------------------ command line


def _run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _alone_lines(capsys: pytest.CaptureFixture[str], name: str, query: str) -> list[dict[str, Any]]:
    code, out, _ = _run(capsys, "run", query, "--data", STOCKS)
    assert code == 0
    return [{**json.loads(line), "query": name} for line in out.splitlines()]


def test_run_a_workload_gives_the_union_of_its_queries(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    texts = {
        "ex32": QUERY.read_text(),
        "pairs": "SELL AS a ; SELL AS b FILTER a[name = 'INTL'] AND b[name = 'INTL']",
        "count": "RETURN COUNT(*), SUM(s.price) PATTERN (SELL AS s)+ FILTER s[name = 'INTL']",
        "per_name": "RETURN name, COUNT(*) PATTERN SELL ; SELL PARTITION BY name",
    }
    for name, text in texts.items():
        (folder / f"{name}.acel").write_text(text)
    code, out, err = _run(capsys, "run", folder, "--data", STOCKS)
    assert code == 0, err
    got = [json.loads(line) for line in out.splitlines()]
    want: list[dict[str, Any]] = []
    for name, text in texts.items():
        want.extend(_alone_lines(capsys, name, text))
    canon = [json.dumps(o, sort_keys=True) for o in got]
    assert sorted(canon) == sorted(json.dumps(o, sort_keys=True) for o in want)
    # spec §12: complex events by (end, query, start), then rows by (query, key, window)
    ends = [(o["end"], o["query"], o["start"]) for o in got if "end" in o]
    assert ends == sorted(ends)
    rows = [o for o in got if "end" not in o]
    assert got[-len(rows):] == rows and [r["query"] for r in rows] == sorted(r["query"] for r in rows)
    assert "lines written for 4 queries" in err
    # the same workload as one file of named queries, and as several files
    multi = tmp_path / "all.acel"
    multi.write_text("".join(f"QUERY {n}:\n{t}\n" for n, t in texts.items()))
    assert _run(capsys, "run", multi, "--data", STOCKS)[1] == out
    files = [folder / f"{n}.acel" for n in sorted(texts)]
    assert _run(capsys, "run", *files, "--data", STOCKS)[1] == out
    # batch engines read the stream once and run each query in turn
    assert _run(capsys, "run", multi, "--data", STOCKS, "--engine", "oracle")[1] == out


def test_run_workload_out_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from acel.io.results import read_table

    rows = tmp_path / "rows.acel"
    rows.write_text(
        "QUERY a: RETURN COUNT(*) PATTERN SELL AS s\n"
        "QUERY b: RETURN SUM(s.price), name PATTERN SELL AS s PARTITION BY name\n"
    )
    for suffix in ("csv", "parquet"):
        target = tmp_path / f"out.{suffix}"
        code, _, err = _run(capsys, "run", rows, "--data", STOCKS, "--out", target)
        assert code == 0, err
        table = read_table(target)
        assert [r["query"] for r in table] == ["a", "b", "b", "b"]
        assert int(table[0]["COUNT(*)"]) == 6  # type: ignore[arg-type]
    multi = tmp_path / "w.acel"
    multi.write_text(MULTI)  # complex events and rows: JSON Lines only
    code, _, err = _run(capsys, "run", multi, "--data", STOCKS, "--out", tmp_path / "m.csv")
    assert code == 2 and "JSON Lines" in err
    code, _, err = _run(capsys, "run", multi, "--data", STOCKS, "--out", tmp_path / "m.jsonl")
    assert code == 0 and (tmp_path / "m.jsonl").read_text().count("\n") == 5


def test_check_and_compile_a_workload(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    multi = tmp_path / "w.acel"
    multi.write_text(
        "QUERY a: RETURN COUNT(*) PATTERN SELL ; (BUY)+ ; SELL\n"
        "QUERY b: RETURN COUNT(*) PATTERN SELL ; (BUY)+\n"
        "QUERY c: SELL AS x ; BUY\n"
    )
    code, out, _ = _run(capsys, "check", multi, "--data", STOCKS)
    assert code == 0 and "a workload of 3 queries" in out and "shared trend plan" in out
    code, out, _ = _run(capsys, "compile", multi, "--data", STOCKS)
    assert code == 0
    assert "// ---- shared1" in out and "// ---- a" in out and "// ---- c" in out
    assert out.count("digraph") == 4
    code, _, err = _run(capsys, "compile", multi, "--data", STOCKS, "--dot", tmp_path / "w.dot")
    assert code == 0
    assert sorted(p.name for p in tmp_path.glob("w.*.dot")) == [
        "w.a.dot", "w.b.dot", "w.c.dot", "w.shared1.dot"
    ]
    bad = tmp_path / "bad.acel"
    bad.write_text("QUERY a: SELL\nQUERY b: SELL AS x FILTER y[price > 1]\n")
    code, _, err = _run(capsys, "check", bad, "--data", STOCKS)
    assert code == 2 and "query b" in err and "line 2" in err


def test_workload_user_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    twice = tmp_path / "t.acel"
    twice.write_text("QUERY a: SELL\nQUERY a: BUY\n")
    code, _, err = _run(capsys, "run", twice, "--data", STOCKS)
    assert code == 2 and "appears twice" in err
    code, _, err = _run(capsys, "run", QUERY, QUERY, "--data", STOCKS)
    assert code == 2 and "appears twice" in err
    code, _, err = _run(capsys, "run", twice, "--data", STOCKS, "--engine", "sase", "--sase", QUERY)
    assert code == 2


# ------------------------------------------------------------------ sharing


def test_hamlet_workload_equals_each_query_alone() -> None:
    p = Params(queries=12, events=600, windows=3, seed=5)
    queries = [(name, parse_query(text)) for name, text in workload(p)]
    evs = [Event.make(k, a) for k, a in enumerate(stream(p))]
    got = run_workload(queries, evs, schema())
    for name, query in queries:
        assert got[name] == engine.run(query, evs, schema()), name
    runner = WorkloadRunner(queries, schema())
    assert len(runner.plans) == 1 and not runner.lone and not runner.prefixes


def test_bursts_are_shared_and_single_events_stepped() -> None:
    queries = [
        (f"q{i}", parse_query(f"RETURN COUNT(*) PATTERN {first} ; (B)+ ; C"))
        for i, first in enumerate("AD")
    ]
    plan = SharedPlan(queries, ABC)
    bursty = SharedRunner(plan)
    for k, ty in enumerate("AD" + "B" * 30 + "C"):
        bursty.push({"type": ty}, k)
    rows = bursty.finish()
    assert bursty.stats["bursts_shared"] >= 1 and bursty.stats["events_shared"] >= 30
    assert [r.values for _, r in rows] == [(("COUNT(*)", 2**30 - 1),)] * 2
    alternating = SharedRunner(plan)
    for k, ty in enumerate("ABDBABDBC"):
        alternating.push({"type": ty}, k)
    alternating.finish()
    assert alternating.stats["bursts_shared"] == 0


def test_common_prefixes_share_entries() -> None:
    """A-Seq: ``A ; B ; C`` and ``A ; B ; D`` keep one count of ``A ; B``; ``A ; B`` reads
    its rows from the state the others wait in."""
    texts = ["A ; B ; C", "A ; B ; D", "A ; B"]
    queries = [(f"q{i}", parse_query(f"RETURN COUNT(*) PATTERN {t}")) for i, t in enumerate(texts)]
    plan = SharedPlan(queries, ABC)
    assert plan.size < plan.scalars
    alone = sum(SharedPlan([q], ABC).size for q in queries)
    assert plan.size <= alone - 3  # "after A" twice and "after A ; B" shared
    evs = events("ABACBD")
    got = run_workload(queries, evs, ABC)
    for name, query in queries:
        assert got[name] == engine.run(query, evs, ABC)


def test_what_does_not_share_runs_alone() -> None:
    cases = {
        "A ; B": "per-match",
        "RETURN MAX(a.x) PATTERN A AS a ; B": "MIN/MAX",
        "RETURN COUNT(*) PATTERN (A AS a)+ FILTER a[INC(x)]": "registers",
        "RETURN COUNT(*) PATTERN A ; B WITHIN 3 EVENTS": "WITHIN without SLIDE",
        "RETURN COUNT(*) PATTERN A ; B WITHIN 3 ON x SLIDE 3 ON x": "ON attr",
    }
    for text, reason in cases.items():
        assert reason in (unshared_reason(parse_query(text), ABC) or ""), text
    assert unshared_reason(parse_query("RETURN COUNT(*) PATTERN A ; B+ WITHIN 4 EVENTS SLIDE 2 EVENTS"), ABC) is None


def test_relevant_types_route_events() -> None:
    def types(text: str) -> Any:
        return relevant_types(compile_automaton(compiled_for(parse_query(text).formula, ABC)[0]))

    assert types("A ; B") == {"A", "B"}
    assert types("A : B") is None  # the state after A has no skip loop: every event matters
    runner = WorkloadRunner([("q", parse_query("RETURN COUNT(*) PATTERN A : B WITHIN 2 EVENTS"))], ABC)
    assert runner.lone and runner.relevant == [None]


def test_per_match_prefixes_merge() -> None:
    texts = ["A AS a ; B ; C", "A AS a ; B ; D", "A AS a ; B AS b"]
    automata = [compiled_for(parse_query(t).formula, ABC)[0] for t in texts]
    merged = merge_prefixes(automata)
    assert merged is not None and merged.sizes[1] < merged.sizes[0]
    queries = [(f"q{i}", parse_query(t + " WITHIN 4 EVENTS")) for i, t in enumerate(texts)]
    runner = WorkloadRunner(queries, ABC)
    assert len(runner.prefixes) == 1 and not runner.lone
    evs = events("ABCADBCD")
    got = run_workload(queries, evs, ABC)
    for name, query in queries:
        assert got[name] == engine.run(query, evs, ABC)


def test_a_folder_refuses_links_that_leave_it(tmp_path: Path) -> None:
    """Issue 24 item 13: a workload folder followed ``*.acel`` links to any file and a
    parse error echoed its first line.  Now a link out of the folder is refused in one
    line that shows nothing of the file; a link inside the folder is followed."""
    import subprocess

    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    folder = tmp_path / "queries"
    folder.mkdir()
    (folder / "a.acel").write_text("SELL")
    (folder / "leak.acel").symlink_to(secret)
    done = subprocess.run(
        [sys.executable, "-m", "acel", "check", str(folder)], capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"acel check: query error: {folder / 'leak.acel'}: a link to a file "
                           f"outside the folder {str(folder)!r}; a folder's workload is only the "
                           "files in it (name the file itself to use it)\n")
    assert "hunter2" not in done.stderr
    (folder / "leak.acel").unlink()
    (folder / "b.acel").symlink_to(folder / "a.acel")
    assert [q.name for q in load_workload([folder])] == ["a", "b"]


@pytest.mark.parametrize("strategy", ["SELECT STRICT", "SELECT NEXT", "SELECT MAX",
                                      "AFTER MATCH SKIP PAST LAST ROW"])
def test_a_strategy_in_a_workload_sees_the_events_between(strategy: str) -> None:
    """Regression (Hypothesis, test_generated_workload_equals_queries_alone): a per-match
    query with a strategy was fed only its own types in a workload, so ``SELECT STRICT
    A{1,}`` on A0 B1 A2 kept [0,2]; alone it gives {0} and {2} (B breaks the contiguity)."""
    from acel.lang.schema import Schema

    text = (f"{strategy} A{{1,}} PARTITION BY k" if strategy.startswith("SELECT")
            else f"A{{1,}} PARTITION BY k {strategy}")
    queries = [("q1", parse_query("RETURN COUNT(*) PATTERN A")), ("q2", parse_query(text))]
    evs = [Event.make(i, {"type": t, "k": 0}) for i, t in enumerate("ABA")]
    given = Schema.of({"A": ["k"], "B": ["k"]}, {"k": "int"})
    got = run_workload(queries, evs, given)
    for name, query in queries:
        assert got[name] == engine.run(query, evs, given), (name, got[name])
    if strategy == "SELECT STRICT":
        assert [(r.event.start, r.event.end) for r in got["q2"]] == [(0, 0), (2, 2)]  # type: ignore[union-attr]
