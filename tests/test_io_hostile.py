"""Hostile input and outputs (issue 24 §2–6, §12), each as a user meets it.

A planted link at ``out.jsonl.partial`` is never written through; a FIFO given
to ``--out`` is written into, not replaced; a type that is an object or a list,
and a lone surrogate, are one-line data errors naming the row (in every output
format); a CSV header of 10^5 columns and a JSON line of 10^5 or 10^6 keys end
at once with a clear error.  Timings here are generous bounds that catch a
quadratic or exponential blow-up, not performance claims (those live in bench/).
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

import acel
from acel.app.cli import main
from acel.io.values import MAX_ATTRIBUTES, first_duplicate
from acel.lang.errors import DataError


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def data_error(err: str) -> list[str]:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and "data error" in lines[0], err
    return lines


def events(tmp_path: Path, *records: object, name: str = "ev.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


AB = ({"type": "A", "v": 1}, {"type": "B", "v": 2})

# ------------------------------------------------------------------ §2 a planted link


def test_a_link_planted_at_the_partial_name_is_refused_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = events(tmp_path, *AB)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "out.jsonl.partial").symlink_to(victim)
    code, _, err = run(capsys, "run", "A ; B", "--data", data, "--out", tmp_path / "out.jsonl")
    assert code == 2
    assert "is a link or not a plain file" in data_error(err)[0]
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "out.jsonl").exists()


def test_a_hard_link_planted_at_the_partial_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = events(tmp_path, *AB)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.link(victim, tmp_path / "out.csv.partial")
    code, _, err = run(capsys, "run", "A ; B", "--data", data, "--out", tmp_path / "out.csv")
    assert code == 2 and "not a plain file" in data_error(err)[0]
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_a_stale_partial_file_of_an_interrupted_run_is_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    data = events(tmp_path, *AB)
    out = tmp_path / f"out{suffix}"
    (tmp_path / f"out{suffix}.partial").write_text("left over\n")
    code, _, _ = run(capsys, "run", "A ; B", "--data", data, "--out", out)
    assert code == 0
    assert not (tmp_path / f"out{suffix}.partial").exists()
    assert [(m.event.start, m.event.end) for m in acel.run("A ; B", data)] == [(0, 1)]
    assert out.stat().st_size > 0


# ------------------------------------------------------------------ §12 FIFOs and devices


def test_a_fifo_is_written_into_not_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = events(tmp_path, *AB)
    fifo = tmp_path / "results.jsonl"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _, _ = run(capsys, "run", "A ; B", "--data", data, "--out", fifo)
    reader.join(20)
    assert code == 0
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [json.loads(line)["end"] for line in got[0].splitlines()] == [1]
    assert not (tmp_path / "results.jsonl.partial").exists()


def test_a_device_is_written_into_not_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out`` naming a character device (here through a link with a result suffix):
    written into; neither the link nor /dev/null becomes a regular file."""
    data = events(tmp_path, *AB)
    out = tmp_path / "null.jsonl"
    out.symlink_to("/dev/null")
    code, _, _ = run(capsys, "run", "A ; B", "--data", data, "--out", out)
    assert code == 0
    assert out.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not (tmp_path / "null.jsonl.partial").exists()
    code, _, err = run(capsys, "run", "A ; B", "--data", data, "--out", "/dev/null")
    assert code == 2 and "unknown output format" in data_error(err)[0]


def test_parquet_into_a_fifo_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = events(tmp_path, *AB)
    fifo = tmp_path / "results.parquet"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "run", "A ; B", "--data", data, "--out", fifo)
    assert code == 2 and "cannot write Parquet into a pipe" in data_error(err)[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ------------------------------------------------------------------ §3 a type that is no text


@pytest.mark.parametrize("bad", [{"a": 1}, ["x"]])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_type_that_is_an_object_or_a_list_is_a_data_error_naming_the_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: object, command: str
) -> None:
    data = events(tmp_path, {"type": "A", "v": 0}, {"type": bad, "v": 1}, {"type": "B", "v": 2})
    argv = ["run", "A ; B", "--data", data] if command == "run" else ["check", "A ; B", "--data", data]
    code, _, err = run(capsys, *argv)
    lines = data_error(err)
    assert code == 2
    assert lines[1].strip().startswith("row 2 (line 2), column 'type': nested value")
    with pytest.raises(DataError, match=r"row 2, column 'type': nested value"):
        list(acel.run("A ; B", [{"type": "A"}, {"type": bad}, {"type": "B"}]))


# ------------------------------------------------------------------ §4 lone surrogates


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet", ""])
def test_a_lone_surrogate_is_refused_on_input_for_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """Refused with the row, whatever the output format (none could write it)."""
    data = tmp_path / "ev.jsonl"
    data.write_text('{"type":"A","s":"ok"}\n{"type":"A","s":"\\ud800"}\n{"type":"B","s":"x"}\n')
    out = ["--out", tmp_path / f"out{suffix}"] if suffix else []
    code, stdout, err = run(capsys, "run", "A ; B", "--data", data, *out)
    lines = data_error(err)
    assert code == 2 and stdout == ""
    assert "row 2 (line 2)" in lines[1] and "lone surrogate" in lines[1]
    assert not list(tmp_path.glob("out*"))


def test_a_lone_surrogate_in_records_or_a_json_array_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"row 2, column 's': .*lone surrogate"):
        list(acel.run("A ; B", [{"type": "A", "s": "x"}, {"type": "A", "s": "a\udc80"}, {"type": "B"}]))
    array = tmp_path / "ev.json"
    array.write_text('[{"type":"A","s":"\\udfff"}]')
    with pytest.raises(DataError, match="lone surrogate"):
        list(acel.run("A ; B", array))
    # a surrogate pair is text: accepted
    pair = [{"type": "A", "s": "\U0001f600"}, {"type": "B", "s": "x"}]
    assert len(list(acel.run("A ; B", pair))) == 1


# ------------------------------------------------------------------ §5–6 wide records


def test_duplicate_names_are_found_in_one_pass() -> None:
    assert first_duplicate(["b", "a", "c", "a", "b"]) == "a"
    assert first_duplicate([f"c{i}" for i in range(10**5)]) is None


def test_a_csv_of_a_hundred_thousand_columns_ends_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24 §5: 10^4 columns took 14 s and 10^5 never finished."""
    n = 10**5
    data = tmp_path / "wide.csv"
    data.write_text("type," + ",".join(f"c{i}" for i in range(n)) + "\nA" + ",1" * n + "\n")
    start = time.process_time()  # CPU time (this process runs the command): load-independent
    code, _, err = run(capsys, "run", "A", "--data", data)
    assert code == 2 and f"{n:,} attributes" in data_error(err)[0]
    dup = tmp_path / "dup.csv"
    dup.write_text("type," + ",".join(f"c{i}" for i in range(MAX_ATTRIBUTES - 1)) + ",c7\nA" + ",1" * MAX_ATTRIBUTES + "\n")
    code, _, err = run(capsys, "run", "A", "--data", dup)
    assert code == 2 and "duplicate column name 'c7'" in data_error(err)[0]
    assert time.process_time() - start < 20


@pytest.mark.parametrize("n", [10**5, 10**6])
def test_a_json_line_of_many_keys_ends_at_once_with_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int
) -> None:
    """Issue 24 §6: 10^5 keys cost 59 s and 1 GB; 10^6 ran on at 2.5 GB."""
    data = tmp_path / "wide.jsonl"
    data.write_text(json.dumps({"type": "A", **{f"k{i}": i for i in range(n)}}) + '\n{"type":"B"}\n')
    start = time.process_time()  # CPU time (this process runs the command): load-independent
    code, _, err = run(capsys, "run", "A ; B", "--data", data)
    lines = data_error(err)
    assert code == 2
    assert lines[1].strip() == (f"row 1 (line 1): a record has {n:,} attributes; events may have at "
                                "most 10,000 (keep the columns the queries use)")
    assert time.process_time() - start < 20


def test_many_narrow_records_of_distinct_keys_make_a_schema_too_wide(tmp_path: Path) -> None:
    records = [{"type": "A", **{f"k{i}_{j}": 1 for j in range(100)}} for i in range(120)]
    with pytest.raises(DataError, match="the schema has 12,000 attributes"):
        list(acel.run("A", records))


def test_a_record_at_the_limit_is_read(tmp_path: Path) -> None:
    record = {"type": "A", **{f"k{i}": i for i in range(MAX_ATTRIBUTES)}}
    data = events(tmp_path, record, {"type": "B"})
    assert len(list(acel.run("A ; B", data))) == 1


# ------------------------------------------------------------------ found by tools/fuzz_readers.py


def test_an_attribute_name_with_a_hash_is_refused_not_read_as_a_register(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fuzzing crash (``AutomatonError`` traceback): the automata name their registers
    ``attr#n``, so a column ``v|B#2`` was taken for a register."""
    data = tmp_path / "events.jsonl"
    data.write_bytes(b'{"type":"A","v":2,"t":0}\n{"type":"B","v|B#2":2,"t":1}\n')
    code, _, err = run(capsys, "run", "A ; B", "--data", data, "--time-col", "t")
    assert code == 2
    assert data_error(err)[0].endswith(
        "events.jsonl: attribute name 'v|B#2' holds '#', which acel reserves for its registers: "
        "rename it")
    with pytest.raises(acel.AcelError, match="attribute name 'x#1' holds '#'"):
        acel.runner("A ; B", {"A": ["x"], "B": ["x#1"]})
