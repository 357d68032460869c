"""Errors a user can cause: bad queries and bad data (spec §9).

Every such error carries a message that names the place (line and column with
a caret for queries, row numbers for data); the command line prints the
message and exits with status 2, never a traceback.
"""

from __future__ import annotations


class AcelError(Exception):
    """Base of every user-facing error of the toolkit."""


class QueryError(AcelError):
    """A query that does not parse or does not check.

    ``line`` and ``column`` are 1-based when known; ``text`` is the query text
    so that :meth:`__str__` can show the offending line with a caret.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        text: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.text = text

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        where = f"line {self.line}, column {self.column}"
        out = f"{where}: {self.message}"
        if self.text is not None:
            lines = self.text.splitlines() or [""]
            if 1 <= self.line <= len(lines):
                src = lines[self.line - 1]
                caret = " " * max((self.column or 1) - 1, 0) + "^"
                out += f"\n  {src}\n  {caret}"
        return out


class AcelSyntaxError(QueryError):
    """The query text does not parse."""


class AcelCheckError(QueryError):
    """The query parses but names something unknown or misuses a construct."""


class UnsupportedQuery(AcelError):
    """A valid query that the chosen engine (or compilation step) cannot run."""


class DataError(AcelError):
    """Bad event data: the message names the file, row and column."""
