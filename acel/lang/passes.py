"""The passes over the AST and the check that each handles every node of its kind.

Every pass (printer, checker, oracle, compiler, size bound, predicate evaluation,
translation) is a :func:`functools.singledispatch` function with one case per
node class, and declares itself here with :func:`declare`.  ``declare`` refuses,
at import time, a pass without a case for some node of its kind (the members of
:data:`acel.lang.ast.Formula`, ``Filter``, ``Pred`` or ``Expr``), so a node added
without its cases fails when the module is imported, never in a user's run
(issue 26 §1).  The error names every missing case of every pass at once, not
only the first pass's (issue 34: a new operator took five runs, one per pass):
``declare`` then imports the other modules of :data:`PASS_MODULES` to read theirs
(papers/language.md, "Adding an operator").
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from typing import Any

from acel.lang import ast as A

Pass = Callable[..., Any]
"""A ``functools.singledispatch`` function (its ``dispatch`` and ``registry``)."""

PASSES: dict[str, tuple[str, Pass]] = {}
"""Every declared pass: its name (``module.what``) → (node kind, the dispatching function)."""

PASS_MODULES: tuple[str, ...] = (
    "acel.lang.printer",
    "acel.lang.checker",
    "acel.lang.predicates",
    "acel.compiler.size",
    "acel.compiler.translate",
    "acel.compiler.compile",
    "acel.reference.oracle",
)
"""The modules that declare passes (names only: nothing here imports them unless a
pass is incomplete; ``tests/test_passes_complete.py`` checks the list is whole)."""

_collecting: dict[str, tuple[str, list[str]]] | None = None
"""While :func:`all_gaps` imports the pass modules: each incomplete pass → its gaps
and its module (``declare`` then records instead of raising, so every gap of a module
is seen)."""


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


def _lacking(kind: str, fn: Pass) -> list[str]:
    return [cls.__name__ for cls in A.NODE_KINDS[kind] if not handles(fn, cls)]


def all_gaps() -> list[str]:
    """``"pass: Node"`` for every missing case of every pass of :data:`PASS_MODULES`
    (imported here where not yet; a module that fails to import for another reason is
    named with its error)."""
    global _collecting
    outer = _collecting is None
    if outer:
        _collecting = {}
    found = _collecting if _collecting is not None else {}
    broken: list[str] = []
    fresh: list[str] = []
    try:
        for module in PASS_MODULES:
            if module in sys.modules:
                continue  # imported, or being imported (its declared passes are in PASSES)
            try:
                importlib.import_module(module)
                fresh.append(module)
            except Exception as error:  # noqa: BLE001 (named in the message)
                broken.append(f"{module} (not imported: {error})")
    finally:
        if outer:
            _collecting = None
    if outer:  # a module imported only to be read must not stay with an incomplete pass
        incomplete = {module for module, _ in found.values()}
        for module in fresh:
            if module in incomplete:
                sys.modules.pop(module, None)
    gaps = missing_cases()
    for name, (_, lacking) in sorted(found.items()):
        gaps.extend(f"{name}: {node}" for node in lacking)
    return sorted(set(gaps)) + broken


def check_complete() -> None:
    """Raise one TypeError naming every missing case of every pass (or nothing)."""
    gaps = all_gaps()
    if gaps:
        raise TypeError(f"{len(gaps)} missing pass case(s): {', '.join(gaps)}")


def declare(name: str, kind: str, fn: Pass) -> None:
    """Declare ``fn`` as the pass ``name`` over the nodes of ``kind``; where it lacks a
    case, raise one TypeError naming those nodes and every other pass's missing cases
    (at import time of the pass's module)."""
    if kind not in A.NODE_KINDS:
        raise ValueError(f"unknown node kind {kind!r} (choose from {', '.join(A.NODE_KINDS)})")
    if not hasattr(fn, "dispatch"):
        raise TypeError(f"pass {name} is not a functools.singledispatch function")
    lacking = _lacking(kind, fn)
    if lacking and _collecting is not None:
        _collecting[name] = (fn.__module__, lacking)  # read by all_gaps, which raises once for all
        return
    if lacking:
        others = [gap for gap in all_gaps() if not gap.startswith(f"{name}: ")]
        every = [f"{name}: {node}" for node in lacking] + others
        raise TypeError(
            f"pass {name} has no case for the {kind} node(s) {', '.join(lacking)}; "
            f"every missing case ({len(every)}): {', '.join(every)}"
        )
    PASSES[name] = (kind, fn)
