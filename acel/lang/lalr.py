"""A small LALR(1) runtime for the query grammar, run from the tables lark made.

Importing lark and rebuilding its parser from the stored table cost ~18 ms of every
``acel`` start (issue 23; papers/engine.md "Start-up"), more than parsing any query.
``tools/parse_table.py`` stores, beside lark's own table, what lark computed for
this grammar (``acel.lang._parse_table.RUNTIME``): the basic lexer's scanner
patterns and keyword callbacks, the LALR states, and for each rule the tree shaping
of lark's ``ParseTreeBuilder`` (filtered tokens, inlined ``_rules``, ``?rule``
expansion, propagated positions).  :class:`Parser` runs exactly that, so its trees
equal lark's, positions included (``tests/test_lalr.py`` compares them on every
example and on generated queries).  It only accepts: on any syntax error
:meth:`Parser.parse` returns ``None`` and the caller asks lark, whose errors the
messages are made from.
"""

from __future__ import annotations

import re
from typing import Any, Union

Child = Union["Tree", "Token"]


class Token(str):
    """A lexed token (lark's ``Token`` fields): the text, its terminal ``type`` and
    where it starts and ends (1-based lines and columns, 0-based offsets)."""

    type: str
    value: str
    start_pos: int | None
    line: int | None
    column: int | None
    end_line: int | None
    end_column: int | None
    end_pos: int | None

    def __new__(cls, type_: str, value: str, start_pos: int | None = None,
                line: int | None = None, column: int | None = None,
                end_line: int | None = None, end_column: int | None = None,
                end_pos: int | None = None) -> Token:
        token = super().__new__(cls, value)
        token.type, token.value = type_, value
        token.start_pos, token.line, token.column = start_pos, line, column
        token.end_line, token.end_column, token.end_pos = end_line, end_column, end_pos
        return token

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


class Meta:
    """Where a tree's text is (lark's ``Meta``): ``empty`` until positions reach it;
    the other fields are set only when known (lark tests them with ``hasattr``)."""

    empty: bool
    line: int
    column: int
    start_pos: int
    end_line: int
    end_column: int
    end_pos: int

    def __init__(self) -> None:
        self.empty = True


class Tree:
    """A parse tree node (lark's ``Tree``): the rule's name and its children."""

    __slots__ = ("_meta", "children", "data")

    def __init__(self, data: str, children: list[Any], meta: Meta | None = None) -> None:
        self.data = data
        self.children = children
        self._meta = meta

    @property
    def meta(self) -> Meta:
        """The node's position (made on first use, as lark does)."""
        if self._meta is None:
            self._meta = Meta()
        return self._meta

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r})"


Rule = tuple[str, int, str, bool, "list[tuple[int, bool]] | None"]
"""A rule: origin, length, tree name, ``?rule`` expansion, children kept (index, inline)."""


class Parser:
    """The query grammar's lexer and LALR(1) parser, from ``RUNTIME`` data."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.scanner = [re.compile(p, f) for p, f in data["scanner"]]
        self.unless = {t: [re.compile(p, f) for p, f in pats] for t, pats in data["unless"].items()}
        self.ignore = frozenset(data["ignore"])
        self.newline = frozenset(data["newline"])
        self.states: dict[int, dict[str, tuple[bool, int]]] = {
            state: {term: (bool(shift), arg) for term, shift, arg in actions}
            for state, actions in data["states"]
        }
        self.start: int = data["start"]
        self.end: int = data["end"]
        self.rules: list[Rule] = [
            (origin, size, name, bool(expand1),
             None if keep is None else [(i, bool(inline)) for i, inline in keep])
            for origin, size, name, expand1, keep in data["rules"]
        ]

    # ------------------------------------------------------------- lexer

    def tokens(self, text: str) -> list[Token] | None:
        """The tokens of ``text`` (lark's basic lexer), or ``None`` where none matches."""
        out: list[Token] = []
        pos, line, line_start, end = 0, 1, 0, len(text)
        while pos < end:
            for pattern in self.scanner:
                m = pattern.match(text, pos, end)
                if m:
                    value, kind = m.group(0), m.lastgroup
                    break
            else:
                return None
            assert kind is not None
            column = pos - line_start + 1
            start = pos
            if kind in self.newline:
                newlines = value.count("\n")
                if newlines:
                    line_at = line
                    line += newlines
                    line_start = pos + value.rindex("\n") + 1
                else:
                    line_at = line
            else:
                line_at = line
            pos += len(value)
            if kind in self.ignore:
                continue
            token = Token(kind, value, start, line_at, column, line, pos - line_start + 1, pos)
            for keyword in self.unless.get(kind, ()):
                km = keyword.fullmatch(value)
                if km:
                    token.type = km.lastgroup or kind
                    break
            out.append(token)
        return out

    # ------------------------------------------------------------- parser

    def parse(self, text: str) -> Tree | None:
        """The parse tree of ``text``, as lark builds it; ``None`` on a syntax error."""
        tokens = self.tokens(text)
        if tokens is None:
            return None
        states, rules = self.states, self.rules
        state_stack = [self.start]
        value_stack: list[Any] = []
        last = tokens[-1] if tokens else None
        end_token = (Token("$END", "", last.start_pos, last.line, last.column, last.end_line,
                           last.end_column, last.end_pos)
                     if last is not None else Token("$END", "", 0, 1, 1))
        tokens.append(end_token)
        for token in tokens:
            is_end = token is end_token
            while True:
                action = states[state_stack[-1]].get(token.type)
                if action is None:
                    return None
                shift, arg = action
                if shift:
                    if is_end:
                        return None
                    state_stack.append(arg)
                    value_stack.append(token)
                    break
                origin, size, name, expand1, keep = rules[arg]
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value = _build(children, name, expand1, keep)
                goto = states[state_stack[-1]].get(origin)
                if goto is None or not goto[0]:
                    return None
                state_stack.append(goto[1])
                value_stack.append(value)
                if is_end and state_stack[-1] == self.end:
                    return value_stack[-1]  # type: ignore[no-any-return]
        return None


def _build(children: list[Any], name: str, expand1: bool,
           keep: list[tuple[int, bool]] | None) -> Any:
    """One reduction's value, as lark's wrapper chain makes it: the child filter, then
    ``?rule`` expansion, then positions propagated from ``children``."""
    if keep is None:
        kept = children
    else:
        kept = []
        for i, inline in keep:
            if inline:
                if kept:
                    kept += children[i].children
                else:
                    kept = children[i].children
            else:
                kept.append(children[i])
    result = kept[0] if expand1 and len(kept) == 1 else Tree(name, kept)
    if isinstance(result, Tree):
        _propagate(result.meta, children)
    return result


def _first_meta(children: Any) -> Any:
    for c in children:
        if isinstance(c, Tree):
            if not c.meta.empty:
                return c.meta
        elif isinstance(c, Token):
            return c
    return None


def _propagate(meta: Meta, children: list[Any]) -> None:
    """lark's ``PropagatePositions``: a node starts where its first child's container
    starts and ends where its last child's container ends."""
    first = _first_meta(children)
    if first is not None:
        _take_positions(meta, first, ("line", "column", "start_pos"))
    last = _first_meta(reversed(children))
    if last is not None:
        _take_positions(meta, last, ("end_line", "end_column", "end_pos"))


def _take_positions(meta: Meta, child: Any, names: tuple[str, str, str]) -> None:
    """One end of :func:`_propagate`: the child's container positions ``names`` become the
    node's own (unless it has them already) and its container's."""
    values = [getattr(child, "container_" + name, getattr(child, name)) for name in names]
    if not hasattr(meta, names[0]):
        for name, value in zip(names, values):
            setattr(meta, name, value)
        meta.empty = False
    for name, value in zip(names, values):
        setattr(meta, "container_" + name, value)


def from_lark(node: Any) -> Any:
    """A lark tree or token as this module's (the trees lark builds when no runtime
    table is stored), positions included."""
    if hasattr(node, "data"):
        meta = Meta()
        if not node.meta.empty:
            meta.__dict__.update(node.meta.__dict__)
        return Tree(str(node.data), [from_lark(c) for c in node.children], meta)
    return Token(node.type, str(node.value), node.start_pos, node.line, node.column,
                 node.end_line, node.end_column, node.end_pos)
