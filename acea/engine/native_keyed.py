"""PARTITION BY at batch speed on the native trend core (issue 23; ``papers/engine.md``,
"Columns into the core").

A keyed runner holds one :class:`~acel.acea.engine.native_trend.NativePropagator` per
partition.  :class:`KeyedCores` keeps, for the partitions still on their core, a table
from the key's value (one attribute: the value itself; several: the tuple of values,
which hashes and compares as the runner's key does) to the core, so one C call
(``_native_core.feed_keyed`` on attribute maps, ``feed_keyed_columns`` on typed
columns) routes a run of events to their partitions without a Python step per event.
The call stops, before reading it, at any event it cannot take (a new partition, one
that went over to Python, a coordinate to check, a value the core leaves): the runner
pushes that one event itself, then calls again, so the order and every result stay
those of :meth:`Runner.push`.
"""

from __future__ import annotations

from typing import Any

from acel.acea.engine.native_trend import NativePropagator


class KeyedCores:
    """The partitions of a PARTITION BY runner still on their native core, by key value."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        """The PARTITION BY attributes."""
        self.table: dict[Any, int] = {}
        """Key value → index in :attr:`cores` / :attr:`parts`."""
        self.cores: list[Any] = []
        self.parts: list[Any] = []

    def value(self, key: tuple[tuple[str, Any], ...]) -> Any:
        """The table's key for a partition key ``((attr, value), …)``."""
        values = tuple(v for _, v in key)
        return values[0] if len(values) == 1 else values

    def note(self, part: Any) -> None:
        """After the runner read an event of ``part`` itself: the partition joins the table
        (a new one on its core) or leaves it (its core handed over to Python)."""
        if part is None:
            return
        value = self.value(part.key)
        evaluator = part.evaluator
        native = isinstance(evaluator, NativePropagator) and evaluator.python is None
        if not native:
            self.table.pop(value, None)
        elif value not in self.table:
            self.table[value] = len(self.cores)
            self.cores.append(evaluator.core)
            self.parts.append(part)

    def sync(self, touched: list[int]) -> None:
        """The partitions whose cores read events: their count and last coordinate."""
        for i in touched:
            part, core = self.parts[i], self.cores[i]
            part.local = core.local
            part.last = core.last
