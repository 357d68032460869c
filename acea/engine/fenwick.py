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

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
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


class GrowingIndex:
    """Prefix and suffix merges by value over a universe that grows as values arrive.

    A streaming engine does not know beforehand every value a register will
    take, so it cannot rank them once.  The values are kept in a few sorted
    *levels*, each a :class:`RankedIndex` (the logarithmic method of Bentley
    and Saxe): a new value starts a level of its own, and the two smallest
    levels are merged while the smaller one is at least ``1/FACTOR`` of the
    other, so there are ``O(log m)`` levels, each value is re-indexed
    ``O(log m)`` times in all, and a query merges one prefix per level.  A
    universe known beforehand (a whole stream in memory) is one level from
    the start, so a batch run costs what a single :class:`RankedIndex` does.
    Values must be numbers (not NaN); callers keep others aside.
    """

    FACTOR = 4

    __slots__ = ("merge", "levels", "where", "entries")

    def __init__(self, merge: Merge, entries: dict[Any, Any], seed: Iterable[Any] = ()) -> None:
        self.merge = merge
        self.entries = entries
        """value → merged item, shared with the caller (the source of lazy trees)."""
        self.levels: list[RankedIndex] = []
        self.where: dict[Any, RankedIndex] = {}
        values = sorted(set(seed))
        if values:
            self._add_level(values)

    def _add_level(self, values: list[Any]) -> RankedIndex:
        level = RankedIndex(values, self.merge)
        self.levels.append(level)
        for v in values:
            self.where[v] = level
        return level

    def add(self, value: Any, item: Any) -> None:
        """Fold ``item`` into ``value`` (already merged into ``entries[value]`` by the caller)."""
        level = self.where.get(value)
        if level is not None:
            level.add(value, item)
            return
        self._add_level([value])
        levels = self.levels
        while len(levels) >= 2 and len(levels[-1].values) * self.FACTOR >= len(levels[-2].values):
            small = levels.pop()
            large = levels.pop()
            self._add_level(sorted(large.values + small.values))

    def _source(self, level: RankedIndex) -> Iterator[tuple[Any, Any]]:
        entries = self.entries
        return ((v, entries[v]) for v in level.values if v in entries)

    def below(self, y: Any, inclusive: bool) -> Any:
        """The merge of the items of values ``< y`` (``<= y`` when ``inclusive``)."""
        acc: Any = None
        merge = self.merge
        cut = bisect_right if inclusive else bisect_left
        for level in self.levels:
            part = level.below(cut(level.values, y), self._source(level))
            if part is not None:
                acc = part if acc is None else merge(acc, part)
        return acc

    def above(self, y: Any, inclusive: bool) -> Any:
        """The merge of the items of values ``> y`` (``>= y`` when ``inclusive``)."""
        acc: Any = None
        merge = self.merge
        cut = bisect_left if inclusive else bisect_right
        for level in self.levels:
            part = level.from_rank(cut(level.values, y), self._source(level))
            if part is not None:
                acc = part if acc is None else merge(acc, part)
        return acc

    def total(self) -> Any:
        """The merge of every item."""
        acc: Any = None
        merge = self.merge
        for level in self.levels:
            part = level.below(len(level.values), self._source(level))
            if part is not None:
                acc = part if acc is None else merge(acc, part)
        return acc
