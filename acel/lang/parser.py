"""Parser of ACEL text into the immutable AST (spec §11).

The grammar (``acel/lang/grammar.lark``, :mod:`acel.lang.grammar`) is LALR(1) over a
basic lexer, run by :mod:`acel.lang.lalr` from stored tables (lark only for errors);
:mod:`acel.lang.builder` turns the tree into AST nodes, one method per grammar rule:
binary operators are built left-associative, unary minus on a number folds into a
negative literal (``acel.lang.ast.neg``), and aggregate function names are stored
upper-case (they are looked up case-insensitively).  Syntax errors become
:class:`acel.lang.errors.AcelSyntaxError` with line, column and a message that
says, in words, what was found and what was expected (:mod:`acel.lang.syntax_errors`).

``parse_query_located`` also returns :class:`Locations`, the source position
of every parsed node and of the names inside it, so that the checker can
point at the offending place although AST nodes carry no positions.
"""

from __future__ import annotations

from typing import Any

from acel.lang.ast import Formula, Query
from acel.lang.builder import build
from acel.lang.errors import AcelSyntaxError
from acel.lang.grammar import (
    DICT_TAG,
    KEYWORDS,
    TUPLE_TAG,
    build_lark,
    grammar_text,
    table_key,
    untagged,
)
from acel.lang.grammar import lark_parser as _lark
from acel.lang.grammar import runtime_parser as _runtime
from acel.lang.lalr import Tree, from_lark
from acel.lang.locations import Locations, Position
from acel.lang.syntax_errors import describe_expected, syntax_error

__all__ = [
    "DICT_TAG", "KEYWORDS", "MAX_DEPTH", "TUPLE_TAG", "AcelSyntaxError", "Locations", "Position",
    "build_lark", "describe_expected", "grammar_text", "parse_formula", "parse_formula_located",
    "parse_query", "parse_query_located", "table_key", "untagged",
]
"""The parser's names, also those of the modules it is made of (``_lark`` and ``_runtime``,
the cached parsers, stay here too: the tests clear and replace them)."""


MAX_DEPTH = 200
"""How deeply a query may nest (spec §9; ``papers/language.md``, "Nesting limit").

The depth of a query is the longest path from a clause down to a name or a
number through the syntax tree: every operator (``AND``, ``OR``, ``;``, ``:``,
``+``, ``:+``, ``AS``, ``FILTER``, ``NOT``, a comparison, arithmetic, a unary
minus), every ``X[...]``, ``AGG`` and ``PROJECT`` adds one level, and so does
each operator of a chain (``A ; B ; C`` is three levels: chains are binary
nodes in the AST).  Parentheses build no node and add nothing (so the
printer, which adds some, never makes a query too deep).  Checked once,
right after parsing, so that every later stage (checker, printer, compiler,
oracle, engines, the Python code the optimized engine generates) may walk the
AST recursively within Python's default recursion limit: at this depth none
needs more than about 650 frames (``tests/test_robustness.py``).
"""


def _parse_tree(text: str) -> Tree:
    """The parse tree: :mod:`acel.lang.lalr` when its tables are stored, lark otherwise
    and for every syntax error (the messages are made from lark's errors)."""
    fast = _runtime()
    tree = fast.parse(text) if fast is not None else None
    if tree is None:
        from lark.exceptions import UnexpectedInput

        lark = _lark()
        try:
            tree = from_lark(lark.parse(text))
        except UnexpectedInput as err:
            raise syntax_error(err, text, lark) from None
    _check_depth(tree, text)
    return tree


def _check_depth(tree: Tree, text: str) -> None:
    """Raise a syntax error at the first part of the query nested deeper than MAX_DEPTH."""
    stack: list[tuple[Tree, int]] = [
        (child, 1) for child in reversed(_query_parts(tree)) if isinstance(child, Tree)
    ]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH and node.data != "paren":
            line, column = (1, 1) if node.meta.empty else (node.meta.line, node.meta.column)
            raise AcelSyntaxError(
                f"the query is nested too deeply: deeper than {MAX_DEPTH} levels from here "
                "(each operator is one level, also each AND, OR, ';' or ':' of a chain); "
                "split it into smaller queries or use shorter chains",
                line=line,
                column=column,
                text=text,
            )
        step = 0 if node.data == "paren" else 1  # parentheses build no AST node
        stack.extend((c, depth + step) for c in reversed(node.children) if isinstance(c, Tree))


def _query_parts(tree: Tree) -> list[Any]:
    """The clauses and the formula of a parsed ``start`` tree."""
    (query,) = tree.children
    return list(query.children) if isinstance(query, Tree) else []


def parse_query_located(text: str) -> tuple[Query, Locations]:
    """Parse a query and report where each node and name came from."""
    return build(_parse_tree(text), text)


def parse_query(text: str) -> Query:
    """Parse query text (spec §6, §11) into a :class:`Query`; raise AcelSyntaxError."""
    return parse_query_located(text)[0]


def _first_clause(query: Query, loc: Locations) -> Position | None:
    """Where the first clause around the formula starts (for error messages)."""
    found: list[Position] = []
    for item in query.returns or ():
        found.extend(p for p in [loc.get(item)] if p is not None)
    for part in ("select", "partition_by.0", "within", "slide", "skip"):
        position = loc.positions.get((id(query), part))
        if position is not None:
            found.append(position)
    return min(found) if found else None


def parse_formula_located(text: str) -> tuple[Formula, Locations]:
    """Parse a bare formula (no clauses) with positions."""
    query, loc = parse_query_located(text)
    if query != Query(query.formula):
        where = _first_clause(query, loc) or (1, 1)
        raise AcelSyntaxError(
            "expected a formula only (no RETURN, SELECT, PARTITION BY, WITHIN, SLIDE or AFTER MATCH SKIP)",
            line=where[0],
            column=where[1],
            text=text,
        )
    loc.root = query
    return query.formula, loc


def parse_formula(text: str) -> Formula:
    """Parse a formula (spec §3, §11); raise AcelSyntaxError."""
    return parse_formula_located(text)[0]
