#!/usr/bin/env python3
"""A planted bug for ``acel conform --against``: the toy engine of
``examples/conformance/seq_engine.py``, except that it loses the first complex
event holding a ``B`` whose ``x`` is 3 (the chosen case)."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[3] / "examples" / "conformance" / "seq_engine.py"


def main(argv: list[str]) -> int:
    spec = importlib.util.spec_from_file_location("seq_engine", ENGINE)
    assert spec is not None and spec.loader is not None
    engine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(engine)
    out = io.StringIO()
    with redirect_stdout(out):
        status = engine.main(argv)
    if status != 0:
        return int(status)
    dropped = False
    for line in out.getvalue().splitlines():
        bag = json.loads(line)["vars"].get("B", [])
        if not dropped and any(event["attrs"].get("x") == 3 for event in bag):
            dropped = True
            continue
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
