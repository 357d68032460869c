"""One run of a checked query over an event stream, as groups of final results.

This is the loop both the library (:func:`acel.run`) and the command line
(``acel run``) go through: events come from an
:class:`acel.io.source.EventStream` batch by batch, an incremental engine
reads them one by one, and each group of results that became final is handed
on at once (complex events grouped by the position that ends them; RETURN
rows when their window closes or at the end).  Engines without an
incremental runner get the whole stream and give one group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from acel.ast import Query
from acel.engines import Engine
from acel.io.source import EventStream
from acel.schema import Schema

Progress = Callable[[int, int], None]
"""``progress(events_read, results_so_far)``, called every few thousand events."""

PROGRESS_EVERY = 4096


def monotone_hint(query: Query, stream: EventStream) -> bool | None:
    """What the runner may assume about a ``WITHIN … ON attr`` axis (see :class:`Runner`).

    Known from the stream's first pass (or its sort): that answer.  A live
    stream: ``None`` (assumed, and every event checked).  Unknown otherwise:
    ``False``, so nothing is pruned early (exact, more memory).
    """
    within = query.within
    if within is None or within.attr is None:
        return True
    known = stream.monotone(within.attr)
    if known is not None:
        return known
    return None if stream.facts is None and stream.source == "<stdin>" else False


def result_groups(
    query: Query,
    schema: Schema,
    stream: EventStream,
    engine: Engine,
    *,
    max_events: int | None = None,
    progress: Progress | None = None,
    memory_check: Callable[[], None] | None = None,
    build: Any = None,
) -> Iterator[list[Any]]:
    """Groups of final results, in the order of spec §12 across groups.

    ``build`` (incremental engines): what a complex event becomes, e.g. its
    JSON text straight away (:class:`acel.io.lines.LineBuilder`).
    """
    if not engine.incremental:
        events = stream.events(limit=max_events)
        if progress is not None:
            progress(len(events), 0)
        results = engine.batch(query, events, schema)
        if results:
            yield results
        return
    from acel.acea.engine import paused_gc

    runner = engine.runner(query, schema, monotone=monotone_hint(query, stream), build=build)
    found_total = 0
    read = 0
    try:
        with paused_gc():
            for batch in stream.batches():
                if max_events is not None and read + len(batch) > max_events:
                    batch = batch[: max_events - read]
                push = runner.push
                for attrs in batch:
                    found = push(attrs)
                    read += 1
                    if found:
                        found_total += len(found)
                        yield found
                    if read % PROGRESS_EVERY == 0:
                        if progress is not None:
                            progress(read, found_total)
                        if memory_check is not None:
                            memory_check()
                if max_events is not None and read >= max_events:
                    break
            rest = runner.finish()
        found_total += len(rest)
        if rest:
            yield rest
    finally:
        if progress is not None:
            progress(read, found_total)
