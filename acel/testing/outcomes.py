"""What happened on one case: agreed, disagreed, unsupported, too large, or an adapter error.

:func:`judge` runs the reference and the engine under test on a
:class:`~acel.testing.conformance.Case` and sorts the result into one of five kinds
that reports keep apart (``papers/conformance.md``, "Reports").  It never raises for
what an engine does: a crash or a timeout of the adapter is an ``adapter_error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acel.engines import Engine
from acel.lang import ast
from acel.lang.errors import UnsupportedQuery

if TYPE_CHECKING:
    from acel.testing.conformance import Case

AGREED = "agreed"
DISAGREED = "disagreed"
UNSUPPORTED = "unsupported"
TOO_LARGE = "too_large"
ADAPTER_ERROR = "adapter_error"
KINDS = (AGREED, DISAGREED, UNSUPPORTED, TOO_LARGE, ADAPTER_ERROR)
FAILURES = (DISAGREED, ADAPTER_ERROR)

INT64 = (-(2**63), 2**63 - 1)
"""The value range of engines whose integers are 64-bit (Java's long, CORE's int)."""


@dataclass(frozen=True)
class Outcome:
    """One case's result: its kind, a reason (unsupported, errors), and both answers
    as §12 lines (the reference's whole answer; the engine's as it gave it)."""

    kind: str
    reason: str = ""
    expected: tuple[str, ...] = ()
    got: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES


def value_range(engine: Engine) -> tuple[int, int] | None:
    """The integer range an engine declares (its batch function's ``value_range``)."""
    found = getattr(engine.fn, "value_range", None)
    return (int(found[0]), int(found[1])) if found else None


def outside_range(query: ast.Query, stream: Any, bounds: tuple[int, int]) -> str | None:
    """Why ``query`` on ``stream`` leaves the integer range ``bounds`` (a literal, a value,
    or an intermediate result of ``+ - *`` on some event), else ``None``."""
    lo, hi = bounds

    def out(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and not lo <= value <= hi

    for node in ast.walk(query.formula):
        if isinstance(node, ast.Lit) and out(node.value):
            return f"value range (the literal {node.value} is outside [{lo}, {hi}])"
        if isinstance(node, ast.InList) and any(out(v) for v in node.values):
            return f"value range (a literal of IN is outside [{lo}, {hi}])"
    for event in stream:
        for name, value in event.attrs:
            if out(value):
                return f"value range (event {event.time}: {name} = {value})"
    arithmetic = [n for n in ast.walk(query.formula) if isinstance(n, (ast.BinOp, ast.Neg))]
    for node in arithmetic:
        for event in stream:
            try:
                _evaluate(node, event, out)
            except _Outside as error:
                return (f"value range ({error.args[0]} on event {event.time} "
                        f"is outside [{lo}, {hi}])")
    return None


class _Outside(Exception):
    pass


def _evaluate(expr: object, event: Any, out: Any) -> int | None:
    if isinstance(expr, ast.Lit):
        value = expr.value
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(expr, ast.Attr):
        value = event.get(expr.name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(expr, ast.Neg):
        inner = _evaluate(expr.operand, event, out)
        result = None if inner is None else -inner
    elif isinstance(expr, ast.BinOp) and expr.op in ("+", "-", "*"):
        a, b = _evaluate(expr.left, event, out), _evaluate(expr.right, event, out)
        if a is None or b is None:
            return None
        result = a + b if expr.op == "+" else a - b if expr.op == "-" else a * b
    else:
        return None
    if result is not None and out(result):
        raise _Outside(f"an intermediate result {result}")
    return result


def judge(tested: Engine, reference: Engine, case: Case) -> Outcome:
    """Run both engines on ``case`` and say what happened (never raises for the engines)."""
    from acel.io.results import to_json_lines
    from acel.reference.oracle import OracleTooLarge
    from acel.testing.adapters import view_of
    from acel.testing.cache import PrerequisiteMissing
    from acel.testing.compare import normalise, unmatched

    refused = tested.refuses(case.query)
    if refused:
        return Outcome(UNSUPPORTED, f"{tested.name} declares {', '.join(sorted(refused))} "
                                    "unsupported")
    bounds = value_range(tested)
    if bounds is not None:
        why = outside_range(case.query, case.stream, bounds)
        if why is not None:
            return Outcome(UNSUPPORTED, why)
    try:
        expected = normalise(reference.batch(case.query, list(case.stream), case.schema),
                             case.query)
    except OracleTooLarge as error:
        return Outcome(TOO_LARGE, f"{reference.name}: {error}")
    except UnsupportedQuery as error:
        return Outcome(UNSUPPORTED, f"{reference.name}: {error}")
    want = tuple(to_json_lines(expected))
    try:
        got = normalise(tested.batch(case.query, list(case.stream), case.schema), case.query)
    except UnsupportedQuery as error:
        return Outcome(UNSUPPORTED, str(error) or "unsupported", want)
    except PrerequisiteMissing:
        raise  # the engine cannot run here at all (no Java): not an outcome of this case
    except Exception as error:  # noqa: BLE001 - whatever the adapter does is reported
        return Outcome(ADAPTER_ERROR, f"{type(error).__name__}: {error}", want)
    have = tuple(to_json_lines(got))
    view = view_of(tested)
    left, right = (expected, got) if view is None else (view(expected, case.query),
                                                        view(got, case.query))
    missing, unexpected = unmatched(left, right)
    if missing or unexpected:
        return Outcome(DISAGREED, "", want, have, tuple(to_json_lines(missing)),
                       tuple(to_json_lines(unexpected)))
    return Outcome(AGREED, "", want, have)
