"""Failed Spark jobs as short ``AcelError`` messages, never a Java stack trace.

A failed task surfaces in the driver as a ``Py4JJavaError`` whose text is a
JVM stack trace of a hundred lines or more, or as a pyspark
``PythonException`` holding the Python worker's traceback.  ``spark_errors``
turns either into one or two lines: what failed (``task 0 in stage 21.0
failed 4 times``, or the Spark error's own first line) and the root cause
(``Python worker exited unexpectedly (crashed)``, the worker's last traceback
line ``ModuleNotFoundError: No module named 'acel'``, the innermost
``Caused by:``).  The executor's own ``DataError``/``AcelError`` messages come
back as those classes, word for word.  The full Spark text stays on the
exception (``SparkJobError.detail``) for whoever needs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from acel.lang.errors import AcelError, DataError


class SparkJobError(AcelError):
    """A Spark job (or Spark itself) failed; the message is short, ``detail`` is Spark's text."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


_JAVA_CLASS = re.compile(r"\b(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:\$[\w$]+)*: ")
"""A qualified Java class name and its colon (``org.apache.spark.SparkException: ``)."""
_STAGE_FAILURE = re.compile(
    r"Job aborted due to stage failure: (?P<what>Task \S+ in stage \S+ failed \d+ times?)"
    r"(?:, most recent failure: Lost task [^:]*?\([^)]*\): (?P<cause>.*))?"
)
_MAX_LINE = 240


def _shorten(line: str) -> str:
    """One line without Java class prefixes or Spark's advice on settings, at most ~240 chars."""
    line = _JAVA_CLASS.sub("", line).strip()
    line = re.sub(r"\s*SQLSTATE: \w+\s*$", "", line)
    line = re.sub(r"\.?\s*Consider setting .*$", "", line)
    return line if len(line) <= _MAX_LINE else line[: _MAX_LINE - 3] + "..."


def _python_cause(text: str) -> str | None:
    """The last line of the last Python traceback in ``text`` (the exception raised)."""
    if "Traceback (most recent call last):" not in text:
        return None
    tail = text.rsplit("Traceback (most recent call last):", 1)[1]
    found = None
    for line in tail.splitlines():
        stripped = line.strip()
        if not stripped or line.startswith((" ", "\t")):
            continue  # frames ("  File ...", code lines) are indented; Java frames too
        if stripped.startswith(("SQLSTATE", "at ", "Caused by:", "Driver stacktrace")):
            break
        found = stripped
    return found


def _head(text: str) -> str:
    """The error's first meaningful line (Py4J starts with "An error occurred while calling")."""
    for line in text.splitlines():
        stripped = line.strip().lstrip(":").strip()
        if not stripped or stripped.startswith("An error occurred while calling"):
            continue
        return stripped
    return text.strip()


def _acel_error(text: str) -> AcelError | None:
    """An executor's ``acel.lang.errors.DataError``/``AcelError``, message unchanged."""
    for name, cls in (("DataError", DataError), ("AcelError", AcelError)):
        marker = f"acel.lang.errors.{name}: "
        if marker in text:
            return cls(text.split(marker, 1)[1].strip().splitlines()[0])
    return None


def summarize(text: str) -> AcelError:
    """The short error for a Spark failure's full text (see the module docstring)."""
    known = _acel_error(text)
    if known is not None:
        return known
    head = _head(text)
    python = _python_cause(text)
    stage = _STAGE_FAILURE.search(head)
    if stage is not None:
        what = "Spark job failed: " + stage["what"][0].lower() + stage["what"][1:]
        cause = python or (_shorten(stage["cause"]) if stage["cause"] else None)
    elif python is not None:
        what = "Spark job failed in a Python worker"
        cause = python
    else:
        what = "Spark failed: " + _shorten(head)
        caused = [line.strip()[len("Caused by:"):] for line in text.splitlines()
                  if line.strip().startswith("Caused by:")]
        cause = _shorten(caused[-1]) if caused else None
        if cause is not None and (":" not in cause or cause in what):
            cause = None  # a bare exception class (EOFException) says nothing new
    message = what if not cause else f"{what}\n  cause: {cause}"
    missing = re.search(r"ModuleNotFoundError: No module named '([^']+)'", text)
    if missing is not None and missing[1].split(".")[0] != "acel":  # acel itself: shipping
        message += (
            f"\n  fix: the workers' Python lacks {missing[1]!r}: point PYSPARK_PYTHON (or "
            "spark.pyspark.python) at a Python that has pyarrow and pandas"
        )
    return SparkJobError(message, text)


@contextmanager
def spark_errors() -> Iterator[None]:
    """Turn Spark's and Py4J's exceptions raised in the body into short ``AcelError``s.

    ``AcelError`` and anything that is not a Spark failure pass unchanged.
    """
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        yield
    except AcelError:
        raise
    except (PySparkException, Py4JError) as error:
        raise summarize(str(error)) from None


__all__ = ["SparkJobError", "spark_errors", "summarize"]
