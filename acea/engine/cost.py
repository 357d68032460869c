"""Bounds on what one run may cost, checked while it runs (issue 35, ``papers/io.md``).

A run's configurations ``(state, τ)`` merge when their registers agree.
Registers that keep a history (``RUNNING SUM``, ``FIRST``/``LAST`` of a growing
bag, ``PREV`` deep in nested iterations) can keep every run apart: over 3,000
events ``(A AS x)+ FILTER x[v > RUNNING AVG(v)]`` has up to 2^3000 distinct
configurations, and the run used to grow until the memory was gone.  Each step
counts the configurations it keeps (a ``len``, no extra pass); past
:data:`MAX_CONFIGURATIONS` the run stops in one line, with what bounds it.
"""

from __future__ import annotations

from acel.lang.errors import AcelError

MAX_CONFIGURATIONS = 10_000
"""The most configurations one partition may keep alive after a step.  Each costs
a few hundred bytes and is read at every later event: 10,000 is a few MiB and
about 0.05 s an event; a run that needs more grows without bound in practice."""


class RunTooCostly(AcelError):
    """A run whose cost passes a documented bound: one line, with what to do instead."""


def check_configurations(count: int, position: int) -> None:
    """Raise :class:`RunTooCostly` when a step keeps more than :data:`MAX_CONFIGURATIONS`."""
    if count > MAX_CONFIGURATIONS:
        raise RunTooCostly(
            f"the run keeps {count:,} distinct partial matches at event {position:,} (at most "
            f"{MAX_CONFIGURATIONS:,}): registers such as RUNNING, PREV, FIRST and LAST keep "
            "runs apart, so they grow with every event; bound them with WITHIN (e.g. WITHIN "
            "20 EVENTS) or PARTITION BY, or drop the history term"
        )


MAX_CLASS_ENTRIES = 50_000
"""The most (configuration, window class) pairs one windowed partition may keep: each
start still inside a wide window is a class of every configuration, so a history
register under ``WITHIN 10^9 EVENTS`` costs configurations × events at every step."""


def check_class_entries(count: int, position: int) -> None:
    """Raise :class:`RunTooCostly` when a windowed step keeps more than
    :data:`MAX_CLASS_ENTRIES` (configuration, start class) pairs."""
    if count > MAX_CLASS_ENTRIES:
        raise RunTooCostly(
            f"the run keeps {count:,} partial matches apart by their start at event "
            f"{position:,} (at most {MAX_CLASS_ENTRIES:,}): a wide WITHIN window keeps every "
            "start, and registers such as RUNNING, PREV, FIRST and LAST multiply them; use a "
            "smaller WITHIN (e.g. WITHIN 100 EVENTS) or PARTITION BY"
        )
