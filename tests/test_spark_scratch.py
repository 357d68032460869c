"""Spark's scratch folders a killed run left are removed by the next run, and only those
(issue 36 D12); tested without Spark."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from acel.spark_backend import frames
from acel.spark_backend.scratch import host_tag, is_stale, make_folder, owner_tag, remove_stale

MAKER = ("import sys, time; from acel.spark_backend.scratch import make_folder; "
         "print(make_folder(sys.argv[1]), flush=True); time.sleep(60)")


def _killed_run_folder(parent: Path) -> Path:
    """The scratch folder of a process SIGKILLed while it ran (as a killed Spark run)."""
    process = subprocess.Popen([sys.executable, "-c", MAKER, str(parent)], stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None
    folder = Path(process.stdout.readline().strip())
    (folder / "events.parquet").write_bytes(b"x" * 100)
    assert not is_stale(folder.name)  # its owner runs
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    return folder


def test_the_next_run_removes_a_killed_runs_folder_and_no_other(tmp_path: Path) -> None:
    dead = _killed_run_folder(tmp_path)
    assert dead.name.startswith(".acel-spark-") and is_stale(dead.name)
    mine = Path(make_folder(str(tmp_path)))
    other_host = tmp_path / f".acel-spark-{'0' * 8 if host_tag() != '0' * 8 else '1' * 8}-1-0-x"
    legacy = tmp_path / ".acel-spark-abc123"  # an older acel's name: its owner is unknown
    reused = tmp_path / f".acel-spark-{owner_tag()}"[:-1]  # this pid, another start time
    reused = reused.with_name(reused.name.rsplit("-", 1)[0] + "-1-y")
    unrelated = tmp_path / "acel-spark-data"
    for folder in (other_host, legacy, reused, unrelated):
        folder.mkdir()
    link = tmp_path / f".acel-spark-{host_tag()}-999999999-0-link"
    link.symlink_to(unrelated)
    assert sorted(remove_stale(str(tmp_path))) == sorted([str(dead), str(reused)])
    assert not dead.exists() and not reused.exists()
    assert mine.exists() and other_host.exists() and legacy.exists() and unrelated.exists()
    assert link.is_symlink()


def test_the_events_copy_folder_sweeps_its_parent_first(tmp_path: Path) -> None:
    dead = _killed_run_folder(tmp_path)
    data = tmp_path / "events.jsonl"
    data.write_text('{"type":"A"}\n')
    folder = frames._temporary_folder(str(data))
    try:
        assert not dead.exists()
        assert Path(folder).parent == tmp_path and Path(folder).name.startswith(
            f".acel-spark-{owner_tag()}")
        assert not is_stale(Path(folder).name) and os.path.isdir(folder)
    finally:
        frames._remove(folder)
