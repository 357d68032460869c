"""Quantifiers as counters (issue 35): automaton size against the bound, and run time.

``python bench/counters.py [--runs 10:100000,1000:10000] [--timeout 120] [--python]``

* **size**: states, transitions and registers of ``A{n}`` for n = 10, 100, 1,000, 10^5
  and 10^6 as compiled today (n > 16 copies: counted, ``compiler/counter.py``) and, up
  to n = 1,000, by the expansion of spec §3.2 (n copies), with the compile time; and the
  states trend counting runs (the counter unfolded, ``acea/engine/unfold.py``, up to
  its limit);
* **runs**: ``acel run 'RETURN COUNT(*) PATTERN A{n} WITHIN n EVENTS'`` over N events
  all of type ``A`` (the answer must be N − n + 1, the runs of n consecutive events),
  CPU seconds of the child (user + system) and its wall time, with the native core
  (``ACEL_NATIVE=auto``) and, with ``--python``, in pure Python (``ACEL_NATIVE=0``).
  The default runs include the issue's target, n = 1,000 on N = 10^5 (a run past
  ``--timeout`` is reported as not finished).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from acel.acea.engine.unfold import UNFOLD_LIMIT, unfold
from acel.compiler import compile_formula
from acel.compiler.compile import build
from acel.compiler.context import Context
from acel.compiler.rewrite import normalise

from acel.lang.errors import AcelCheckError
from acel.lang.macros import expand_quantifiers
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["x"]})


def sizes() -> None:
    print("| n | counted: states / transitions / registers | compile s "
          "| expanded: states / transitions / registers | compile s | unfolded states |")
    print("|---|---|---|---|---|---|")
    for n in (10, 100, 1000, 100_000, 1_000_000):
        formula = parse_query(f"A{{{n}}}").formula
        start = time.process_time()
        counted = compile_formula(formula, SCHEMA)
        counted_s = time.process_time() - start
        cells = [f"{counted.num_states} / {len(counted.transitions)} / "
                 f"{len(counted.registers())}", f"{counted_s:.3f}"]
        if n <= 1000:
            start = time.process_time()
            sys.setrecursionlimit(max(sys.getrecursionlimit(), 20 * n))
            try:
                expanded = build(Context(SCHEMA), normalise(expand_quantifiers(formula))).to_acea()
            except AcelCheckError:  # the expansion's depth limit (acel.lang.macros)
                cells += ["refused (too deep)", "—"]
            else:
                expanded_s = time.process_time() - start
                cells += [f"{expanded.num_states} / {len(expanded.transitions)} / "
                          f"{len(expanded.registers())}", f"{expanded_s:.3f}"]
        else:
            cells += ["—", "—"]
        flat = unfold(counted)
        cells.append(f"{flat.num_states:,}" if flat is not None
                     else "— (nothing carried)" if not any(counted.live.values())
                     else f"— (over {UNFOLD_LIMIT:,}: the counter runs in Python)")
        print(f"| {n:,} | " + " | ".join(cells) + " |")


def run(n: int, events: int, timeout: float, folder: Path, native: str) -> None:
    data = folder / f"a{events}.jsonl"
    if not data.exists():
        data.write_text("".join(json.dumps({"type": "A", "x": k}) + "\n" for k in range(events)))
    query = f"RETURN COUNT(*) PATTERN A{{{n}}} WITHIN {n} EVENTS"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-m", "acel", "run", query, "--data", str(data)],
                             capture_output=True, text=True, timeout=timeout,
                             env=dict(os.environ, ACEL_NATIVE=native))
    except subprocess.TimeoutExpired:
        print(f"| {n:,} | {events:,} | {native} | not finished in {timeout:.0f} s wall | | |")
        return
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    answer = json.loads(out.stdout)["COUNT(*)"] if out.returncode == 0 else out.stderr.strip()
    ok = "" if answer == events - n + 1 else " (WRONG)"
    print(f"| {n:,} | {events:,} | {native} | {answer}{ok} | {cpu:.2f} | {wall:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="10:100000,100:2000,200:1000,1000:10000,1000:100000",
                        help="n:N pairs, comma-separated")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--python", action="store_true",
                        help="also run each pair in pure Python (ACEL_NATIVE=0)")
    args = parser.parse_args()
    sizes()
    pairs = [tuple(int(x) for x in p.split(":")) for p in args.runs.split(",") if p]
    print()
    print("| n | N events | ACEL_NATIVE | COUNT(*) | CPU s | wall s |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n, events in pairs:
            for native in ("auto", "0") if args.python else ("auto",):
                run(n, events, args.timeout, Path(tmp), native)


if __name__ == "__main__":
    main()
