"""A Fenwick (binary indexed) tree of partial aggregates over value ranks.

Used by trend aggregation for configurations that differ only in one
compared register (the last price of a DEC trend, say): the configurations
are indexed by the rank of that value, and "every configuration whose value
is above ``y``" is a suffix query in ``O(log m)`` merges instead of a scan
of all ``m`` configurations (GRETA's quadratic bound, seed 000 §5, becomes
``n log n``).  The monoid is any associative, commutative ``merge``;
MIN/MAX are not invertible, so suffixes use a second tree over reversed
ranks rather than ``total - prefix``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Merge = Callable[[Any, Any], Any]


class Fenwick:
    """Prefix sums under ``merge`` over positions ``0 .. size-1`` (``None`` = empty)."""

    __slots__ = ("size", "tree", "merge")

    def __init__(self, size: int, merge: Merge) -> None:
        self.size = size
        self.tree: list[Any] = [None] * (size + 1)
        self.merge = merge

    def add(self, position: int, value: Any) -> None:
        """Fold ``value`` into position ``position``."""
        tree, merge, n = self.tree, self.merge, self.size
        i = position + 1
        while i <= n:
            old = tree[i]
            tree[i] = value if old is None else merge(old, value)
            i += i & -i

    def prefix(self, count: int) -> Any:
        """The merge of positions ``0 .. count-1`` (``None`` when all are empty)."""
        tree, merge = self.tree, self.merge
        acc: Any = None
        i = min(count, self.size)
        while i > 0:
            node = tree[i]
            if node is not None:
                acc = node if acc is None else merge(acc, node)
            i -= i & -i
        return acc


class RankedIndex:
    """Values of a sorted universe, with prefix and suffix merges by value.

    The two trees are built on first use only (a DEC trend needs suffixes
    only), from the items folded in so far (``source``).
    """

    __slots__ = ("values", "rank", "low", "high", "merge")

    def __init__(self, values: list[Any], merge: Merge) -> None:
        self.values = values
        self.rank = {v: i for i, v in enumerate(values)}
        self.merge = merge
        self.low: Fenwick | None = None
        self.high: Fenwick | None = None

    def add(self, value: Any, item: Any) -> bool:
        """Index ``item`` under ``value``; ``False`` if the value is not in the universe."""
        r = self.rank.get(value)
        if r is None:
            return False
        if self.low is not None:
            self.low.add(r, item)
        if self.high is not None:
            self.high.add(len(self.values) - 1 - r, item)
        return True

    def _tree(self, high: bool, source: Iterable[tuple[Any, Any]]) -> Fenwick:
        tree = Fenwick(len(self.values), self.merge)
        last = len(self.values) - 1
        for value, item in source:
            r = self.rank.get(value)
            if r is not None:
                tree.add(last - r if high else r, item)
        if high:
            self.high = tree
        else:
            self.low = tree
        return tree

    def below(self, count: int, source: Iterable[tuple[Any, Any]]) -> Any:
        """The merge of the items of the ``count`` smallest values."""
        tree = self.low if self.low is not None else self._tree(False, source)
        return tree.prefix(count)

    def from_rank(self, first: int, source: Iterable[tuple[Any, Any]]) -> Any:
        """The merge of the items of ranks ``first ..`` (the largest values)."""
        tree = self.high if self.high is not None else self._tree(True, source)
        return tree.prefix(len(self.values) - first)
