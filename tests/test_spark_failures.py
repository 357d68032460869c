"""A failed Spark job is a short message, and the default session retries (issue 17).

``summarize`` is checked on the texts Spark really produces (abridged: the
stack frames are cut to a few); the command line is checked end to end in a
subprocess with the *default* master, where every attempt of a task kills its
Python worker: the job fails after four attempts and ``acel run`` prints two
lines, not a Java stack trace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acel.spark_backend.failures import SparkJobError, summarize

from acel.lang.errors import AcelError, DataError

FRAMES = "\n".join(
    f"\tat org.apache.spark.scheduler.Task.run(Task.scala:{n})" for n in range(140, 147)
)

WORKER_CRASH = (
    "An error occurred while calling o483.collectToPython.\n"
    ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 21.0 "
    "failed 4 times, most recent failure: Lost task 0.3 in stage 21.0 (TID 37) (localhost "
    "executor driver): org.apache.spark.SparkException: Python worker exited unexpectedly "
    "(crashed). Consider setting 'spark.sql.execution.pyspark.udf.faulthandler.enabled' "
    "or'spark.python.worker.faulthandler.enabled' configuration to 'true' for the better "
    f"Python traceback.\n{FRAMES}\nCaused by: java.io.EOFException\n{FRAMES}\n"
    f"Driver stacktrace:\n{FRAMES}\n"
)

MISSING_MODULE = (
    "An error occurred while calling o77.collectToPython.\n"
    ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 2.0 "
    "failed 4 times, most recent failure: Lost task 1.3 in stage 2.0 (TID 9) (127.0.0.1 "
    "executor 0): org.apache.spark.api.python.PythonException: Traceback (most recent call "
    "last):\n  File \"/w/pyspark.zip/pyspark/worker.py\", line 2001, in main\n"
    "    func, profiler, deserializer, serializer = read_udfs(pickleSer, infile, eval_type)\n"
    "ModuleNotFoundError: No module named 'acel'\n\n"
    f"{FRAMES}\nDriver stacktrace:\n{FRAMES}\n"
)

PYTHON_ERROR = (
    "An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
    '  File "/w/executor.py", line 233, in evaluate_task\n    inject_fault(spec.fault)\n'
    "RuntimeError: acel: injected fault on every task attempt (test only)\n"
)

BAD_FILE = (
    "An error occurred while calling o491.parquet.\n"
    ": org.apache.spark.SparkException: [FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] Encountered "
    "error while reading file file:/tmp/bad.parquet. Could not read footer. SQLSTATE: KD001\n"
    f"{FRAMES}\nCaused by: java.lang.RuntimeException: file:/tmp/bad.parquet is not a Parquet "
    f"file. Expected magic number at tail, but found [97, 108, 108, 10]\n{FRAMES}\n"
)

EXECUTOR_DATA_ERROR = (
    "An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
    '  File "/w/executor.py", line 270, in typed_value\n'
    "acel.lang.errors.DataError: RETURN COUNT(*) = 1361129467683753853853498429727072845823 does "
    "not fit DECIMAL(38,0)\n"
)


@pytest.mark.parametrize(
    "text, message",
    [
        (WORKER_CRASH, "Spark job failed: task 0 in stage 21.0 failed 4 times\n"
                       "  cause: Python worker exited unexpectedly (crashed)"),
        (MISSING_MODULE, "Spark job failed: task 1 in stage 2.0 failed 4 times\n"
                         "  cause: ModuleNotFoundError: No module named 'acel'"),
        (PYTHON_ERROR, "Spark job failed in a Python worker\n"
                       "  cause: RuntimeError: acel: injected fault on every task attempt "
                       "(test only)"),
        (BAD_FILE, "Spark failed: [FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] Encountered error "
                   "while reading file file:/tmp/bad.parquet. Could not read footer.\n"
                   "  cause: file:/tmp/bad.parquet is not a Parquet file. Expected magic "
                   "number at tail, but found [97, 108, 108, 10]"),
    ],
)
def test_spark_failures_become_two_lines(text: str, message: str) -> None:
    error = summarize(text)
    assert isinstance(error, AcelError)  # the command line prints it, no traceback
    assert isinstance(error, SparkJobError)
    assert str(error) == message
    assert error.detail == text


def test_a_worker_python_without_the_libraries_names_pyspark_python() -> None:
    text = MISSING_MODULE.replace("No module named 'acel'", "No module named 'pyarrow'")
    assert str(summarize(text)) == (
        "Spark job failed: task 1 in stage 2.0 failed 4 times\n"
        "  cause: ModuleNotFoundError: No module named 'pyarrow'\n"
        "  fix: the workers' Python lacks 'pyarrow': point PYSPARK_PYTHON (or "
        "spark.pyspark.python) at a Python that has pyarrow and pandas"
    )


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_a_script_with_its_own_local_session_runs_without_the_venv_activated(
    tmp_path: Path,
) -> None:
    """``.venv/bin/python script.py`` with the user's own SparkSession: Spark would start the
    system python3 (no pyarrow) for its workers; the toolkit points them at this Python."""
    script = tmp_path / "script.py"
    script.write_text(
        "from pyspark.sql import SparkSession\n"
        "import acel\n"
        "spark = SparkSession.builder.master('local[2]').getOrCreate()\n"
        "df = spark.createDataFrame([{'type': 'A', 'v': 1}, {'type': 'B', 'v': 2}])\n"
        "print(len(acel.spark.collect('A AS a ; B AS b', df)))\n"
    )
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYSPARK_", "SPARK_", "VIRTUAL_ENV"))}
    env["PATH"] = "/usr/bin:/bin"  # python3 there is the system's, without pyarrow
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "1"


def test_an_executor_data_error_comes_back_word_for_word() -> None:
    error = summarize(EXECUTOR_DATA_ERROR)
    assert type(error) is DataError
    assert str(error) == (
        "RETURN COUNT(*) = 1361129467683753853853498429727072845823 does not fit DECIMAL(38,0)"
    )


def test_an_unknown_text_is_still_one_short_line() -> None:
    error = summarize("An error occurred while calling o1.x.\n: java.lang.IllegalStateException: "
                      "Cannot call methods on a stopped SparkContext.\n" + FRAMES)
    assert str(error) == "Spark failed: Cannot call methods on a stopped SparkContext."


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_the_command_line_retries_four_times_by_default_then_says_why_in_two_lines(
    tmp_path: Path,
) -> None:
    """``acel run --engine spark`` on the default master; every attempt kills its worker."""
    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps({"type": "AB"[i % 2], "x": i}) + "\n" for i in range(8)))
    conf = tmp_path / "conf"
    conf.mkdir()
    # A user's Spark settings file: the test-only fault comes in the way any setting would.
    (conf / "spark-defaults.conf").write_text("spark.acel.test.failFirstAttempt kill-always\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env["SPARK_CONF_DIR"] = str(conf)
    result = subprocess.run(
        [sys.executable, "-m", "acel", "run", "A AS a ; B AS b", "--data", str(data),
         "--engine", "spark"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    error = [i for i, line in enumerate(lines) if line.startswith("acel run: error: ")]
    assert len(error) == 1, result.stderr
    at = error[0]
    assert lines[at].startswith("acel run: error: Spark job failed: task ")
    assert lines[at].endswith(" failed 4 times")  # local[*,4]: three retries by default
    assert lines[at + 1:] == ["  cause: Python worker exited unexpectedly (crashed)"]
    # No Java stack trace and no Python traceback anywhere (the logs of failed attempts
    # are off too); what else is there are progress lines, one of them counting retries.
    assert not any(line.lstrip().startswith("at ") or "Exception" in line
                   or "Traceback" in line for line in lines), result.stderr


# ----------------------------------------------------------------- Ctrl-C and SIGTERM


def _spark_run_then_signal(tmp_path: Path, sig: int) -> tuple[int, list[str], Path]:
    """``acel run --engine spark`` on a file, signalled once its Spark job is running.

    Every task waits before it works (the test-only ``hold`` fault, set the way a user's
    setting comes), so a few thousand events keep the job running (it took 300,000)."""
    import time

    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps({"type": "AB"[i % 3 == 0], "k": i % 10, "v": i}) + "\n"
                            for i in range(3_000)))
    err = tmp_path / "err.txt"
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.acel.test.failFirstAttempt hold:600\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env["SPARK_CONF_DIR"] = str(conf)
    with err.open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "acel", "run", "A AS a ; B AS b PARTITION BY k WITHIN 20 EVENTS",
             "--data", str(data), "--engine", "spark", "--out", str(tmp_path / "out.jsonl")],
            stdout=subprocess.DEVNULL, stderr=errors, env=env, cwd=tmp_path,
        )
        deadline = time.monotonic() + 280
        while "tasks done" not in err.read_text() and time.monotonic() < deadline:
            if process.poll() is not None:
                break
            time.sleep(0.5)
        assert process.poll() is None, err.read_text()
        assert list(tmp_path.glob(".acel-spark-*")), "the events' copy is beside the input"
        process.send_signal(sig)
        code = process.wait(120)
    return code, err.read_text().splitlines(), data


def test_ctrl_c_under_spark_is_one_line(tmp_path: Path) -> None:
    """Issue 24 item 10: was 4 py4j/pyspark tracebacks (55 lines) before "interrupted"."""
    import signal as signals

    code, lines, _ = _spark_run_then_signal(tmp_path, signals.SIGINT)
    assert code == 130, lines
    assert lines[-1] == "acel run: interrupted", lines
    assert not any("Traceback" in line or "py4j" in line or "ERROR" in line for line in lines), lines
    assert not list(tmp_path.glob(".acel-spark-*"))


def test_sigterm_under_spark_removes_the_copy_of_the_events(tmp_path: Path) -> None:
    """Issue 24 item 11: SIGTERM left ``.acel-spark-*/events.parquet``, a full copy of the
    events, beside the input."""
    import signal as signals

    code, lines, _ = _spark_run_then_signal(tmp_path, signals.SIGTERM)
    assert code == 143, lines
    assert lines[-1] == "acel run: terminated", lines
    assert not any("Traceback" in line for line in lines), lines
    assert not list(tmp_path.glob(".acel-spark-*")), "the copy of the events is left"
