"""The native core's three-valued comparison (``acea/engine/native/truth.h``) against the
reference, ``acel.lang.predicates.compare`` (issue 34): guards over NULLs and values of
every kind (bools, ints within and beyond int64, floats, strings) mixed, on attribute maps
one at a time and in batches and on typed columns, give the pure-Python rows.
"""

from __future__ import annotations

from typing import Any

import pytest
from acel.acea.engine import Runner, native_trend
from hypothesis import example, given
from hypothesis import strategies as st
from test_native_core import _columns_rows

from acel.lang.errors import AcelError
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

needs_core = pytest.mark.skipif(not native_trend.available(), reason="native core not built")

SCHEMA = Schema.of({"A": ["x", "y"], "B": ["x", "y"]})
VALUES = st.sampled_from([
    None, True, False, 0, 1, -1, 2, 2**63 - 1, 2**63, -(2**63) - 1, 2**70,
    0.5, -0.0, 1.0, 2.0**63, 1e300, "a", "b", "",
])
"""An attribute's value (``None``: absent)."""
LITERALS = ["0", "1", "2", "0.5", "1.0", "'a'", "''", "TRUE", "FALSE", "9223372036854775807",
            "9223372036854775808", "9.223372036854775808e18"]
OPS = ["<", "<=", "=", "!=", ">", ">="]


@st.composite
def predicates(draw: st.DrawFn, depth: int = 2) -> str:
    """A predicate over ``x`` and ``y``: comparisons of two attributes or of one with a
    literal, IN and NOT IN lists, under NOT, AND and OR."""
    kinds = ["attrs", "literal", "in"] + (["not", "and", "or"] if depth else [])
    kind = draw(st.sampled_from(kinds))
    left = draw(st.sampled_from(["x", "y"]))
    op = draw(st.sampled_from(OPS))
    if kind == "attrs":
        return f"{left} {op} {'y' if left == 'x' else 'x'}"
    if kind == "literal":
        return f"{left} {op} {draw(st.sampled_from(LITERALS))}"
    if kind == "in":
        values = draw(st.lists(st.sampled_from([*LITERALS, "-1", "-2.5"]), min_size=1, max_size=4))
        return f"{left} {draw(st.sampled_from(['IN', 'NOT IN']))} ({', '.join(values)})"
    if kind == "not":
        return f"NOT ({draw(predicates(depth - 1))})"
    return f"({draw(predicates(depth - 1))}) {kind.upper()} ({draw(predicates(depth - 1))})"


@st.composite
def events(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for kind in draw(st.lists(st.sampled_from("AAB"), min_size=1, max_size=8)):
        event: dict[str, Any] = {"type": kind}
        for name in ("x", "y"):
            value = draw(VALUES)
            if value is not None:
                event[name] = value
        out.append(event)
    return out


def _rows(query: str, stream: list[dict[str, Any]], native: str, batch: bool = False) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACEL_NATIVE", native)
        runner = Runner(parse_query(query), SCHEMA, monotone=None)
        assert bool(runner.native) == (native != "0")
        try:
            if batch:
                out = runner.push_batch([dict(e) for e in stream])
            else:
                out = [r for e in stream for r in runner.push(dict(e))]
            return repr(out + runner.finish())
        except AcelError as err:
            return ("error", type(err).__name__, str(err))


@needs_core
@given(predicates(), events())
@example("x < y", [{"type": "A", "x": 2**63, "y": 2.0**63}, {"type": "B"}])
@example("x >= 9.223372036854775808e18", [{"type": "A", "x": 2**63 - 1}, {"type": "B"}])
@example("NOT (x = TRUE)", [{"type": "A", "x": 1}, {"type": "A"}, {"type": "B"}])
@example("x NOT IN (1, 'a')", [{"type": "A", "x": 1.0}, {"type": "A", "x": True}, {"type": "B"}])
def test_mixed_kinds_and_nulls_compare_as_python(pred: str, stream: list[dict[str, Any]]) -> None:
    """``COUNT(*)`` of ``A ; B`` filtered on ``a``: each A is in or out exactly as the
    reference compares (NULL and kinds that do not compare: unknown, so out, NOT too)."""
    query = f"RETURN COUNT(*) PATTERN A AS a ; B AS b FILTER a[{pred}]"
    python = _rows(query, stream, "0")
    assert _rows(query, stream, "1") == python
    assert _rows(query, stream, "1", batch=True) == python
    columns, runner = _columns_rows(parse_query(query), stream, cap=3, schema=SCHEMA, native="1")
    assert repr(columns) == python
    assert runner.native
