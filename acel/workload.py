"""Workloads: several named queries over one stream, in one pass (spec §6.1).

A workload comes from query files, folders of them, or one file that holds
several named queries, each starting with a ``QUERY name:`` header line::

    -- rides.acel
    QUERY long_trips:
      RETURN COUNT(*) PATTERN Request ; (Travel)+ ; Dropoff
      WITHIN 600 EVENTS SLIDE 600 EVENTS

    QUERY cancelled:
      RETURN COUNT(*) PATTERN Request ; (Travel)+ ; Cancel
      WITHIN 600 EVENTS SLIDE 600 EVENTS

A file without a header is one query named after the file's stem; a folder
gives its ``*.acel`` files in name order.  Names are unique in a workload
(letters, digits, ``_``, ``-`` and ``.``); a duplicate, or query text before
the first header of a file that has headers, is a :class:`WorkloadError`.

:func:`run_workload` (events in memory) and :func:`workload_groups` (an
:class:`~acel.io.source.EventStream`, results as they become final) run it
with :class:`~acel.acea.engine.workload.WorkloadRunner`: every query gives
what it gives alone, its results tagged with its name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acel.io.formats import could_be_path, read_text_file
from acel.lang.ast import Query
from acel.lang.errors import AcelError, QueryError
from acel.lang.schema import Schema

HEADER = re.compile(r"^[ \t]*QUERY[ \t]+([^\s:]*)[ \t]*:", re.IGNORECASE | re.MULTILINE)
"""A line starting a named query of a multi-query file: ``QUERY name:``."""

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")

SUFFIXES = (".acel",)
"""The files a folder contributes to a workload."""


class WorkloadError(QueryError):
    """A workload that cannot be read: a duplicate or missing name, an empty query."""


@dataclass(frozen=True)
class NamedQuery:
    """One query of a workload, with what error messages need."""

    name: str
    query: Query
    text: str
    """The text the parser read: the file with everything but this query blanked,
    so that line and column numbers are the file's."""
    source: str
    """The file it comes from (``<text>`` for literal text)."""
    locations: Any = None


# ------------------------------------------------------------------ reading


def has_headers(text: str) -> bool:
    """Whether query text holds ``QUERY name:`` headers (several named queries)."""
    return HEADER.search(text) is not None


def _blank(text: str, keep: tuple[int, int]) -> str:
    """``text`` with every character outside ``keep`` turned into a space (newlines kept)."""
    lo, hi = keep
    outside = re.compile(r"[^\n]")
    return outside.sub(" ", text[:lo]) + text[lo:hi] + outside.sub(" ", text[hi:])


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _meaningful(text: str) -> bool:
    """Whether text holds anything but blanks and ``--`` comments."""
    return any(line.split("--", 1)[0].strip() for line in text.splitlines())


def parse_workload(text: str, source: str = "<text>", default_name: str | None = None) -> list[NamedQuery]:
    """The named queries of one text: several after ``QUERY name:`` headers, or one
    (named ``default_name``) when the text has no header."""
    from acel.lang.parser import parse_query_located

    headers = list(HEADER.finditer(text))
    if not headers:
        if default_name is None:
            raise WorkloadError(f"{source}: a query of a workload needs a name (start it with 'QUERY name:')")
        name = _checked_name(default_name, source, text, 0)
        with _naming(source, name, source != "<text>"):
            query, locations = parse_query_located(text)
        return [NamedQuery(name, query, text, source, locations)]
    if _meaningful(text[: headers[0].start()]):
        first = len(text[: headers[0].start()]) - len(text[: headers[0].start()].lstrip())
        raise WorkloadError(
            f"{source}: query text before the first 'QUERY name:' header has no name",
            line=_line_of(text, first), column=1, text=text,
        )
    out: list[NamedQuery] = []
    for n, header in enumerate(headers):
        name = header.group(1)
        end = headers[n + 1].start() if n + 1 < len(headers) else len(text)
        body = (header.end(), end)
        if not _meaningful(text[body[0] : body[1]]):
            raise WorkloadError(
                f"{source}: QUERY {name}: has no query text",
                line=_line_of(text, header.start()), column=1, text=text,
            )
        _checked_name(name, source, text, header.start(1))
        blanked = _blank(text, body)
        with _naming(source, name, True):
            query, locations = parse_query_located(blanked)
        out.append(NamedQuery(name, query, blanked, source, locations))
    _unique(out)
    return out


@contextmanager
def _naming(source: str, name: str, named: bool) -> Iterator[None]:
    """Errors of one query of a workload say which file and query they are in."""
    try:
        yield
    except QueryError as error:
        if named:
            where = f"query {name}" if source == "<text>" else f"{source}: query {name}"
            error.message = f"{where}: {error.message}"
            error.args = (error.message, *error.args[1:])
        raise


def _checked_name(name: str, source: str, text: str, offset: int) -> str:
    if not NAME.match(name):
        shown = name or "(nothing)"
        raise WorkloadError(
            f"{source}: {shown!r} is not a query name (letters, digits, '_', '-' and '.', "
            "starting with a letter or '_')",
            line=_line_of(text, offset), column=1, text=text,
        )
    return name


def _unique(queries: Sequence[NamedQuery]) -> None:
    seen: dict[str, str] = {}
    for q in queries:
        if q.name in seen:
            where = q.source if seen[q.name] == q.source else f"{seen[q.name]} and {q.source}"
            raise WorkloadError(f"the query name {q.name!r} appears twice in the workload ({where})")
        seen[q.name] = q.source


def workload_files(path: str | Path) -> list[Path]:
    """The query files of a folder (``*.acel``, in name order), or the file itself."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in SUFFIXES)
        if not files:
            raise WorkloadError(f"{p}: the folder holds no .acel query files")
        inside = p.resolve()
        for f in files:
            if f.is_symlink() and not f.resolve().is_relative_to(inside):
                raise WorkloadError(
                    f"{f}: a link to a file outside the folder {str(p)!r}; a folder's workload "
                    "is only the files in it (name the file itself to use it)"
                )
        return files
    if not p.is_file():
        raise AcelError(f"query file {str(p)!r} not found")
    return [p]


def load_workload(paths: Sequence[str | Path]) -> list[NamedQuery]:
    """The workload of some query files and folders (see the module doc)."""
    out: list[NamedQuery] = []
    for path in paths:
        for file in workload_files(path):
            text = read_text_file(file)
            out.extend(parse_workload(text, str(file), default_name=file.stem))
    if not out:
        raise WorkloadError("the workload has no query")
    _unique(out)
    return out


def is_workload(args: Sequence[str]) -> bool:
    """Whether command-line QUERY arguments name a workload: several of them, a
    folder, or a file (or text) with ``QUERY name:`` headers."""
    if len(args) != 1:
        return len(args) > 1
    arg = args[0]
    if could_be_path(arg):  # never open query text (it may be too long for a name)
        path = Path(arg)
        if path.is_dir():
            return True
        if path.is_file():
            return has_headers(read_text_file(path))
    return has_headers(arg)


def workload_from_args(args: Sequence[str]) -> list[NamedQuery]:
    """The workload of QUERY arguments: files and folders, or one text with headers."""
    if len(args) == 1 and not (could_be_path(args[0]) and Path(args[0]).exists()) and has_headers(args[0]):
        return parse_workload(args[0])
    return load_workload(args)


def check_workload(queries: Sequence[NamedQuery], schema: Schema) -> None:
    """Check every query against the schema (errors name the query's file and line)."""
    from acel.lang.checker import check_query

    for q in queries:
        with _naming(q.source, q.name, q.source != "<text>" or len(queries) > 1):
            check_query(q.query, schema, locations=q.locations, text=q.text)


# ------------------------------------------------------------------ running


def pairs(queries: Sequence[NamedQuery | tuple[str, Query]]) -> list[tuple[str, Query]]:
    """``(name, query)`` pairs of named queries or pairs."""
    out = []
    for q in queries:
        if isinstance(q, NamedQuery):
            out.append((q.name, q.query))
        else:
            out.append((q[0], q[1]))
    return out


def run_workload(
    queries: Sequence[NamedQuery | tuple[str, Query]],
    stream: Sequence[Any],
    schema: Schema,
    *,
    share: bool = True,
) -> dict[str, list[Any]]:
    """Each query's results on a stream held in memory, in the order of spec §12.

    The same results as running each query alone (``acel.acea.engine.run``),
    from one pass over the stream.
    """
    from acel.acea.engine.workload import run_workload as run

    return run(pairs(queries), stream, schema, share=share)


def workload_runner(
    queries: Sequence[NamedQuery | tuple[str, Query]],
    schema: Schema,
    *,
    monotone: dict[str, bool | None] | None = None,
    share: bool = True,
) -> Any:
    """An incremental :class:`~acel.acea.engine.workload.WorkloadRunner`."""
    from acel.acea.engine.workload import WorkloadRunner

    return WorkloadRunner(pairs(queries), schema, monotone=monotone, share=share)


def workload_groups(
    queries: Sequence[NamedQuery | tuple[str, Query]],
    schema: Schema,
    stream: Any,
    *,
    share: bool = True,
    max_events: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    memory_check: Callable[[], None] | None = None,
    every: int = 4096,
) -> Iterator[list[tuple[str, Any]]]:
    """Groups of ``(query name, result)`` final together, reading an
    :class:`~acel.io.source.EventStream` once (spec §12 order across groups)."""
    from acel.engines.running import Feed, monotone_hint

    named = pairs(queries)
    hints = {name: monotone_hint(query, stream) for name, query in named}
    runner = workload_runner(named, schema, monotone=hints, share=share)
    yield from Feed(progress, memory_check, every).groups(runner, stream, max_events)


def describe_plan(
    queries: Sequence[NamedQuery | tuple[str, Query]], schema: Schema
) -> list[str]:
    """How the workload runs: its shared plans, prefix groups and lone queries."""
    return list(workload_runner(queries, schema).describe())


__all__ = [
    "HEADER",
    "NamedQuery",
    "WorkloadError",
    "check_workload",
    "describe_plan",
    "has_headers",
    "is_workload",
    "load_workload",
    "pairs",
    "parse_workload",
    "run_workload",
    "workload_files",
    "workload_from_args",
    "workload_groups",
    "workload_runner",
]
