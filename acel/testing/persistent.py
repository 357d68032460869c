"""Persistent adapters: one process answers every case as JSON lines (the fast protocol).

The kit starts the command once.  The adapter first writes its *hello* line, declaring
itself; then for each case the kit writes one request line and the adapter answers one
line (``papers/conformance.md``, "Persistent mode")::

    adapter -> {"acel_adapter": 1, "name": "mycep", "fragment": ["SEQ", "WITHIN"],
                "value_range": [-9223372036854775808, 9223372036854775807], "view": "whole"}
    kit     -> {"id": 7, "query": "A ; B\\nWITHIN 2 EVENTS", "ast": {...},
                "schema": {"types": {...}, "kinds": {...}}, "events": [{"type": "A", ...}]}
    adapter -> {"id": 7, "results": [{"start": 0, "end": 1, "vars": {...}}]}
           or  {"id": 7, "unsupported": "why"}      or  {"id": 7, "error": "what failed"}

The kit closes standard input at the end; the adapter then exits.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
from collections.abc import Sequence
from typing import Any

from acel.lang.ast import Query
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing.compare import Answer, normalise, positions_view
from acel.testing.errors import EngineFailed

PROTOCOL = 1
"""The ``acel_adapter`` version of the hello line."""



def next_line(process: subprocess.Popen[bytes], pending: bytes, timeout: float,
              what: str) -> tuple[str, bytes]:
    """A persistent engine's next line and what it wrote after it (select on the raw pipe:
    a buffered reader would hide lines); EngineFailed when it stops, or (killed) when it
    runs longer than ``timeout`` seconds.  Shared by every persistent adapter."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    while b"\n" not in pending:
        ready, _w, _x = select.select([fd], [], [], timeout)
        if not ready:
            process.kill()
            raise EngineFailed(f"{what} ran longer than {timeout:g} s")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise EngineFailed(f"{what} stopped")
        pending += chunk
    line, _sep, rest = pending.partition(b"\n")
    return line.decode("utf-8", "replace").strip(), rest


class LineProcess:
    """A child process spoken to in lines: a request out, a line back (with a timeout)."""

    def __init__(self, argv: Sequence[str], timeout: float, what: str,
                 env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self.what = what
        self.env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._pending = b""

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_process"], state["_pending"] = None, b""
        return state

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> subprocess.Popen[bytes]:
        if not self.running:
            self._pending = b""
            try:
                self._process = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL, env=self.env,
                )
            except FileNotFoundError:
                raise EngineFailed(f"{self.argv[0]!r}: no such program") from None
        assert self._process is not None
        return self._process

    def send(self, line: str) -> None:
        process = self.start()
        assert process.stdin is not None
        try:
            process.stdin.write(line.encode("utf-8") + b"\n")
            process.stdin.flush()
        except BrokenPipeError:
            self._process = None
            raise EngineFailed(f"{self.what} stopped") from None

    def receive(self) -> str:
        """The next line."""
        process = self.start()
        try:
            line, self._pending = next_line(process, self._pending, self.timeout, self.what)
        except EngineFailed:
            self._process = None
            raise
        return line

    def close(self) -> None:
        if self.running:
            assert self._process is not None and self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
        self._process = None


def hello_of(line: str, command: str) -> dict[str, Any]:
    """The adapter's declaration from its first line, or a one-line error."""
    try:
        hello = json.loads(line)
    except ValueError:
        hello = None
    if not isinstance(hello, dict) or hello.get("acel_adapter") != PROTOCOL:
        raise AcelError(
            f"the engine command {command!r} names neither {{query}} nor {{data}}, and its first "
            f"line is not a persistent adapter's hello ({{\"acel_adapter\": {PROTOCOL}, ...}}; "
            "papers/conformance.md)"
        )
    return hello


def request(case_id: int, query: Query, stream: Sequence[Event], schema: Schema) -> dict[str, Any]:
    """The request line of one case: the query as text and as a JSON AST, the schema, the events."""
    from acel.lang.ast_json import query_to_json
    from acel.lang.printer import format_query

    return {"id": case_id, "query": format_query(query), "ast": query_to_json(query),
            "schema": schema.to_json(), "events": [e.as_dict() for e in stream]}


class PersistentEngine:
    """The batch function of a persistent adapter (:func:`persistent_engine`)."""

    def __init__(self, command: str, hello: dict[str, Any], process: LineProcess) -> None:
        self.command = command
        self.hello = hello
        self.process = process
        self.count = 0
        bounds = hello.get("value_range")
        self.value_range = (int(bounds[0]), int(bounds[1])) if bounds else None
        if hello.get("view") == "positions":
            self.view = positions_view

    def __call__(self, query: Query, stream: Sequence[Event], schema: Schema) -> Answer:
        restarted = not self.process.running
        if restarted:
            self.process.start()
            hello_of(self.process.receive(), self.command)
        self.count += 1
        self.process.send(json.dumps(request(self.count, query, stream, schema)))
        line = self.process.receive()
        try:
            answer = json.loads(line)
        except ValueError:
            raise EngineFailed(f"{self.command!r} answered a line that is not JSON: "
                               f"{line[:80]!r}") from None
        if not isinstance(answer, dict) or answer.get("id") != self.count:
            raise EngineFailed(f"{self.command!r} answered out of turn: {line[:80]!r}")
        if "unsupported" in answer:
            raise UnsupportedQuery(str(answer["unsupported"]) or "unsupported")
        if "error" in answer:
            raise EngineFailed(f"{self.command!r}: {answer['error']}")
        results = answer.get("results")
        if not isinstance(results, list):
            raise EngineFailed(f"{self.command!r} answered without results: {line[:80]!r}")
        try:
            return normalise(results, query)
        except AcelError as error:
            raise EngineFailed(f"{self.command!r} wrote results that are not §12: {error}") from None

    def close(self) -> None:
        self.process.close()


def persistent_engine(command: str, *, name: str | None = None, unsupported: Any = (),
                      timeout: float = 60.0) -> Any:
    """Start ``command`` once, read its hello line, and return the engine it declares:
    its fragment (every other operator unsupported), value range and view."""
    from acel.engines import Engine
    from acel.lang.operators import OPERATORS, operator_names

    words = shlex.split(command)
    if not words:
        raise AcelError("the engine command is empty")
    process = LineProcess(words, timeout, repr(command))
    process.start()
    try:
        hello = hello_of(process.receive(), command)
    except EngineFailed:
        process.close()
        raise AcelError(
            f"the engine command {command!r} names neither {{query}} nor {{data}}, and it wrote "
            "no persistent adapter's hello line (papers/conformance.md)"
        ) from None
    except AcelError:
        process.close()
        raise
    fragment = hello.get("fragment")
    lacks = operator_names(unsupported)
    if fragment is not None:
        lacks |= frozenset(OPERATORS) - operator_names(fragment)
    label = name or str(hello.get("name") or command)
    return Engine(label, f"the persistent adapter {command}",
                  fn=PersistentEngine(command, hello, process), unsupported=lacks)
