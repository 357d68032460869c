"""AVG of integers beyond the float range (issue 36 D9): the exact mean rounded to an
integer, never an OverflowError; a float otherwise (papers/semantics.md)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import acel
from acel.lang.aggregates import AVG

BIG = 10**400


def _avg(values: list[object], engine: str = "optimized") -> object:
    rows = acel.run("RETURN AVG(a.v) PATTERN A AS a", [{"type": "A", "v": v} for v in values],
                    engine=engine).to_list()
    return dict(rows[0].values)["AVG(a.v)"]


@pytest.mark.parametrize("engine", ["optimized", "oracle", "automaton"])
def test_avg_beyond_the_float_range_is_the_rounded_exact_mean(engine: str) -> None:
    assert _avg([BIG], engine) == BIG
    assert _avg([BIG, BIG + 1, 3, -10 * BIG], engine) == -2 * BIG + 1  # (-8·10^400 + 4) / 4
    assert _avg([BIG, BIG + 1], engine) == BIG  # BIG + 1/2: ties to even


def test_avg_within_the_float_range_stays_the_nearest_float() -> None:
    assert _avg([10**300, 1]) == 5e299 and type(_avg([10**300, 1])) is float
    assert _avg([2**80 + 1, 2**80 + 2]) == float(2**80)  # correctly rounded from the exact mean
    assert _avg([1, 2]) == 1.5


def test_the_aggregate_mixing_floats_and_huge_integers() -> None:
    state = AVG.fold([BIG, 1.5, 0.5])
    assert (BIG + 2) % 3 == 0 and AVG.finish(state) == (BIG + 2) // 3  # summed exactly
    assert AVG.finish(AVG.fold([BIG, math.inf])) == math.inf
    assert math.isnan(AVG.finish(AVG.fold([BIG, math.nan])))  # type: ignore[arg-type]
    assert AVG.finish(AVG.fold([10**300, 1.5])) == 5e299


@pytest.mark.parametrize("native", ["0", "1"])
@pytest.mark.parametrize("query", [
    "RETURN AVG(a.v) PATTERN A AS a",
    "RETURN AVG(a.v) PATTERN (A AS a)+ WITHIN 2 EVENTS",
])
def test_the_command_line_on_both_paths(tmp_path: Path, native: str, query: str) -> None:
    data = tmp_path / "huge.jsonl"
    data.write_text(f'{{"type":"A","v":{BIG}}}\n')
    done = subprocess.run([sys.executable, "-m", "acel", "run", query, "--data", str(data)],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, ACEL_NATIVE=native))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows and all(row["AVG(a.v)"] == BIG for row in rows)
