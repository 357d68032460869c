"""Where Graphviz put the text of a picture, and which texts collide (issue 37).

:func:`collisions` lays a DOT source out with ``dot -Tjson`` and reports every edge
label line that lies over a state (its ellipse), over an arrowhead, or over another
edge's label line.  The renderer uses it to move a self-loop whose label collides to
the other side of its state; the tests use it to check every example's picture.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

Box = tuple[float, float, float, float]
"""``(left, bottom, right, top)`` in points."""

SLACK = 0.5
"""Boxes that touch by less than this many points do not collide."""


def _text_boxes(ops: list[dict[str, Any]]) -> list[Box]:
    """The box of each text line drawn by xdot operations (``F`` sets the size)."""
    size, out = 14.0, []
    for op in ops:
        if op["op"] == "F":
            size = float(op["size"])
        elif op["op"] == "T" and op["text"].strip():
            x, y = op["pt"]
            width = float(op["width"])
            left = {"l": x, "c": x - width / 2, "r": x - width}[op["align"]]
            out.append((left, y - 0.25 * size, left + width, y + 0.8 * size))
    return out


def _polygon_boxes(ops: list[dict[str, Any]]) -> list[Box]:
    out = []
    for op in ops:
        if op["op"] in ("P", "p"):
            xs = [p[0] for p in op["points"]]
            ys = [p[1] for p in op["points"]]
            out.append((min(xs), min(ys), max(xs), max(ys)))
    return out


def _meet(a: Box, b: Box) -> bool:
    return (a[0] < b[2] - SLACK and b[0] < a[2] - SLACK
            and a[1] < b[3] - SLACK and b[1] < a[3] - SLACK)


def _over_ellipse(box: Box, ellipse: list[float]) -> bool:
    """Whether the box enters the ellipse ``(cx, cy, rx, ry)``."""
    cx, cy, rx, ry = ellipse
    x = min(max(cx, box[0]), box[2])
    y = min(max(cy, box[1]), box[3])
    return ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 < 0.97


def layout(source: str) -> dict[str, Any]:
    """The layout of a DOT source, as ``dot -Tjson`` gives it (needs Graphviz's ``dot``)."""
    done = subprocess.run(["dot", "-Tjson"], input=source, capture_output=True, text=True,
                          check=True, timeout=120)
    return dict(json.loads(done.stdout))


def collisions(source: str) -> list[tuple[str, str]]:
    """``(edge id, what it lies over)`` for every edge label line over a state
    (``state 3``), an arrowhead (``arrowhead of edge-1-2``) or another label."""
    drawn = layout(source)
    states = [(o["name"], op["rect"]) for o in drawn.get("objects", [])
              for op in o.get("_draw_", []) if op["op"] in ("e", "E")]
    labels: list[tuple[str, Box]] = [("legend", b) for b in _text_boxes(drawn.get("_ldraw_", []))]
    heads: list[tuple[str, Box]] = []
    for edge in drawn.get("edges", []):
        name = str(edge.get("id", edge["_gvid"]))
        labels += [(name, b) for b in _text_boxes(edge.get("_ldraw_", []))]
        heads += [(name, b) for b in _polygon_boxes(edge.get("_hdraw_", []))]
    found: dict[tuple[str, str], None] = {}
    for name, box in labels:
        for state, ellipse in states:
            if _over_ellipse(box, ellipse):
                found[(name, f"state {state}")] = None
        for other, head in heads:
            if _meet(box, head):
                found[(name, f"arrowhead of {other}")] = None
    for i, (a, box_a) in enumerate(labels):
        for b, box_b in labels[i + 1:]:
            if a != b and _meet(box_a, box_b):
                found[(a, f"label of {b}")] = None
                found[(b, f"label of {a}")] = None
    return list(found)
