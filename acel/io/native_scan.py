"""The C scanner, :func:`reader` (``acel.io._native_reader`` when built and ``ACEL_NATIVE``
wants it: :func:`acel.io.record_pass.scanner`, the switch :mod:`acel.io.native_switch`'s
rule).  The loops that drive it over a file, its block size and batch size live with the
per-record steps they take for each line it leaves (:mod:`acel.io.record_pass`;
re-exported here).  Readers call ``native_scan.reader`` through this module, so a test
may replace it.

JSON Lines: the scanner reads the plain flat objects that make up nearly every event
file; each other line is handed to the pure-Python reader, which stays the reference.
CSV: the scanner reads files whose lines are all simple; at the first other line the
whole file goes to the Python reader (:class:`NotSimple`).  ``ACEL_NATIVE`` chooses the
path (issue 23, ``papers/io.md``, "The native readers").
"""

from __future__ import annotations

from acel.io.record_pass import BATCH, BLOCK, NotSimple
from acel.io.record_pass import scanner as reader

__all__ = ["BATCH", "BLOCK", "NotSimple", "reader"]
