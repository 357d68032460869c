"""A short random fuzz of the native paths against the pure-Python ones (issues 35, 36).

Run by ``make sanitize`` (tools/sanitize.py) under AddressSanitizer and UBSan, where a
memory or undefined-behaviour fault aborts the process.  Without sanitizers it still
checks that native and pure agree.  Three kinds of rounds, from a fixed seed:

* readers: hostile JSON Lines and CSV (keys twice however spaced, 18/19/20-digit and
  huge numbers, escapes, bad UTF-8, nesting, truncation, flipped bytes) read with
  ``ACEL_NATIVE=1`` and ``0``: the same events, schema and facts, or the same error;
* core: trend queries with WITHIN/SLIDE over times near 2^52, 2^53, 2^63, ints and
  floats: the same rows or the same error;
* writer: complex events with extreme int64 positions and ``vars`` sized around the
  64 KiB buffer: the same bytes.

    .venv/bin/python tools/fuzz_native.py [--seconds 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acel.acea.engine import Runner

from acel.io import open_events
from acel.io.lines import PreparedEvent
from acel.io.results import ResultWriter
from acel.lang.clauses import Match
from acel.lang.errors import AcelError
from acel.lang.parser import parse_query
from acel.lang.schema import Schema


def with_native(mode: str, call: Callable[[], Any]) -> Any:
    """``call()`` with ``ACEL_NATIVE=mode``: its value's repr, or the error's type and text."""
    saved = os.environ.get("ACEL_NATIVE")
    os.environ["ACEL_NATIVE"] = mode
    try:
        return repr(call())
    except AcelError as error:
        return ("error", type(error).__name__, str(error))
    finally:
        if saved is None:
            os.environ.pop("ACEL_NATIVE", None)
        else:
            os.environ["ACEL_NATIVE"] = saved


# ------------------------------------------------------------------ readers

NUMBERS = ["0", "-0", "1", "-1", "123456789012345678", "1234567890123456789", "9223372036854775807",
           "-9223372036854775808", "9223372036854775808", "18446744073709551616", "1e400", "-1e400",
           "1.5", "2.5e-300", "9.2e18", "9.3e18", "01", "1.", ".5", "NaN", "Infinity", "4503599627370496",
           "9007199254740993"]
STRINGS = ['"x"', '"A"', '"B"', '""', '"a\\"b"', '"\\ud800"', '"caf\u00e9"', '"\u2028"', '"\\u0000"',
           '"12:30:00"', '"\\":"']
OTHER = ["true", "false", "null", "[1]", '{"x":1}', "[]"]
KEYS = ["type", "v", "w", "ts", "s", "type", "v"]
SPACES = ["", "", "", " ", "\t", "  ", "\r"]


def json_line(rng: random.Random) -> str:
    fields = []
    for _ in range(rng.randint(0, 5)):
        key = rng.choice(KEYS)
        value = rng.choice([rng.choice(NUMBERS), rng.choice(STRINGS), rng.choice(OTHER)])
        if key == "type" and rng.random() < 0.8:
            value = rng.choice(['"A"', '"B"'])
        fields.append(f'"{key}"{rng.choice(SPACES)}:{rng.choice(SPACES)}{value}')
    return "{" + ",".join(fields) + "}"


def csv_text(rng: random.Random) -> str:
    header = ",".join(rng.sample(["type", "v", "ts", "s"], rng.randint(1, 4)))
    rows = []
    for _ in range(rng.randint(0, 6)):
        cells = [rng.choice(["A", "B", "", "1", "-9223372036854775808", "1e400", "x", '"a,b"', "1.5", "true"])
                 for _ in range(header.count(",") + 1 + rng.choice([0, 0, 0, 1, -1]))]
        rows.append(",".join(cells))
    return "\n".join([header, *rows]) + rng.choice(["\n", "", "\r\n"])


def mutate(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice([0, 0, 1, 2])):
        if not out:
            break
        at = rng.randrange(len(out))
        choice = rng.random()
        if choice < 0.4:
            out[at] = rng.randrange(256)
        elif choice < 0.7:
            del out[at:]
        else:
            out[at:at] = rng.choice([b"\xff", b"\xc3", b"\n", b" :", b'"', b"\\", b"\x00"])
    return bytes(out)


def reader_round(rng: random.Random, folder: Path) -> str | None:
    csv = rng.random() < 0.3
    text = csv_text(rng) if csv else "".join(json_line(rng) + "\n" for _ in range(rng.randint(1, 8)))
    path = folder / ("e.csv" if csv else "e.jsonl")
    path.write_bytes(mutate(rng, text.encode("utf-8")))
    options: dict[str, Any] = rng.choice([{}, {"time_col": "ts"}, {"watch": ["v"]}])

    def read() -> Any:
        stream = open_events(path, **options)
        batches = list(stream.batches())
        facts = stream.facts
        noted = None if facts is None else (facts.count, facts.sorted_by_time, facts.plain, facts.monotone)
        return (stream.schema, batches, noted, stream.sort, stream.read)

    native, pure = with_native("1", read), with_native("0", read)
    return None if native == pure else f"reader: {path.read_bytes()!r} {options}: {native} != {pure}"


# ------------------------------------------------------------------ core

SCHEMA = Schema.of({"A": ["ts", "v"], "B": ["ts", "v"], "C": ["ts", "v"]})
PATTERNS = ["RETURN COUNT(*) PATTERN A ; B", "RETURN COUNT(*), SUM(b.v), MIN(b.v) PATTERN A AS a ; (B AS b)+",
            "RETURN COUNT(*), AVG(c.v), MAX(c.v) PATTERN (A)+ ; C AS c",
            # counted repetitions (> 16 copies), unfolded into states (acea/engine/unfold.py)
            "RETURN COUNT(*), SUM(a.v) PATTERN (A AS a){2,18} ; B",
            "RETURN COUNT(*), SUM(b.v) PATTERN (A ; B AS b):{3,7}", "RETURN COUNT(*) PATTERN A{17,}"]
WINDOWS = ["", "WITHIN 5 ON ts", "WITHIN 6 ON ts SLIDE 2 ON ts", "WITHIN 4 ON ts SLIDE 4 ON ts",
           "WITHIN 3 ON ts SLIDE 5 ON ts", "WITHIN 200 ON ts SLIDE 1 ON ts", "WITHIN 2.5 ON ts SLIDE 0.5 ON ts",
           "WITHIN 7 EVENTS SLIDE 3 EVENTS", "WITHIN 4 EVENTS", "WITHIN 9 EVENTS"]
BASES = [0, -7, 2**52 - 9, 2**52, 2**53 - 9, 2**53, 2**60, 2**63 - 40, -(2**63), 0.5]
VALUES = [1, -1, 0, 2**62, -(2**63), 2**63 - 1, 2**64, 1.5, -0.0, 1e308, None, "x", True]


def core_round(rng: random.Random) -> str | None:
    query = parse_query(f"{rng.choice(PATTERNS)} {rng.choice(WINDOWS)}")
    t: Any = rng.choice(BASES)
    events: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 12)):
        t += rng.choice([0, 1, 1, 2, 3, 256])
        ts = float(t) if rng.random() < 0.4 else t
        if isinstance(ts, float) and events and ts < events[-1]["ts"]:
            ts = events[-1]["ts"]
        events.append({"type": rng.choice("ABBC"), "ts": ts, "v": rng.choice(VALUES)})

    def run() -> Any:
        runner = Runner(query, SCHEMA, monotone=None)
        if rng_batch:
            return runner.push_batch([dict(e) for e in events]) + runner.finish()
        return [r for e in events for r in runner.push(dict(e))] + runner.finish()

    rng_batch = rng.random() < 0.5
    native, pure = with_native("auto", run), with_native("0", run)
    return None if native == pure else f"core: {query} {events}: {native} != {pure}"


# ------------------------------------------------------------------ writer

POSITIONS = [0, 1, -1, 2**63 - 1, -(2**63), -(2**63) + 1, 10**18, -(10**18)]


def writer_round(rng: random.Random) -> str | None:
    group = []
    for _ in range(rng.randint(1, 4)):
        size = rng.choice([0, 1, 2**16 - 72, 2**16 - 73, 2**16 - 71, 2**16 - 64, 2**17 - 72, rng.randrange(300)])
        vars_json = b'{"a":"' + b"x" * size + b'"}'
        prepared: Any = PreparedEvent(rng.choice(POSITIONS), rng.choice(POSITIONS), vars_json)
        group.append(Match((), prepared))  # the writer's fast form of a complex event
    limit = rng.choice([None, 0, 1, 3])

    def write(native: bool) -> Any:
        buffer = io.BytesIO()
        writer = ResultWriter(None, "jsonl", stream=buffer, limit=limit)
        if not native:
            writer.native = None
        writer.add(group, None)
        writer.flush()
        return (buffer.getvalue(), writer.close())

    native, pure = with_native("auto", lambda: write(True)), with_native("0", lambda: write(False))
    return None if native == pure else f"writer: {len(group)} events, limit {limit}: outputs differ"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    end = time.monotonic() + args.seconds
    rounds = 0
    with tempfile.TemporaryDirectory(prefix="acel-fuzz-native-") as folder:
        while time.monotonic() < end:
            kind = rounds % 3
            problem = (reader_round(rng, Path(folder)) if kind == 0 else core_round(rng) if kind == 1
                       else writer_round(rng))
            rounds += 1
            if problem is not None:
                print(f"fuzz_native: native and pure differ (seed {args.seed}, round {rounds}): {problem}"[:4000],
                      file=sys.stderr)
                return 1
    print(f"fuzz_native: {rounds:,} rounds, native == pure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
