"""Answers remembered by the identities of the objects they were computed from.

A Spark stream restores and saves each key's runner every micro-batch (issue 31): the
state's fingerprint, the native plan and the generated vector code would be computed
again each time from the same cached query, schema and automata.  Hashing those walks
their trees, so they are keyed by identity, and held beside the answer so that an
identity is never reused while remembered.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """At most ``limit`` answers by ``(extra, identities of held)``; cleared when full."""

    def __init__(self, limit: int = 512) -> None:
        self._found: dict[tuple[Hashable, tuple[int, ...]], tuple[tuple[Any, ...], V]] = {}
        self._limit = limit

    def get(self, held: tuple[Any, ...], extra: Hashable, make: Callable[[], V]) -> V:
        """The answer remembered for these very objects and ``extra``, else ``make()``'s."""
        key = (extra, tuple(map(id, held)))
        found = self._found.get(key)
        if found is not None and all(a is b for a, b in zip(found[0], held)):
            return found[1]
        if len(self._found) >= self._limit:
            self._found.clear()
        value = make()
        self._found[key] = (held, value)
        return value

    def __len__(self) -> int:
        return len(self._found)
