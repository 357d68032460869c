"""What is wrong with an event source's rows: :class:`Problem` entries, collected by
:class:`Problems` and reported as one :class:`~acel.lang.errors.DataError` (spec §9: a bad
row is reported with its row and line, never dropped silently)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acel.lang.errors import DataError

MAX_SHOWN = 5
"""How many problems one :class:`DataError` lists (the count covers all)."""

@dataclass(frozen=True)
class Problem:
    """One thing wrong with one row (``column`` is ``None`` for whole-row problems)."""

    row: int
    line: int | None
    column: str | None
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" + (f" (line {self.line})" if self.line is not None else "")
        if self.column is not None:
            where += f", column {self.column!r}"
        return f"{where}: {self.message}"

@dataclass
class Problems:
    """The problems of one source: the first few kept, all counted."""

    source: str
    shown: list[Problem] = field(default_factory=list)
    count: int = 0
    rows: set[int] = field(default_factory=set)

    def add(self, problem: Problem) -> None:
        self.count += 1
        self.rows.add(problem.row)
        if len(self.shown) < 1000:
            self.shown.append(problem)

    def __bool__(self) -> bool:
        return self.count > 0

    def error(self) -> DataError:
        """One DataError for all problems: the count of bad rows and the first few."""
        shown = sorted(self.shown, key=lambda p: p.row)[:MAX_SHOWN]
        rows = len(self.rows)
        head = f"{self.source}: {rows} bad row{'s' if rows != 1 else ''}"
        if self.count > MAX_SHOWN:
            head += f" ({self.count} problems, the first {MAX_SHOWN} shown)"
        body = "\n".join(f"  {p}" for p in shown)
        return DataError(f"{head}:\n{body}")

    def raise_if_any(self) -> None:
        if self.count:
            raise self.error()

def infinity_message(value: float) -> str:
    """Why ±infinity is refused (the same words for every reader and for Spark)."""
    sign = "-" if value < 0 else "+"
    return (
        f"value {sign}infinity is not a finite number: attributes hold finite numbers "
        "(JSON, the results' format, has no infinity); use NULL or a large finite value"
    )


def beyond_floats(source: str, row: Any, floats: Sequence[str]) -> DataError:
    """The error for an integer no float holds in a column whose values are floats (an
    int and a float in one column read as float, papers/io.md; issue 36 D9's follow-up);
    ``row``: the record (:class:`acel.io.record_pass.Row`)."""
    problems = Problems(source)
    for column in floats:
        value = row.values.get(column)
        if type(value) is int and abs(value) >= 2**1024:
            problems.add(Problem(row.number, row.line, column, (
                f"the integer of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4,000'} "
                "digits is beyond the float range, and the column's other values are floats: "
                "write it as an integer column (no float in it) or give a smaller value")))
            break
    if not problems:  # not expected: say where, however
        problems.add(Problem(row.number, row.line, None, "a value is beyond the float range"))
    return problems.error()
