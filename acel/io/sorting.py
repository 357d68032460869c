"""Stable sort of a stream by its time column, in bounded memory (spec §1, §12).

Events are sorted by their time key, ties keeping input order.  Up to
``chunk`` events are sorted in memory; a longer stream is cut into sorted
runs of ``chunk`` events spilled to temporary files, then merged (an
external merge sort: memory is one chunk plus one batch per run, whatever
the stream's length).  Python's sort and :func:`heapq.merge` are both stable
(a run read earlier wins ties), so the result is exactly the stable sort.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import IO, Any

BATCH = 8192
"""Records (events) per batch a source hands out."""

DEFAULT_CHUNK = int(os.environ.get("ACEL_SORT_CHUNK", "1000000"))
"""Events sorted in memory before spilling a run (``ACEL_SORT_CHUNK`` overrides)."""

SPILL_BATCH = 4096
"""Events per pickled batch inside a run file."""

Keyed = tuple[Any, dict[str, Any]]


def _key(item: Keyed) -> Any:
    return item[0]


def sort_by_time(items: Iterable[Keyed], chunk: int = DEFAULT_CHUNK) -> Iterator[dict[str, Any]]:
    """The attribute maps of ``(time key, attrs)`` items, stably sorted by key."""
    runs: list[IO[bytes]] = []
    buffer: list[Keyed] = []
    try:
        for item in items:
            buffer.append(item)
            if len(buffer) >= chunk:
                buffer.sort(key=_key)
                runs.append(_spill(buffer))
                buffer = []
        buffer.sort(key=_key)
        if not runs:
            for _, attrs in buffer:
                yield attrs
            return
        if buffer:
            runs.append(_spill(buffer))
            buffer = []
        import heapq  # here: a stream that fits in memory never loads it (start-up, issue 23)

        for _, attrs in heapq.merge(*(_read(run) for run in runs), key=_key):
            yield attrs
    finally:
        for run in runs:
            run.close()


def _spill(items: list[Keyed]) -> IO[bytes]:
    import pickle
    import tempfile

    handle = tempfile.TemporaryFile(prefix="acel-sort-")
    for start in range(0, len(items), SPILL_BATCH):
        pickle.dump(items[start : start + SPILL_BATCH], handle, protocol=pickle.HIGHEST_PROTOCOL)
    handle.seek(0)
    return handle


def _read(handle: IO[bytes]) -> Iterator[Keyed]:
    import pickle

    while True:
        try:
            batch = pickle.load(handle)
        except EOFError:
            return
        yield from batch


def ordered(
    checked: Iterator[list[Keyed]], sort: bool, chunk: int
) -> Iterator[list[dict[str, Any]]]:
    """Batches of attribute maps in stream order (stable-sorted by time when needed)."""
    if not sort:
        for batch in checked:
            yield [attrs for _, attrs in batch]
        return
    flat = (item for batch in checked for item in batch)
    out: list[dict[str, Any]] = []
    for attrs in sort_by_time(flat, chunk):
        out.append(attrs)
        if len(out) >= BATCH:
            yield out
            out = []
    if out:
        yield out
