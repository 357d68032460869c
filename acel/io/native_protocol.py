"""The numbers the native reader (``acel/io/native/reader.c``) and its Python callers share
(issue 34): each has one name, here.

``tools/native_protocol.py`` writes them into ``acel/io/native/protocol.h`` (checked in,
like the parse table); the reader uses the header's names, the Python side these, and
``tests/test_native_protocol.py`` checks that the header is current and that the built
extension reports the same values (its ``PROTOCOL`` attribute, made from the header).
"""

from __future__ import annotations

# A cell's kind in a typed column block (acel.io.columns.ColumnBlock ``kinds``: a byte a cell).
CELL_NULL = 0
CELL_INT = 1
CELL_FLOAT = 2
CELL_BOOL = 3

MAX_TYPE_CODES = 256
"""Type names a block's code list holds; an event of another new type goes as its attribute map."""

BIG = 9.2e18
"""Floats this large in magnitude may be integers: the reader leaves them to Python
(``acel.io.formats``)."""

# What a call of the scanner ended on (``first_pass``, ``emit``, ``columns``: the status).
SCAN_END = 0
"""Every line up to the end of the buffer is read."""
SCAN_PYTHON = 1
"""The line at ``pos`` is the Python reader's."""
SCAN_FULL = 2
"""The batch (or block) is full."""
SCAN_NOT_SIMPLE = 3
"""A CSV line the scanner does not read: the whole file goes to the Python reader."""

# A CSV column's kind as the scanner's code (``csv_spec``: one byte a column).
CSV_STR = "s"
CSV_INT = "i"
CSV_FLOAT = "d"
CSV_BOOL = "b"

# ``csv_kinds``'s flags: CSV_FLAGS bytes a column, at these offsets.
CSV_FLAG_INT = 0
"""Every cell is an integer (starts 1)."""
CSV_FLAG_FLOAT = 1
"""Every cell is a number (starts 1)."""
CSV_FLAG_BOOL = 2
"""Every cell is true or false (starts 1)."""
CSV_FLAG_NUMERIC = 3
"""Some cell is a number (starts 0)."""
CSV_FLAG_TYPED = 4
"""Some cell is a number or a bool (starts 0)."""
CSV_FLAGS = 5



class NotSimple(Exception):
    """A CSV line the scanner does not read (``SCAN_NOT_SIMPLE``): the Python reader reads the file."""


SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("typed column blocks (acel/io/columns.py): cell kinds, type codes",
     ("CELL_NULL", "CELL_INT", "CELL_FLOAT", "CELL_BOOL", "MAX_TYPE_CODES")),
    ("floats this large may be integers (acel/io/formats.py)", ("BIG",)),
    ("the scanner's status", ("SCAN_END", "SCAN_PYTHON", "SCAN_FULL", "SCAN_NOT_SIMPLE")),
    ("CSV column kinds", ("CSV_STR", "CSV_INT", "CSV_FLOAT", "CSV_BOOL")),
    ("csv_kinds flags: CSV_FLAGS bytes a column",
     ("CSV_FLAG_INT", "CSV_FLAG_FLOAT", "CSV_FLAG_BOOL", "CSV_FLAG_NUMERIC", "CSV_FLAG_TYPED", "CSV_FLAGS")),
)
"""The shared names, grouped as the header shows them."""


def constants() -> dict[str, int | float | str]:
    """Every shared name and its value, in :data:`SECTIONS` order."""
    return {name: globals()[name] for _title, names in SECTIONS for name in names}
