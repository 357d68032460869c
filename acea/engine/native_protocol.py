"""The numbers the native engine parts (``acea/engine/native/core.c``, ``enumerate.c``) and
their Python callers share (issue 34): each has one name, here.

``tools/native_protocol.py`` writes them into ``acea/engine/native/protocol.h`` (checked
in, like the parse table); the C code uses the header's names, the planner
(:mod:`acel.acea.engine.native_trend`) and the enumerator these, and
``tests/test_native_protocol.py`` checks that the header is current and that each built
extension reports the same values (its ``PROTOCOL`` attribute, made from the header).
"""

from __future__ import annotations

# the cell kinds of the typed column blocks the reader fills and the core reads (re-exported)
from acel.io.native_protocol import CELL_BOOL as CELL_BOOL
from acel.io.native_protocol import CELL_FLOAT as CELL_FLOAT
from acel.io.native_protocol import CELL_INT as CELL_INT
from acel.io.native_protocol import CELL_NULL as CELL_NULL

# A guard is a predicate program of nested tuples, its first element one of these tags.
PRED_TRUE = 0
"""``(PRED_TRUE,)``"""
PRED_COMPARE = 1
"""``(PRED_COMPARE, CMP_*, left, right)``: left and right are value sources."""
PRED_IN = 2
"""``(PRED_IN, source, values, negated)``"""
PRED_IS_NULL = 3
"""``(PRED_IS_NULL, source)``"""
PRED_NOT = 4
"""``(PRED_NOT, program)``"""
PRED_AND = 5
"""``(PRED_AND, programs)``: every operand evaluated (three-valued)."""
PRED_OR = 6
"""``(PRED_OR, programs)``"""

# A value source of a guard or of a contribution, its first element one of these tags.
SRC_ATTR = 0
"""``(SRC_ATTR, name)`` the event's attribute (``(SRC_ATTR, name, column)`` on columns)."""
SRC_CONST = 1
"""``(SRC_CONST, value)`` a constant."""
SRC_ONE = 2
"""``(SRC_ONE,)`` COUNT(*)'s 1 (contributions only)."""

# A comparison's operator: CPython's rich-comparison codes (core.c checks Py_LT … Py_GE).
CMP_LT = 0
CMP_LE = 1
CMP_EQ = 2
CMP_NE = 3
CMP_GT = 4
CMP_GE = 5
CMP_CODES = {"<": CMP_LT, "<=": CMP_LE, "=": CMP_EQ, "!=": CMP_NE, ">": CMP_GT, ">=": CMP_GE}
"""A query's comparison operator as the core's code."""

# An item's aggregate.
AGG_COUNT = 0
AGG_SUM = 1
AGG_AVG = 2
AGG_MIN = 3
AGG_MAX = 4
AGG_CODES = {"COUNT": AGG_COUNT, "SUM": AGG_SUM, "AVG": AGG_AVG, "MIN": AGG_MIN, "MAX": AGG_MAX}
"""The aggregates the core folds, by name."""

# The window mode (acel.acea.engine.windows.WindowRule) a core follows.
MODE_NONE = 0
"""No WITHIN."""
MODE_WITHIN = 1
"""WITHIN n."""
MODE_TUMBLE = 2
"""WITHIN n SLIDE n: one window a class."""
MODE_SLIDE = 3
"""WITHIN n SLIDE s."""

# A transition of the plan: a tuple of TRANS_FIELDS fields at these indices.
TRANS_TARGET = 0
TRANS_TYPES = 1
TRANS_GUARD = 2
TRANS_CONTRIB = 3
TRANS_CHECK = 4
TRANS_EMITS = 5
TRANS_FIELDS = 6

# Where the plan (the arguments of ``Core(...)``) holds what Python reads back.
PLAN_COLUMNS = 9
"""The columns the core reads, ``type`` first (``None``: attribute maps only)."""
PLAN_TYPE_NAMES = 10
"""The type names whose codes the columns path knows."""
PLAN_NEED = 11
"""Per state, the events a run there still needs (MODE_WITHIN only; ``None``: no pruning)."""
PLAN_FIELDS = 12

COORD_LIMIT = 2**52
"""Coordinates, window sizes and slides the core holds exactly: magnitude below this."""

WATCH_EVERY = 1024
"""The enumerator calls its watcher with the count every this many results."""

SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("predicate-program tags", ("PRED_TRUE", "PRED_COMPARE", "PRED_IN", "PRED_IS_NULL", "PRED_NOT",
                                "PRED_AND", "PRED_OR")),
    ("value-source tags", ("SRC_ATTR", "SRC_CONST", "SRC_ONE")),
    ("comparison operators (CPython's Py_LT ... Py_GE)", ("CMP_LT", "CMP_LE", "CMP_EQ", "CMP_NE", "CMP_GT",
                                                         "CMP_GE")),
    ("aggregates", ("AGG_COUNT", "AGG_SUM", "AGG_AVG", "AGG_MIN", "AGG_MAX")),
    ("window modes", ("MODE_NONE", "MODE_WITHIN", "MODE_TUMBLE", "MODE_SLIDE")),
    ("a transition's fields", ("TRANS_TARGET", "TRANS_TYPES", "TRANS_GUARD", "TRANS_CONTRIB", "TRANS_CHECK",
                               "TRANS_EMITS", "TRANS_FIELDS")),
    ("the plan's fields Python reads back", ("PLAN_COLUMNS", "PLAN_TYPE_NAMES", "PLAN_NEED", "PLAN_FIELDS")),
    ("cell kinds of typed column blocks (acel/io/native_protocol.py)",
     ("CELL_NULL", "CELL_INT", "CELL_FLOAT", "CELL_BOOL")),
    ("limits", ("COORD_LIMIT", "WATCH_EVERY")),
)
"""The shared names, grouped as the header shows them."""


def constants() -> dict[str, int | float | str]:
    """Every shared name and its value, in :data:`SECTIONS` order."""
    return {name: globals()[name] for _title, names in SECTIONS for name in names}
