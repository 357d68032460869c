"""Syntax errors in words (spec §11): what was found, what was expected, where.

The messages are made from lark's errors (the runtime of :mod:`acel.lang.lalr` only
accepts), with the terminals the parser could really accept where it stopped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from acel.lang.errors import AcelSyntaxError
from acel.lang.grammar import KEYWORDS, grammar_text, punctuation
from acel.lang.locations import Position

if TYPE_CHECKING:
    from lark import Lark
    from lark import Token as LarkToken
    from lark.exceptions import UnexpectedInput

_TERMINAL_WORDS: dict[str, str] = {
    "NAME": "a name",
    "INT": "a number",
    "FLOAT": "a number",
    "STRING": "a 'string'",
    "CMPOP": "a comparison (= != < <= > >=)",
    "$END": "the end of the query",
}
"""The words of the terminals that are not one fixed string; a fixed string is named
as written (``';'``, read from the grammar by :func:`_punctuation`), a keyword by its
upper-case spelling."""


@lru_cache(maxsize=1)
def _punctuation() -> dict[str, str]:
    """Each terminal of one fixed string → its word, ``"SEMI"`` → ``"';'"``."""
    return {name: f"'{text}'" for name, text in punctuation(grammar_text()).items()}


def _named(terminal: str) -> str | None:
    """The word of a terminal that is not a keyword (``None`` for a keyword)."""
    return _TERMINAL_WORDS.get(terminal) or _punctuation().get(terminal)


_QUANTIFIER_HINT = (
    " ('?' and '*' close a sequence element: write (B AS b)?, B+? or B*, never B?+ or "
    "B? AS b; NOT ψ cannot be optional; spec §3.2)"
)

# Order in which expected items are listed (anything else follows, sorted).
_ORDER = [
    "RETURN",
    "SELECT",
    "PATTERN",
    "NAME",
    "LPAR",
    "NEXT",
    "PROJECT",
    "AGG",
    "SAME",
    "INC",
    "DEC",
    "NOT",
    "INT",
    "FLOAT",
    "STRING",
    "TRUE",
    "FALSE",
    "CMPOP",
    "IN",
    "PLUS",
    "MINUS",
    "STAR",
    "SLASH",
    "PERCENT",
    "COLONPLUS",
    "LBRACE",
    "COLONLBRACE",
    "QMARK",
    "AS",
    "SEMI",
    "COLON",
    "AND",
    "OR",
    "FILTER",
    "ASSIGN",
    "DOT",
    "COMMA",
    "LSQB",
    "RSQB",
    "RPAR",
    "PARTITION",
    "WITHIN",
    "SLIDE",
    "AFTER",
    "EVENTS",
    "ON",
    "BY",
    "$END",
]

# What a lone NAME means after a given token.
_NAME_AFTER: dict[str, str] = {
    "AS": "a variable name",
    "AGG": "a variable name",
    "FILTER": "a variable name",
    "BY": "an attribute name",
    "ON": "an attribute name",
    "DOT": "an attribute name",
    "ASSIGN": "an aggregate function name",
}


def _word(terminal: str, context: set[str], previous: str | None) -> str:
    if terminal == "NAME":
        if context & {"NEXT", "PROJECT", "AGG"}:
            return "a type name"
        if previous in _NAME_AFTER:
            return _NAME_AFTER[previous]
        return "a name"
    return _named(terminal) or terminal  # a keyword: its own upper-case spelling


def _join(words: Sequence[str]) -> str:
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def describe_expected(expected: Iterable[str], previous: str | None = None) -> str:
    """``expected`` terminal names as words, e.g. ``a type name, '(', NEXT, PROJECT or AGG``."""
    names = set(expected)
    if {"INT", "MINUS"} <= names and "NAME" not in names:
        names.discard("MINUS")  # "a number" covers a signed number
    rank = {t: i for i, t in enumerate(_ORDER)}
    ordered = sorted(names, key=lambda t: (rank.get(t, len(rank)), t))
    words: list[str] = []
    for terminal in ordered:
        word = _word(terminal, names, previous)
        if word not in words:
            words.append(word)
    return _join(words)


def _describe_token(token: LarkToken) -> str:
    if token.type == "$END":
        return "the end of the query"
    if token.type == "NAME":
        return f"the name {token.value!r}"
    if token.type in ("INT", "FLOAT"):
        return f"the number {token.value}"
    if token.type == "STRING":
        return f"the string {token.value}"
    if _named(token.type) is not None:  # CMPOP, or one fixed string
        return f"'{token.value}'"
    return f"the keyword {token.value.upper()}"


def _previous_token_type(text: str, pos: int | None, lark: Lark) -> str | None:
    """The type of the last token before character offset ``pos``."""
    from lark.exceptions import UnexpectedInput

    previous: str | None = None
    try:
        for token in lark.lex(text):
            if pos is not None and token.start_pos is not None and token.start_pos >= pos:
                break
            previous = token.type
    except UnexpectedInput:
        pass
    return previous


def _end_position(text: str, lark: Lark) -> Position:
    """Where "the end of the query" is: just after its last token.

    Trailing blank lines and comments are skipped, so the error shows the line
    that needs more (a query ending in a newline has an empty last line); a
    query of blanks and comments only ends at line 1, column 1.
    """
    from lark.exceptions import UnexpectedInput

    last: LarkToken | None = None
    try:
        for token in lark.lex(text):
            last = token
    except UnexpectedInput:
        last = None
    if last is not None and last.end_line is not None and last.end_column is not None:
        return (last.end_line, last.end_column)
    return (1, 1)  # nothing but blanks and comments


def _accepted(err: UnexpectedInput, text: str, lark: Lark) -> set[str] | None:
    """The terminals the parser could really accept where it stopped.

    LALR default reductions make ``err.expected`` too wide; the interactive
    parser tries each terminal and keeps those that do not fail.
    """
    try:
        interactive = getattr(err, "interactive_parser", None)
        if interactive is None:
            pos = err.pos_in_stream if err.pos_in_stream is not None else len(text)
            interactive = lark.parse_interactive(text[:pos])
            interactive.exhaust_lexer()
        accepted = set(interactive.accepts())
    except Exception:  # the prefix itself may not lex; fall back to lark's set
        return None
    return accepted or None


def syntax_error(err: UnexpectedInput, text: str, lark: Lark) -> AcelSyntaxError:
    """lark's error ``err`` on ``text`` as one line in words, at its line and column."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream if err.pos_in_stream is not None else len(text)
        char = text[pos] if pos < len(text) else ""
        if char == "'":
            message = "unterminated string: a string ends with ' (write '' for a quote inside it)"
        else:
            message = f"unexpected character {char!r}"
            accepted = _accepted(err, text, lark)
            if accepted:
                message += (
                    f"; expected {describe_expected(accepted, _previous_token_type(text, pos, lark))}"
                )
        return AcelSyntaxError(message, line=err.line, column=err.column, text=text)
    if isinstance(err, UnexpectedToken):
        token = err.token
        if token.type == "$END":
            line, column = _end_position(text, lark)
            previous = _previous_token_type(text, None, lark)
        else:
            line, column = token.line or 1, token.column or 1
            previous = _previous_token_type(text, token.start_pos, lark)
        accepted = _accepted(err, text, lark) or set(err.expected)
        message = (
            f"found {_describe_token(token)} but expected {describe_expected(accepted, previous)}"
        )
        if token.type in KEYWORDS and "NAME" in accepted:
            message += f" ({token.value.upper()} is a reserved word and cannot be a name)"
        if previous == "QMARK" or (token.type in ("QMARK", "STAR") and "STAR" not in accepted):
            message += _QUANTIFIER_HINT
        return AcelSyntaxError(message, line=line, column=column, text=text)
    if isinstance(err, UnexpectedEOF):
        line, column = _end_position(text, lark)
        expected = describe_expected(err.expected)
        return AcelSyntaxError(
            f"the query ends too early; expected {expected}", line=line, column=column, text=text
        )
    return AcelSyntaxError(str(err), text=text)
