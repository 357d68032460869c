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
            # Lines as the parser counts them: only "\n" ends a line (str.splitlines
            # would also split at \r, \v, \f, \x85, U+2028, ... and miscount).
            lines = self.text.split("\n")
            if 1 <= self.line <= len(lines):
                src, caret = source_and_caret(lines[self.line - 1], self.column or 1)
                out += f"\n  {src}\n  {caret}"
        return out


def source_and_caret(line: str, column: int) -> tuple[str, str]:
    """One source line made printable, and a caret under its ``column`` (1-based).

    Control characters and Unicode line or paragraph separators would move the
    terminal's cursor, so each becomes one visible stand-in (``␍`` style, or
    ``?``) and the caret stays aligned; tabs are kept, and copied into the
    caret's indentation, so the caret lines up whatever the tab width.  Of a
    line longer than 100 characters only the 100 around the column are shown.
    """
    shown = "".join(_printable(ch) for ch in line.rstrip("\r"))
    offset = max(column - 1, 0)
    if len(shown) > _WIDTH:  # a long line: show the part around the column
        start = min(max(offset - _WIDTH // 2, 0), len(shown) - _WIDTH)
        head = "..." if start > 0 else ""
        tail = "..." if start + _WIDTH < len(shown) else ""
        shown = head + shown[start : start + _WIDTH] + tail
        offset += len(head) - start
    before = shown[:offset]
    indent = "".join(ch if ch == "\t" else " " for ch in before)
    return shown, indent + " " * max(offset - len(before), 0) + "^"


_WIDTH = 100
"""The most characters of a source line an error shows."""


def _printable(ch: str) -> str:
    if ch == "\t" or ch.isprintable():
        return ch
    if ord(ch) < 0x20:
        return chr(0x2400 + ord(ch))  # the Control Pictures block: ␍, ␋, ␌, ...
    return "?"


class AcelSyntaxError(QueryError):
    """The query text does not parse."""


class AcelCheckError(QueryError):
    """The query parses but names something unknown or misuses a construct."""


class UnsupportedQuery(AcelError):
    """A valid query that the chosen engine (or compilation step) cannot run."""


class DataError(AcelError):
    """Bad event data: the message names the file, row and column."""
