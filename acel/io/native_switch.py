"""``ACEL_NATIVE``: which per-event path runs, native C or pure Python (issue 23).

The pure-Python code is the reference and the fallback.  ``auto`` (the default)
uses a native module when it was built and the query is in its fragment; ``1``
insists on it (a run that cannot use it stops with one line saying why); ``0``
runs pure Python everywhere.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from acel.lang.errors import AcelError

Mode = Literal["auto", "on", "off"]

VARIABLE = "ACEL_NATIVE"
MODES: dict[str, Mode] = {
    "": "auto", "auto": "auto",
    "1": "on", "on": "on", "yes": "on", "true": "on",
    "0": "off", "off": "off", "no": "off", "false": "off",
}
"""Each accepted value of the variable (stripped, lower case) and the mode it asks for."""


class NativeUnavailable(AcelError):
    """``ACEL_NATIVE=1`` but the native path cannot run this (not built, or outside its fragment)."""


def mode() -> Mode:
    """The mode ``ACEL_NATIVE`` asks for (read at every call, so tests may change it)."""
    raw = os.environ.get(VARIABLE, "").strip().lower()
    if raw not in MODES:
        raise AcelError(f"{VARIABLE}={raw!r}: use auto, 1 (native only) or 0 (pure Python)")
    return MODES[raw]


def wanted(available: bool, why_not: str) -> bool:
    """Whether to take the native path, given whether it can run here.

    ``why_not`` is the one-line reason given when ``ACEL_NATIVE=1`` and it cannot.
    """
    chosen = mode()
    if chosen == "off":
        return False
    if not available and chosen == "on":
        raise NativeUnavailable(f"{VARIABLE}=1 but the native path cannot run: {why_not}")
    return available


def reader() -> Any | None:
    """The C scanner (``acel.io._native_reader``, driven by :mod:`acel.io.row_passes`) when
    ``ACEL_NATIVE`` wants it and it was built, else ``None``."""
    import importlib

    try:
        module: Any = importlib.import_module("acel.io._native_reader")
    except ImportError:
        module = None
    why = "the C reader acel.io._native_reader is not built (pip install -e . needs a C compiler)"
    return module if wanted(module is not None, why) else None
