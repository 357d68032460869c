"""A lark parser for the SASE+ query form of spec §8 (seed 002, Figure 1).

```
PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) {
    [symbol] AND a[1].volume > 1000
    AND a[i].price > avg(a[..i-1].price)
    AND b.volume < 0.8 * a[a.len].volume }
WITHIN 10
RETURN a[1].symbol, SUM(a[].volume), COUNT(a[])
```

Keywords are case-insensitive, ``--`` starts a comment.  A bare ``WHERE``
(no strategy function) means skip-till-any-match.  ``WITHIN n`` and
``WITHIN n EVENTS`` bound the span in positions, ``WITHIN d ON attr`` on an
attribute.  Every error is an :class:`acel.lang.errors.AcelSyntaxError` with the
line, the column and a caret.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

from acel.reference.sase.ast import AggRef, Component, Ref, Reference, SaseQuery
from acel.reference.sase.nfa import Strategy
from lark import Lark, Token, Transformer, UnexpectedInput
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError

from acel.lang import aggregates
from acel.lang.ast import (
    Attr,
    BinOp,
    Compare,
    Expr,
    InList,
    Lit,
    Pred,
    PredAnd,
    PredNot,
    PredOr,
    Window,
    neg,
)
from acel.lang.errors import AcelSyntaxError
from acel.lang.events import Value

GRAMMAR = r"""
start: pattern_clause where_clause? within_clause? return_clause?

pattern_clause: "PATTERN"i pattern
pattern: "SEQ"i "(" component ("," component)* ")"
       | component
component: NAME NAME                      -> single
         | NAME PLUS NAME "[" "]"         -> kleene
         | NEG "(" NAME NAME ")"          -> negated

where_clause: "WHERE"i STRATEGY "(" [svar ("," svar)*] ")" "{" cond "}"  -> where_strategy
            | "WHERE"i cond                                             -> where_plain
svar: NAME ("[" "]")?

?cond: cand
     | cond "OR"i cand              -> or_
?cand: cnot
     | cand "AND"i cnot             -> and_
?cnot: "NOT"i cnot                  -> not_
     | catom
?catom: "(" cond ")"
      | expr CMP expr               -> comparison
      | expr "IN"i "(" literal ("," literal)* ")"           -> in_
      | expr "NOT"i "IN"i "(" literal ("," literal)* ")"    -> not_in
      | "[" NAME ("," NAME)* "]"    -> equiv

?expr: term
     | expr (PLUS | MINUS) term     -> binop
?term: factor
     | term (STAR | SLASH | PERCENT) factor -> binop
?factor: MINUS factor               -> neg
       | primary
?primary: literal
        | ref
        | agg
        | "(" expr ")"
literal: INT | FLOAT | STRING | TRUE | FALSE
ref: NAME "." NAME                  -> single_ref
   | NAME "[" index "]" "." NAME    -> indexed_ref
index: NAME                         -> idx_name
     | NAME MINUS INT               -> idx_prev
     | INT                          -> idx_int
     | NAME "." NAME                -> idx_len
agg: NAME "(" NAME "[" "]" ("." NAME)? ")"                       -> agg_all
   | NAME "(" NAME "[" DOTDOT NAME MINUS INT "]" ("." NAME)? ")" -> agg_prev

within_clause: "WITHIN"i number ("EVENTS"i)?   -> within_events
             | "WITHIN"i number "ON"i NAME     -> within_on
number: INT | FLOAT

return_clause: "RETURN"i ritem ("," ritem)*
?ritem: ref | agg

STRATEGY.2: /(strict_contiguity|partition_contiguity|skip_till_next_match|skip_till_any_match)(?![A-Za-z0-9_])/i
TRUE.2: /TRUE(?![A-Za-z0-9_])/i
FALSE.2: /FALSE(?![A-Za-z0-9_])/i
NAME: /[A-Za-z_][A-Za-z0-9_]*/
FLOAT: /\d+\.\d+([eE][+-]?\d+)?/
INT: /\d+/
STRING: /'([^']|'')*'/
CMP: "<=" | ">=" | "!=" | "<>" | "==" | "=" | "<" | ">"
NEG: "!" | "~"
PLUS: "+"
MINUS: "-"
STAR: "*"
SLASH: "/"
PERCENT: "%"
DOTDOT: ".."
COMMENT: /--[^\n]*/
%ignore COMMENT
%ignore /\s+/
"""

Position = tuple[int, int]


@lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(GRAMMAR, parser="lalr", maybe_placeholders=False)


def _pos(token: Token) -> Position:
    return (token.line or 1, token.column or 1)


@dataclass(frozen=True)
class _Equiv:
    """An equivalence test ``[a, b]`` before it is lifted out of WHERE."""

    attrs: tuple[str, ...]
    where: Position


@dataclass
class _Builder(Transformer[Token, Any]):
    """Parse tree → SASE+ AST, remembering where each name was written."""

    text: str
    positions: dict[str, Position] = field(default_factory=dict)
    refs: dict[str, Reference] = field(default_factory=dict)
    components: list[tuple[Component, Position]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def error(self, message: str, where: Position | None) -> AcelSyntaxError:
        line, column = where if where is not None else (None, None)
        return AcelSyntaxError(message, line=line, column=column, text=self.text)

    # ---------------------------------------------------------- components
    def single(self, items: list[Token]) -> Component:
        comp = Component(str(items[0]), str(items[1]))
        self.components.append((comp, _pos(items[1])))
        return comp

    def kleene(self, items: list[Token]) -> Component:
        comp = Component(str(items[0]), str(items[2]), kleene=True)
        self.components.append((comp, _pos(items[2])))
        return comp

    def negated(self, items: list[Token]) -> Component:
        comp = Component(str(items[1]), str(items[2]), negated=True)
        self.components.append((comp, _pos(items[2])))
        return comp

    def pattern(self, items: list[Component]) -> tuple[Component, ...]:
        return tuple(items)

    def pattern_clause(self, items: list[Any]) -> tuple[Component, ...]:
        return cast(tuple[Component, ...], items[0])

    # ---------------------------------------------------------------- where
    def svar(self, items: list[Token]) -> tuple[str, Position]:
        return (str(items[0]), _pos(items[0]))

    def where_strategy(self, items: list[Any]) -> tuple[Strategy, list[tuple[str, Position]], Any]:
        strategy = cast(Strategy, str(items[0]).lower())
        svars = [item for item in items[1:-1] if isinstance(item, tuple)]
        return (strategy, svars, items[-1])

    def where_plain(self, items: list[Any]) -> tuple[Strategy, list[tuple[str, Position]], Any]:
        return ("skip_till_any_match", [], items[0])

    def or_(self, items: list[Any]) -> Any:
        return ("or", items[0], items[1])

    def and_(self, items: list[Any]) -> Any:
        return ("and", items[0], items[1])

    def not_(self, items: list[Any]) -> Any:
        return ("not", items[0])

    def comparison(self, items: list[Any]) -> Compare:
        op = str(items[1])
        op = {"==": "=", "<>": "!="}.get(op, op)
        return Compare(op, items[0], items[2])  # type: ignore[arg-type]

    def in_(self, items: list[Any]) -> InList:
        # InList holds plain values (acel.lang.ast.InList), not Lit nodes
        return InList(items[0], tuple(lit.value for lit in items[1:]))

    def not_in(self, items: list[Any]) -> InList:
        return InList(items[0], tuple(lit.value for lit in items[1:]), negated=True)

    def equiv(self, items: list[Token]) -> _Equiv:
        return _Equiv(tuple(str(t) for t in items), _pos(items[0]))

    # ---------------------------------------------------------- expressions
    def binop(self, items: list[Any]) -> Expr:
        return BinOp(str(items[1]), items[0], items[2])  # type: ignore[arg-type]

    def neg(self, items: list[Any]) -> Expr:
        return neg(items[1])

    def literal(self, items: list[Token]) -> Lit:
        token = items[0]
        value: Value
        if token.type == "INT":
            value = int(token)
        elif token.type == "FLOAT":
            value = float(token)
        elif token.type == "STRING":
            value = str(token)[1:-1].replace("''", "'")
        else:
            value = token.type == "TRUE"
        return Lit(value)

    def number(self, items: list[Token]) -> int | float:
        token = items[0]
        return int(token) if token.type == "INT" else float(token)

    def _remember(self, ref: Reference, where: Position) -> Attr:
        self.refs.setdefault(ref.name(), ref)
        self.positions.setdefault(ref.name(), where)
        return Attr(ref.name())

    def single_ref(self, items: list[Token]) -> Attr:
        return self._remember(Ref(str(items[0]), "single", str(items[1])), _pos(items[0]))

    def indexed_ref(self, items: list[Any]) -> Attr:
        var, (kind, where), attr = items
        if isinstance(kind, tuple):  # (name, "len")
            if kind[0] != str(var):
                raise self.error(
                    f"write {var}[{var}.len] for the last event of {var}, not {var}[{kind[0]}.len]",
                    where,
                )
            kind = "len"
        return self._remember(Ref(str(var), kind, str(attr)), _pos(var))

    def idx_name(self, items: list[Token]) -> Any:
        if str(items[0]) != "i":
            raise self.error(f"unknown index {items[0]!s}: write i, i-1, 1 or v.len", _pos(items[0]))
        return ("i", _pos(items[0]))

    def idx_prev(self, items: list[Token]) -> Any:
        if str(items[0]) != "i" or str(items[2]) != "1":
            raise self.error("the only offset index is i-1", _pos(items[0]))
        return ("i-1", _pos(items[0]))

    def idx_int(self, items: list[Token]) -> Any:
        if str(items[0]) != "1":
            raise self.error(
                f"index {items[0]!s} is not supported: write i, i-1, 1 or v.len", _pos(items[0])
            )
        return ("1", _pos(items[0]))

    def idx_len(self, items: list[Token]) -> Any:
        if str(items[1]) != "len":
            raise self.error(f"unknown index {items[0]!s}.{items[1]!s}: write v.len", _pos(items[1]))
        return ((str(items[0]), "len"), _pos(items[0]))

    def _agg(self, func: Token, var: Token, rng: str, attr: Token | None) -> Any:
        name = str(func)
        if aggregates.lookup(name) is None:
            raise self.error(
                f"unknown aggregate {name}: use avg, min, max, sum or count", _pos(func)
            )
        agg = aggregates.lookup(name)
        assert agg is not None
        if attr is None and agg.needs_attribute:
            raise self.error(f"{name.upper()} needs an attribute: {name}({var}[].attr)", _pos(func))
        ref = AggRef(name.upper(), str(var), rng, None if attr is None else str(attr))  # type: ignore[arg-type]
        return self._remember(ref, _pos(var))

    def agg_all(self, items: list[Token]) -> Any:
        return self._agg(items[0], items[1], "all", items[2] if len(items) > 2 else None)

    def agg_prev(self, items: list[Token]) -> Any:
        func, var, _dots, i, _minus, one = items[:6]
        if str(i) != "i" or str(one) != "1":
            raise self.error("the only aggregate range is v[..i-1]", _pos(i))
        return self._agg(func, var, "prev", items[6] if len(items) > 6 else None)

    # -------------------------------------------------------------- clauses
    def within_events(self, items: list[Any]) -> Window:
        return Window(items[0])

    def within_on(self, items: list[Any]) -> Window:
        return Window(items[0], str(items[1]))

    def return_clause(self, items: list[Attr]) -> Any:
        return ("return", tuple(self.refs[a.name] for a in items))

    def start(self, items: list[Any]) -> Any:
        return items


_WORDS = {
    "NAME": "a name",
    "INT": "a number",
    "FLOAT": "a number",
    "STRING": "a 'string'",
    "CMP": "a comparison",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "COMMA": "','",
    "DOT": "'.'",
    "DOTDOT": "'..'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "PERCENT": "'%'",
    "NEG": "'!'",
    "STRATEGY": "a strategy",
    "$END": "the end",
}


def _syntax_error(err: UnexpectedInput, text: str) -> AcelSyntaxError:
    if isinstance(err, UnexpectedCharacters):
        at = err.pos_in_stream or 0
        char = text[at] if at < len(text) else ""
        message = f"unexpected character {char!r}"
        return AcelSyntaxError(message, line=err.line, column=err.column, text=text)
    if isinstance(err, UnexpectedToken):
        token = err.token
        if token.type == "$END":
            lines = text.split("\n")
            line, column = len(lines), len(lines[-1]) + 1
            found = "the end of the query"
        else:
            line, column = token.line or 1, token.column or 1
            found = repr(str(token))
        expected = ", ".join(sorted({_WORDS.get(t, t) for t in err.expected}))
        return AcelSyntaxError(
            f"found {found} but expected one of {expected}", line=line, column=column, text=text
        )
    if isinstance(err, UnexpectedEOF):
        lines = text.split("\n")
        return AcelSyntaxError(
            "the query ends too early", line=len(lines), column=len(lines[-1]) + 1, text=text
        )
    return AcelSyntaxError(str(err), text=text)


# ------------------------------------------------------------------ assembly

_Cond = Any
"""A WHERE condition tree: ``("and"|"or", l, r)``, ``("not", x)``, a Pred or an _Equiv."""


def _conjuncts(cond: _Cond) -> list[_Cond]:
    if isinstance(cond, tuple) and cond[0] == "and":
        return _conjuncts(cond[1]) + _conjuncts(cond[2])
    return [cond]


def _to_pred(cond: _Cond, builder: _Builder) -> Pred:
    if isinstance(cond, _Equiv):
        raise builder.error(
            "an equivalence test [attr] must be a conjunct of the whole WHERE clause "
            "(not under OR or NOT)",
            cond.where,
        )
    if isinstance(cond, tuple):
        if cond[0] == "and":
            return PredAnd(_to_pred(cond[1], builder), _to_pred(cond[2], builder))
        if cond[0] == "or":
            return PredOr(_to_pred(cond[1], builder), _to_pred(cond[2], builder))
        return PredNot(_to_pred(cond[1], builder))
    return cast(Pred, cond)


def parse_sase(text: str) -> SaseQuery:
    """Parse a SASE+ query (spec §8); raise :class:`AcelSyntaxError` with a caret."""
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(err, text) from None
    builder = _Builder(text)
    try:
        items = builder.transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, AcelSyntaxError):
            raise err.orig_exc from None
        raise
    components: tuple[Component, ...] = items[0]
    strategy: Strategy = "skip_till_any_match"
    partition: list[str] = []
    where: list[Pred] = []
    within: Window | None = None
    returns: tuple[Reference, ...] | None = None
    strategy_vars: list[tuple[str, Position]] = []
    for item in items[1:]:
        if isinstance(item, Window):
            within = item
        elif isinstance(item, tuple) and item[0] == "return":
            returns = item[1]
        else:
            strategy, strategy_vars, cond = item
            for conjunct in _conjuncts(cond):
                if isinstance(conjunct, _Equiv):
                    partition.extend(a for a in conjunct.attrs if a not in partition)
                else:
                    where.append(_to_pred(conjunct, builder))
    query = SaseQuery(
        components=components,
        strategy=strategy,
        partition=tuple(partition),
        where=tuple(where),
        refs=tuple(sorted(builder.refs.items())),
        within=within,
        returns=returns,
    )
    _check(query, builder, strategy_vars)
    return query


def _check(query: SaseQuery, builder: _Builder, strategy_vars: list[tuple[str, Position]]) -> None:
    """Names and shapes the NFA^b cannot run, reported where they are written."""
    seen: dict[str, Component] = {}
    for comp, where in builder.components:
        if comp.var in seen:
            raise builder.error(f"the variable {comp.var} is declared twice", where)
        seen[comp.var] = comp
    positive = [c for c in query.components if not c.negated]
    if not positive:
        raise builder.error("a pattern needs at least one component that is not negated", (1, 1))
    for index, (comp, where) in enumerate(builder.components):
        if comp.negated and query.within is None and not (
            any(not c.negated for c in query.components[:index])
            and any(not c.negated for c in query.components[index + 1 :])
        ):
            raise builder.error(
                f"the negation !({comp.type} {comp.var}) at the start or the end of the "
                "pattern needs WITHIN: it is checked inside each match's window",
                where,
            )
    for var, where in strategy_vars:
        if var not in seen:
            raise builder.error(f"unknown variable {var} in the strategy's list", where)
    located: Position | None
    for name, ref in query.refs:
        located = builder.positions.get(name)
        comp = seen.get(ref.var)
        if comp is None:
            raise builder.error(f"unknown variable {ref.var}", located)
        if isinstance(ref, Ref):
            if ref.index == "single" and comp.kleene:
                raise builder.error(
                    f"{ref.var} is a Kleene variable: write {ref.var}[i].{ref.attr}, "
                    f"{ref.var}[1].{ref.attr} or {ref.var}[{ref.var}.len].{ref.attr}",
                    located,
                )
            if ref.index != "single" and not comp.kleene:
                raise builder.error(
                    f"{ref.var} is a single event: write {ref.var}.{ref.attr}", located
                )
        elif not comp.kleene:
            raise builder.error(f"{ref.name()}: {ref.var} is a single event, not an array", located)
    for ref in query.returns or ():
        located = builder.positions.get(ref.name())
        if query.component(ref.var).negated:
            raise builder.error(f"RETURN cannot name the negated variable {ref.var}", located)
        if (isinstance(ref, Ref) and ref.index in ("i", "i-1")) or (
            isinstance(ref, AggRef) and ref.range == "prev"
        ):
            raise builder.error(
                f"RETURN {ref.name()}: iterator indexes (i, i-1, ..i-1) only make sense in WHERE",
                located,
            )
    from acel.reference.sase.compile import PlacementError, place

    try:
        place(query)
    except PlacementError as err:
        raise builder.error(err.message, builder.positions.get(err.ref)) from None
