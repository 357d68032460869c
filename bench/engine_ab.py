"""Engine speed before against after a change, in one run (issue 34's "unchanged within noise").

    python bench/engine_ab.py --before /path/to/old/.venv/bin/python [--after PYTHON]
                              [--sizes 1000000] [--rounds 3] [--out DIR]

Two installs of the toolkit (e.g. a ``git worktree`` of the older commit with its own
``.venv``, and this one) run ``acel run`` on the same W0 JSON Lines file
(``bench/pipeline.py``): W0 trend (``RETURN COUNT(*), SUM(b.v) …``) and W0 per match
(every complex event written), interleaved ``before, after, after, before, …`` so that a
change of load hits both sides alike.  Each command is a fresh process started by
``bench/c/measure.c`` (its own CPU seconds and peak RSS, see ``bench/native_limit.py``);
both sides must write byte-identical files.  Reported per workload: every sample, the
median CPU of each side and the ratio after ÷ before, with the machine's load average
before and after.  Writes ``DIR/engine-ab.json``.  Both installs need their modules'
bytecode written (``make setup``; else each start compiles the newer modules from source,
about 40 ms of CPU that is not the engine's).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from native_limit import build, generate, measured  # noqa: E402
from pipeline import W0, W0_RETURN  # noqa: E402

WORKLOADS = (("trend", W0_RETURN), ("per match", W0))


def one(launcher: Path, python: str, query: str, data: Path, out: Path) -> dict[str, Any]:
    """``acel run`` of one install on ``data`` (its own process, measured)."""
    return measured(launcher, [python, "-m", "acel", "run", query, "--data", str(data), "--out", str(out)],
                    None, None)


def compare(before: str, after: str, size: int, rounds: int, folder: Path, launcher: Path,
            workloads: tuple[tuple[str, str], ...] = WORKLOADS) -> list[dict[str, Any]]:
    """The workloads at one size, the two installs interleaved ``rounds`` times each."""
    data = folder / f"w0-{size}.jsonl"
    generate(size, data)
    rows = []
    for label, query in workloads:
        samples: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        outputs: dict[str, bytes] = {}
        for round_ in range(rounds):
            order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
            for side in order:
                out = folder / f"{side}.jsonl"
                samples[side].append(one(launcher, before if side == "before" else after, query, data, out))
                outputs[side] = out.read_bytes()
                out.unlink()
        if outputs["before"] != outputs["after"]:
            raise RuntimeError(f"{label} at {size:,} events: the two installs wrote different files")
        median = {side: statistics.median(s["cpu_s"] for s in samples[side]) for side in samples}
        rows.append({
            "workload": label, "events": size, "samples": samples,
            "median_cpu_s": median,
            "median_wall_s": {side: statistics.median(s["wall_s"] for s in samples[side]) for side in samples},
            "after_over_before_cpu": round(median["after"] / max(median["before"], 1e-3), 3),
        })
        print(f"{label:9} {size:>10,}  before {median['before']:.2f} s  after {median['after']:.2f} s  "
              f"ratio {rows[-1]['after_over_before_cpu']:.3f}", flush=True)
    data.unlink()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the older install's python")
    parser.add_argument("--after", default=sys.executable, help="the newer install's python (default: this one)")
    parser.add_argument("--sizes", default="1000000", help="comma-separated event counts")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side per workload")
    parser.add_argument("--only", choices=[label for label, _ in WORKLOADS], help="one workload only")
    parser.add_argument("--out", default="bench-out", help="output folder (default bench-out/)")
    args = parser.parse_args(argv)
    workloads = tuple(w for w in WORKLOADS if args.only in (None, w[0]))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="acel-ab-") as tmp:
        folder = Path(tmp)
        launcher = build(folder)["measure"]
        rows = [row for size in (int(s) for s in args.sizes.split(","))
                for row in compare(args.before, args.after, size, args.rounds, folder, launcher, workloads)]
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_before": load_before, "load_after": os.getloadavg()},
        "before": args.before, "after": args.after, "rows": rows,
    }
    (out / "engine-ab.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
