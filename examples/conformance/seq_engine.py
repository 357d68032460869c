#!/usr/bin/env python3
"""A toy event-recognition engine, written without the ACEL toolkit, and its adapter.

It runs one kind of query only, sequences of event types: ``A ; B ; C`` (any
parentheses), meaning every choice of an ``A``, a later ``B`` and a later
``C`` (spec §3: ``φ1 ; φ2`` with events in between skipped).  Everything else
it declares unsupported by exiting with status 3.

It speaks the adapter protocol of ``papers/conformance.md``, so the toolkit
can check it against the oracle:

    acel conform --against "python3 examples/conformance/seq_engine.py {query} {data}" \\
        --operators SEQ --generate 100

Arguments: the query file (canonical ACEL text) and the events file (JSON
Lines, one event per line in stream order, its position = its line number
from 0).  Results: spec §12 JSON Lines on standard output.
"""

from __future__ import annotations

import itertools
import json
import re
import sys

UNSUPPORTED = 3
TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(;)|([()]))")


def sequence_of(text: str) -> list[str] | None:
    """The event types of ``T1 ; T2 ; ...``, or None for any other query."""
    names: list[str] = []
    expect_name = True
    position = 0
    text = text.strip()
    while position < len(text):
        match = TOKEN.match(text, position)
        if match is None:
            return None  # a character this engine does not know: [, :, +, ...
        position = match.end()
        name, semicolon, paren = match.groups()
        if paren:
            continue  # ';' is associative: parentheses change nothing
        if name and expect_name and name.upper() not in ("AS", "FILTER", "AND", "OR", "NOT"):
            names.append(name)
            expect_name = False
        elif semicolon and not expect_name:
            expect_name = True
        else:
            return None
    return names if names and not expect_name else None


def complex_events(types: list[str], events: list[dict]) -> list[dict]:
    """Every choice of strictly increasing positions whose events have the types in order."""
    out = []
    for positions in itertools.combinations(range(len(events)), len(types)):
        if all(events[k].get("type") == t for k, t in zip(positions, types)):
            bags: dict[str, list[dict]] = {}
            for k in positions:
                bags.setdefault(events[k]["type"], []).append({"time": k, "attrs": events[k]})
            out.append({"start": positions[0], "end": positions[-1], "vars": bags})
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: seq_engine.py QUERY_FILE EVENTS_FILE", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        types = sequence_of(handle.read())
    if types is None:
        print("only sequences of event types (A ; B ; C) are supported", file=sys.stderr)
        return UNSUPPORTED
    with open(argv[2], encoding="utf-8") as handle:
        events = [json.loads(line) for line in handle if line.strip()]
    lines = [json.dumps(ce, sort_keys=True, separators=(",", ":"))
             for ce in complex_events(types, events)]
    lines.sort(key=lambda line: (json.loads(line)["end"], json.loads(line)["start"], line))
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
