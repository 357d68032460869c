"""Where each parsed node and each name inside it was written (AST nodes carry no
positions; the checker points at the offending place through these)."""

from __future__ import annotations

from dataclasses import dataclass, field

from acel.lang.lalr import Token

Position = tuple[int, int]
"""A 1-based (line, column)."""


@dataclass
class Locations:
    """Source positions of parsed nodes, keyed by ``id(node)`` and a part name.

    Part ``""`` is where the node starts; other parts name a name inside the
    node: ``"var"``, ``"type"``, ``"attr"``, ``"func"``, ``"name"``,
    ``"size"``, ``"vars.0"``, ``"attrs.1"``, ``"partition_by.0"``, ...
    The parsed root is kept alive so that ids stay valid.
    """

    root: object = None
    positions: dict[tuple[int, str], Position] = field(default_factory=dict)

    def set(self, node: object, part: str, where: Token | Position | None) -> None:
        if where is None:
            return
        if isinstance(where, Token):
            if where.line is None or where.column is None:
                return
            where = (where.line, where.column)
        self.positions[(id(node), part)] = where

    def get(self, node: object, part: str = "") -> Position | None:
        """The position of ``part`` of ``node`` (falling back to the node's start)."""
        found = self.positions.get((id(node), part))
        if found is None and part:
            found = self.positions.get((id(node), ""))
        return found
