"""The lark-free query parser (``acel.lang.lalr``, issue 23: start-up) builds the very
trees lark builds, positions included, and accepts exactly what lark accepts: on the
project's example queries, on queries printed from generated ASTs, and on mutations
of both (deleted, doubled and swapped tokens, comments, line breaks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark.exceptions import UnexpectedInput

from acel.lang import _parse_table, lalr, parser
from acel.lang.printer import format_query
from acel.testing import queries, raw_queries

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("**/*.acel"))
TEXTS = [
    "A ; B",
    "  A\n;\n  B -- a comment\n",
    "RETURN COUNT(*), SUM(b.v) PATTERN A AS a ; (B AS b)+ ; C AS c WITHIN 11 ON ts",
    "SELECT NEXT A AS a ; B AS b FILTER a[x = 'it''s\nthere'] OR b[y <= -1.5e3] PARTITION BY k",
    "A ; NOT E ; B WITHIN 10 EVENTS SLIDE 5 EVENTS",
    "(A AS x)+ FILTER x[INC(price)] AFTER MATCH SKIP PAST LAST ROW",
    "as AS As ; filter",  # keywords in any case, where a name is expected: an error
    "", "   -- only a comment", "A ;", "A ; ; B", "A FILTER a[x = ]", "'unterminated",
    "A # B", "A AS a FILTER a[x IN (1, 2.5, 'z', TRUE, NULL)]",
]


def lark_parser() -> Any:
    table = parser.untagged(_parse_table.TABLE)
    from lark import Lark

    return Lark._load_from_dict(table["data"], table["memo"])


LARK = lark_parser()
OURS = lalr.Parser(json.loads(_parse_table.RUNTIME))


def shape(node: Any) -> Any:
    """Everything the builder may read of a tree, as plain data."""
    if hasattr(node, "data"):
        meta = node.meta
        where = (None if meta.empty else
                 tuple(getattr(meta, f, None) for f in ("line", "column", "start_pos", "end_line",
                                                        "end_column", "end_pos")))
        return (str(node.data), where, [shape(c) for c in node.children])
    return (node.type, str(node), node.value, node.start_pos, node.line, node.column,
            node.end_line, node.end_column, node.end_pos)


def assert_same(text: str) -> None:
    try:
        expected: Any = shape(LARK.parse(text))
    except UnexpectedInput:
        expected = None
    got = OURS.parse(text)
    assert (None if got is None else shape(got)) == expected, text


def test_the_runtime_table_is_current() -> None:
    """Made from this grammar (else the parser falls back on lark)."""
    assert _parse_table.RUNTIME_GRAMMAR == parser.grammar_text()
    parser._runtime.cache_clear()
    assert parser._runtime() is not None


@pytest.mark.parametrize("text", TEXTS)
def test_texts(text: str) -> None:
    assert_same(text)


def test_every_example() -> None:
    assert EXAMPLES
    for path in EXAMPLES:
        text = path.read_text(encoding="utf-8")
        assert_same(text)
        for chunk in text.split("\n\n"):  # workload files: each query on its own
            assert_same(chunk)


def mutations(text: str, data: st.DataObject) -> str:
    """``text`` with a few of its tokens deleted, doubled or swapped (or none)."""
    words = text.replace("(", " ( ").replace(")", " ) ").split(" ")
    for _ in range(data.draw(st.integers(0, 3))):
        if not words:
            break
        i = data.draw(st.integers(0, len(words) - 1))
        how = data.draw(st.sampled_from(["delete", "double", "swap", "newline", "comment"]))
        if how == "delete":
            del words[i]
        elif how == "double":
            words.insert(i, words[i])
        elif how == "swap" and i + 1 < len(words):
            words[i], words[i + 1] = words[i + 1], words[i]
        elif how == "newline":
            words.insert(i, "\n")
        else:
            words.insert(i, "-- note\n")
    return " ".join(words)


@settings(deadline=None)
@given(query=st.one_of(queries(), raw_queries), data=st.data())
def test_generated_queries_and_their_mutations(query: Any, data: st.DataObject) -> None:
    text = format_query(query)
    assert_same(text)
    assert_same(mutations(text, data))


def test_the_parser_uses_the_runtime_and_lark_only_for_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parser._runtime.cache_clear()
    calls: list[str] = []
    real = parser._lark

    def counted() -> Any:
        calls.append("lark")
        return real()

    monkeypatch.setattr(parser, "_lark", counted)
    query = parser.parse_query(TEXTS[2])
    assert calls == [] and query.returns is not None
    with pytest.raises(parser.AcelSyntaxError) as info:
        parser.parse_query("A ; ; B")
    assert calls  # the message comes from lark's error
    assert "expected" in str(info.value)


def test_without_runtime_tables_lark_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    """An old generated module (no RUNTIME) or another grammar: lark, same AST and positions."""
    text = TEXTS[3]
    fast, fast_loc = parser.parse_query_located(text)
    monkeypatch.delattr(_parse_table, "RUNTIME")
    parser._runtime.cache_clear()
    try:
        assert parser._runtime() is None
        slow, slow_loc = parser.parse_query_located(text)
    finally:
        parser._runtime.cache_clear()
    assert slow == fast
    assert located(slow, slow_loc) == located(fast, fast_loc)


PARTS = ("", "var", "type", "attr", "func", "name", "size", "vars.0", "attrs.0", "partition_by.0",
         "select", "within", "slide", "skip")


def located(node: Any, loc: parser.Locations) -> list[Any]:
    """Every part's position of every node of the AST, in traversal order (positions are
    kept by ``id``, so only live nodes are compared)."""
    import dataclasses

    out: list[Any] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(reversed(item))
        elif dataclasses.is_dataclass(item):
            out.append([loc.positions.get((id(item), part)) for part in PARTS])
            stack.extend(reversed([getattr(item, f.name) for f in dataclasses.fields(item)]))
    return out


def test_another_grammar_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parse_table, "RUNTIME_GRAMMAR", "start: other\n")
    parser._runtime.cache_clear()
    try:
        assert parser._runtime() is None
        assert parser.parse_query(TEXTS[0]) is not None  # by lark
    finally:
        parser._runtime.cache_clear()
