"""The passes over the AST and the check that each handles every node of its kind.

Every pass (printer, checker, oracle, compiler, size bound, predicate evaluation,
translation) is a :func:`functools.singledispatch` function with one case per
node class, and declares itself here with :func:`declare`.  ``declare`` refuses,
at import time, a pass without a case for some node of its kind (the members of
:data:`acel.lang.ast.Formula`, ``Filter``, ``Pred`` or ``Expr``), so a node added
without its cases fails when the module is imported, never in a user's run
(issue 26 §1; papers/language.md, "Adding an operator").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from acel.lang import ast as A

Pass = Callable[..., Any]
"""A ``functools.singledispatch`` function (its ``dispatch`` and ``registry``)."""

PASSES: dict[str, tuple[str, Pass]] = {}
"""Every declared pass: its name (``module.what``) → (node kind, the dispatching function)."""


def handles(fn: Pass, cls: type) -> bool:
    """Whether the singledispatch function ``fn`` has a case for ``cls`` (its own, or a
    base class's such as :class:`acel.lang.ast.Infix`), not only the fallback."""
    fallback = fn.registry[object]  # type: ignore[attr-defined]
    return bool(fn.dispatch(cls) is not fallback)  # type: ignore[attr-defined]


def missing_cases(extra: Iterable[type] = (), kind: str | None = None) -> list[str]:
    """``"pass: Node"`` for every declared pass and node of its kind it has no case for.

    ``extra`` adds node classes to the kind ``kind`` (a new operator under test);
    the lists of the kinds are read from :data:`acel.lang.ast.NODE_KINDS`.
    """
    added = tuple(extra)
    gaps: list[str] = []
    for name, (node_kind, fn) in sorted(PASSES.items()):
        nodes = A.NODE_KINDS[node_kind] + (added if node_kind == kind else ())
        gaps.extend(f"{name}: {cls.__name__}" for cls in nodes if not handles(fn, cls))
    return gaps


def declare(name: str, kind: str, fn: Pass) -> None:
    """Declare ``fn`` as the pass ``name`` over the nodes of ``kind``; raise TypeError
    naming each node without a case (at import time of the pass's module)."""
    if kind not in A.NODE_KINDS:
        raise ValueError(f"unknown node kind {kind!r} (choose from {', '.join(A.NODE_KINDS)})")
    if not hasattr(fn, "dispatch"):
        raise TypeError(f"pass {name} is not a functools.singledispatch function")
    lacking = [cls.__name__ for cls in A.NODE_KINDS[kind] if not handles(fn, cls)]
    if lacking:
        raise TypeError(f"pass {name} has no case for the {kind} node(s) {', '.join(lacking)}")
    PASSES[name] = (kind, fn)
