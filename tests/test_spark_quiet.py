"""Spark's noise stays out of a notebook's cell (issue 37 §4): a script that starts the
embedded session and runs a query writes to stderr only the JVM's one start-up line
(``--add-modules=jdk.incubator.vector``, which Spark's launcher always passes) and the
warnings acel means, attributed to the script's own line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from spark_fixtures import SPARK_MARKS

pytestmark = SPARK_MARKS

SCRIPT = """\
import acel
spark = acel.spark.session("local[1]")
df = spark.createDataFrame([{"type": "A", "v": 1, "k": 1}, {"type": "B", "v": 2, "k": 1}])
frame = acel.spark.run("RETURN COUNT(*) PATTERN A AS a ; B AS b", df)
print(frame.collect()[0]["count"])
print(acel.spark.run("A AS a ; B AS b PARTITION BY k", df).count())
"""
JVM_LINE = "WARNING: Using incubator modules: jdk.incubator.vector"


def test_a_run_writes_no_log_lines_and_warns_at_the_callers_line(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["1", "1"]
    lines = [line for line in result.stderr.splitlines() if line != JVM_LINE]
    assert lines == [
        f"{script}:4: NotParallelWarning: the query has neither PARTITION BY nor WITHIN, so it "
        "cannot be parallelised: it runs as one ordered partition",
        '  frame = acel.spark.run("RETURN COUNT(*) PATTERN A AS a ; B AS b", df)',
    ], result.stderr
