"""An integer no float holds, in a column whose other values are floats, is a data error
naming its row, on every path (issue 36 D9's follow-up: the reader raised OverflowError).

A column holding ints and floats reads as float (papers/io.md); ``10**400`` has no float,
so the row is reported, whichever comes first in the file and whichever reader runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import acel
from acel.lang.errors import DataError

BIG = 10**400
MESSAGE = ("column 'v': the integer of 401 digits is beyond the float range, and the column's "
           "other values are floats")


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("big_first", [False, True])
def test_a_file_reports_the_row(tmp_path: Path, native: str, big_first: bool) -> None:
    lines = ['{"type":"A","v":1.5}', f'{{"type":"A","v":{BIG}}}']
    if big_first:
        lines.reverse()
    data = tmp_path / "big.jsonl"
    data.write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "-m", "acel", "run", "RETURN AVG(a.v) PATTERN A AS a",
                           "--data", str(data)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "ACEL_NATIVE": native})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    row = 1 if big_first else 2
    assert any(line.startswith(f"  row {row} (line {row}), {MESSAGE}") for line in done.stderr.splitlines())


def test_records_from_the_api_report_the_row() -> None:
    with pytest.raises(DataError) as error:
        list(acel.run("RETURN AVG(a.v) PATTERN A AS a", [{"type": "A", "v": 1.5}, {"type": "A", "v": BIG}]))
    assert str(error.value).splitlines()[1].startswith(f"  row 2, {MESSAGE}")


def test_an_integer_column_keeps_its_huge_values() -> None:
    """Without a float beside it the integer is exact (AVG's exact mean, papers/semantics.md)."""
    rows = list(acel.run("RETURN SUM(a.v) PATTERN A AS a", [{"type": "A", "v": BIG}, {"type": "A", "v": 1}]))
    assert [row.values for row in rows] == [(("SUM(a.v)", BIG + 1),)]
