"""Walk one event stream from ``open_events`` to the engine and count its file changes (issue 34).

``python tools/walk.py [--format jsonl|csv] [--events N]`` runs ``acel run`` of a small
generated file into the optimized engine in this process, with a profiler
(``sys.setprofile``) watching every Python call and return.  The walk is the sequence of
*input-side* files (``acel/io/`` but the writers of results) the running frame is in,
from the first call of ``open_events`` to the end of the run, consecutive frames in the
same file merged into one *stay*.  It prints the stays, the files, how often each was
entered, and how many stays began with a return; ``--json`` prints them as JSON.

Only the event's path is walked: a frame counts when it is ``open_events``, when the
nearest ``acel/io`` frame below it is on the walk, or when it belongs to the stream (a
method of the :class:`~acel.io.stream.EventStream`, or a generator given the stream, that
the engine calls or resumes).  Helpers the engine or the result writer call on their own
(the ``ACEL_NATIVE`` switch, an integer written as text) are not on it; ``--every-call``
counts them too (the count before issue 34's refinement).

The "walk of one event" section of ``docs/architecture.md`` reads these figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

OUTPUT_SIDE = ("results.py", "result_order.py", "result_reading.py", "lines.py", "targets.py", "output_formats.py")
"""Files of ``acel/io`` that write results: not on the input walk."""

QUERY = "A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts"
"""The W0 query of ``bench/pipeline.py``."""


def write_events(folder: Path, fmt: str, n: int) -> Path:
    """``n`` W0 events (types A/B/C, ``ts`` = position, ``v`` 0..99) as JSON Lines or CSV."""
    rng = random.Random(7)
    rows = [(rng.choices("ABC", (0.2, 0.6, 0.2))[0], i, rng.randrange(100)) for i in range(n)]
    path = folder / f"events.{fmt}"
    if fmt == "csv":
        path.write_text("type,ts,v\n" + "".join(f"{t},{i},{v}\n" for t, i, v in rows))
    else:
        path.write_text("".join(json.dumps({"type": t, "ts": i, "v": v}) + "\n" for t, i, v in rows))
    return path


class Walk:
    """The profiler: the input-side file of each call and return, merged into stays."""

    def __init__(self, io_root: str, every_call: bool = False) -> None:
        self.io_root = io_root
        self.every_call = every_call
        self.started = False
        self.stays: list[tuple[str, str]] = []
        """(file, "call" or "return"): each stay and how it began."""
        self.on_walk: set[FrameType] = set()
        """The input-side frames on the event's path (generators stay: they are resumed)."""
        from acel.io.stream import EventStream

        self.stream_type = EventStream

    def _nearest_io(self, frame: FrameType | None) -> FrameType | None:
        """The nearest frame of ``acel/io`` (either side) at or below ``frame``."""
        while frame is not None and not frame.f_code.co_filename.startswith(self.io_root):
            frame = frame.f_back
        return frame

    def _of_stream(self, frame: FrameType) -> bool:
        local = frame.f_locals
        return isinstance(local.get("self"), self.stream_type) or isinstance(local.get("stream"), self.stream_type)

    def _on_path(self, frame: FrameType, event: str) -> bool:
        """Whether a call (of ``frame``) or a return (into ``frame``) is on the event's path."""
        if self.every_call:
            return True
        if event == "return":
            return frame in self.on_walk
        if frame in self.on_walk or frame.f_code.co_name == "open_events" or self._of_stream(frame):
            self.on_walk.add(frame)
            return True
        below = self._nearest_io(frame.f_back)
        if below is not None and below in self.on_walk:
            self.on_walk.add(frame)
            return True
        return False

    def _input_side(self, filename: str) -> str | None:
        if not filename.startswith(self.io_root):
            return None
        name = filename[len(self.io_root):]
        return None if name.endswith(OUTPUT_SIDE) else name

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        if not self.started:
            if event == "call" and frame.f_code.co_name == "open_events":
                self.started = True
            else:
                return
        # a return lands in the caller's frame
        where = frame if event == "call" else frame.f_back
        if where is None:
            return
        name = self._input_side(where.f_code.co_filename)
        if name is None or not self._on_path(where, event):
            return
        if not self.stays or self.stays[-1][0] != name:
            self.stays.append((name, event))

    def report(self) -> dict[str, Any]:
        entries = Counter(name for name, _ in self.stays)
        return {
            "stays": len(self.stays),
            "files": len(entries),
            "returns": sum(1 for _, how in self.stays if how == "return"),
            "most_entered": max(entries.values(), default=0),
            "entries": dict(entries.most_common()),
            "walk": [name for name, _ in self.stays],
        }


def walk(fmt: str, n: int, every_call: bool = False) -> dict[str, Any]:
    """The walk of ``acel run`` of ``n`` events of format ``fmt`` (optimized engine)."""
    import acel.io
    from acel.app.cli import main

    io_root = os.path.dirname(acel.io.__file__) + os.sep
    with tempfile.TemporaryDirectory() as folder:
        data = write_events(Path(folder), fmt, n)
        out = Path(folder) / "out.jsonl"
        profiler = Walk(io_root, every_call)
        sys.setprofile(profiler)
        try:
            code = main(["run", QUERY, "--data", str(data), "--out", str(out), "--engine", "optimized"])
        finally:
            sys.setprofile(None)
        if code != 0:
            raise SystemExit(f"acel run failed ({code})")
    return profiler.report()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--every-call", action="store_true",
                        help="count the engine's and the writer's own calls into acel/io too")
    args = parser.parse_args()
    report = walk(args.format, args.events, args.every_call)
    if args.json:
        print(json.dumps(report))
        return
    print(f"{args.format}, {args.events} events: {report['stays']} stays in {report['files']} files, "
          f"{report['returns']} begun by a return; most entered: {report['most_entered']}")
    for name, count in report["entries"].items():
        print(f"  {count:4d}  {name}")
    print("  walk: " + " > ".join(report["walk"]))


if __name__ == "__main__":
    main()
