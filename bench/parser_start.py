"""What the query parser costs at start-up, three ways (issue 34 §4, papers/language.md
"Why a runtime of our own"): the LALR runtime of ``acel.lang.lalr`` from its stored
tables (what ``acel`` does), lark's own parser loaded from its stored table
(``acel.lang.parser._lark``), and lark's standalone parser module
(``python -m lark.tools.standalone``).  Each is timed in fresh processes (best of N):
loading the parser and parsing one query, after the imports all three share; and the
whole ``acel check QUERY`` with the runtime and with lark's parser.

    .venv/bin/python bench/parser_start.py [--runs 11]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERY = "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"

LOAD = """
import json, sys, time
import acel.lang.ast, acel.lang.errors, acel.lang.numbers, re  # shared by all three
mode, query = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if mode == "runtime":
    from acel.lang import _parse_table, lalr
    assert lalr.Parser(json.loads(_parse_table.RUNTIME)).parse(query) is not None
elif mode == "lark_table":
    from acel.lang.grammar import lark_parser
    lark_parser().parse(query)
else:
    import standalone_parser
    standalone_parser.Lark_StandAlone().parse(query)
print((time.perf_counter() - start) * 1000)
"""

CHECK = """
import sys, time
start = time.perf_counter()
if sys.argv[1] == "lark":
    from acel.lang import parser
    parser._runtime = lambda: None  # parse with lark's parser from its stored table
from acel.app import cli
sys.argv = ["acel", "check", sys.argv[2]]
try:
    cli.main()
except SystemExit:
    pass
sys.stderr.write("%f\\n" % ((time.perf_counter() - start) * 1000))
"""


def best(code: str, mode: str, runs: int, cwd: Path, stream: str) -> float:
    """The least of ``runs`` fresh processes' reported milliseconds."""
    times = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", code, mode, QUERY], cwd=cwd,
                              capture_output=True, text=True, check=True)
        times.append(float(getattr(done, stream).strip().splitlines()[-1]))
    return min(times)


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--runs", type=int, default=11)
    runs = args.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        subprocess.run([sys.executable, "-m", "lark.tools.standalone", "-s", "start", "-l",
                        "basic", "--propagate_positions", "-o",
                        str(folder / "standalone_parser.py"),
                        str(ROOT / "acel" / "lang" / "grammar.lark")], check=True)
        best(LOAD, "standalone", 1, folder, "stdout")  # writes its bytecode once
        print(f"load + parse one query, ms (best of {runs} fresh processes):")
        for mode in ("runtime", "lark_table", "standalone"):
            print(f"  {mode:12} {best(LOAD, mode, runs, folder, 'stdout'):7.1f}")
        print(f"acel check QUERY in-process (no interpreter start), ms (best of {runs}):")
        for mode in ("runtime", "lark"):
            print(f"  {mode:12} {best(CHECK, mode, runs, folder, 'stderr'):7.1f}")


if __name__ == "__main__":
    main()
