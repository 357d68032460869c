"""The start-up of ``acel run`` (issue 23; papers/engine.md "Start-up"): the run path
imports only what it runs, a command's module loads only when it is chosen, garbage
collection is paused for the start-up of the process only, and the set-up writes
bytecode.  Timings are measured by ``bench/native_limit.py``, never here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acel.app import cli, startup, workload_cmd
from acel.lang import parser

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
TREND = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
NOT_ON_THE_RUN_PATH = (
    "pyspark", "acel.spark_backend", "acel.workload", "acel.reference", "importlib.metadata",
    "email", "pandas", "pyarrow", "fractions", "acel.stepper", "acel.testing", "lark", "hashlib",
    "shutil", "bz2", "lzma", "csv",
)
"""What a one-query trend run on a JSON Lines file must not import."""

PROBE = """
import gc, json, sys
from acel.app import cli
sys.argv = ["acel", *sys.argv[1:]]
try:
    code = cli.main()
finally:
    print(json.dumps({
        "modules": sorted(m for m in sys.modules if m.startswith(tuple(%r))),
        "loaded": sorted(sys.modules),
        "gc_enabled": gc.isenabled(),
        "frozen": gc.get_freeze_count(),
    }))
"""


def probe(*argv: str, cwd: Path) -> dict[str, object]:
    """Run ``acel ARGV`` as its own process (``cli.main()`` with ``sys.argv``, as the
    console script does) and report the modules it loaded and the collector's state."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (NOT_ON_THE_RUN_PATH,), *argv],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture()
def w0(tmp_path: Path) -> Path:
    """A small W0 stream: A, then B's, then C, with a time column."""
    rows = [{"type": "A", "ts": 0, "v": 1}]
    rows += [{"type": "B", "ts": t, "v": t} for t in range(1, 6)]
    rows += [{"type": "C", "ts": 6, "v": 0}]
    path = tmp_path / "w0.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_trend_run_imports_only_what_it_runs(w0: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    seen = probe("run", TREND, "--data", str(w0), "--out", str(out), cwd=tmp_path)
    assert seen["modules"] == []
    # the run happened, and is right: 2^5 - 1 trends of B's, SUM over every b of each
    assert json.loads(out.read_text(encoding="utf-8")) == {"COUNT(*)": 31, "SUM(b.v)": 15 * 16}


def test_the_probe_sees_what_a_run_imports(w0: Path, tmp_path: Path) -> None:
    """The check above can fail: a workload run does import acel.workload."""
    workload = tmp_path / "two.acel"
    workload.write_text(f"QUERY t:\n{TREND}\nQUERY u:\nA ; C\n", encoding="utf-8")
    seen = probe("run", str(workload), "--data", str(w0), "--out", str(tmp_path / "o.jsonl"),
                 cwd=tmp_path)
    assert "acel.workload" in seen["modules"]
    assert seen["gc_enabled"] is True  # a workload run resumes collection at once


def test_a_command_module_loads_only_when_chosen(tmp_path: Path) -> None:
    seen = probe("fmt", "A ; B", cwd=tmp_path)
    assert "acel.app.run_cmd" not in seen["loaded"]
    assert "acel.lang.parser" in seen["loaded"]
    done = subprocess.run([sys.executable, "-m", "acel", "--version"], capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout == f"acel {cli.version()}\n"


def test_every_command_is_listed_and_set_up_when_chosen(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    listing = capsys.readouterr().out
    assert all(name in listing for name in cli.COMMANDS)
    for name in cli.COMMANDS:
        with pytest.raises(SystemExit) as info:
            cli.main([name, "--help"])
        assert info.value.code == 0
        assert f"usage: acel {name}" in capsys.readouterr().out


def test_chosen_command() -> None:
    assert cli.chosen_command(["run", "A", "--data", "x"]) == "run"
    assert cli.chosen_command(["--version"]) is None
    assert cli.chosen_command(["-h", "fmt"]) == "fmt"
    assert cli.chosen_command([]) is None


def test_the_process_pauses_collection_for_start_up_only(w0: Path, tmp_path: Path) -> None:
    seen = probe("run", TREND, "--data", str(w0), "--out", str(tmp_path / "o.jsonl"),
                 cwd=tmp_path)
    assert seen["gc_enabled"] is True  # on again for the events
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 10_000  # start-up's objects


def test_an_in_process_main_leaves_collection_alone(
    w0: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gc

    frozen = gc.get_freeze_count()
    assert cli.main(["run", TREND, "--data", str(w0), "--out", str(tmp_path / "o.jsonl")]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_a_failing_process_run_resumes_collection(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """cli.main() with the process's own argv pauses; an error before the events must not
    leave the collector off for whoever called it."""
    import gc

    monkeypatch.setattr(sys, "argv", ["acel", "run", "A ;", "--data", str(DATA / "stocks.jsonl")])
    try:
        assert cli.main() == cli.EXIT_USER_ERROR
        assert "query error" in capsys.readouterr().err
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()  # this test process's objects back in the collector's sight


def test_resume_without_pause_does_nothing() -> None:
    import gc

    frozen = gc.get_freeze_count()
    startup.resume_collection()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


@pytest.mark.parametrize("queries,expected", [
    (["A ; B"], False),
    (["QUERY a:\nA ; B\nQUERY b:\nB"], True),
    (["a.acel", "b.acel"], True),
])
def test_may_be_workload_text(queries: list[str], expected: bool) -> None:
    assert workload_cmd.may_be_workload(queries) is expected


def test_may_be_workload_never_misses_one() -> None:
    """Its False must agree with acel.workload.is_workload on every example file and folder."""
    from acel.workload import is_workload

    paths = sorted(ROOT.glob("examples/**/*.acel")) + sorted(
        p for p in (ROOT / "examples").rglob("*") if p.is_dir())
    assert paths
    for path in paths:
        if is_workload([str(path)]):
            assert workload_cmd.may_be_workload([str(path)]), path
    plain = ROOT / "examples" / "paper" / "ex3_2_three_sales.acel"
    assert not workload_cmd.may_be_workload([str(plain)])


def test_the_grammar_is_read_without_importlib_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import resources

    packaged = resources.files("acel.lang").joinpath("grammar.lark").read_text(encoding="utf-8")
    assert parser.grammar_text() == packaged
    monkeypatch.setattr(Path, "is_file", lambda self: False)  # e.g. a zipped package
    assert parser.grammar_text() == packaged


@pytest.mark.skipif(shutil.which("make") is None, reason="make is missing")
def test_set_up_writes_bytecode(tmp_path: Path) -> None:
    """Editable installs write no .pyc, and PYTHONDONTWRITEBYTECODE=1 stops Python doing it."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "setup", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")},
    )
    lines = done.stdout.splitlines()
    install = next(i for i, line in enumerate(lines) if "pip install" in line and "-e" in line)
    compile_line = next(i for i, line in enumerate(lines) if "-m compileall" in line)
    assert install < compile_line
    assert all(p in lines[compile_line] for p in ("acel", "acea", "compiler", "reference"))


def test_bytecode_is_git_ignored() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "__pycache__/" in ignored and "*.pyc" in ignored


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_native_limit_reports_each_sides_own_peak_rss(tmp_path: Path) -> None:
    """Was: a child of a parent holding the 10^6 generated records reported the parent's
    peak (807 MiB on both sides): Linux copies the high-water mark into a forked child."""
    sys.path.insert(0, str(ROOT / "bench"))
    from native_limit import build, bytecode, measured

    launcher = build(tmp_path)["measure"]
    ballast = bytearray(200 * 2**20)  # this process's peak: above 200 MiB
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])  # touched, so resident
    own = measured(launcher, [sys.executable, "-c", "b = bytearray(60 * 2**20); b[::4096] = "
                              "b'x' * len(b[::4096])"], None, None)
    del ballast
    assert 60 <= own["peak_rss_mib"] < 150
    assert own["cpu_s"] > 0
    counted = bytecode()
    assert counted["modules"] > 100 and 0 <= counted["compiled"] <= counted["modules"]


@pytest.mark.parametrize("columns,expected", [("57", 57), ("0", None), ("x", None), (None, None)])
def test_terminal_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None,
                                   expected: int | None) -> None:
    """The help's width as ``shutil.get_terminal_size`` gives it (without importing it)."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert cli.terminal_width() == shutil.get_terminal_size().columns
    if expected is not None:
        assert cli.terminal_width() == expected
