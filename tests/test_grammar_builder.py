"""The parse-tree builder against the grammar and the AST (issue 34 §4).

:class:`acel.lang.builder.AstBuilder` has one method per tree the grammar builds,
named by the rule (or its alias) and taking the tree's children as named parameters;
these tests read the grammar with lark and check that every tree has its method,
that each method takes as many children as each of its rule's alternatives has, that
the methods' return types cover every AST class, and that the reserved words are
the grammar's keyword terminals.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest
from lark import Lark

from acel.lang import ast as A
from acel.lang import builder as builder_module
from acel.lang.builder import LOOKED_THROUGH, AstBuilder
from acel.lang.errors import AcelSyntaxError
from acel.lang.grammar import (
    KEYWORDS,
    build_lark,
    grammar_text,
    keywords,
    punctuation,
    tree_names,
)
from acel.lang.parser import parse_query

LARK: Lark = build_lark(grammar_text())


def rule_methods() -> dict[str, Any]:
    """The builder's methods marked ``@rule``, by name."""
    return {
        name: member for name, member in inspect.getmembers(AstBuilder, inspect.isfunction)
        if getattr(member, "__rule__", False)
    }


def classes_in(annotation: Any) -> set[type]:
    """The classes an annotation names (through unions, tuples and lists)."""
    args = typing.get_args(annotation)
    if args:
        return set().union(*(classes_in(a) for a in args if a is not Ellipsis))
    return {annotation} if isinstance(annotation, type) else set()


def test_every_tree_of_the_grammar_has_its_method() -> None:
    names = tree_names(LARK)
    assert "seq_f" in names and "paren" in names and "filter" not in names
    assert set(rule_methods()) == names - LOOKED_THROUGH


def test_each_method_takes_its_rule_children() -> None:
    """Every alternative of a rule is called with its children as positional arguments."""
    methods = rule_methods()
    checked = 0
    for rule in LARK.rules:
        name = str(rule.alias or rule.origin.name)
        if name in methods:
            arity = len(rule.expansion)
            signature = inspect.signature(methods[name])
            signature.bind(None, None, *range(arity))  # self, tree, the children
            checked += 1
    assert checked > len(methods)  # rules with several alternatives are checked for each


def operator_nodes_written() -> set[type]:
    """The Infix and Postfix classes the generic methods build: for each rule aliased
    ``infix`` or ``postfix_op``, the class whose symbol its operator terminal spells."""
    strings = {t.name: t.pattern.value for t in LARK.terminals if t.pattern.type == "str"}
    bases = {"infix": (A.Infix, 1), "postfix_op": (A.Postfix, 1)}
    found: set[type] = set()
    for rule in LARK.rules:
        if str(rule.alias) in bases:
            base, at = bases[str(rule.alias)]
            word = strings[rule.expansion[at].name]
            token = builder_module.Token(rule.expansion[at].name, word)
            found.add(builder_module.operator_class(base, token))
    return found


def test_the_methods_build_every_ast_class() -> None:
    """Derived from the AST: a new node class without a builder method (or, built on
    ``Infix``/``Postfix``, without a grammar rule aliased to the generic one) fails here."""
    hints = {name: typing.get_type_hints(method, vars(builder_module))["return"]
             for name, method in rule_methods().items()}
    built = set().union(*(classes_in(h) for h in hints.values())) - {A.Infix, A.Postfix}
    written = operator_nodes_written()
    assert {A.Or, A.And, A.Plus, A.ContigPlus} <= written
    built |= written
    nodes = {cls for kind in A.NODE_KINDS.values() for cls in kind}
    clauses = {A.Query, A.Window, A.Skip, A.AggOutput, *typing.get_args(A.ReturnItem)}
    assert nodes | clauses <= built
    assert {cls for cls in built if cls.__module__.startswith("acel.lang.ast")} == nodes | clauses


def test_each_method_returns_what_it_says() -> None:
    """The annotations the check above reads are true for the nodes of one query."""
    query = parse_query(
        "RETURN COUNT(*), SUM(b.v) SELECT NEXT PATTERN A AS a ; NOT N ; (B AS b)+ ; C? ; D "
        "FILTER a[x IN (1, -2) AND NOT v = -PREV(v)] AND b[INC(v)] PARTITION BY k "
        "WITHIN 11 ON ts SLIDE 2 EVENTS AFTER MATCH SKIP TO LAST a"
    )
    assert isinstance(query.skip, A.Skip) and isinstance(query.within, A.Window)
    assert query.select == "NEXT" and query.partition_by == ("k",)
    assert isinstance(query.formula, A.FilterF) and isinstance(query.formula.formula, A.Seq)


def test_the_reserved_words_are_the_grammar_keywords() -> None:
    """``KEYWORDS`` is read from the grammar's text; lark's terminals agree."""
    from_lark = {
        t.name for t in LARK.terminals
        if t.pattern.type == "str" and "i" in t.pattern.flags and t.pattern.value.upper() == t.name
    }
    assert KEYWORDS == from_lark
    assert {"AS", "FILTER", "SKIP", "PATTERN"} <= KEYWORDS and "NAME" not in KEYWORDS


@pytest.mark.parametrize("line,reserved", [
    ('TOY: "TOY"i', True), ('TOY.2: "TOY"i', False), ('TOY: "toy"', False),
    ('NAME: /[a-z]+/', False), ('TOYS: "TOY"i', False),
])
def test_keywords_reads_only_keyword_terminals(line: str, reserved: bool) -> None:
    assert keywords(f"start: NAME\n{line}\n") == ({"TOY"} if reserved else set())


def test_the_punctuation_words_are_the_grammar_strings() -> None:
    """Syntax errors name a fixed-string terminal as written, read from the grammar:
    a new operator's symbol needs no entry of its own (issue 34)."""
    from_lark = {
        t.name: t.pattern.value for t in LARK.terminals
        if t.pattern.type == "str" and not t.pattern.flags
    }
    assert punctuation(grammar_text()) == from_lark
    assert punctuation('start: A\nAMP: "&"\nAS: "AS"i\n') == {"AMP": "&"}
    with pytest.raises(AcelSyntaxError, match=r"found ';' but expected .*'\('"):
        parse_query("A ; ; B")


@pytest.mark.parametrize("base", [A.Infix, A.Postfix])
def test_operator_symbols_name_one_class(base: type) -> None:
    """The generic methods find a class by its symbol: no two share one (any case)."""
    classes = [cls for cls in A.FORMULA_TYPES if issubclass(cls, base)]
    symbols = [cls.symbol.upper() for cls in classes]  # type: ignore[attr-defined]
    assert len(set(symbols)) == len(symbols) >= 2
    assert set(builder_module.operator_classes(base).values()) == set(classes)


def test_an_unknown_operator_token_is_named() -> None:
    with pytest.raises(AssertionError, match="no Infix node of acel.lang.ast has the symbol '&'"):
        builder_module.operator_class(A.Infix, builder_module.Token("AMP", "&"))
