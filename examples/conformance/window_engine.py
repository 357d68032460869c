#!/usr/bin/env python3
"""A persistent adapter written from papers/conformance.md alone (standard library only).

The toy engine runs sequences of event types, ``A ; B ; C``, with an optional window
``WITHIN n EVENTS``; it reads the query's JSON AST (never the text) and speaks the
persistent protocol: a hello line, then one JSON answer line per request line.

    acel conform --against "python3 examples/conformance/window_engine.py"
    acel conform --against "python3 examples/conformance/window_engine.py --off-by-one"

``--off-by-one`` plants a bug: the window keeps spans ``j - i <= n`` instead of spec §6's
``j - i < n``.  The kit's first default run finds it, shrunk to two events and ``A ; B``.
"""

from __future__ import annotations

import itertools
import json
import sys

HELLO = {"acel_adapter": 1, "name": "window-engine", "fragment": ["SEQ", "WITHIN"],
         "value_range": [-(2**63), 2**63 - 1], "view": "whole"}


class Unsupported(Exception):
    """A query outside what this engine runs."""


def sequence(node: dict) -> list[str]:
    """The event types of a tree of ``Seq`` nodes over ``Atom`` leaves, in order."""
    if node["node"] == "Atom":
        return [node["type"]]
    if node["node"] == "Seq":
        return sequence(node["left"]) + sequence(node["right"])
    raise Unsupported(f"the operator {node['node']}")


def plan(ast: dict) -> tuple[list[str], int | None]:
    """The types to match in order and the window size, from the query's JSON AST."""
    if ast.get("returns") or ast.get("partition_by") or ast.get("skip") or ast.get("slide"):
        raise Unsupported("only patterns and WITHIN n EVENTS")
    if ast.get("select", "ALL") != "ALL":
        raise Unsupported("only SELECT ALL")
    window = ast.get("within")
    if window is not None and (window.get("attr") is not None or not isinstance(window["size"], int)):
        raise Unsupported("only WITHIN n EVENTS")
    return sequence(ast["formula"]), None if window is None else window["size"]


def complex_events(types: list[str], size: int | None, events: list[dict],
                   off_by_one: bool) -> list[dict]:
    """Every strictly increasing choice of positions whose events have the types in order,
    whose span ``end - start`` is below the window (spec §6)."""
    out = []
    for positions in itertools.combinations(range(len(events)), len(types)):
        if not all(events[k].get("type") == t for k, t in zip(positions, types)):
            continue
        span = positions[-1] - positions[0]
        if size is not None and (span > size if off_by_one else span >= size):
            continue
        bags: dict[str, list[dict]] = {}
        for k in positions:  # type names are variables; attrs repeat the type
            bags.setdefault(events[k]["type"], []).append({"time": k, "attrs": events[k]})
        out.append({"start": positions[0], "end": positions[-1], "vars": bags})
    return out


def answer(request: dict, off_by_one: bool) -> dict:
    try:
        types, size = plan(request["ast"])
    except Unsupported as why:
        return {"id": request["id"], "unsupported": str(why)}
    results = complex_events(types, size, request["events"], off_by_one)
    return {"id": request["id"], "results": results}


def main(argv: list[str]) -> int:
    off_by_one = "--off-by-one" in argv[1:]
    print(json.dumps(HELLO), flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line), off_by_one)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
