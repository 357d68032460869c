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
and writes ``DIR/native-limit.json``.
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
sys.path.insert(0, str(HERE))

from pipeline import W0, W0_RETURN, w0_records, write_jsonl  # noqa: E402


def build(folder: Path) -> dict[str, Path]:
    """Compile ``bench/c/*.c`` with ``cc -O2`` into ``folder``."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("native_limit needs a C compiler (cc or gcc)")
    out = {}
    for name in ("w0_trend", "w0_matches"):
        binary = folder / name
        subprocess.run([cc, "-O2", "-o", str(binary), str(HERE / "c" / f"{name}.c")], check=True)
        out[name] = binary
    return out


def measured(command: Sequence[str], stdin: Path | None, stdout: Path | None) -> dict[str, Any]:
    """Run ``command`` in a fresh process: wall and CPU seconds, peak RSS of the child."""
    start = time.perf_counter()
    with open(stdin or os.devnull, "rb") as src, open(stdout or os.devnull, "wb") as dst:
        process = subprocess.Popen(command, stdin=src, stdout=dst, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        stderr = process.stderr.read().decode() if process.stderr else ""
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {stderr[-2000:]}")
    return {
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "wall_s": round(wall, 3),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def compare(size: int, folder: Path, binaries: dict[str, Path]) -> list[dict[str, Any]]:
    """Both workloads at one stream size; outputs must be identical."""
    data = folder / f"w0-{size}.jsonl"
    write_jsonl(w0_records(size), data)
    rows = []
    for label, query, binary in (("trend", W0_RETURN, "w0_trend"), ("per match", W0, "w0_matches")):
        ours, theirs = folder / f"acel-{label}.jsonl", folder / f"c-{label}.jsonl"
        acel = measured(
            [sys.executable, "-m", "acel", "run", query, "--data", str(data), "--out", str(ours)],
            None, None,
        )
        c = measured([str(binaries[binary])], data, theirs)
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
    os.makedirs(args.out, exist_ok=True)
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average": os.getloadavg()},
        "rows": rows,
    }
    with open(os.path.join(args.out, "native-limit.json"), "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"wrote {args.out}/native-limit.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
