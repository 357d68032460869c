"""The kit's own error: an engine under test that failed rather than answered."""

from __future__ import annotations

from acel.lang.errors import AcelError


class EngineFailed(AcelError):
    """An engine under test crashed, timed out or wrote something that is not §12."""
