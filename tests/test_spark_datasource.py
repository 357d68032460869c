"""Event files read by the executors (issue 31): the ``acel-jsonl``/``acel-csv`` data sources.

A JSON Lines or CSV file is read in an executor by the toolkit's own reader, so
the results, the values and every message are the single process's; the driver
only runs the reader's checking pass.  And the end of a command-line run: no
JVM or Python worker outlives it, and the class-data archives stay few.
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
from spark_fixtures import SPARK_MARKS

import acel
from acel.io import read_events
from acel.lang.errors import DataError

pytestmark = SPARK_MARKS

QUERY = "RETURN k, COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c PARTITION BY k WITHIN 5 ON ts"
ROWS = [{"type": "ABCB"[i % 4], "ts": (i * 7) % 23, "v": i * 3 % 7, "k": i % 3} for i in range(60)]
"""Out of time order on purpose: the reader's stable sort decides the positions."""


@pytest.fixture(autouse=True)
def executors_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data sources are asked for (the driver's copy is the default)."""
    monkeypatch.setenv("ACEL_SPARK_FILE_READ", "source")


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    names = list(rows[0])
    path.write_text(",".join(names) + "\n" + "".join(
        ",".join("" if r.get(n) is None else str(r[n]) for n in names) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("write", [_jsonl, _csv], ids=["jsonl", "csv"])
def test_a_file_read_by_the_executors_gives_the_single_process_results(
    spark: Any, tmp_path: Path, write: Any
) -> None:
    from acel.spark_backend import datasource, run_to_results

    rows = [{**r, "x": 0.5 * i if i % 5 else None} for i, r in enumerate(ROWS)]  # a float, NULLs
    data = write(tmp_path / f"e.{'jsonl' if write is _jsonl else 'csv'}", rows)
    assert datasource.wanted(str(data))
    got = run_to_results(QUERY, str(data), time_col="ts", session=spark)
    expected = sorted(acel.run(QUERY, str(data), time_col="ts"), key=lambda r: r.sort_key())
    assert got == expected and len(got) == 3
    # the frame itself: the reader's events, in its order, with its kinds
    found = datasource.frame(spark, str(data), type_col="type", time_col="ts", schema=None)
    assert found is not None
    frame, schema = found
    events, single = read_events(data, time_col="ts")
    assert schema == single
    assert dict(frame.dtypes) == {"type": "string", "ts": "bigint", "v": "bigint", "k": "bigint",
                                  "x": "double"}
    shown = [{k: v for k, v in r.asDict().items() if v is not None} for r in frame.collect()]
    assert shown == [e.as_dict() for e in events]


def test_a_bad_row_gives_the_single_process_message(spark: Any, tmp_path: Path) -> None:
    from acel.spark_backend import run_to_results

    data = _jsonl(tmp_path / "bad.jsonl", ROWS[:4])
    with open(data, "a", encoding="utf-8") as handle:
        handle.write('{"type": "A", "ts": 3, "v": "seven", "k": 0}\n{"type": "B", "ts": 4\n')
    with pytest.raises(DataError) as single:
        read_events(data, time_col="ts")
    with pytest.raises(DataError) as spark_error:
        run_to_results(QUERY, str(data), time_col="ts", session=spark)
    assert str(spark_error.value) == str(single.value)
    assert "line 6" in str(single.value) or "row 6" in str(single.value)


def test_the_driver_copy_stays_available(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from acel.spark_backend import datasource, run_to_results

    data = _jsonl(tmp_path / "e.jsonl", ROWS)
    sourced = run_to_results(QUERY, str(data), time_col="ts", session=spark)
    monkeypatch.delenv(datasource.FILE_READ_ENV)
    assert not datasource.wanted(str(data))
    assert run_to_results(QUERY, str(data), time_col="ts", session=spark) == sourced


def test_spare_class_data_archives_are_removed(tmp_path: Path) -> None:
    from acel.spark_backend import session

    key = "0123456789abcdef"
    dead = 2**22 + 12345  # beyond pid_max's default: no such process
    names = [f"spark-{key}.jsa", f"spark-{key}.{dead}.jsa", f"spark-{key}.{dead + 1}.jsa",
             f"spark-{key}.{os.getpid()}.jsa"] + [f"spark-other{i}.jsa" for i in range(5)]
    for age, name in enumerate(names):
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (time.time() - age, time.time() - age))
    assert session._tidy(tmp_path, key)  # this process "is writing" one
    left = sorted(p.name for p in tmp_path.iterdir())
    assert f"spark-{key}.jsa" in left and f"spark-{key}.{os.getpid()}.jsa" in left
    assert not any(str(dead) in n for n in left)  # dead writers' leftovers: gone
    assert len(left) <= session.MAX_ARCHIVES + 1  # + the one being written
    assert "spark-other0.jsa" in left  # the newest other kept, the older ones removed
    (tmp_path / f"spark-{key}.{os.getpid()}.jsa").unlink()
    assert not session._tidy(tmp_path, key)
    assert len(list(tmp_path.iterdir())) <= session.MAX_ARCHIVES


def test_no_jvm_or_worker_outlives_a_command_line_run(tmp_path: Path) -> None:
    """``acel run --engine spark`` waits for its JVM: every process it started has ended
    when it returns (sampled while it runs), and the results are the single process's."""
    import psutil

    data = _jsonl(tmp_path / "e.jsonl", ROWS)
    out = tmp_path / "out.jsonl"
    acel_bin = str(Path(sys.executable).with_name("acel"))
    proc = subprocess.Popen([acel_bin, "run", QUERY, "--data", str(data), "--time-col", "ts",
                             "--engine", "spark", "--master", "local[2]", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen: dict[int, str] = {}
    watched = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            for child in watched.children(recursive=True):
                seen.setdefault(child.pid, child.name())
        except psutil.Error:
            pass
        time.sleep(0.2)
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 0, err
    assert any("java" in name for name in seen.values()), seen
    alive = [(pid, name) for pid, name in seen.items()
             if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert not alive, alive
    single = tmp_path / "single.jsonl"
    subprocess.run([acel_bin, "run", QUERY, "--data", str(data), "--time-col", "ts", "--out", str(single)],
                   check=True, capture_output=True)
    assert out.read_text() == single.read_text()
