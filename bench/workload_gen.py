"""HAMLET's synthetic workload and stream (seed 003, §5; its generator's parameters).

The stream repeats a cycle: each of the 13 unshared types ``T1, T3 … T14`` in
turn arrives as a burst of ``unshared_burst`` events, then the shared Kleene
type ``T2`` as a burst of ``shared_burst`` events (HAMLET's ``StreamTemplate``:
14 types, the shared type 2).  A query is ``RETURN COUNT(*) PATTERN`` a
sequence of ``length`` elements (uniform in ``min_len … max_len``) whose
element at ``kleene_pos`` is ``(T2)+`` and the others random unshared types,
never the same type twice in a row (HAMLET's ``WorkloadTemplate``); a share
``1 − shared`` of the queries put another type's Kleene there instead, so
they share nothing with the others.  Every query has ``WITHIN w EVENTS SLIDE
w EVENTS`` with ``w`` the events per window.

``python bench/workload_gen.py --queries 50 --events 40000 --out DIR`` writes
``DIR/queries/q01.acel …`` (one file per query), ``DIR/workload.acel`` (the
same queries in one file) and ``DIR/stream.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acel.lang.schema import Schema

TYPES = 14
SHARED = "T2"


def type_names(types: int = TYPES) -> list[str]:
    return [f"T{i}" for i in range(1, types + 1)]


def schema(types: int = TYPES) -> Schema:
    """Every type with one attribute ``v`` (HAMLET's events carry a value column)."""
    return Schema.of({t: ["v"] for t in type_names(types)})


@dataclass(frozen=True)
class Params:
    """HAMLET's workload parameters."""

    queries: int = 50
    min_len: int = 3
    max_len: int = 10
    kleene_pos: int = 2
    shared: float = 1.0
    """Share of the queries whose Kleene type is the shared ``T2``."""
    events: int = 40_000
    """Events per window (the window is ``WITHIN events EVENTS SLIDE events EVENTS``)."""
    windows: int = 1
    """Stream length in windows."""
    unshared_burst: int = 4
    shared_burst: int = 20
    types: int = TYPES
    seed: int = 3


def workload(p: Params) -> list[tuple[str, str]]:
    """``(name, query text)`` for each query (names ``q01``, ``q02`` …)."""
    rnd = random.Random(p.seed)
    names = type_names(p.types)
    unshared = [t for t in names if t != SHARED]
    width = len(str(p.queries))
    out = []
    for i in range(p.queries):
        length = rnd.randint(p.min_len, p.max_len)
        shares = rnd.random() < p.shared
        kleene = SHARED if shares else rnd.choice(unshared)
        elements: list[str] = []
        last = None
        for position in range(length):
            if position == min(p.kleene_pos, length - 1):
                elements.append(f"({kleene})+")
                last = kleene
                continue
            choice = rnd.choice(unshared)
            while choice == last or choice == kleene:
                choice = rnd.choice(unshared)
            elements.append(choice)
            last = choice
        text = (
            f"RETURN COUNT(*) PATTERN {' ; '.join(elements)} "
            f"WITHIN {p.events} EVENTS SLIDE {p.events} EVENTS"
        )
        out.append((f"q{i + 1:0{width}d}", text))
    return out


def stream(p: Params) -> list[dict[str, Any]]:
    """The bursty stream: attribute maps in stream order (``v`` a small random int)."""
    rnd = random.Random(p.seed + 1)
    names = type_names(p.types)
    unshared = [t for t in names if t != SHARED]
    total = p.events * p.windows
    out: list[dict[str, Any]] = []
    while len(out) < total:
        for t in unshared:
            for _ in range(p.unshared_burst):
                out.append({"type": t, "v": rnd.randint(0, 9)})
        for _ in range(p.shared_burst):
            out.append({"type": SHARED, "v": rnd.randint(0, 9)})
    return out[:total]


def workload_file(queries: list[tuple[str, str]]) -> str:
    """The queries as one multi-query file (``QUERY name:`` headers)."""
    return "".join(f"QUERY {name}:\n  {text}\n\n" for name, text in queries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = Params()
    parser.add_argument("--queries", type=int, default=defaults.queries)
    parser.add_argument("--min-len", type=int, default=defaults.min_len)
    parser.add_argument("--max-len", type=int, default=defaults.max_len)
    parser.add_argument("--shared", type=float, default=defaults.shared)
    parser.add_argument("--events", type=int, default=defaults.events, help="events per window")
    parser.add_argument("--windows", type=int, default=defaults.windows)
    parser.add_argument("--unshared-burst", type=int, default=defaults.unshared_burst)
    parser.add_argument("--shared-burst", type=int, default=defaults.shared_burst)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    p = Params(args.queries, args.min_len, args.max_len, defaults.kleene_pos, args.shared,
               args.events, args.windows, args.unshared_burst, args.shared_burst,
               defaults.types, args.seed)
    out = Path(args.out)
    (out / "queries").mkdir(parents=True, exist_ok=True)
    queries = workload(p)
    for name, text in queries:
        (out / "queries" / f"{name}.acel").write_text(text + "\n", encoding="utf-8")
    (out / "workload.acel").write_text(workload_file(queries), encoding="utf-8")
    with open(out / "stream.jsonl", "w", encoding="utf-8") as handle:
        for attrs in stream(p):
            handle.write(json.dumps(attrs) + "\n")
    print(f"wrote {len(queries)} queries and {p.events * p.windows} events to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
