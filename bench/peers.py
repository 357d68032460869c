"""ACEL against its peers on W0 (issue 23): ``acel run``, CORE and exact C programmes.

``python bench/peers.py [--sizes 100000,1000000] [--out DIR] [--no-core]`` (or
``acel bench --parts peers``) generates the W0 stream (bench/pipeline.py) and, side by
side in one run on the same JSON Lines file, for each size:

* **per match**: ``A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts``, every complex event to
  a JSON Lines file, with ``acel run``, with CORE (PyPI ``pycer``, in the venv of the
  conformance adapter :mod:`acel.testing.core`; its query is the adapter's CEQL
  translation of ``WITHIN 11 EVENTS``, the same window on W0, whose ``ts`` is the
  position; CORE writes its own text) and with ``bench/c/w0_matches.c``;
* **trend**: ``RETURN COUNT(*), SUM(b.v) PATTERN`` the same, with ``acel run``, with CORE
  (which has no aggregation: it enumerates and the runner sums) and ``bench/c/w0_trend.c``.

Each side is a fresh process, end to end (reading the file included); it records CPU
seconds (user + system of the child), wall seconds and peak RSS.  This process stays
small (the stream is generated in a child, outputs are compared in chunks): a child's
peak RSS starts at its parent's when it is forked.  ``acel`` and C must
write byte-identical files, and CORE the same number of complex events (trend: the same
COUNT and SUM), else the run fails.  CORE and C are skipped, with a message, when they
are unavailable (no Python 3.13 for pycer, no C compiler).  Writes ``DIR/peers.json``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from pipeline import W0, W0_RETURN, w0_records, write_jsonl  # noqa: E402

CORE_W0 = "A AS a ; (B AS b)+ ; C AS c WITHIN 11 EVENTS"
"""W0's window for CORE, which has no ``ON attr``: on the W0 file ``ts`` is the position."""

WORKLOADS = (("per match", W0, "w0_matches", "matches"), ("trend", W0_RETURN, "w0_trend", "trend"))


def build_c(folder: Path) -> dict[str, Path] | str:
    """``bench/c/*.c`` compiled with ``cc -O2``, or why not."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return "no C compiler (cc or gcc) on the PATH"
    out = {}
    for name in ("w0_trend", "w0_matches"):
        binary = folder / name
        done = subprocess.run([cc, "-O2", "-o", str(binary), str(HERE / "c" / f"{name}.c")],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"{name}.c does not compile: {done.stderr.strip()[-300:]}"
        out[name] = binary
    return out


def core_job(data: Path, out: Path, mode: str) -> tuple[str, dict[str, Any]] | str:
    """CORE's interpreter and the job of ``bench/core_w0.py``, or why CORE cannot run."""
    from acel.api import open_stream, parse
    from acel.testing.cache import PrerequisiteMissing
    from acel.testing.core import core_python, declaration, to_ceql

    try:
        python = core_python()
    except PrerequisiteMissing as error:
        return str(error)
    sample = data.with_suffix(".head.jsonl")  # the schema from the first events: W0's
    with open(data, "rb") as src, open(sample, "wb") as dst:  # three types come early
        dst.writelines(line for _, line in zip(range(1000), src))
    schema = open_stream(str(sample), lambda _schema: None).schema
    sample.unlink()
    return python, {
        "declaration": declaration(schema, []),
        "query": to_ceql(parse(CORE_W0).ast),
        "types": [[name, list(attrs)] for name, attrs in schema.types],
        "data": str(data), "out": str(out), "mode": mode,
    }


def measured(command: Sequence[str], stdin: bytes | Path | None, stdout: Path | None,
             lock: Path | None = None) -> dict[str, Any]:
    """Run ``command`` in a fresh process (holding ``lock`` if given): wall and CPU
    seconds and peak RSS of the child, and what it printed when ``stdout`` is None."""
    with open(lock or os.devnull, "a") as held:
        if lock is not None:
            fcntl.flock(held, fcntl.LOCK_EX)  # pycer's server binds a fixed port
        with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as printed:
            with open(stdout or os.devnull, "wb") as dst:
                src: Any = open(stdin, "rb") if isinstance(stdin, Path) else subprocess.PIPE
                start = time.perf_counter()
                process = subprocess.Popen(command, stdin=src, stderr=err,
                                           stdout=dst if stdout is not None else printed)
                if isinstance(stdin, bytes) and process.stdin is not None:
                    process.stdin.write(stdin)
                    process.stdin.close()
                _, status, usage = os.wait4(process.pid, 0)
                wall = time.perf_counter() - start
                if isinstance(stdin, Path):
                    src.close()
            err.seek(0)
            printed.seek(0)
            if os.waitstatus_to_exitcode(status) != 0:
                raise RuntimeError(f"{' '.join(command)} failed: {err.read().decode()[-2000:]}")
            return {
                "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
                "wall_s": round(wall, 3),
                "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
                "printed": printed.read().decode(),
            }


def same_bytes(a: Path, b: Path) -> bool:
    """Whether two files hold the same bytes (read in chunks: outputs reach gigabytes)."""
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            chunk = fa.read(1 << 22)
            if chunk != fb.read(1 << 22):
                return False
            if not chunk:
                return True


def count_lines(path: Path) -> int:
    """The number of lines of a file, read in chunks."""
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 22), b""))


def _side(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "printed"}


def compare(size: int, folder: Path, binaries: dict[str, Path] | str, core: bool,
            notes: list[str]) -> list[dict[str, Any]]:
    """Both workloads at one size; acel and C byte-identical, CORE the same count."""
    from acel.testing.core import PORT_LOCK

    data = folder / f"w0-{size}.jsonl"
    subprocess.run([sys.executable, __file__, "--generate", str(size), str(data)], check=True)
    rows = []
    for label, query, binary, mode in WORKLOADS:
        ours = folder / f"acel-{mode}.jsonl"
        row: dict[str, Any] = {"workload": label, "events": size}
        row["acel"] = _side(measured(
            [sys.executable, "-m", "acel", "run", query, "--data", str(data), "--out", str(ours)],
            None, None))
        row["lines"] = count_lines(ours)
        if isinstance(binaries, dict):
            theirs = folder / f"c-{mode}.jsonl"
            row["c"] = _side(measured([str(binaries[binary])], data, theirs))
            row["c_identical"] = same_bytes(ours, theirs)
            theirs.unlink()
            if not row["c_identical"]:
                raise RuntimeError(f"{label} at {size:,} events: acel and C wrote different files")
        if core:
            job = core_job(data, folder / f"core-{mode}.txt", mode)
            if isinstance(job, str):
                notes.append(f"CORE skipped: {job}")
                core = False
            else:
                python, spec = job
                result = measured([python, str(HERE / "core_w0.py")],
                                  json.dumps(spec).encode(), None, PORT_LOCK)
                row["core"] = _side(result)
                found = json.loads(result["printed"].strip().splitlines()[-1])["complex_events"]
                row["core_complex_events"] = found
                if mode == "trend":
                    got = json.loads((folder / "core-trend.txt").read_text())
                    row["core_agrees"] = got == json.loads(ours.read_text())
                else:
                    row["core_agrees"] = found == row["lines"]
                (folder / f"core-{mode}.txt").unlink()
                if not row["core_agrees"]:
                    raise RuntimeError(f"{label} at {size:,} events: CORE and acel disagree")
        for peer in ("core", "c"):
            if peer in row:
                row[f"acel_over_{peer}"] = round(row["acel"]["cpu_s"] / max(row[peer]["cpu_s"], 1e-3), 2)
        ours.unlink()
        rows.append(row)
    data.unlink()
    return rows


def _cell(row: dict[str, Any], side: str, what: str) -> str:
    return f"{row[side][what]:.2f}" if side in row else "-"


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as a plain-text table (CPU and wall seconds, peak RSS in MiB)."""
    head = (f"{'workload':<10} {'events':>10} {'lines':>10} | {'acel cpu':>8} {'wall':>6} {'rss':>5} "
            f"| {'CORE cpu':>8} {'wall':>6} {'rss':>6} | {'C cpu':>6} {'rss':>4} "
            f"| {'acel/CORE':>9} {'acel/C':>6}")
    out = [head]
    for r in rows:
        out.append(
            f"{r['workload']:<10} {r['events']:>10,} {r['lines']:>10,} | {_cell(r, 'acel', 'cpu_s'):>8} "
            f"{_cell(r, 'acel', 'wall_s'):>6} {r['acel']['peak_rss_mib']:>5.0f} | "
            f"{_cell(r, 'core', 'cpu_s'):>8} {_cell(r, 'core', 'wall_s'):>6} "
            f"{(str(round(r['core']['peak_rss_mib'])) if 'core' in r else '-'):>6} | "
            f"{_cell(r, 'c', 'cpu_s'):>6} {(str(round(r['c']['peak_rss_mib'])) if 'c' in r else '-'):>4} | "
            f"{r.get('acel_over_core', '-'):>9} {r.get('acel_over_c', '-'):>6}"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated event counts")
    parser.add_argument("--out", default="bench-out", help="output folder (default bench-out/)")
    parser.add_argument("--no-core", action="store_true", help="skip CORE")
    parser.add_argument("--generate", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.generate:
        write_jsonl(w0_records(int(args.generate[0])), Path(args.generate[1]))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    notes: list[str] = []
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="acel-peers-") as tmp:
        binaries = build_c(Path(tmp))
        if isinstance(binaries, str):
            notes.append(f"C skipped: {binaries}")
        for size in sizes:
            rows.extend(compare(size, Path(tmp), binaries, not args.no_core, notes))
    print(table(rows))
    for note in dict.fromkeys(notes):
        print(note)
    os.makedirs(args.out, exist_ok=True)
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "load_average": os.getloadavg(),
                    "acel_native": os.environ.get("ACEL_NATIVE", "auto")},
        "rows": rows, "notes": notes,
    }
    with open(os.path.join(args.out, "peers.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"wrote {args.out}/peers.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
