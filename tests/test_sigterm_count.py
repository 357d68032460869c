"""SIGTERM landing just as a write of results returns (issue 36 D11): the message gives
the count of lines the file holds ("0 results written" was said of a file holding them all).

The signal is sent by the process itself from inside the write, so where it lands
is certain, not a matter of timing; the run is a subprocess, as from a shell."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SENDER = '''
import os, signal, sys
import acel.io.results as results
real = results.open_partial
class Handle:
    def __init__(self, handle): self.handle, self.n = handle, 0
    def write(self, data):
        out = self.handle.write(data)
        self.n += 1
        if self.n == int(os.environ["TERM_AT"]):
            os.kill(os.getpid(), signal.SIGTERM)
        return out
    def __getattr__(self, name): return getattr(self.handle, name)
def open_partial(path):
    handle, partial = real(path)
    return Handle(handle), partial
results.open_partial = open_partial
from acel.app.cli import main
sys.exit(main(sys.argv[1:]))
'''


def _run(tmp_path: Path, query: str, term_at: int) -> tuple[int, str]:
    data = tmp_path / "events.jsonl"
    data.write_text("".join(f'{{"type":"A","v":{i}}}\n' for i in range(300)))
    script = tmp_path / "sender.py"
    script.write_text(SENDER)
    env = dict(os.environ, TERM_AT=str(term_at))
    done = subprocess.run([sys.executable, str(script), "run", query, "--data", str(data),
                           "--out", str(tmp_path / "out.jsonl")],
                          capture_output=True, text=True, timeout=120, env=env)
    return done.returncode, done.stderr


@pytest.mark.parametrize("term_at", [1, 3])
def test_sigterm_during_a_write_counts_the_lines_written(tmp_path: Path, term_at: int) -> None:
    code, err = _run(tmp_path, "A AS a", term_at)
    partial = tmp_path / "out.jsonl.partial"
    count = partial.read_bytes().count(b"\n")
    assert code == 143 and count >= term_at and "Traceback" not in err
    assert err == (f"acel run: terminated; {count:,} results written to {partial}, which is "
                   f"incomplete ({tmp_path / 'out.jsonl'} was not written)\n")


def test_sigterm_during_the_last_write_says_the_file_is_whole(tmp_path: Path) -> None:
    code, err = _run(tmp_path, "RETURN COUNT(*) PATTERN A AS a ; A AS b WITHIN 3 EVENTS", 1)
    out = tmp_path / "out.jsonl"
    assert code == 143 and out.read_text() == '{"COUNT(*)":597}\n'
    assert err == f"acel run: terminated; all 1 results written to {out}\n"
