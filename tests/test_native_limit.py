"""The C programmes of bench/c are exact references for W0 (issue 23): byte for byte
what ``acel run`` writes, so the ratios bench/native_limit.py reports compare equal work."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from native_limit import build  # noqa: E402
from pipeline import W0, W0_RETURN, w0_records, write_jsonl  # noqa: E402


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
@pytest.mark.parametrize("query,binary", [(W0_RETURN, "w0_trend"), (W0, "w0_matches")])
def test_the_c_reference_writes_what_acel_writes(tmp_path: Path, query: str, binary: str) -> None:
    data = tmp_path / "w0.jsonl"
    write_jsonl(w0_records(1500, seed=7), data)
    ours = tmp_path / "acel.jsonl"
    subprocess.run(
        [sys.executable, "-m", "acel", "run", query, "--data", str(data), "--out", str(ours)],
        check=True, capture_output=True,
    )
    with open(data, "rb") as src:
        theirs = subprocess.run([str(build(tmp_path)[binary])], stdin=src, capture_output=True,
                                check=True).stdout
    assert ours.read_bytes() == theirs
    assert len(theirs.splitlines()) > (1 if binary == "w0_matches" else 0)
