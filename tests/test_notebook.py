"""The tour's companion notebook (docs/tour.ipynb, issue 25 §3) runs as written under
``jupyter nbconvert --execute`` and shows readable output: the automaton as SVG, the
results as an HTML table with its count, the flat table, the Spark rows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "tour.ipynb"

pytestmark = [pytest.mark.spark]


def _outputs(cell: dict) -> dict[str, str]:
    found: dict[str, str] = {}
    for output in cell.get("outputs", []):
        for kind, value in output.get("data", {}).items():
            found[kind] = "".join(value) if isinstance(value, list) else value
    return found


def test_the_notebook_executes_with_readable_output(tmp_path: Path) -> None:
    pytest.importorskip("nbconvert")
    pytest.importorskip("ipykernel")
    out = tmp_path / "tour.ipynb"
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=600", "--output", str(out), str(NOTEBOOK)],
        capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    cells = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
    assert not any(o.get("output_type") == "error" for c in cells for o in c.get("outputs", []))
    shown = [_outputs(c) for c in cells]
    svg = shown[1]["image/svg+xml"]
    assert "<svg" in svg and "SELL AS intel" in svg
    assert not re.search(r"[a-z_]+#\d", svg)  # no register names: the query's words
    assert "8 complex events" in shown[2]["text/html"] and "<th>intel.price</th>" in shown[2]["text/html"]
    assert "msft.price" in shown[3]["text/plain"] and "[80, 81]" in shown[3]["text/plain"]
    assert "variable" in shown[4]["text/plain"]
    assert shown[5]["text/plain"] == (
        "[(0, 4), (0, 6), (0, 6), (0, 6), (1, 4), (1, 6), (1, 6), (1, 6)]")
