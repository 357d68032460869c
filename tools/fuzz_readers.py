"""Coverage-guided fuzzing of the event readers and the result writers (issue 24).

Each input becomes a generated file: its first byte picks the format (JSON
Lines, a JSON array, CSV, or JSON Lines read by a query with a time column),
the rest is the file's bytes.  The file is read (``acel.run`` of a small
query, schema inferred), and the results are written in every output format.
Every failure must be an :class:`acel.AcelError`; anything else is a crash.

    .venv/bin/python tools/fuzz_readers.py [corpus-dir] -max_total_time=900

Needs ``atheris`` (``pip install -e '.[fuzz]'``).  Crashes become regression
examples in ``tests/test_io_hostile.py``; figures in ``papers/io.md``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["acel"]):
    import acel
    import acel.api
    import acel.io
    import acel.io.formats
    import acel.io.records
    import acel.io.results
    import acel.io.source
    import acel.io.values
    from acel.io.results import write_results
    from acel.lang.errors import AcelError

FOLDER = Path(tempfile.mkdtemp(prefix="acel-fuzz-"))
atexit.register(shutil.rmtree, FOLDER, ignore_errors=True)  # made at import: removed at exit
KINDS = (".jsonl", ".json", ".csv", ".jsonl")
QUERIES = ("A ; B", "(A AS a)+ ; B FILTER a[v > 1]", "A ; B WITHIN 3 EVENTS",
           "RETURN COUNT(*), SUM(a.v) PATTERN A AS a ; B")
SEEDS = {
    "jsonl": b'\x00{"type":"A","v":1,"s":"x"}\n{"type":"B","v":2.5}\n{"type":"A","v":true}\n',
    "json": b'\x01[{"type":"A","v":1},{"type":"B","v":null}]',
    "csv": b'\x02type,v,s\nA,1,x\nB,2,"y,z"\nA,,\n',
    "timed": b'\x03{"type":"A","v":1,"t":0}\n{"type":"B","v":2,"t":1}\n',
}


def one_file(data: bytes) -> None:
    """Read ``data`` as an event file and write the results; only AcelError may escape."""
    if not data:
        return
    choice = data[0] % len(KINDS)
    path = FOLDER / f"events{KINDS[choice]}"
    path.write_bytes(data[1:])
    query = QUERIES[data[0] // len(KINDS) % len(QUERIES)]
    try:
        results = list(acel.run(query, path, time_col="t" if choice == 3 else None))
        for suffix in (".jsonl", ".csv", ".parquet"):
            out = FOLDER / f"out{suffix}"
            write_results(results, out)  # type: ignore[arg-type]
            os.unlink(out)
    except AcelError as error:
        assert str(error), "an error without a message"


def test_one(data: bytes) -> None:
    """The atheris entry point."""
    one_file(data)


def main() -> None:
    """Run atheris with the given libFuzzer arguments (the first: the corpus folder)."""
    args = sys.argv
    corpus = next((Path(a) for a in args[1:] if not a.startswith("-")), None)
    if corpus is not None:
        corpus.mkdir(parents=True, exist_ok=True)
        for name, seed in SEEDS.items():
            target = corpus / f"seed-{name}"
            if not target.exists():
                target.write_bytes(seed)
    atheris.Setup(args, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
