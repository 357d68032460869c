"""How far the engine is from the physical limit (issue 23): ``acel run`` against C.

``python bench/native_limit.py [--sizes 100000,1000000] [--out DIR]`` generates the W0
stream (bench/pipeline.py), builds the two C programmes of ``bench/c/`` with the
machine's C compiler, and runs, back to back on the same JSON Lines file:

* **trend**: ``RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11
  ON ts`` with ``acel run`` and with ``bench/c/w0_trend.c``;
* **per match**: the same pattern, every complex event to a JSON Lines file, with
  ``acel run`` and with ``bench/c/w0_matches.c``.

Each pair must write byte-identical files (else the run fails): the C programmes are
exact references, not approximations.  It reports CPU seconds (user + system of the
child) and peak RSS of each side and their ratio, with the input size and the machine,
whether the toolkit's modules had up-to-date bytecode (without it every ``acel`` start
compiles them: ``make setup`` writes it), and writes ``DIR/native-limit.json``.

Peak RSS is each side's own: Linux copies a parent's RSS high-water mark into a
forked child (and ``exec`` keeps it), so a child of this Python process would report
this process's peak as its own (807 MiB on both sides at 10^6 when it held the
records).  The stream is generated in a child process, and each command is started by
``bench/c/measure.c``, a tiny launcher that reports its child's CPU time and peak RSS.
"""

from __future__ import annotations

import argparse
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
ROOT = HERE.parent
PACKAGES = ("acel", "acea", "compiler", "reference", "spark_backend")
sys.path.insert(0, str(HERE))

from pipeline import W0, W0_RETURN  # noqa: E402


def generate(size: int, path: Path) -> None:
    """Write the W0 stream of ``size`` events to ``path`` from a child process (the
    records never live in this one: see the module's note on RSS)."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
            "from pipeline import w0_records, write_jsonl; "
            "write_jsonl(w0_records(int(sys.argv[2])), Path(sys.argv[3]))")
    subprocess.run([sys.executable, "-c", code, str(HERE), str(size), str(path)], check=True)


def bytecode() -> dict[str, int]:
    """How many of the toolkit's modules have a ``.pyc`` that Python will use (written
    for the source's current mtime and size), out of how many."""
    import importlib.util

    modules = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    fresh = 0
    for source in modules:
        try:
            header = Path(importlib.util.cache_from_source(str(source))).read_bytes()[:16]
        except OSError:
            continue
        stat = source.stat()
        flags = int.from_bytes(header[4:8], "little")
        fresh += (flags == 0 and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
                  and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF)
    return {"modules": len(modules), "compiled": fresh}


def build(folder: Path) -> dict[str, Path]:
    """Compile ``bench/c/*.c`` with ``cc -O2`` into ``folder``: the two references and
    ``measure``, the launcher that reports a command's own CPU time and peak RSS."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("native_limit needs a C compiler (cc or gcc)")
    out = {}
    for name in ("w0_trend", "w0_matches", "measure"):
        binary = folder / name
        subprocess.run([cc, "-O2", "-o", str(binary), str(HERE / "c" / f"{name}.c")], check=True)
        out[name] = binary
    return out


def measured(launcher: Path, command: Sequence[str], stdin: Path | None,
             stdout: Path | None) -> dict[str, Any]:
    """Run ``command`` in a fresh process started by ``launcher`` (``bench/c/measure.c``):
    wall seconds, and the command's own CPU seconds and peak RSS."""
    start = time.perf_counter()
    with open(stdin or os.devnull, "rb") as src, open(stdout or os.devnull, "wb") as dst:
        done = subprocess.run([str(launcher), *command], stdin=src, stdout=dst,
                              stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    stderr = done.stderr.decode(errors="replace")
    lines = stderr.splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("measure: "):
        raise RuntimeError(f"{' '.join(command)} failed: {stderr[-2000:]}")
    user, system, rss_kib, _ = lines[-1].split()[1:]
    return {
        "cpu_s": round(float(user) + float(system), 3),
        "wall_s": round(wall, 3),
        "peak_rss_mib": round(int(rss_kib) / 1024, 1),
    }


def compare(size: int, folder: Path, binaries: dict[str, Path]) -> list[dict[str, Any]]:
    """Both workloads at one stream size; outputs must be identical."""
    data = folder / f"w0-{size}.jsonl"
    generate(size, data)
    rows = []
    for label, query, binary in (("trend", W0_RETURN, "w0_trend"), ("per match", W0, "w0_matches")):
        ours, theirs = folder / f"acel-{label}.jsonl", folder / f"c-{label}.jsonl"
        acel = measured(
            binaries["measure"], [sys.executable, "-m", "acel", "run", query, "--data", str(data), "--out", str(ours)],
            None, None,
        )
        c = measured(binaries["measure"], [str(binaries[binary])], data, theirs)
        if ours.read_bytes() != theirs.read_bytes():
            raise RuntimeError(f"{label} at {size:,} events: acel and C wrote different files")
        rows.append({
            "workload": label, "events": size, "acel": acel, "c": c,
            "cpu_ratio": round(acel["cpu_s"] / max(c["cpu_s"], 1e-3), 1),
            "lines": sum(1 for _ in open(ours, "rb")),
        })
        ours.unlink()
        theirs.unlink()
    data.unlink()
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated event counts")
    parser.add_argument("--out", default="bench-out", help="output folder (default bench-out/)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: list[dict[str, Any]] = []
    compiled = bytecode()
    with tempfile.TemporaryDirectory(prefix="acel-native-") as tmp:
        binaries = build(Path(tmp))
        for size in sizes:
            rows.extend(compare(size, Path(tmp), binaries))
    print(f"{'workload':<10} {'events':>10} {'lines':>12} {'acel CPU s':>11} {'C CPU s':>9} "
          f"{'ratio':>7} {'acel RSS':>9} {'C RSS':>7}")
    for r in rows:
        print(f"{r['workload']:<10} {r['events']:>10,} {r['lines']:>12,} {r['acel']['cpu_s']:>11.2f} "
              f"{r['c']['cpu_s']:>9.3f} {r['cpu_ratio']:>6.0f}x {r['acel']['peak_rss_mib']:>8.0f}M "
              f"{r['c']['peak_rss_mib']:>6.0f}M")
    print(f"bytecode: {compiled['compiled']} of {compiled['modules']} modules compiled"
          + ("" if compiled["compiled"] == compiled["modules"] else
             " (run `make setup`, or python -m compileall: without it every start compiles)"))
    os.makedirs(args.out, exist_ok=True)
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average": os.getloadavg()},
        "bytecode": compiled,
        "rows": rows,
    }
    with open(os.path.join(args.out, "native-limit.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"wrote {args.out}/native-limit.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
