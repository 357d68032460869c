"""Engines from outside the project, checked exactly like the project's own.

Three kinds of engine meet in one protocol, :class:`acel.engines.Engine`
(whose batch function takes a checked query, a numbered stream and a schema):

- a name of the registry (``"optimized"``, ``"oracle"``, …);
- a Python function: either with the registry's signature (query AST,
  events, schema), returning results as objects, §12 dictionaries or §12
  lines (:func:`as_engine`), or speaking only text
  (:func:`engine_from_function`: query text, event dictionaries, schema
  dictionary);
- an external program (:func:`engine_from_command`), in any language,
  through the adapter protocol of ``papers/conformance.md``: it gets a query
  file and a JSON Lines event file and writes §12 results.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from acel.engines import Engine, resolve
from acel.lang.ast import Query
from acel.lang.errors import AcelError, DataError, UnsupportedQuery
from acel.lang.events import Event
from acel.lang.operators import operator_names
from acel.lang.schema import Schema
from acel.testing.compare import Answer, normalise
from acel.testing.errors import EngineFailed

UNSUPPORTED_EXIT = 3
"""The exit status by which an external engine says "I do not run this query"."""

PLACEHOLDERS = ("{query}", "{ast}", "{data}", "{schema}", "{out}")
"""What ``engine_from_command`` replaces in each word of the command (see the protocol)."""

EngineLike = Union[str, Engine, Callable[..., Iterable[Any]]]
"""A registry name, an :class:`Engine`, or a function with the registry's signature."""


@dataclass
class Tally:
    """What a conformance run skipped: cases the engine declared unsupported (exit 3,
    :class:`~acel.lang.errors.UnsupportedQuery`) or the reference could not decide."""

    skipped: int = 0


def as_engine(engine: EngineLike, *, unsupported: Iterable[str] = ()) -> Engine:
    """``engine`` as an :class:`Engine`: a registry name, an Engine, or a function
    ``fn(query, events, schema)`` whose results may be objects, §12 dictionaries or
    §12 lines.  ``unsupported`` adds operator names the engine declares it lacks."""
    extra = operator_names(unsupported)
    if isinstance(engine, (Engine, str)):
        found = resolve(engine)
    elif callable(engine):
        fn = engine
        name = str(getattr(fn, "__name__", type(fn).__name__))

        def batch(query: Query, stream: Sequence[Event], schema: Schema) -> Answer:
            return normalise(fn(query, stream, schema), query)

        found = Engine(name, f"the Python function {name}", fn=batch)
    else:
        raise TypeError(f"not an engine: {engine!r}")
    if extra - found.unsupported:
        found = Engine(found.name, found.description, found.module, found.function,
                       found.incremental, found.fn, found.unsupported | extra)
    return found


def engine_from_function(
    fn: Callable[[str, list[dict[str, Any]], dict[str, list[str]]], Iterable[Any]],
    *,
    name: str | None = None,
    unsupported: Iterable[str] = (),
) -> Engine:
    """An engine from a function that speaks the interchange formats only.

    ``fn(query_text, events, schema)`` gets the canonical query text, the
    events as dictionaries in stream order (``type`` and attributes) and the
    schema as ``{type: [attribute, ...]}``; it returns the results as §12
    dictionaries or JSON lines, and raises
    :class:`~acel.lang.errors.UnsupportedQuery` for a query it does not run.
    """
    from acel.lang.printer import format_query

    label = name or str(getattr(fn, "__name__", "function"))

    def batch(query: Query, stream: Sequence[Event], schema: Schema) -> Answer:
        events = [event.as_dict() for event in stream]
        types = {t: list(attrs) for t, attrs in schema.types}
        return normalise(fn(format_query(query), events, types), query)

    return Engine(label, f"the Python function {label}", fn=batch,
                  unsupported=operator_names(unsupported))


def engine_from_command(
    command: str,
    *,
    name: str | None = None,
    unsupported: Iterable[str] = (),
    timeout: float = 60.0,
) -> Engine:
    """An engine that runs an external program per query and stream (any language).

    ``command`` is split like a shell line (no shell runs it); in each word
    ``{query}`` becomes a file holding the canonical query text, ``{data}``
    a JSON Lines file of the events in stream order, ``{schema}`` a schema
    file (``{"types": {T: [a, ...]}, "kinds": {...}}``) and ``{out}`` the file
    to write results to (without ``{out}``, results are read from standard
    output).  The program writes §12 JSON Lines and exits 0, or exits
    :data:`UNSUPPORTED_EXIT` (3) for a query it does not run; any other exit
    status is a failure.  ``papers/conformance.md`` has the whole protocol.

    A command naming neither ``{query}`` nor ``{data}`` is a *persistent* adapter: it
    is started once, declares itself in its first line and answers every case as JSON
    lines (:mod:`acel.testing.persistent`).
    """
    words = shlex.split(command)
    if words and not any(p in word for word in words for p in ("{query}", "{data}", "{ast}")):
        from acel.testing.persistent import persistent_engine

        return persistent_engine(command, name=name, unsupported=unsupported, timeout=timeout)
    return Engine(
        name or command,
        f"the command {command}",
        fn=CommandEngine(command, timeout),
        unsupported=operator_names(unsupported),
    )


class CommandEngine:
    """The batch function of :func:`engine_from_command` (picklable, reusable)."""

    def __init__(self, command: str, timeout: float = 60.0) -> None:
        self.command = command
        self.words = shlex.split(command)
        if not self.words:
            raise AcelError("the engine command is empty")
        if not any(p in word for word in self.words for p in ("{query}", "{data}", "{ast}")):
            raise AcelError(
                f"the engine command {command!r} names neither {{query}} nor {{data}}: "
                "it cannot learn what to run (see papers/conformance.md)"
            )
        self.timeout = timeout

    def __call__(self, query: Query, stream: Sequence[Event], schema: Schema) -> Answer:
        from acel.lang.ast_json import query_to_json
        from acel.lang.printer import format_query

        with tempfile.TemporaryDirectory(prefix="acel-conform-") as folder:
            paths = {
                "{query}": Path(folder) / "query.acel",
                "{ast}": Path(folder) / "query.json",
                "{data}": Path(folder) / "events.jsonl",
                "{schema}": Path(folder) / "schema.json",
                "{out}": Path(folder) / "results.jsonl",
            }
            paths["{query}"].write_text(format_query(query) + "\n", encoding="utf-8")
            paths["{ast}"].write_text(json.dumps(query_to_json(query)) + "\n", encoding="utf-8")
            write_events(paths["{data}"], stream)
            paths["{schema}"].write_text(json.dumps(schema.to_json()) + "\n", encoding="utf-8")
            argv = [_fill(word, paths) for word in self.words]
            finished = self._run(argv)
            if finished.returncode == UNSUPPORTED_EXIT:
                raise UnsupportedQuery(
                    f"{self.command!r} declares the query unsupported"
                    + _tail(finished.stderr, ": ")
                )
            if finished.returncode != 0:
                raise EngineFailed(
                    f"{self.command!r} exited with status {finished.returncode}"
                    + _tail(finished.stderr, ": ")
                )
            uses_out = any("{out}" in word for word in self.words)
            if uses_out:
                if not paths["{out}"].exists():
                    raise EngineFailed(f"{self.command!r} wrote no {{out}} file")
                text = paths["{out}"].read_text(encoding="utf-8")
            else:
                text = finished.stdout.decode("utf-8", errors="replace")
        try:
            return normalise(text.splitlines(), query)
        except DataError as error:
            raise EngineFailed(f"{self.command!r} wrote results that are not §12: {error}") from None

    def _run(self, argv: list[str]) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                argv, capture_output=True, timeout=self.timeout, stdin=subprocess.DEVNULL,
                check=False,
            )
        except FileNotFoundError:
            raise EngineFailed(f"{argv[0]!r}: no such program") from None
        except subprocess.TimeoutExpired:
            raise EngineFailed(f"{self.command!r} ran longer than {self.timeout:g} s") from None


def view_of(engine: Engine) -> Callable[[Answer, Query], Answer] | None:
    """How ``engine``'s answers are compared, when it cannot show all of a complex event:
    its batch function's ``view`` (say :func:`~acel.testing.compare.positions_view`),
    applied to both sides; ``None`` for the whole §12 result."""
    return getattr(engine.fn, "view", None)


def write_events(path: Path, stream: Sequence[Event]) -> None:
    """The events as JSON Lines in stream order: ``type`` and attributes, no time
    (an event's position is its line number, from 0)."""
    with open(path, "w", encoding="utf-8") as handle:
        for event in stream:
            handle.write(json.dumps(event.as_dict(), sort_keys=True) + "\n")


def _fill(word: str, paths: Mapping[str, Path]) -> str:
    for placeholder, path in paths.items():
        word = word.replace(placeholder, str(path))
    return word


def _tail(stderr: bytes, prefix: str) -> str:
    lines = [line for line in stderr.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return prefix + " / ".join(lines[-3:]) if lines else ""
