"""Case files: conformance cases as readable, diffable text records (``.case``).

In the spirit of sqllogictest, a file holds cases one after the other; each records
the query, the schema, the stream, the reference's expected results and what a replay
should find.  ``papers/conformance.md`` ("Case files") documents the format::

    case N2
    engine core
    expect disagree core
    verdict CORE bug: ...
    note free text (any number of lines)
    schema {"A": ["x", "y", "k"], "C": ["x", "k"]}
    query:
    A ; C:+
    stream:
    {"k": 0, "type": "A", "x": 0, "y": 0}
    expected:
    {"end":1,"start":0,"vars":{...}}
    got core:
    {...}
    end

Events and results are JSON with sorted keys; results are written in spec §12 order
and read back as sets (their order never matters), so equal cases are equal files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acel.lang.errors import AcelError
from acel.lang.events import Event
from acel.lang.schema import Schema

OUTCOMES = ("agree", "disagree", "unsupported", "error")
"""What a replay may expect of an engine on a case."""
SUFFIX = ".case"
SECTIONS = ("query:", "stream:", "expected:")
_GOT = re.compile(r"^got (.+):$")


class CaseFileError(AcelError):
    """A case file that does not follow the format (one line naming file and line)."""


@dataclass(frozen=True)
class Expectation:
    """``expect OUTCOME [ENGINE ...]``: the outcome a replay expects (for those engines,
    or for every engine when none is named)."""

    outcome: str
    engines: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseRecord:
    """One case as its file records it (the query as canonical text)."""

    name: str
    query: str
    schema: Schema
    stream: tuple[Event, ...]
    expected: tuple[str, ...]
    """The reference's results, §12 JSON lines in §12 order."""
    engine: str | None = None
    expects: tuple[Expectation, ...] = ()
    verdict: str = ""
    notes: tuple[str, ...] = ()
    got: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """What engines answered when the case was recorded: ``(engine, lines)``."""
    source: str = ""
    """``file:line`` the record was read from (empty for a new record)."""

    def expectation(self, engine: str) -> tuple[str, bool]:
        """The outcome a replay against ``engine`` expects (``agree`` unless recorded) and
        whether it is strict: it is for the engine an ``expect`` line or the ``engine``
        line names.  Other engines may also declare the case unsupported (it lies outside
        their fragment), as sqllogictest's ``skipif`` would."""
        for exp in self.expects:
            if engine in exp.engines:
                return exp.outcome, True
        strict = engine == self.engine
        for exp in self.expects:
            if not exp.engines:
                return exp.outcome, strict
        return "agree", strict


def _event_line(event: Event) -> str:
    return json.dumps(event.as_dict(), sort_keys=True)


def _schema_line(schema: Schema) -> str:
    data = schema.to_json()
    kinds = data.get("kinds") if isinstance(data, dict) else None
    if kinds:
        return json.dumps(data, sort_keys=True)
    return json.dumps({t: list(a) for t, a in schema.types})


def format_record(record: CaseRecord) -> str:
    """The record as text (ends with ``end`` and a newline)."""
    lines = [f"case {record.name}"]
    if record.engine:
        lines.append(f"engine {record.engine}")
    for exp in record.expects:
        lines.append(" ".join(["expect", exp.outcome, *exp.engines]))
    if record.verdict:
        lines.append(f"verdict {_one_line(record.verdict)}")
    lines += [f"note {_one_line(note)}" for note in record.notes]
    lines.append(f"schema {_schema_line(record.schema)}")
    lines.append("query:")
    lines += record.query.rstrip("\n").splitlines()
    lines.append("stream:")
    lines += [_event_line(e) for e in record.stream]
    lines.append("expected:")
    lines += list(record.expected)
    for engine, got in record.got:
        lines.append(f"got {engine}:")
        lines += list(got)
    lines.append("end")
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def write_records(path: Path, records: Iterable[CaseRecord]) -> None:
    """Write ``records`` to ``path``, separated by blank lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(format_record(r) for r in records), encoding="utf-8")


def case_files(target: Path) -> list[Path]:
    """``target`` itself, or every ``*.case`` below the folder ``target`` (sorted)."""
    if target.is_dir():
        return sorted(target.rglob("*" + SUFFIX))
    if target.exists():
        return [target]
    raise CaseFileError(f"{target}: no such file or folder")


def read_records(path: Path) -> list[CaseRecord]:
    """Every record of one case file."""
    text = path.read_text(encoding="utf-8")
    return list(parse_records(text.splitlines(), str(path)))


def parse_records(lines: Sequence[str], where: str = "<text>") -> Iterator[CaseRecord]:
    """The records of a case file's lines (comments ``#`` and blank lines between records)."""
    k = 0
    while k < len(lines):
        line = lines[k].strip()
        if not line or line.startswith("#"):
            k += 1
            continue
        if not line.startswith("case "):
            raise CaseFileError(f"{where}:{k + 1}: expected 'case NAME', found {line[:40]!r}")
        record, k = _record(lines, k, where)
        yield record


class _At:
    """Where a record is read: the file, the case's name, and the line ``k`` (0-based)."""

    def __init__(self, where: str, name: str, k: int) -> None:
        self.where, self.name, self.k = where, name, k

    def fail(self, message: str) -> CaseFileError:
        return CaseFileError(f"{self.where}:{self.k + 1}: case {self.name}: {message}")


def _head_line(head: dict[str, Any], word: str, rest: str, at: _At) -> None:
    """One line before ``query:`` (engine, expect, verdict, note, schema) into ``head``."""
    if word == "engine":
        head["engine"] = rest.strip()
    elif word == "expect":
        parts = rest.split()
        if not parts or parts[0] not in OUTCOMES:
            raise at.fail(f"expect needs one of {', '.join(OUTCOMES)}")
        head["expects"].append(Expectation(parts[0], tuple(parts[1:])))
    elif word == "verdict":
        head["verdict"] = rest.strip()
    elif word == "note":
        head["notes"].append(rest.strip())
    elif word == "schema":
        try:
            head["schema"] = Schema.from_json(json.loads(rest))
        except (ValueError, AcelError) as error:
            raise at.fail(f"bad schema: {error}") from None
    elif word and not word.startswith("#"):
        raise at.fail(f"unknown line {word!r}")


def _head(lines: Sequence[str], at: _At) -> dict[str, Any]:
    """The lines before ``query:``; ``at.k`` moves to the ``query:`` line."""
    head: dict[str, Any] = {"notes": [], "expects": [], "got": []}
    while at.k < len(lines) and lines[at.k].strip() != "query:":
        word, _sep, rest = lines[at.k].strip().partition(" ")
        _head_line(head, word, rest, at)
        at.k += 1
    if "schema" not in head:
        raise at.fail("no schema line")
    return head


def _sections(lines: Sequence[str], at: _At, got_lines: list[Any]) -> dict[str, list[str]]:
    """The sections ``query:``, ``stream:``, ``expected:`` and each ``got E:`` (appended
    to ``got_lines``); ``at.k`` moves to the ``end`` line."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    while at.k < len(lines):
        raw = lines[at.k]
        line = raw.strip()
        got = _GOT.match(line)
        if line in SECTIONS:
            current = sections.setdefault(line, [])
        elif got and "expected:" in sections:
            current = []
            got_lines.append((got.group(1), current))
        elif line == "end" and "expected:" in sections:
            break
        elif current is not None and (line or current is sections.get("query:")):
            current.append(raw if current is sections.get("query:") else line)
        at.k += 1
    else:
        raise at.fail("no 'end' line")
    for section in SECTIONS:
        if section not in sections:
            raise at.fail(f"no '{section}' section")
    return sections


def _stream(lines: list[str], at: _At) -> tuple[Event, ...]:
    stream = []
    for number, line in enumerate(lines):
        try:
            stream.append(Event.make(number, json.loads(line)))
        except (ValueError, AcelError) as error:
            raise at.fail(f"event {number}: {error}") from None
    return tuple(stream)


def _record(lines: Sequence[str], start: int, where: str) -> tuple[CaseRecord, int]:
    """The record whose ``case`` line is ``lines[start]``, and the line after its ``end``."""
    at = _At(where, lines[start].strip()[5:].strip(), start + 1)
    head = _head(lines, at)
    sections = _sections(lines, at, head["got"])
    record = CaseRecord(
        name=at.name,
        query="\n".join(sections["query:"]).strip(),
        schema=head["schema"],
        stream=_stream(sections["stream:"], at),
        expected=tuple(sections["expected:"]),
        engine=head.get("engine"),
        expects=tuple(head["expects"]),
        verdict=head.get("verdict", ""),
        notes=tuple(head["notes"]),
        got=tuple((e, tuple(lines_)) for e, lines_ in head["got"]),
        source=f"{where}:{start + 1}",
    )
    return record, at.k + 1


def record_file_name(record: CaseRecord) -> str:
    """A file name for a saved record: its name, made safe."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", record.name).strip("-") + SUFFIX
