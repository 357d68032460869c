"""Garbage collection around ``acel``'s start-up (issue 23; papers/engine.md "Start-up").

Starting ``acel run`` allocates some 10^5 objects that live as long as the process
(modules, classes, the parser's table, the compiled plan) and no garbage cycles;
Python's collector would scan them again and again while they are made.  The
command line (only when it is the process: ``acel``, ``python -m acel``) pauses
collection for the start-up, then, before the events, freezes what start-up made
(``gc.freeze``: never scanned again, still freed by reference counting) and turns
collection back on, so a long run collects its own garbage as usual.
"""

from __future__ import annotations

import gc

_paused = False


def pause_collection() -> None:
    """Stop the cyclic garbage collector for the start-up (if it runs)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collection() -> None:
    """Turn the collector back on (after freezing the start-up's objects) if
    :func:`pause_collection` stopped it; otherwise nothing."""
    global _paused
    if _paused:
        gc.freeze()
        gc.enable()
        _paused = False
