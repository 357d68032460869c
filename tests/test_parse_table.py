"""The stored LALR table of the query parser (issue 23: start-up cost).

It must be the table of the current grammar (else the parser is built at every start:
run ``.venv/bin/python tools/parse_table.py``), and the parser loaded from it must parse
as the one built from the grammar, errors included.
"""

from __future__ import annotations

import pytest
from lark import Lark
from lark.exceptions import UnexpectedInput

from acel.lang import _parse_table, parser

QUERIES = [
    "A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts",
    "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c FILTER b[v > a.v] WITHIN 11 ON ts",
    "A ; NOT E ; B WITHIN 10 EVENTS SLIDE 5 EVENTS",
    "A AS a ; B AS b FILTER a[x = 'it''s'] OR b[y <= -1.5e3]",
]
BROKEN = ["A AS", "A ; ; B", "RETURN PATTERN A", "A FILTER a[x = ]", "A WITHIN"]


def test_table_is_current() -> None:
    assert _parse_table.KEY == parser.table_key(parser.grammar_text()), (
        "grammar.lark or lark changed: run .venv/bin/python tools/parse_table.py"
    )


def test_every_example_parses_as_built() -> None:
    """The table's state numbers vary with the hash seed, so parsers are compared, not tables."""
    from pathlib import Path

    examples = sorted(Path(__file__).resolve().parents[1].glob("examples/**/*.acel"))
    built = parser.build_lark(parser.grammar_text())
    table = parser.untagged(_parse_table.TABLE)
    loaded = Lark._load_from_dict(table["data"], table["memo"])
    assert examples
    for path in examples:
        text = path.read_text(encoding="utf-8")
        try:
            expected: object = built.parse(text)
        except UnexpectedInput as error:
            expected = (error.line, error.column)
        try:
            got: object = loaded.parse(text)
        except UnexpectedInput as error:
            got = (error.line, error.column)
        assert got == expected, path


def test_the_loaded_parser_is_used() -> None:
    parser._lark.cache_clear()
    loaded = parser._lark()
    assert loaded.source_path == "<deserialized>"


@pytest.mark.parametrize("query", QUERIES + BROKEN)
def test_loaded_parses_as_built(query: str) -> None:
    built = parser.build_lark(parser.grammar_text())
    table = parser.untagged(_parse_table.TABLE)
    loaded = Lark._load_from_dict(table["data"], table["memo"])

    def outcome(lark: Lark) -> object:
        try:
            return lark.parse(query)
        except UnexpectedInput as error:
            return (type(error).__name__, error.line, error.column, sorted(getattr(error, "expected", ()) or ()))

    assert outcome(loaded) == outcome(built)


def test_stale_table_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parse_table, "KEY", "stale")
    parser._lark.cache_clear()
    try:
        assert parser._lark().source_path != "<deserialized>"
        assert parser.parse_query(QUERIES[0]) is not None
    finally:
        parser._lark.cache_clear()
