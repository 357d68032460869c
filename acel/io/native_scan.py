"""The C scanner's shared bits: the CSV column codes, :func:`csv_spec`, and :func:`reader`
(``acel.io._native_reader`` when built and wanted; defined with the switch,
:mod:`acel.io.native_switch`).  The loops that drive it over a file, its block size and
batch size live with the per-record steps they take for each line it leaves
(:mod:`acel.io.record_pass`; re-exported here).

JSON Lines: the scanner reads the plain flat objects that make up nearly every event
file; each other line is handed to the pure-Python reader, which stays the reference.
CSV: the scanner reads files whose lines are all simple; at the first other line the
whole file goes to the Python reader (:class:`NotSimple`).  ``ACEL_NATIVE`` chooses the
path (issue 23, ``papers/io.md``, "The native readers").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acel.io.native_protocol import CSV_BOOL, CSV_FLOAT, CSV_INT, CSV_STR
from acel.io.native_switch import reader
from acel.io.record_pass import BATCH, BLOCK, BOM, NotSimple

__all__ = ["BATCH", "BLOCK", "CSV_KINDS", "NotSimple", "csv_data_start", "csv_spec", "reader"]

CSV_KINDS = {"str": CSV_STR, "int": CSV_INT, "float": CSV_FLOAT, "bool": CSV_BOOL}
"""A column kind as the scanner's code."""


def csv_spec(header: Sequence[str], kinds: Sequence[str]) -> tuple[tuple[bytes, ...], bytes]:
    """The scanner's description of a CSV file's columns."""
    return tuple(h.encode() for h in header), "".join(CSV_KINDS[k] for k in kinds).encode()


def csv_data_start(path: Path) -> bytes:
    """The header line of a CSV file (a BOM dropped), as the scanner skips it."""
    with open(path, "rb") as handle:
        first = handle.readline()
    return first[3:] if first.startswith(BOM) else first
