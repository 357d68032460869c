"""The ``acel`` command line: every command in-process, and exit codes via a subprocess."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acel.app import cli
from acel.app.cli import main
from acel.engines import in_process_engines
from acel.io.results import from_json_lines, read_table

DATA = Path(__file__).parent / "data"
QUERY = DATA / "example_3_2.acel"
STOCKS = DATA / "stocks.jsonl"
SCHEMA = DATA / "stocks_schema.json"


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def intervals(lines: str) -> list[tuple[int, int]]:
    return [(m.event.start, m.event.end) for m in from_json_lines(lines.splitlines())]


EXAMPLE_3_2 = [(0, 4), (1, 4), (0, 6), (0, 6), (1, 6), (1, 6)]

cli.load_extensions()  # conform, bench, demo register themselves


# ----------------------------------------------------------------- help


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_every_command_has_help_with_an_example(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "example" in out and f"acel {command}" in out


def test_extension_commands_are_registered() -> None:
    assert {"fmt", "check", "run", "compile"} <= set(cli.COMMANDS)
    assert {"conform", "bench", "demo"} <= set(cli.COMMANDS)


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys)
    assert code == 2 and "fmt" in err and "run" in err


def test_add_command_registers_a_new_subcommand(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "COMMANDS", dict(cli.COMMANDS))

    def setup(p: object) -> None:
        p.add_argument("word")  # type: ignore[attr-defined]

    def handler(args: object) -> int:
        print("hello", args.word)  # type: ignore[attr-defined]
        return 0

    cli.add_command("hello", setup, handler, help="say hello", epilog="example:\n  acel hello x")
    assert run(capsys, "hello", "world") == (0, "hello world\n", "")


# ----------------------------------------------------------------- fmt, check


def test_fmt_file_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fmt", QUERY)
    assert code == 0
    canonical = out.strip()
    assert "FILTER" in canonical and "--" not in canonical
    # the canonical text is a fixpoint
    assert run(capsys, "fmt", canonical)[1].strip() == canonical
    assert run(capsys, "fmt", "sell ; BUY")[1].strip() == "sell ; BUY"


def test_fmt_syntax_error_has_caret(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "fmt", "SELL ; ; BUY")
    assert code == 2 and out == ""
    assert err.startswith("acel fmt: query error: line 1, column 8")
    assert "\n  SELL ; ; BUY\n         ^" in err
    assert "Traceback" not in err


def test_missing_query_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "fmt", "nope/query.acel")
    assert code == 2 and "query file 'nope/query.acel' not found" in err


def test_check_with_data_and_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", QUERY, "--data", STOCKS)
    assert code == 0
    assert out == "ok: types SELL; variables msft, intel, amzn\n"
    code, out, _ = run(capsys, "check", "RETURN name, COUNT(*) PATTERN SELL+ PARTITION BY name",
                       "--schema", SCHEMA)
    assert code == 0
    assert out.startswith("ok: types SELL; variables none") and "PARTITION BY name" in out


def test_check_without_schema_only_parses(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "HOLD AS h")
    assert code == 0 and out.startswith("ok (parsed; give --schema or --data to check names)")


def test_check_errors_name_the_place(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "SELL AS x FILTER x[volume > 3]", "--schema", SCHEMA)
    assert code == 2
    assert "line 1, column" in err and "volume" in err and "^" in err
    code, _, err = run(capsys, "check", "HOLD", "--data", STOCKS)
    assert code == 2 and "HOLD" in err


def test_check_bad_schema_and_missing_data(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    bad.write_text("{")
    code, _, err = run(capsys, "check", "SELL", "--schema", bad)
    assert code == 2 and "acel check: data error" in err and "bad JSON" in err
    code, _, err = run(capsys, "check", "SELL", "--data", tmp_path / "missing.jsonl")
    assert code == 2 and "no such file" in err and "missing.jsonl" in err


# ----------------------------------------------------------------- run


@pytest.mark.parametrize("engine", in_process_engines())
def test_run_example_3_2_on_every_local_engine(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    code, out, err = run(capsys, "run", QUERY, "--data", STOCKS, "--engine", engine)
    assert code == 0
    assert intervals(out) == EXAMPLE_3_2
    assert err.startswith(f"acel run [{engine}]: 7 events read, 6 complex events written")


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_run_on_spark_shows_progress_and_prints_the_same_results(
    capsys: pytest.CaptureFixture[str], spark: Any
) -> None:
    """The command line reuses the active session (here the tests' own)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out, err = run(capsys, "run", QUERY, "--data", STOCKS, "--engine", "spark")
    assert code == 0, err
    assert out == run(capsys, "run", QUERY, "--data", STOCKS)[1]
    assert intervals(out) == EXAMPLE_3_2
    assert "acel run: 7 events numbered; the query has neither PARTITION BY nor WITHIN" in err
    assert "acel run [spark]: 6 complex events written" in err


def test_run_default_engine_time_column_and_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", QUERY, "--data", DATA / "stocks.csv", "--time-col", "ts",
                         "--schema", SCHEMA)
    assert code == 0 and "[optimized]" in err
    assert intervals(out) == EXAMPLE_3_2
    first = json.loads(out.splitlines()[0])
    assert first["vars"]["msft"] == [{"time": 0, "attrs": {"name": "MSFT", "price": 101, "ts": 0, "type": "SELL"}}]


def test_run_trend_query_rows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", "RETURN name, COUNT(*), MAX(SELL.price) PATTERN SELL+ PARTITION BY name",
                         "--data", STOCKS, "--engine", "oracle")
    assert code == 0 and "3 rows written" in err
    assert out.splitlines() == [
        '{"COUNT(*)":3,"MAX(SELL.price)":1920,"key":{"name":"AMZN"},"name":"AMZN"}',
        '{"COUNT(*)":3,"MAX(SELL.price)":81,"key":{"name":"INTL"},"name":"INTL"}',
        '{"COUNT(*)":3,"MAX(SELL.price)":102,"key":{"name":"MSFT"},"name":"MSFT"}',
    ]


def test_run_out_files_and_limit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "run", QUERY, "--data", STOCKS, "--engine", "oracle",
                         "--out", tmp_path / "r.jsonl")
    assert code == 0 and out == "" and f"-> {tmp_path / 'r.jsonl'}" in err
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert intervals("\n".join(lines)) == EXAMPLE_3_2
    for suffix in (".csv", ".parquet"):
        assert run(capsys, "run", QUERY, "--data", STOCKS, "--engine", "oracle",
                   "--out", tmp_path / f"r{suffix}")[0] == 0
        records = read_table(tmp_path / f"r{suffix}")
        assert [(int(str(r["start"])), int(str(r["end"]))) for r in records] == EXAMPLE_3_2
    code, out, err = run(capsys, "run", QUERY, "--data", STOCKS, "--engine", "oracle", "--limit", "2")
    assert code == 0 and out.splitlines() == lines[:2]
    assert "2 complex events written (stopped at --limit 2)" in err


def test_run_max_events(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", QUERY, "--data", STOCKS, "--engine", "oracle", "--max-events", "5")
    assert code == 0 and intervals(out) == [(0, 4), (1, 4)] and "5 events read" in err


def test_run_sase_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sase = tmp_path / "q.sase"
    sase.write_text("PATTERN SEQ(SELL a, SELL b)\nWHERE a.name = 'MSFT' AND b.name = 'AMZN'\n")
    code, out, err = run(capsys, "run", "--engine", "sase", "--sase", sase, "--data", STOCKS)
    assert code == 0, err
    assert intervals(out) == [(0, 4), (1, 4), (0, 6), (1, 6)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "SELL", "--data", str(STOCKS), "--sase", "q.sase"], "--sase FILE needs --engine sase"),
        (["run", "SELL", "--data", str(STOCKS), "--master", "local"], "need --engine spark"),
        (["run", "--data", str(STOCKS)], "give a QUERY"),
        (["run", "SELL", "--data", str(STOCKS), "--out", "r.xlsx"], "unknown output format '.xlsx'"),
        (["run", "SELL ;", "--data", str(STOCKS)], "query error: line 1"),
        (["run", "HOLD", "--data", str(STOCKS)], "HOLD"),
        (["run", "SELL", "--data", str(DATA / "bad_nested.jsonl")], "data error"),
        (["run", "SELL", "--data", str(DATA / "bad_wrong_kind.csv"), "--schema", str(SCHEMA)],
         "row 2 (line 3), column 'price'"),
        (["run", "SELL", "--data", str(DATA / "stocks.csv"), "--time-col", "when"],
         "the time column 'when' is not in the header"),
    ],
)
def test_run_user_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_query_errors_come_before_the_data_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    # the data file does not exist: the syntax error (and with --schema the check error) wins
    code, _, err = run(capsys, "run", "SELL ;", "--data", "missing.jsonl")
    assert code == 2 and "query error" in err
    code, _, err = run(capsys, "run", "HOLD", "--data", "missing.jsonl", "--schema", SCHEMA)
    assert code == 2 and "query error" in err and "HOLD" in err


def test_sase_engine_needs_the_fragment(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "SELL AND BUY", "--data", STOCKS, "--engine", "sase")
    assert code == 2 and "Traceback" not in err and err.startswith("acel run: ")


# ----------------------------------------------------------------- compile


def test_compile_prints_size_and_dot(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compile", QUERY, "--schema", SCHEMA)
    assert code == 0
    first, rest = out.split("\n", 1)
    assert first.startswith("// states: ") and "transitions: " in first and "registers: " in first
    assert rest.lstrip().startswith("digraph")


def test_compile_writes_dot_and_svg(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "compile", "SELL ; BUY", "--dot", tmp_path / "a.dot",
                         "--svg", tmp_path / "a.svg")
    assert code == 0 and out.startswith("states: ")
    assert (tmp_path / "a.dot").read_text().lstrip().startswith("digraph")
    assert "<svg" in (tmp_path / "a.svg").read_text()
    assert "wrote" in err


def test_compile_next_needs_a_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "compile", "NEXT(SELL)")
    assert code == 2 and "give --schema or --data" in err


# ----------------------------------------------------------------- subprocess


def _acel(*argv: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "acel", *map(str, argv)],
                          capture_output=True, text=True, timeout=120)


def test_subprocess_exit_codes_and_no_traceback() -> None:
    bad_query = _acel("check", "SELL AS x FILTER x[price >]", "--data", STOCKS)
    assert bad_query.returncode == 2 and bad_query.stdout == ""
    assert "query error: line 1" in bad_query.stderr and "Traceback" not in bad_query.stderr
    bad_data = _acel("run", "SELL", "--data", DATA / "bad_missing_type.jsonl", "--engine", "oracle")
    assert bad_data.returncode == 2 and bad_data.stdout == ""
    assert "2 bad rows" in bad_data.stderr and "Traceback" not in bad_data.stderr
    good = _acel("run", QUERY, "--data", STOCKS, "--engine", "oracle")
    assert good.returncode == 0 and intervals(good.stdout) == EXAMPLE_3_2


# ----------------------------------------------------------------- issue 25 §6: small things

ROOT = Path(__file__).resolve().parents[1]
ACEL = Path(sys.executable).with_name("acel")
PARSED_ONLY = {"bench", "demo"}
"""Commands whose examples take minutes or download data: their examples are parsed
(every option exists and takes what is given), not run."""


def help_examples() -> list[tuple[str, str]]:
    """Every ``acel ...`` line of every command's ``--help`` examples."""
    return [(name, line.strip()) for name, command in cli.COMMANDS.items()
            for line in command.epilog.splitlines() if line.strip().startswith("acel ")]


def test_acel_version(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: "acel: error: unrecognized arguments: --version"."""
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"acel {cli.version()}\n"
    assert cli.version()[0].isdigit()


def test_help_examples_are_found() -> None:
    assert {name for name, _ in help_examples()} == set(cli.COMMANDS)


OUTSIDE_ENGINES = ("--against core", "--against flink", "--against pandas-mr")
"""Examples that install an engine outside the toolkit: CI's external stage (issue 37)."""


def _marked(example: tuple[str, str]) -> Any:
    marks = [pytest.mark.external] if any(e in example[1] for e in OUTSIDE_ENGINES) else []
    return pytest.param(*example, marks=marks, id=example[1])


@pytest.mark.parametrize("name,example", [_marked(e) for e in help_examples()])
def test_every_help_example_runs_as_written(name: str, example: str, tmp_path: Path) -> None:
    """Was: ``acel fmt --help`` and ``acel check --help`` used examples/stocks.acel, which
    does not exist.  Each example runs from a folder that has the repository's
    ``examples`` and ``tests``, as a user's shell runs it (pipes and comments too)."""
    import shlex

    if name in PARSED_ONLY:
        argv = shlex.split(example, comments=True)[1:]
        args = cli.build_parser().parse_args(argv)
        assert args.command == name
        return
    for folder in ("examples", "tests"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    env = {**os.environ, "PATH": f"{ACEL.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-o", "pipefail", "-c", example], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_a_tiny_run_shows_no_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: "7 events read, ..., 4 events/s": the time of a tiny run is start-up."""
    code, _, err = run(capsys, "run", "SELL", "--data", STOCKS)
    assert code == 0
    assert "7 events read" in err and "events/s" not in err


def test_a_long_run_shows_its_rate(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A run past the rate's thresholds shows its rate.  The time threshold is lowered:
    20,000 events take 0.01 s natively and about 0.1 s in pure Python, either side of it."""
    from acel.app import reporting

    monkeypatch.setattr(reporting, "RATE_MIN_SECONDS", 0.0)
    data = tmp_path / "many.jsonl"
    data.write_text("".join(f'{{"type":"A","v":{i}}}\n' for i in range(20_000)))
    code, _, err = run(capsys, "run", "RETURN COUNT(*) PATTERN A", "--data", data)
    assert code == 0 and "20,000 events read" in err
    assert re.search(r"[\d,]+ events/s", err), err


# ----------------------------------------------------------------- issue 24 item 15


def test_compile_without_a_schema_says_why_the_automaton_is_empty(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: Example 5.1 without --schema drew a one-state automaton without a word."""
    example = ROOT / "examples" / "paper" / "ex5_1_max_intel_price.acel"
    code, out, err = run(capsys, "compile", example)
    assert code == 0 and out.startswith("// states: 1, transitions: 0")  # unchanged
    assert err == ("acel compile: warning: without --schema or --data no attribute is known, so "
                   "every condition on name, price is false and the automaton drops it; give "
                   "--schema or --data\n")
    code, out, err = run(capsys, "compile", example, "--schema", ROOT / "examples/paper/schema.json")
    assert code == 0 and "warning" not in err and not out.startswith("// states: 1,")
    code, _, err = run(capsys, "compile", "SELL ; BUY")
    assert code == 0 and err == ""


def test_run_refuses_a_declared_attribute_no_event_has(tmp_path: Path) -> None:
    """Was: --schema declares ``price``, the data lacks it, the query filters on it:
    0 results without a word, then a warning with exit 0 (issue 37).  Now an error line and
    exit 2 after the (same) results, unless ``--absent price`` says the data may lack it."""
    data = tmp_path / "sales.jsonl"
    data.write_text('{"type":"SELL","name":"MSFT"}\n{"type":"SELL","name":"IBM"}\n')
    schema = tmp_path / "schema.json"
    schema.write_text('{"SELL": ["name", "price"]}')
    command = [sys.executable, "-m", "acel", "run", "SELL AS x FILTER x[price > 1]", "--data",
               str(data), "--schema", str(schema)]
    for engine in ("optimized", "oracle"):
        done = subprocess.run(command + ["--engine", engine], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines()[-1] == (
            "acel run: error: the schema declares 'price' but no event of the data has it, so "
            "every condition on it is false (a missing attribute is NULL); if the data may lack "
            "it, say so with --absent price"), done.stderr
    done = subprocess.run(command + ["--absent", "price"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "error" not in done.stderr and "warning" not in done.stderr
    data.write_text('{"type":"SELL","name":"MSFT","price":3}\n{"type":"SELL","name":"IBM"}\n')
    code = main(["run", "SELL AS x FILTER x[price > 1]", "--data", str(data), "--schema", str(schema)])
    assert code == 0


def test_the_missing_attribute_watch_stops_once_all_are_seen() -> None:
    from acel.api import parse
    from acel.app.hints import MissingAttributes
    from acel.lang.schema import Schema

    watch = MissingAttributes(parse("A AS a FILTER a[x > 1 AND y > 2]").ast,
                              Schema.of({"A": ["x", "y", "z"]}))
    assert watch.missing == {"x", "y"}
    watch([{"type": "A", "x": 1, "y": None}])
    assert watch.missing == {"y"} and "'y'" in (watch.error(1) or "")
    watch([{"type": "A", "y": 0}])
    assert watch.missing == set() and watch.error(2) is None
    assert MissingAttributes(parse("A AS a FILTER a[x > 1 AND y > 2]").ast,
                             Schema.of({"A": ["x", "y", "z"]}), absent={"x"}).missing == {"y"}


def test_check_learns_the_schema_without_holding_the_events(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 37: ``acel check --data`` read every event into a list (16 s, 630 MB on the
    demo's Parquet file) and printed a bare ``WITHIN``; now one pass keeps no event, and
    the clauses are printed in the query's words."""
    import acel.io

    data = tmp_path / "d.jsonl"
    data.write_text('{"type":"DEP","tailnum":"N1","ts":1,"dep_delay":20}\n')

    def no_list(*_: object, **__: object) -> None:
        raise AssertionError("read_events holds every event")

    monkeypatch.setattr(acel.io, "read_events", no_list)
    code, out, _ = run(capsys, "check", ROOT / "examples/flights/delay_propagation.acel",
                       "--data", data)
    assert code == 0
    assert out == "ok: types DEP; variables m, d; PARTITION BY tailnum; WITHIN 1440 ON ts\n"
