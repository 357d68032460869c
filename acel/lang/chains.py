"""Chains of one associative binary node (``OR`` of formulas or filters, ``AND``/``OR``
of predicates) read as their operands, left to right, however the parser nested them."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def chain_operands(node: T, kind: type[Any] | tuple[type[Any], ...]) -> list[T]:
    """The operands of a chain of ``kind`` nodes (each with ``left`` and ``right``) rooted
    at ``node``, left to right; ``[node]`` when it is not a ``kind``.  Iterative, so a
    chain of thousands of options does not reach Python's recursion limit."""
    out: list[T] = []
    stack: list[Any] = [node]
    while stack:
        top = stack.pop()
        if isinstance(top, kind):
            stack.extend((top.right, top.left))
        else:
            out.append(top)
    return out
