"""The parse tree → AST builder: lark's ``Interpreter`` pattern over the trees of
:mod:`acel.lang.lalr` (spec §11).

One method per tree the grammar builds, named by its rule (or alias), taking the
tree's children as named arguments; :meth:`AstBuilder.visit` calls the one a tree
names.  It works top-down, so that errors are found in the order of the text and
parentheses (``paren``, which build no node) are looked through in a loop, however
deeply they nest.  Binary and postfix operators share two methods, ``infix`` and
``postfix_op``, which build the :class:`acel.lang.ast.Infix` or ``Postfix`` class whose
``symbol`` the operator token spells, so a new one needs no method (issue 34).
``tests/test_grammar_builder.py`` checks that every tree of the grammar has its method
and that the methods (and the classes the generic two build) cover the AST's classes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from acel.lang import ast as A
from acel.lang.ast import (
    SELECT_STRATEGIES,
    Agg,
    AggOutput,
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
    CountStar,
    EdgeKind,
    Expr,
    FilterAnd,
    FilterF,
    FilterOr,
    FirstLast,
    Formula,
    Infix,
    InList,
    LeadingNot,
    Lit,
    Neg,
    Next,
    Opt,
    Postfix,
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
from acel.lang.lalr import Token, Tree
from acel.lang.locations import Locations, Position
from acel.lang.numbers import int_from_digits, literal_problem

Method = TypeVar("Method", bound=Callable[..., Any])

LOOKED_THROUGH = frozenset({"paren"})
"""Trees with no method: :meth:`AstBuilder.visit` looks through them."""


def rule(method: Method) -> Method:
    """Mark ``method`` as the builder of the trees its name names."""
    method.__rule__ = True  # type: ignore[attr-defined]
    return method


OperatorNode = TypeVar("OperatorNode", Infix, Postfix)
_BY_SYMBOL: dict[type, tuple[tuple[type, ...], dict[str, type]]] = {}
"""operator_classes's cache: per base, the formula kinds it was read from and the map
(read again when ``acel.lang.ast.NODE_KINDS["formula"]`` is another tuple)."""


def operator_classes(base: type[OperatorNode]) -> dict[str, type[OperatorNode]]:
    """The formula classes built on ``base`` (:class:`acel.lang.ast.Infix` or
    ``Postfix``) by their ``symbol``, upper-case (keywords are written in any case)."""
    kinds = A.NODE_KINDS["formula"]
    cached = _BY_SYMBOL.get(base)
    if cached is None or cached[0] is not kinds:
        found = {cls.symbol.upper(): cls for cls in kinds if issubclass(cls, base)}
        cached = _BY_SYMBOL[base] = (kinds, found)
    return cast("dict[str, type[OperatorNode]]", cached[1])


def operator_class(base: type[OperatorNode], token: Token) -> type[OperatorNode]:
    """The class built on ``base`` whose symbol ``token`` spells."""
    try:
        return operator_classes(base)[token.value.upper()]
    except KeyError:
        raise AssertionError(
            f"no {base.__name__} node of acel.lang.ast has the symbol {token.value!r}"
        ) from None


class BadLiteral(Exception):
    """A number token without an ACEL value (``acel.lang.numbers``); becomes a syntax error."""

    def __init__(self, message: str, token: Token) -> None:
        super().__init__(message)
        self.message = message
        self.token = token


def _numeric(token: Token) -> int | float:
    problem = literal_problem(token.type, token.value)
    if problem is not None:
        raise BadLiteral(problem, token)
    return int_from_digits(token.value) if token.type == "INT" else float(token.value)


def _number(tokens: Sequence[Token]) -> int | float:
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


def _names(children: Sequence[Any]) -> list[Token]:
    return [c for c in children if isinstance(c, Token) and c.type == "NAME"]


def _unparen(tree: Tree | Token) -> Tree:
    """The tree inside any number of parentheses (a loop: they may nest deeply)."""
    assert isinstance(tree, Tree), tree
    while tree.data in LOOKED_THROUGH:
        tree = tree.children[1]
        assert isinstance(tree, Tree), tree
    return tree


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


class AstBuilder:
    """Turns a parse tree into AST nodes, recording their positions in :attr:`loc`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.loc = Locations()

    def error(self, message: str, token: Token) -> AcelSyntaxError:
        return AcelSyntaxError(message, line=token.line, column=token.column, text=self.text)

    def at(self, node: Any, tree: Tree | Token) -> Any:
        """``node``, recorded as starting where ``tree`` does."""
        if isinstance(tree, Token):
            self.loc.set(node, "", tree)
        elif not tree.meta.empty:
            self.loc.set(node, "", (tree.meta.line, tree.meta.column))
        return node

    def visit(self, tree: Tree | Token) -> Any:
        """What the method named by ``tree`` (inside any parentheses) builds of it."""
        inner = _unparen(tree)
        return getattr(self, inner.data)(inner, *inner.children)

    def formula(self, tree: Tree | Token) -> Formula:
        """A formula where a whole one stands: ``ψ?`` and ``ψ*`` only close a sequence
        element (spec §3.2)."""
        inner = _unparen(tree)
        if _is_optional(inner):
            mark = cast(Token, inner.children[-1])
            raise self.error(
                f"'{mark.value}' makes an element of a sequence optional; alone it would allow "
                "an empty complex event (spec §3.2): write it inside a sequence, e.g. A ; B"
                f"{mark.value} ; C",
                mark,
            )
        return cast(Formula, getattr(self, inner.data)(inner, *inner.children))

    # ------------------------------------------------------------- query

    @rule
    def start(self, tree: Tree, query: Tree) -> Query:
        return cast(Query, self.visit(query))

    @rule
    def query(self, tree: Tree, *parts: Tree | Token) -> Query:
        """The formula and its clauses (spec §6), built in the order they are written."""
        formula: Formula | None = None
        clauses: dict[str, tuple[Tree, Any]] = {}
        for part in parts:
            if isinstance(part, Token):
                continue  # PATTERN
            if part.data.endswith("_clause"):
                clauses[part.data] = (part, self.visit(part))
            else:
                formula = self.formula(part)
        assert formula is not None

        def value(name: str, default: Any = None) -> Any:
            return clauses[name][1] if name in clauses else default

        partition: list[Token] = value("partition_clause", [])
        within, slide = value("within_clause"), value("slide_clause")
        query = Query(formula, value("return_clause"), tuple(t.value for t in partition), within,
                      slide, value("select_clause", "ALL"), value("skip_clause"))
        self.at(query, tree)
        for name, clause, index in (("select", "select_clause", 1), ("skip", "skip_clause", 0)):
            if clause in clauses:
                self.loc.set(query, name, cast(Token, clauses[clause][0].children[index]))
        for index, token in enumerate(partition):
            self.loc.set(query, f"partition_by.{index}", token)
        if within is not None:
            self.loc.set(query, "within", self.loc.get(within))
        if slide is not None:
            self.loc.set(query, "slide", self.loc.get(slide))
        return query

    @rule
    def select_clause(self, tree: Tree, select: Token, word: Token) -> str:
        """The strategy after SELECT (spec §6.2), any case."""
        name = word.value.upper()
        if name not in SELECT_STRATEGIES:
            raise self.error(
                f"unknown selection strategy {word.value!r}: write SELECT "
                + ", ".join(SELECT_STRATEGIES[:-1])
                + f" or {SELECT_STRATEGIES[-1]}",
                word,
            )
        return name

    @rule
    def skip_clause(self, tree: Tree, after: Token, match: Token, skip: Token,
                    *words: Token) -> Skip:
        """``AFTER MATCH SKIP TO NEXT ROW | PAST LAST ROW | TO FIRST X | TO LAST X``."""
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

    @rule
    def return_clause(self, tree: Tree, *items: Tree | Token) -> tuple[ReturnItem, ...]:
        return tuple(self.visit(item) for item in items if isinstance(item, Tree))

    @rule
    def ret_attr(self, tree: Tree, name: Token) -> ReturnAttr:
        item = ReturnAttr(name.value)
        self.loc.set(item, "name", name)
        return cast(ReturnAttr, self.at(item, tree))

    @rule
    def ret_count_star(self, tree: Tree, func: Token, *_: Token) -> CountStar:
        if func.value.upper() != "COUNT":
            raise self.error(f"only COUNT takes '*': write {func.value.upper()}(X.attribute)", func)
        return cast(CountStar, self.at(CountStar(), tree))

    @rule
    def ret_agg_var(self, tree: Tree, func: Token, lpar: Token, var: Token, *_: Token
                    ) -> ReturnAgg:
        return self._return_agg(tree, func, var, None)

    @rule
    def ret_agg_attr(self, tree: Tree, func: Token, lpar: Token, var: Token, dot: Token,
                     attr: Token, *_: Token) -> ReturnAgg:
        return self._return_agg(tree, func, var, attr)

    def _return_agg(self, tree: Tree, func: Token, var: Token, attr: Token | None) -> ReturnAgg:
        item = ReturnAgg(func.value.upper(), var.value, attr.value if attr is not None else None)
        self.loc.set(item, "func", func)
        self.loc.set(item, "var", var)
        self.loc.set(item, "attr", attr)
        return cast(ReturnAgg, self.at(item, tree))

    @rule
    def partition_clause(self, tree: Tree, *words: Token) -> list[Token]:
        return _names(words)

    @rule
    def within_clause(self, tree: Tree, within: Token, window: Tree) -> Window:
        return cast(Window, self.visit(window))

    @rule
    def slide_clause(self, tree: Tree, slide: Token, window: Tree) -> Window:
        return cast(Window, self.visit(window))

    @rule
    def window_events(self, tree: Tree, number: Tree, events: Token) -> Window:
        return self._window(tree, number, None)

    @rule
    def window_on(self, tree: Tree, number: Tree, on: Token, attr: Token) -> Window:
        return self._window(tree, number, attr)

    def _window(self, tree: Tree, number: Tree, attr: Token | None) -> Window:
        window = Window(self.visit(number), attr.value if attr is not None else None)
        self.at(window, tree)
        self.loc.set(window, "size", self.loc.get(window))
        self.loc.set(window, "attr", attr)
        return window

    @rule
    def number(self, tree: Tree, *tokens: Token) -> int | float:
        return _number(tokens)

    # ---------------------------------------------------------- formulas

    @rule
    def atom(self, tree: Tree, name: Token) -> Atom:
        node = Atom(name.value)
        self.loc.set(node, "type", name)
        return cast(Atom, self.at(node, tree))

    @rule
    def next_f(self, tree: Tree, next_: Token, lpar: Token, name: Token, rpar: Token) -> Next:
        node = Next(name.value)
        self.loc.set(node, "type", name)
        return cast(Next, self.at(node, tree))

    @rule
    def filter_f(self, tree: Tree, formula: Tree, filter_: Token, condition: Tree) -> FilterF:
        node = FilterF(self.formula(formula), self.visit(condition))
        return cast(FilterF, self.at(node, tree))

    @rule
    def infix(self, tree: Tree, left: Tree, op: Token, right: Tree) -> Infix:
        """``φ1 op φ2``: the :class:`acel.lang.ast.Infix` whose ``symbol`` ``op`` spells
        (``OR``, ``AND`` and any new binary operator the grammar aliases ``-> infix``)."""
        node = operator_class(Infix, op)(self.formula(left), self.formula(right))
        return cast(Infix, self.at(node, tree))

    @rule
    def postfix_op(self, tree: Tree, operand: Tree, op: Token) -> Postfix:
        """``φ op``: the :class:`acel.lang.ast.Postfix` whose ``symbol`` ``op`` spells
        (``+``, ``:+`` and any new one the grammar aliases ``-> postfix_op``)."""
        node = operator_class(Postfix, op)(self.formula(operand))
        return cast(Postfix, self.at(node, tree))

    @rule
    def repeat_f(self, tree: Tree, operand: Tree, opener: Token, *bounds: Token) -> Repeat:
        """``φ{n}``, ``φ{n,m}``, ``φ{n,}`` and the ``:{...}`` forms (spec §3.2)."""
        numbers = [t for t in bounds if t.type == "INT"]
        bounded = not any(t.type == "COMMA" for t in bounds)
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
        node = Repeat(self.formula(operand), low, high, opener.type == "COLONLBRACE")
        self.loc.set(node, "low", numbers[0])
        self.loc.set(node, "high", numbers[-1])
        return cast(Repeat, self.at(node, tree))

    @rule
    def optional_f(self, tree: Tree, operand: Tree, mark: Token) -> Opt:
        """``ψ?``: an optional element of a sequence (spec §3.2; alone, see :meth:`formula`)."""
        return cast(Opt, self.at(Opt(self.formula(operand), mark.type == "STAR"), tree))

    star_f = optional_f  # ψ*: the same, also a repeatable element

    @rule
    def as_f(self, tree: Tree, operand: Tree, as_: Token, name: Token) -> As:
        node = As(self.formula(operand), name.value)
        self.loc.set(node, "var", name)
        return cast(As, self.at(node, tree))

    @rule
    def project_vars(self, tree: Tree, project: Token, lsqb: Token, names: Tree, rsqb: Token,
                     lpar: Token, formula: Tree, rpar: Token) -> ProjectVars:
        listed: list[Token] = self.visit(names)
        node = ProjectVars(tuple(t.value for t in listed), self.formula(formula))
        for index, token in enumerate(listed):
            self.loc.set(node, f"vars.{index}", token)
        return cast(ProjectVars, self.at(node, tree))

    @rule
    def project_attrs(self, tree: Tree, project: Token, var: Token, lsqb: Token, names: Tree,
                      rsqb: Token, lpar: Token, formula: Tree, rpar: Token) -> ProjectAttrs:
        listed: list[Token] = self.visit(names)
        node = ProjectAttrs(var.value, tuple(t.value for t in listed), self.formula(formula))
        self.loc.set(node, "var", var)
        for index, token in enumerate(listed):
            self.loc.set(node, f"attrs.{index}", token)
        return cast(ProjectAttrs, self.at(node, tree))

    @rule
    def name_list(self, tree: Tree, *words: Token) -> list[Token]:
        return _names(words)

    @rule
    def agg(self, tree: Tree, agg: Token, var: Token, lsqb: Token, *rest: Tree | Token) -> Agg:
        """``AGG Z[b := F(X.a), ...](φ)``: ``rest`` is the outputs, then ``](φ)``."""
        outputs = tuple(self.visit(c) for c in rest
                        if isinstance(c, Tree) and c.data.startswith("agg_output"))
        node = Agg(var.value, outputs, self.formula(rest[-2]))
        self.loc.set(node, "var", var)
        return cast(Agg, self.at(node, tree))

    @rule
    def agg_output_var(self, tree: Tree, name: Token, assign: Token, func: Token, lpar: Token,
                       var: Token, rpar: Token) -> AggOutput:
        return self._agg_output(tree, name, func, var, None)

    @rule
    def agg_output_attr(self, tree: Tree, name: Token, assign: Token, func: Token, lpar: Token,
                        var: Token, dot: Token, attr: Token, rpar: Token) -> AggOutput:
        return self._agg_output(tree, name, func, var, attr)

    def _agg_output(self, tree: Tree, name: Token, func: Token, var: Token,
                    attr: Token | None) -> AggOutput:
        out = AggOutput(name.value, func.value.upper(), var.value,
                        attr.value if attr is not None else None)
        for part, token in (("name", name), ("func", func), ("var", var), ("attr", attr)):
            self.loc.set(out, part, token)
        return cast(AggOutput, self.at(out, tree))

    # ---------------------------------------------------------- sequences

    @rule
    def seq_f(self, tree: Tree, *_: Tree | Token) -> Seq | Contig | SeqNot | LeadingNot | TrailingNot:
        """A ``;``/``:`` chain, with its NOT elements, in the canonical shape (spec §3.1).

        Left-associative as without negation; a run of NOTs between two
        elements guards their gap (``SeqNot``); NOTs before the first element
        make a ``LeadingNot``, NOTs after the last a ``TrailingNot``
        (``LeadingNot`` outermost).  ``A ; NOT B ; C ; D`` is
        ``Seq(SeqNot(A, (B,), C), D)``.  A lone ``NOT ψ`` (``not_f``) is a chain
        of one element, refused.
        """
        elements = _sequence_elements(tree)
        self._check_optionals(elements)
        self._check_colons(elements)
        positive = [i for i, (_, element) in enumerate(elements) if not _is_not(element)]
        if not positive:
            raise self.error(
                "a sequence needs an element that is not negated: NOT ψ only guards the gap "
                "between, before or after other elements (spec §3.1)",
                cast(Token, elements[0][1].children[0]),
            )
        first, last = positive[0], positive[-1]
        current = self._element(elements[first][1])
        start = elements[first][1]
        nots: list[Formula] = []
        not_tokens: list[Token] = []
        for sep, element in elements[first + 1 : last + 1]:
            if _is_not(element):
                nots.append(self.formula(element.children[1]))
                not_tokens.append(cast(Token, element.children[0]))
                continue
            right = self._element(element)
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
        return cast("Seq | Contig | SeqNot | LeadingNot | TrailingNot", current)

    contig_f = seq_f  # φ : ψ, built with the chain it belongs to
    not_f = seq_f  # NOT ψ, likewise

    def _element(self, tree: Tree) -> Formula:
        """A sequence element: a formula, or ``ψ?``/``ψ*`` (spec §3.2)."""
        return cast(Formula, self.visit(tree)) if _is_optional(tree) else self.formula(tree)

    def _check_colons(self, elements: list[tuple[Token | None, Tree]]) -> None:
        """``:`` never stands next to NOT (spec §3.1)."""
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

    def _check_optionals(self, elements: list[tuple[Token | None, Tree]]) -> None:
        """The error cases of ``?`` and ``*`` in a sequence (spec §3.2)."""
        marks = [
            (index, cast(Token, element.children[-1]))
            for index, (_, element) in enumerate(elements)
            if _is_optional(element)
        ]
        if not marks:
            return
        required = [e for _, e in elements if not _is_optional(e) and not _is_not(e)]
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

    def _mark_excluded(self, node: Formula, tokens: Sequence[Token]) -> None:
        """Record where each ``NOT`` of a negation node is written (``excluded.k``)."""
        for index, token in enumerate(tokens):
            self.loc.set(node, f"excluded.{index}", token)

    # ----------------------------------------------------------- filters

    @rule
    def filter_or(self, tree: Tree, left: Tree, or_: Token, right: Tree) -> FilterOr:
        return cast(FilterOr, self.at(FilterOr(self.visit(left), self.visit(right)), tree))

    @rule
    def filter_and(self, tree: Tree, left: Tree, and_: Token, right: Tree) -> FilterAnd:
        return cast(FilterAnd, self.at(FilterAnd(self.visit(left), self.visit(right)), tree))

    @rule
    def var_pred(self, tree: Tree, var: Token, lsqb: Token, pred: Tree, rsqb: Token) -> VarPred:
        node = VarPred(var.value, self.visit(pred))
        self.loc.set(node, "var", var)
        return cast(VarPred, self.at(node, tree))

    @rule
    def bag_pred(self, tree: Tree, var: Token, lsqb: Token, kind: Token, lpar: Token,
                 attr: Token, rpar: Token, rsqb: Token) -> BagPred:
        node = BagPred(var.value, cast(BagKind, kind.value.upper()), attr.value)
        self.loc.set(node, "var", var)
        self.loc.set(node, "kind", kind)
        self.loc.set(node, "attr", attr)
        return cast(BagPred, self.at(node, tree))

    # -------------------------------------------------------- predicates

    @rule
    def pred_or(self, tree: Tree, left: Tree, or_: Token, right: Tree) -> PredOr:
        return cast(PredOr, self.at(PredOr(self.visit(left), self.visit(right)), tree))

    @rule
    def pred_and(self, tree: Tree, left: Tree, and_: Token, right: Tree) -> PredAnd:
        return cast(PredAnd, self.at(PredAnd(self.visit(left), self.visit(right)), tree))

    @rule
    def pred_not(self, tree: Tree, not_: Token, operand: Tree) -> PredNot:
        return cast(PredNot, self.at(PredNot(self.visit(operand)), tree))

    @rule
    def compare(self, tree: Tree, left: Tree, op: Token, right: Tree) -> Compare:
        node = Compare(cast(CmpOp, op.value), self.visit(left), self.visit(right))
        return cast(Compare, self.at(node, tree))

    @rule
    def in_list(self, tree: Tree, expr: Tree, *rest: Tree | Token) -> InList:
        """``e IN (v, ...)`` and ``e NOT IN (v, ...)``: the list is read first."""
        values: tuple[Value, ...] = self.visit(rest[-2])
        node = InList(self.visit(expr), values, tree.data == "not_in_list")
        return cast(InList, self.at(node, tree))

    not_in_list = in_list

    @rule
    def literal_list(self, tree: Tree, *items: Tree | Token) -> tuple[Value, ...]:
        return tuple(
            self.visit(item) if item.data == "neg_number" else _literal_value(item.children[0])
            for item in items
            if isinstance(item, Tree)  # not the commas
        )

    @rule
    def neg_number(self, tree: Tree, minus: Token, digits: Token) -> int | float:
        return _number((minus, digits))

    # -------------------------------------------------------- expressions

    @rule
    def binop(self, tree: Tree, left: Tree, op: Token, right: Tree) -> BinOp:
        node = BinOp(op.value, self.visit(left), self.visit(right))  # type: ignore[arg-type]
        return cast(BinOp, self.at(node, tree))

    @rule
    def neg(self, tree: Tree, minus: Token, operand: Tree) -> Neg | Lit:
        """``-e``; on a number, a negative literal (``acel.lang.ast.neg``)."""
        return cast("Neg | Lit", self.at(neg(self.visit(operand)), tree))

    @rule
    def attr(self, tree: Tree, name: Token) -> Attr:
        return cast(Attr, self.at(Attr(name.value), tree))

    @rule
    def literal(self, tree: Tree, token: Token) -> Lit:
        return cast(Lit, self.at(Lit(_literal_value(token)), tree))

    @rule
    def var_attr(self, tree: Tree, var: Token, dot: Token, attr: Token) -> VarAttr:
        """``Y.a`` (spec §5.1)."""
        return cast(VarAttr, self._relating(tree, VarAttr(var.value, attr.value),
                                            var=var, attr=attr))

    @rule
    def call_name(self, tree: Tree, func: Token, lpar: Token, name: Token, rpar: Token
                  ) -> Prev | BagAgg:
        """``PREV(a)``, or ``F(Y)`` such as ``COUNT(Y)``; function names upper-case."""
        upper = func.value.upper()
        if upper == "PREV":
            return cast(Prev, self._relating(tree, Prev(name.value), func=func, attr=name))
        return cast(BagAgg, self._relating(tree, BagAgg(upper, name.value, None),
                                           func=func, var=name))

    @rule
    def call_attr(self, tree: Tree, func: Token, lpar: Token, var: Token, dot: Token,
                  attr: Token, rpar: Token) -> FirstLast | BagAgg:
        """``FIRST(Y.a)``, ``LAST(Y.a)``, or ``F(Y.a)``."""
        upper = func.value.upper()
        node: FirstLast | BagAgg
        if upper in ("FIRST", "LAST"):
            node = FirstLast(cast(EdgeKind, upper), var.value, attr.value)
        else:
            node = BagAgg(upper, var.value, attr.value)
        return cast("FirstLast | BagAgg", self._relating(tree, node, func=func, var=var,
                                                         attr=attr))

    @rule
    def running(self, tree: Tree, word: Token, func: Token, lpar: Token, attr: Token,
                rpar: Token) -> Running:
        """``RUNNING F(a)`` (spec §5.1)."""
        if word.value.upper() != "RUNNING":
            raise self.error(
                f"found the name {func.value!r} after {word.value!r}; "
                "only RUNNING F(a) puts a word before a function (spec §5.1)",
                func,
            )
        node = Running(func.value.upper(), attr.value)
        return cast(Running, self._relating(tree, node, func=func, attr=attr))

    def _relating(self, tree: Tree, node: Expr, **parts: Token) -> Expr:
        for part, token in parts.items():
            self.loc.set(node, part, token)
        return cast(Expr, self.at(node, tree))


def build(tree: Tree, text: str) -> tuple[Query, Locations]:
    """The query of a parsed ``start`` tree and where each node came from."""
    builder = AstBuilder(text)
    try:
        query = cast(Query, builder.visit(tree))
    except BadLiteral as bad:
        raise builder.error(bad.message, bad.token) from None
    builder.loc.root = query
    return query, builder.loc


__all__ = ["LOOKED_THROUGH", "AstBuilder", "BadLiteral", "Position", "build", "rule"]
