"""The standard library in orjson's place, where orjson (a compiled package) is missing.

A Spark worker may have only what PySpark needs (pyarrow and pandas), and the shipped
acel zip cannot carry compiled code for it (issue 25).  ``loads`` always declines, so the
readers take their exact standard-library path; ``dumps`` writes what orjson writes for
the values the writers give it (a ``str``), as UTF-8 bytes.
"""

from __future__ import annotations

import json
from typing import Any


class JSONDecodeError(ValueError):
    """Raised by :func:`loads` on every input: the caller's exact path decides."""


def loads(data: bytes | str) -> Any:
    """Decline: the readers then parse the line with the standard library, checked."""
    raise JSONDecodeError("orjson is not installed")


def dumps(value: Any) -> bytes:
    """Compact JSON as UTF-8 bytes (non-ASCII kept, as orjson does)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
