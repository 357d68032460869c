"""A result held back for its trailing-negation verdict (spec §3.1).

Its own module so that the runner, which holds these, and the state codec
(:mod:`acel.acea.engine.codec`), which saves and restores them, both import it
without importing each other (the module import graph has no cycle).
"""

from __future__ import annotations

from typing import Any


class Held:
    """A result (or a RETURN contribution) waiting for its trailing-negation verdict."""

    __slots__ = ("end", "local", "deadline", "item", "windows", "status")

    def __init__(self, end: int, local: int, deadline: Any, item: Any, windows: list[Any]) -> None:
        self.end = end
        self.local = local
        """``j``, the end inside the partition (a ψ match must start after it)."""
        self.deadline = deadline
        """The coordinate from which no ψ match can block it any more."""
        self.item = item
        """A Match (MATCHES), a ComplexEvent (COLLECT) or a trend vector (PROPAGATE)."""
        self.windows = windows
        """The SLIDE windows it still counts in (``[None]`` without SLIDE)."""
        self.status: bool | None = None
        """``True`` kept, ``False`` blocked, ``None`` undecided."""
