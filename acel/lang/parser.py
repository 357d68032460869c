"""Parser of ACEL text into the immutable AST (spec §11).

The grammar (``acel/lang/grammar.lark``) is LALR(1) over a basic lexer; binary
operators are built left-associative, unary minus on a number folds into a
negative literal (``acel.lang.ast.neg``), and aggregate function names are stored
upper-case (they are looked up case-insensitively).  Syntax errors become
:class:`acel.lang.errors.AcelSyntaxError` with line, column and a message that
says, in words, what was found and what was expected.

``parse_query_located`` also returns :class:`Locations`, the source position
of every parsed node and of the names inside it, so that the checker can
point at the offending place although AST nodes carry no positions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acel.lang.lalr import Parser, Token, Tree, from_lark

if TYPE_CHECKING:
    from lark import Lark
    from lark import Token as LarkToken
    from lark.exceptions import UnexpectedInput

# lark is imported only where a query fails to parse, or where no runtime table is
# stored (acel.lang.lalr runs the tables lark made: 18 ms of every start, issue 23).

from acel.lang.ast import (
    SELECT_STRATEGIES,
    Agg,
    AggOutput,
    And,
    As,
    Atom,
    Attr,
    BagAgg,
    BagKind,
    BagPred,
    BinOp,
    CmpOp,
    Compare,
    Contig,
    ContigPlus,
    CountStar,
    EdgeKind,
    Expr,
    Filter,
    FilterAnd,
    FilterF,
    FilterOr,
    FirstLast,
    Formula,
    InList,
    LeadingNot,
    Lit,
    Next,
    Opt,
    Or,
    Plus,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
    Prev,
    ProjectAttrs,
    ProjectVars,
    Query,
    Repeat,
    ReturnAgg,
    ReturnAttr,
    ReturnItem,
    Running,
    Seq,
    SeqNot,
    Skip,
    TrailingNot,
    VarAttr,
    VarPred,
    Window,
    neg,
)
from acel.lang.errors import AcelSyntaxError
from acel.lang.events import Value
from acel.lang.numbers import int_from_digits, literal_problem

KEYWORDS: frozenset[str] = frozenset(
    """AS FILTER OR AND NOT IN PROJECT AGG NEXT RETURN PATTERN PARTITION BY WITHIN
    SLIDE EVENTS ON TRUE FALSE SAME INC DEC SELECT AFTER SKIP""".split()
)
"""Reserved words (any case); they cannot be type, variable or attribute names."""

Position = tuple[int, int]
"""A 1-based (line, column)."""


@dataclass
class Locations:
    """Source positions of parsed nodes, keyed by ``id(node)`` and a part name.

    Part ``""`` is where the node starts; other parts name a name inside the
    node: ``"var"``, ``"type"``, ``"attr"``, ``"func"``, ``"name"``,
    ``"size"``, ``"vars.0"``, ``"attrs.1"``, ``"partition_by.0"``, ...
    The parsed root is kept alive so that ids stay valid.
    """

    root: object = None
    positions: dict[tuple[int, str], Position] = field(default_factory=dict)

    def set(self, node: object, part: str, where: Token | Position | None) -> None:
        if where is None:
            return
        if isinstance(where, Token):
            if where.line is None or where.column is None:
                return
            where = (where.line, where.column)
        self.positions[(id(node), part)] = where

    def get(self, node: object, part: str = "") -> Position | None:
        """The position of ``part`` of ``node`` (falling back to the node's start)."""
        found = self.positions.get((id(node), part))
        if found is None and part:
            found = self.positions.get((id(node), ""))
        return found


@lru_cache(maxsize=1)
def _runtime() -> Parser | None:
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
def _lark() -> Lark:
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


def grammar_text() -> str:
    """The text of ``grammar.lark``: the file beside this module (every install has it;
    ``importlib.resources``, which loads ``zipfile`` and ``tempfile``, only where it is not,
    e.g. a zipped package: its import cost every start ~3 ms, issue 23)."""
    beside = Path(__file__).with_name("grammar.lark")
    if beside.is_file():
        return beside.read_text(encoding="utf-8")
    from importlib import resources

    return resources.files("acel.lang").joinpath("grammar.lark").read_text(encoding="utf-8")


def build_lark(grammar: str) -> Lark:
    """The query parser built from the grammar (LALR, positions kept)."""
    from lark import Lark

    return Lark(
        grammar, parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=False
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


# ------------------------------------------------------------------ errors

_TERMINAL_WORDS: dict[str, str] = {
    "NAME": "a name",
    "INT": "a number",
    "FLOAT": "a number",
    "STRING": "a 'string'",
    "CMPOP": "a comparison (= != < <= > >=)",
    "ASSIGN": "':='",
    "COLONPLUS": "':+'",
    "COLON": "':'",
    "SEMI": "';'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "PERCENT": "'%'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "DOT": "'.'",
    "QMARK": "'?'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "COLONLBRACE": "':{'",
    "$END": "the end of the query",
}

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
    if terminal in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[terminal]
    return terminal  # a keyword: its own upper-case spelling


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
    if token.type in _TERMINAL_WORDS:
        return f"'{token.value}'"
    return f"the keyword {token.value.upper()}"


def _previous_token_type(text: str, pos: int | None) -> str | None:
    """The type of the last token before character offset ``pos``."""
    from lark.exceptions import UnexpectedInput

    previous: str | None = None
    try:
        for token in _lark().lex(text):
            if pos is not None and token.start_pos is not None and token.start_pos >= pos:
                break
            previous = token.type
    except UnexpectedInput:
        pass
    return previous


def _end_position(text: str) -> Position:
    """Where "the end of the query" is: just after its last token.

    Trailing blank lines and comments are skipped, so the error shows the line
    that needs more (a query ending in a newline has an empty last line); a
    query of blanks and comments only ends at line 1, column 1.
    """
    from lark.exceptions import UnexpectedInput

    last: LarkToken | None = None
    try:
        for token in _lark().lex(text):
            last = token
    except UnexpectedInput:
        last = None
    if last is not None and last.end_line is not None and last.end_column is not None:
        return (last.end_line, last.end_column)
    return (1, 1)  # nothing but blanks and comments


def _accepted(err: UnexpectedInput, text: str) -> set[str] | None:
    """The terminals the parser could really accept where it stopped.

    LALR default reductions make ``err.expected`` too wide; the interactive
    parser tries each terminal and keeps those that do not fail.
    """
    try:
        interactive = getattr(err, "interactive_parser", None)
        if interactive is None:
            pos = err.pos_in_stream if err.pos_in_stream is not None else len(text)
            interactive = _lark().parse_interactive(text[:pos])
            interactive.exhaust_lexer()
        accepted = set(interactive.accepts())
    except Exception:  # the prefix itself may not lex; fall back to lark's set
        return None
    return accepted or None


def _syntax_error(err: UnexpectedInput, text: str) -> AcelSyntaxError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream if err.pos_in_stream is not None else len(text)
        char = text[pos] if pos < len(text) else ""
        if char == "'":
            message = "unterminated string: a string ends with ' (write '' for a quote inside it)"
        else:
            message = f"unexpected character {char!r}"
            accepted = _accepted(err, text)
            if accepted:
                message += (
                    f"; expected {describe_expected(accepted, _previous_token_type(text, pos))}"
                )
        return AcelSyntaxError(message, line=err.line, column=err.column, text=text)
    if isinstance(err, UnexpectedToken):
        token = err.token
        if token.type == "$END":
            line, column = _end_position(text)
            previous = _previous_token_type(text, None)
        else:
            line, column = token.line or 1, token.column or 1
            previous = _previous_token_type(text, token.start_pos)
        accepted = _accepted(err, text) or set(err.expected)
        message = (
            f"found {_describe_token(token)} but expected {describe_expected(accepted, previous)}"
        )
        if token.type in KEYWORDS and "NAME" in accepted:
            message += f" ({token.value.upper()} is a reserved word and cannot be a name)"
        if previous == "QMARK" or (token.type in ("QMARK", "STAR") and "STAR" not in accepted):
            message += _QUANTIFIER_HINT
        return AcelSyntaxError(message, line=line, column=column, text=text)
    if isinstance(err, UnexpectedEOF):
        line, column = _end_position(text)
        expected = describe_expected(err.expected)
        return AcelSyntaxError(
            f"the query ends too early; expected {expected}", line=line, column=column, text=text
        )
    return AcelSyntaxError(str(err), text=text)


# --------------------------------------------------------- tree → AST builder


def _tokens(children: list[Any]) -> list[Token]:
    return [c for c in children if isinstance(c, Token)]


def _names(children: list[Any]) -> list[Token]:
    return [c for c in children if isinstance(c, Token) and c.type == "NAME"]


class _BadLiteral(Exception):
    """A number token without an ACEL value (``acel.lang.numbers``); becomes a syntax error."""

    def __init__(self, message: str, token: Token) -> None:
        super().__init__(message)
        self.message = message
        self.token = token


def _numeric(token: Token) -> int | float:
    problem = literal_problem(token.type, token.value)
    if problem is not None:
        raise _BadLiteral(problem, token)
    return int_from_digits(token.value) if token.type == "INT" else float(token.value)


def _number(tokens: list[Token]) -> int | float:
    sign = -1 if tokens[0].type == "MINUS" else 1
    return sign * _numeric(tokens[-1])


def _literal_value(token: Token) -> Value:
    if token.type in ("INT", "FLOAT"):
        return _numeric(token)
    if token.type == "STRING":
        return token.value[1:-1].replace("''", "'")
    if token.type == "TRUE":
        return True
    if token.type == "FALSE":
        return False
    raise AssertionError(f"not a literal token: {token!r}")


def _unparen(tree: Tree | Token) -> Tree:
    """The tree inside any number of parentheses (a loop: they may nest deeply)."""
    assert isinstance(tree, Tree), tree
    while tree.data == "paren":
        tree = tree.children[1]
        assert isinstance(tree, Tree), tree
    return tree


_BINARY: dict[str, Callable[[Formula, Formula], Formula]] = {
    "or_f": Or,
    "and_f": And,
}

_SEQUENCE_RULES = ("seq_f", "contig_f", "not_f")
_OPTIONAL_RULES = ("optional_f", "star_f")


def _sequence_elements(tree: Tree) -> list[tuple[Token | None, Tree]]:
    """A left-associative ``;``/``:`` chain as ``(separator, element)`` pairs.

    The first element has no separator.  Parenthesised sub-sequences are
    elements of their own (``paren`` trees are not flattened).
    """
    elements: list[tuple[Token | None, Tree]] = []
    node = tree
    while node.data in ("seq_f", "contig_f"):
        elements.append((cast(Token, node.children[1]), cast(Tree, node.children[2])))
        node = cast(Tree, node.children[0])
    elements.append((None, node))
    elements.reverse()
    return elements


def _is_not(element: Tree) -> bool:
    return element.data == "not_f"


def _is_optional(element: Tree) -> bool:
    return element.data in _OPTIONAL_RULES


class _Builder:
    """Turns a lark parse tree into AST nodes, recording their positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.loc = Locations()

    def error(self, message: str, token: Token) -> AcelSyntaxError:
        return AcelSyntaxError(message, line=token.line, column=token.column, text=self.text)

    def at(self, node: Any, tree: Tree | Token) -> Any:
        if isinstance(tree, Token):
            self.loc.set(node, "", tree)
        elif not tree.meta.empty:
            self.loc.set(node, "", (tree.meta.line, tree.meta.column))
        return node

    # ------------------------------------------------------------- query

    def query(self, tree: Tree) -> Query:
        (qtree,) = tree.children
        assert isinstance(qtree, Tree)
        formula: Formula | None = None
        returns: tuple[ReturnItem, ...] | None = None
        partition: list[Token] = []
        within = slide = None
        select = "ALL"
        skip: Skip | None = None
        select_token: Token | None = None
        skip_token: Token | None = None
        for child in qtree.children:
            if isinstance(child, Token):
                continue  # PATTERN
            if child.data == "select_clause":
                select_token = _tokens(child.children)[1]
                select = self.select(select_token)
            elif child.data == "skip_clause":
                skip_token = _tokens(child.children)[0]
                skip = self.skip(_tokens(child.children))
            elif child.data == "return_clause":
                returns = tuple(self.return_item(c) for c in child.children if isinstance(c, Tree))
            elif child.data == "partition_clause":
                partition = _names(child.children)
            elif child.data == "within_clause":
                within = self.window(cast(Tree, child.children[1]))
            elif child.data == "slide_clause":
                slide = self.window(cast(Tree, child.children[1]))
            else:
                formula = self.formula(child)
        assert formula is not None
        query = Query(
            formula, returns, tuple(t.value for t in partition), within, slide, select, skip
        )
        self.at(query, qtree)
        self.loc.set(query, "select", select_token)
        self.loc.set(query, "skip", skip_token)
        for index, token in enumerate(partition):
            self.loc.set(query, f"partition_by.{index}", token)
        if within is not None:
            self.loc.set(query, "within", self.loc.get(within))
        if slide is not None:
            self.loc.set(query, "slide", self.loc.get(slide))
        return query

    def select(self, token: Token) -> str:
        """The strategy after SELECT (spec §6.2), any case."""
        name = token.value.upper()
        if name not in SELECT_STRATEGIES:
            raise self.error(
                f"unknown selection strategy {token.value!r}: write SELECT "
                + ", ".join(SELECT_STRATEGIES[:-1])
                + f" or {SELECT_STRATEGIES[-1]}",
                token,
            )
        return name

    def skip(self, tokens: list[Token]) -> Skip:
        """``AFTER MATCH SKIP TO NEXT ROW | PAST LAST ROW | TO FIRST X | TO LAST X``."""
        _after, match, _skip, *words = tokens
        if match.value.upper() != "MATCH":
            raise self.error(f"expected MATCH after AFTER, found {match.value!r}", match)
        upper = [w.value.upper() for w in words]
        if upper == ["TO", "NEXT", "ROW"]:
            return Skip("TO_NEXT_ROW")
        if upper == ["PAST", "LAST", "ROW"]:
            return Skip("PAST_LAST_ROW")
        if len(words) == 3 and upper[:2] in (["TO", "FIRST"], ["TO", "LAST"]):
            var = words[2]
            if var.type != "NAME":
                raise self.error(f"expected a variable after TO {upper[1]}", var)
            node = Skip("TO_FIRST" if upper[1] == "FIRST" else "TO_LAST", var.value)
            self.loc.set(node, "var", var)
            return node
        expected = ["TO", "NEXT", "ROW"]
        if upper and upper[0] == "PAST":
            expected = ["PAST", "LAST", "ROW"]
        elif len(upper) > 1 and upper[0] == "TO" and upper[1] in ("FIRST", "LAST"):
            expected = upper[:2]
        mismatch = [w for w, u, e in zip(words, upper, expected) if u != e]
        extra = words[len(expected)] if len(words) > len(expected) else words[-1]
        bad = mismatch[0] if mismatch else extra
        raise self.error(
            "expected AFTER MATCH SKIP TO NEXT ROW, PAST LAST ROW, TO FIRST X or TO LAST X",
            bad,
        )

    def return_item(self, tree: Tree) -> ReturnItem:
        names = _names(tree.children)
        item: ReturnItem
        if tree.data == "ret_attr":
            item = ReturnAttr(names[0].value)
            self.loc.set(item, "name", names[0])
        elif tree.data == "ret_count_star":
            if names[0].value.upper() != "COUNT":
                raise self.error(
                    f"only COUNT takes '*': write {names[0].value.upper()}(X.attribute)", names[0]
                )
            item = CountStar()
        else:
            attr = names[2].value if tree.data == "ret_agg_attr" else None
            item = ReturnAgg(names[0].value.upper(), names[1].value, attr)
            self.loc.set(item, "func", names[0])
            self.loc.set(item, "var", names[1])
            if attr is not None:
                self.loc.set(item, "attr", names[2])
        return cast(ReturnItem, self.at(item, tree))

    def window(self, tree: Tree) -> Window:
        tokens = _tokens(tree.children)
        number_tree = cast(Tree, tree.children[0])
        size = _number(_tokens(number_tree.children))
        attr = tokens[-1] if tree.data == "window_on" else None
        window = Window(size, attr.value if attr is not None else None)
        self.at(window, tree)
        self.loc.set(window, "size", self.loc.get(window))
        if attr is not None:
            self.loc.set(window, "attr", attr)
        return window

    # ---------------------------------------------------------- formulas

    def formula(self, tree: Tree | Token) -> Formula:
        tree = _unparen(tree)
        kind = tree.data
        ch = tree.children
        names = _names(ch)
        node: Formula
        if kind == "atom":
            node = Atom(names[0].value)
            self.loc.set(node, "type", names[0])
        elif kind == "next_f":
            node = Next(names[0].value)
            self.loc.set(node, "type", names[0])
        elif kind == "filter_f":
            node = FilterF(self.formula(ch[0]), self.filter(ch[2]))
        elif kind in _SEQUENCE_RULES:
            return self.sequence(tree)
        elif kind in ("or_f", "and_f"):
            node = _BINARY[kind](self.formula(ch[0]), self.formula(ch[2]))
        elif kind == "plus_f":
            node = Plus(self.formula(ch[0]))
        elif kind == "contig_plus_f":
            node = ContigPlus(self.formula(ch[0]))
        elif kind == "repeat_f":
            node = self.repeat(tree)
        elif kind in _OPTIONAL_RULES:
            mark = cast(Token, ch[-1])
            raise self.error(
                f"'{mark.value}' makes an element of a sequence optional; alone it would allow "
                "an empty complex event (spec §3.2): write it inside a sequence, e.g. A ; B"
                f"{mark.value} ; C",
                mark,
            )
        elif kind == "as_f":
            node = As(self.formula(ch[0]), names[-1].value)
            self.loc.set(node, "var", names[-1])
        elif kind == "project_vars":
            listed = _names(cast(Tree, ch[2]).children)
            node = ProjectVars(tuple(t.value for t in listed), self.formula(ch[5]))
            for index, token in enumerate(listed):
                self.loc.set(node, f"vars.{index}", token)
        elif kind == "project_attrs":
            listed = _names(cast(Tree, ch[3]).children)
            node = ProjectAttrs(names[0].value, tuple(t.value for t in listed), self.formula(ch[6]))
            self.loc.set(node, "var", names[0])
            for index, token in enumerate(listed):
                self.loc.set(node, f"attrs.{index}", token)
        elif kind == "agg":
            outputs = tuple(
                self.agg_output(c)
                for c in ch
                if isinstance(c, Tree) and c.data.startswith("agg_output")
            )
            node = Agg(names[0].value, outputs, self.formula(ch[-2]))
            self.loc.set(node, "var", names[0])
        else:
            raise AssertionError(f"unknown formula rule {kind}")
        return cast(Formula, self.at(node, tree))

    def repeat(self, tree: Tree) -> Repeat:
        """``φ{n}``, ``φ{n,m}``, ``φ{n,}`` and the ``:{...}`` forms (spec §3.2)."""
        ch = tree.children
        opener = cast(Token, ch[1])
        numbers = [t for t in ch[2:] if isinstance(t, Token) and t.type == "INT"]
        bounded = not any(isinstance(t, Token) and t.type == "COMMA" for t in ch[2:])
        for token in numbers:  # too long to convert; the checker limits the rest (issue 35)
            problem = literal_problem("INT", token.value)
            if problem is not None:
                raise self.error(problem, token)
        low = int_from_digits(numbers[0].value)
        high: int | None = low if bounded else None
        if len(numbers) == 2:
            high = int_from_digits(numbers[1].value)
        if low < 1:
            raise self.error(f"a repetition needs at least one copy: {{{low}...}} (spec §3.2)", numbers[0])
        if high is not None and high < low:
            raise self.error(
                f"a repetition {{{low},{high}}} needs n <= m (spec §3.2)", numbers[1]
            )
        node = Repeat(self.formula(ch[0]), low, high, opener.type == "COLONLBRACE")
        self.loc.set(node, "low", numbers[0])
        self.loc.set(node, "high", numbers[-1])
        return node

    def element(self, tree: Tree) -> Formula:
        """A sequence element: a formula, or ``ψ?``/``ψ*`` (spec §3.2)."""
        if _is_optional(tree):
            node = Opt(self.formula(tree.children[0]), tree.data == "star_f")
            return cast(Formula, self.at(node, tree))
        return self.formula(tree)

    def check_optionals(self, elements: list[tuple[Token | None, Tree]]) -> None:
        """The error cases of ``?`` and ``*`` in a sequence (spec §3.2)."""
        marks = [
            (index, cast(Token, element.children[-1]))
            for index, (_, element) in enumerate(elements)
            if _is_optional(element)
        ]
        if not marks:
            return
        required = [
            e for _, e in elements if not _is_optional(e) and not _is_not(e)
        ]
        if not required:
            raise self.error(
                "a sequence needs an element without '?' or '*': a complex event is never "
                "empty (spec §3.2)",
                marks[0][1],
            )
        positive = [i for i, (_, e) in enumerate(elements) if not _is_not(e)]
        separators = {
            "SEMI" if after - before > 1 else cast(Token, elements[after][0]).type
            for before, after in zip(positive, positive[1:])
        }
        if separators == {"SEMI", "COLON"}:
            raise self.error(
                "an optional element in a sequence that mixes ';' and ':' is ambiguous: the "
                "neighbours of a dropped element would need one connector (spec §3.2); "
                "use parentheses",
                marks[0][1],
            )
        for index, mark in marks:
            inward = [index + 1] if index == positive[0] else []
            inward += [index - 1] if index == positive[-1] else []
            if any(0 <= j < len(elements) and _is_not(elements[j][1]) for j in inward):
                raise self.error(
                    "an optional element at the edge of a sequence cannot stand next to NOT: "
                    "without it, the NOT would become a leading or trailing negation "
                    "(spec §3.2); write the two sequences joined by OR",
                    mark,
                )

    def sequence(self, tree: Tree) -> Formula:
        """A ``;``/``:`` chain, with its NOT elements, in the canonical shape (spec §3.1).

        Left-associative as without negation; a run of NOTs between two
        elements guards their gap (``SeqNot``); NOTs before the first element
        make a ``LeadingNot``, NOTs after the last a ``TrailingNot``
        (``LeadingNot`` outermost).  ``A ; NOT B ; C ; D`` is
        ``Seq(SeqNot(A, (B,), C), D)``.
        """
        elements = _sequence_elements(tree)
        self.check_optionals(elements)
        for index, (sep, element) in enumerate(elements):
            if not _is_not(element):
                continue
            following = elements[index + 1][0] if index + 1 < len(elements) else None
            for colon in (sep, following):
                if colon is not None and colon.type == "COLON":
                    raise self.error(
                        "':' cannot stand next to NOT: nothing lies between adjacent events, "
                        "so there is no gap to guard (spec §3.1); write ';'",
                        colon,
                    )
        positive = [i for i, (_, element) in enumerate(elements) if not _is_not(element)]
        if not positive:
            raise self.error(
                "a sequence needs an element that is not negated: NOT ψ only guards the gap "
                "between, before or after other elements (spec §3.1)",
                cast(Token, elements[0][1].children[0]),
            )
        first, last = positive[0], positive[-1]
        current = self.element(elements[first][1])
        start = elements[first][1]
        nots: list[Formula] = []
        not_tokens: list[Token] = []
        for sep, element in elements[first + 1 : last + 1]:
            if _is_not(element):
                nots.append(self.formula(element.children[1]))
                not_tokens.append(cast(Token, element.children[0]))
                continue
            right = self.element(element)
            node: Formula
            if nots:
                node = SeqNot(current, tuple(nots), right)
                self._mark_excluded(node, not_tokens)
                nots, not_tokens = [], []
            elif sep is not None and sep.type == "COLON":
                node = Contig(current, right)
            else:
                node = Seq(current, right)
            current = cast(Formula, self.at(node, start))
        if last + 1 < len(elements):
            trailing = elements[last + 1 :]
            current = TrailingNot(current, tuple(self.formula(e.children[1]) for _, e in trailing))
            self._mark_excluded(current, [cast(Token, e.children[0]) for _, e in trailing])
            self.at(current, start)
        if first > 0:
            leading = elements[:first]
            current = LeadingNot(tuple(self.formula(e.children[1]) for _, e in leading), current)
            self._mark_excluded(current, [cast(Token, e.children[0]) for _, e in leading])
            self.at(current, tree)
        return current

    def _mark_excluded(self, node: Formula, tokens: Sequence[Token]) -> None:
        """Record where each ``NOT`` of a negation node is written (``excluded.k``)."""
        for index, token in enumerate(tokens):
            self.loc.set(node, f"excluded.{index}", token)

    def agg_output(self, tree: Tree) -> AggOutput:
        names = _names(tree.children)
        attr = names[3].value if tree.data == "agg_output_attr" else None
        out = AggOutput(names[0].value, names[1].value.upper(), names[2].value, attr)
        for part, token in zip(("name", "func", "var", "attr"), names):
            self.loc.set(out, part, token)
        return cast(AggOutput, self.at(out, tree))

    # ----------------------------------------------------------- filters

    def filter(self, tree: Tree | Token) -> Filter:
        tree = _unparen(tree)
        kind = tree.data
        ch = tree.children
        node: Filter
        if kind == "filter_or":
            node = FilterOr(self.filter(ch[0]), self.filter(ch[2]))
        elif kind == "filter_and":
            node = FilterAnd(self.filter(ch[0]), self.filter(ch[2]))
        elif kind == "var_pred":
            var = cast(Token, ch[0])
            node = VarPred(var.value, self.pred(ch[2]))
            self.loc.set(node, "var", var)
        elif kind == "bag_pred":
            var, bag_kind, attr = cast(Token, ch[0]), cast(Token, ch[2]), cast(Token, ch[4])
            node = BagPred(var.value, cast(BagKind, bag_kind.value.upper()), attr.value)
            self.loc.set(node, "var", var)
            self.loc.set(node, "kind", bag_kind)
            self.loc.set(node, "attr", attr)
        else:
            raise AssertionError(f"unknown filter rule {kind}")
        return cast(Filter, self.at(node, tree))

    def pred(self, tree: Tree | Token) -> Pred:
        tree = _unparen(tree)
        kind = tree.data
        ch = tree.children
        node: Pred
        if kind == "pred_or":
            node = PredOr(self.pred(ch[0]), self.pred(ch[2]))
        elif kind == "pred_and":
            node = PredAnd(self.pred(ch[0]), self.pred(ch[2]))
        elif kind == "pred_not":
            node = PredNot(self.pred(ch[1]))
        elif kind == "compare":
            op = cast(Token, ch[1]).value
            node = Compare(cast(CmpOp, op), self.expr(ch[0]), self.expr(ch[2]))
        elif kind in ("in_list", "not_in_list"):
            values = self.literal_list(cast(Tree, ch[-2]))
            node = InList(self.expr(ch[0]), values, kind == "not_in_list")
        else:
            raise AssertionError(f"unknown predicate rule {kind}")
        return cast(Pred, self.at(node, tree))

    def literal_list(self, tree: Tree) -> tuple[Value, ...]:
        values: list[Value] = []
        for child in tree.children:
            if isinstance(child, Token):
                continue  # commas
            tokens = _tokens(child.children)
            if child.data == "neg_number":
                values.append(_number(tokens))
            else:
                values.append(_literal_value(tokens[0]))
        return tuple(values)

    def expr(self, tree: Tree | Token) -> Expr:
        tree = _unparen(tree)
        kind = tree.data
        ch = tree.children
        node: Expr
        if kind == "binop":
            op = cast(Token, ch[1]).value
            node = BinOp(op, self.expr(ch[0]), self.expr(ch[2]))  # type: ignore[arg-type]
        elif kind == "neg":
            node = neg(self.expr(ch[1]))
        elif kind == "attr":
            node = Attr(cast(Token, ch[0]).value)
        elif kind == "literal":
            node = Lit(_literal_value(cast(Token, ch[0])))
        elif kind in ("var_attr", "call_name", "call_attr", "running"):
            node = self.relating(kind, _names(ch))
        else:
            raise AssertionError(f"unknown expression rule {kind}")
        return cast(Expr, self.at(node, tree))

    def relating(self, kind: str, names: list[Token]) -> Expr:
        """``Y.a``, ``F(Y.a)``, ``COUNT(Y)``, ``FIRST/LAST(Y.a)``, ``PREV(a)``,
        ``RUNNING F(a)`` (spec §5.1); function names are stored upper-case."""
        node: Expr
        parts: tuple[str, ...]
        if kind == "var_attr":
            node, parts = VarAttr(names[0].value, names[1].value), ("var", "attr")
        elif kind == "running":
            if names[0].value.upper() != "RUNNING":
                raise self.error(
                    f"found the name {names[1].value!r} after {names[0].value!r}; "
                    "only RUNNING F(a) puts a word before a function (spec §5.1)",
                    names[1],
                )
            node = Running(names[1].value.upper(), names[2].value)
            names, parts = names[1:], ("func", "attr")
        else:
            func = names[0].value.upper()
            if kind == "call_name" and func == "PREV":
                node, parts = Prev(names[1].value), ("func", "attr")
            elif kind == "call_name":
                node, parts = BagAgg(func, names[1].value, None), ("func", "var")
            elif func in ("FIRST", "LAST"):
                node = FirstLast(cast(EdgeKind, func), names[1].value, names[2].value)
                parts = ("func", "var", "attr")
            else:
                node = BagAgg(func, names[1].value, names[2].value)
                parts = ("func", "var", "attr")
        for part, token in zip(parts, names):
            self.loc.set(node, part, token)
        return node


# ------------------------------------------------------------------ entry points


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

        try:
            tree = from_lark(_lark().parse(text))
        except UnexpectedInput as err:
            raise _syntax_error(err, text) from None
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
    builder = _Builder(text)
    tree = _parse_tree(text)
    try:
        query = builder.query(tree)
    except _BadLiteral as bad:
        raise builder.error(bad.message, bad.token) from None
    builder.loc.root = query
    return query, builder.loc


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
