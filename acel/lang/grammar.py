"""The query grammar (``grammar.lark``) and the parsers made from it: the lark-free
LALR runtime of :mod:`acel.lang.lalr` from its stored tables, lark's parser from its
stored table (``acel.lang._parse_table``, written by ``tools/parse_table.py``), and
the reserved words, read from the grammar's keyword terminals (issue 34)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acel.lang.lalr import Parser

if TYPE_CHECKING:
    from lark import Lark

# lark is imported only where a query fails to parse, or where no runtime table is
# stored (acel.lang.lalr runs the tables lark made: 18 ms of every start, issue 23).


def grammar_text() -> str:
    """The text of ``grammar.lark``: the file beside this module (every install has it;
    ``importlib.resources``, which loads ``zipfile`` and ``tempfile``, only where it is not,
    e.g. a zipped package: its import cost every start ~3 ms, issue 23)."""
    beside = Path(__file__).with_name("grammar.lark")
    if beside.is_file():
        return beside.read_text(encoding="utf-8")
    from importlib import resources

    return resources.files("acel.lang").joinpath("grammar.lark").read_text(encoding="utf-8")


_KEYWORD = re.compile(r'^([A-Z][A-Z_]*)\s*:\s*"([A-Za-z_]+)"i\s*$', re.MULTILINE)
"""A keyword terminal of the grammar: ``AS: "AS"i`` (its name is its word)."""


_STRING_TERMINAL = re.compile(r'^([A-Z][A-Z_]*)\s*:\s*"([^"\\]+)"\s*$', re.MULTILINE)
"""A terminal of one fixed, case-sensitive string: ``SEMI: ";"``."""


def punctuation(grammar: str) -> dict[str, str]:
    """The terminals of ``grammar`` that are one fixed string, and the string
    (``{"SEMI": ";", ...}``): syntax errors name them by it."""
    return dict(_STRING_TERMINAL.findall(grammar))


def keywords(grammar: str) -> frozenset[str]:
    """The reserved words of ``grammar``: its terminals that are one case-insensitive
    word spelled as the terminal is named (``tests/test_grammar_builder.py`` compares
    them with the terminals lark reads)."""
    return frozenset(name for name, word in _KEYWORD.findall(grammar) if word.upper() == name)


KEYWORDS: frozenset[str] = keywords(grammar_text())
"""Reserved words (any case); they cannot be type, variable or attribute names."""


@lru_cache(maxsize=1)
def runtime_parser() -> Parser | None:
    """The lark-free parser of :mod:`acel.lang.lalr`, when ``acel.lang._parse_table``
    holds its tables for this very grammar (compared as text: neither lark nor hashlib
    is imported); else ``None``, and lark parses.  The tables are a complete parser of
    the grammar, so they need not match the installed lark's version."""
    import json

    try:
        from acel.lang import _parse_table
    except ImportError:
        return None
    data = getattr(_parse_table, "RUNTIME", None)
    if data is None or getattr(_parse_table, "RUNTIME_GRAMMAR", None) != grammar_text():
        return None
    return Parser(json.loads(data))


@lru_cache(maxsize=1)
def lark_parser() -> Lark:
    """The query parser: loaded from its stored LALR table when that was made from this
    very grammar by this lark version (``acel.lang._parse_table``: plain data in a module,
    no cache file, no pickle), else built from the grammar (75 ms of CPU at every start,
    issue 23)."""
    grammar = grammar_text()
    table = _stored_table(grammar)
    if table is not None:
        from lark import Lark

        return Lark._load_from_dict(table["data"], table["memo"])
    return build_lark(grammar)


def build_lark(grammar: str) -> Lark:
    """The query parser built from the grammar (LALR, positions kept)."""
    from lark import Lark

    return Lark(
        grammar, parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=False
    )


def tree_names(lark: Lark) -> frozenset[str]:
    """The names of the trees the parser can build: each rule's alias or name, except a
    ``?rule``'s unnamed alternatives of one symbol, which lark replaces by that symbol,
    and the ``_rules`` lark inlines (the builder has one method for each,
    ``acel.lang.builder``)."""
    return frozenset(
        str(rule.alias or rule.origin.name)
        for rule in lark.rules
        if (rule.alias or not (rule.options.expand1 and len(rule.expansion) == 1))
        and not str(rule.alias or rule.origin.name).startswith("_")
    )


def table_key(grammar: str) -> str:
    """What a stored parse table must have been made from: the grammar and lark's version."""
    import hashlib

    import lark

    return hashlib.sha256(f"{lark.__version__}\n{grammar}".encode()).hexdigest()


def _stored_table(grammar: str) -> dict[str, Any] | None:
    try:
        from acel.lang import _parse_table
    except ImportError:
        return None
    if _parse_table.KEY != table_key(grammar):
        return None  # the grammar changed (tests/test_parse_table.py asks to regenerate)
    return untagged(_parse_table.TABLE)


TUPLE_TAG = "\x00tuple"
DICT_TAG = "\x00dict"


def untagged(text: str) -> dict[str, Any]:
    """The stored table from its JSON text (tuples and dicts with other than string keys
    were tagged by ``tools/parse_table.py``).  JSON is data only: nothing is executed."""
    import json

    def hook(obj: dict[str, Any]) -> Any:
        if len(obj) == 1:
            if TUPLE_TAG in obj:
                return tuple(obj[TUPLE_TAG])
            if DICT_TAG in obj:
                return {k: v for k, v in obj[DICT_TAG]}
        return obj

    return cast(dict[str, Any], json.loads(text, object_hook=hook))
