"""Well-formed formulas and queries over every operator (:func:`formulas`, :func:`queries`,
:func:`trend_queries`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from acel.lang import ast
from acel.lang.ast import SELECT_STRATEGIES, neg
from acel.lang.checker import formula_env
from acel.lang.schema import Schema
from acel.testing.strategies.schema_streams import (
    AGG_VARS,
    ALL_OPERATORS,
    AS_VARS,
    OUT_NAMES,
    TEST_SCHEMA,
    Env,
    _aggregate_call,
    aggregate_funcs,
    aggregate_names,
    allowed,
)

# ------------------------------------------------------- well-formed formulas


def _merge(a: Mapping[str, frozenset[str]], b: Mapping[str, frozenset[str]]) -> Env:
    out = dict(a)
    for var, attrs in b.items():
        out[var] = out.get(var, frozenset()) | attrs
    return out


def _data_attrs(env: Mapping[str, frozenset[str]], var: str) -> list[str]:
    return sorted(env[var] - {"type"})


@st.composite
def _exprs(draw: Any, attrs: list[str], depth: int = 2) -> ast.Expr:
    choice = draw(st.integers(0, 9 if depth > 0 else 5))
    if choice <= 3 and attrs:
        return ast.Attr(draw(st.sampled_from(attrs)))
    if choice <= 5:
        return ast.Lit(draw(st.integers(-1, 4)))
    if choice == 6:
        return neg(draw(_exprs(attrs, depth - 1)))
    op = draw(st.sampled_from(["+", "-", "*", "/", "%"]))
    return ast.BinOp(op, draw(_exprs(attrs, depth - 1)), draw(_exprs(attrs, depth - 1)))


@st.composite
def _atomic_preds(draw: Any, attrs: list[str], types: tuple[str, ...], has_type: bool) -> ast.Pred:
    choice = draw(st.integers(0, 9))
    if has_type and choice == 0:
        values = tuple(draw(st.lists(st.sampled_from(types), min_size=1, max_size=2, unique=True)))
        return ast.InList(ast.Attr("type"), values, draw(st.booleans()))
    if has_type and choice == 1:
        return ast.Compare(
            draw(st.sampled_from(["=", "!="])), ast.Attr("type"), ast.Lit(draw(st.sampled_from(types)))
        )
    if not attrs:
        return ast.Compare(
            draw(st.sampled_from(["=", "<", ">="])), ast.Lit(draw(st.integers(0, 2))), ast.Lit(1)
        )
    attr = ast.Attr(draw(st.sampled_from(attrs)))
    if choice <= 3:
        values = tuple(draw(st.lists(st.integers(-1, 4), min_size=1, max_size=3, unique=True)))
        return ast.InList(attr, values, draw(st.booleans()))
    op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
    if choice <= 7:
        return ast.Compare(op, attr, ast.Lit(draw(st.integers(0, 3))))
    return ast.Compare(op, draw(_exprs(attrs)), draw(_exprs(attrs)))


@st.composite
def _preds(
    draw: Any, attrs: list[str], types: tuple[str, ...], has_type: bool, depth: int = 2
) -> ast.Pred:
    choice = draw(st.integers(0, 9 if depth > 0 else 0))
    if choice <= 5:
        return draw(_atomic_preds(attrs, types, has_type))
    if choice == 6:
        return ast.PredNot(draw(_preds(attrs, types, has_type, depth - 1)))
    left = draw(_preds(attrs, types, has_type, depth - 1))
    right = draw(_preds(attrs, types, has_type, depth - 1))
    return ast.PredAnd(left, right) if choice <= 8 else ast.PredOr(left, right)


@st.composite
def _var_filters(
    draw: Any,
    env: Env,
    types: tuple[str, ...],
    var: str | None = None,
    bag: bool = True,
    relate: bool = False,
) -> ast.Filter:
    var = var if var is not None else draw(st.sampled_from(sorted(env)))
    attrs = _data_attrs(env, var)
    if bag and attrs and draw(st.integers(0, 3)) == 3:
        kind = draw(st.sampled_from(["SAME", "INC", "DEC"]))
        return ast.BagPred(var, kind, draw(st.sampled_from(attrs)))
    if relate and attrs and draw(st.integers(0, 3)) == 3:
        return ast.VarPred(var, draw(_relating_preds(env, var, types)))
    return ast.VarPred(var, draw(_preds(attrs, types, "type" in env[var])))


_RELATE_OPS = ("<", "<=", ">", ">=", "=")


@st.composite
def _relating_term(draw: Any, env: Env, var: str) -> tuple[ast.Expr, bool]:
    """One term of spec §5.1 in the compiled fragment, and whether it reads X's history."""
    attrs = _data_attrs(env, var)
    # PREV/RUNNING on a variable that receives several events in one step (an AGG
    # variable of nested AGGs) is refused by the compiler (ties in time): not generated
    choice = draw(st.integers(2 if var in AGG_VARS else 0, 3))
    if choice == 0:
        return ast.Prev(draw(st.sampled_from(attrs))), True
    if choice == 1:
        return ast.Running(draw(aggregate_funcs()), draw(st.sampled_from(attrs))), True
    other = draw(st.sampled_from(sorted(env)))
    other_attrs = _data_attrs(env, other)
    if choice == 2 and other_attrs:
        return ast.VarAttr(other, draw(st.sampled_from(other_attrs))), False
    func, attr = draw(_aggregate_call(other_attrs))
    return ast.BagAgg(func, other, attr), False


@st.composite
def _relating_preds(draw: Any, env: Env, var: str, types: tuple[str, ...]) -> ast.Pred:
    """``X[P]`` relating events (spec §5.1) in the fragment the compiler builds: one or two
    comparisons ``own op term`` (sometimes linear: ``own - term op c``, sometimes under
    NOT), with a plain predicate beside them now and then; NULLs, ties and empty bags
    come from the streams."""
    attrs = _data_attrs(env, var)
    parts: list[ast.Pred] = []
    for _ in range(draw(st.integers(1, 2))):
        term, _history = draw(_relating_term(env, var))
        own: ast.Expr = ast.Attr(draw(st.sampled_from(attrs)))
        op = draw(st.sampled_from(_RELATE_OPS))
        shape = draw(st.integers(0, 3))
        cmp: ast.Pred
        if shape == 0:
            cmp = ast.Compare(op, term, own)
        elif shape == 1:
            cmp = ast.Compare(op, ast.BinOp("-", own, term), ast.Lit(draw(st.integers(-1, 1))))
        else:
            cmp = ast.Compare(op, own, term)
        if op != "=" and draw(st.integers(0, 4)) == 4:
            cmp = ast.PredNot(cmp)
        parts.append(cmp)
    if draw(st.integers(0, 2)) == 2:
        parts.append(draw(_preds(attrs, types, "type" in env[var], 0)))
    pred = parts[0]
    for part in parts[1:]:
        pred = ast.PredAnd(pred, part)
    return pred


@st.composite
def _filters(
    draw: Any,
    env: Env,
    types: tuple[str, ...],
    depth: int = 1,
    var: str | None = None,
    bag: bool = True,
    relate: bool = False,
) -> ast.Filter:
    choice = draw(st.integers(0, 5 if depth > 0 else 0))
    if choice <= 3:
        return draw(_var_filters(env, types, var, bag, relate))
    left = draw(_filters(env, types, depth - 1, var, bag, relate))
    right = draw(_filters(env, types, depth - 1, None, bag, relate))
    return ast.FilterAnd(left, right) if choice == 4 else ast.FilterOr(left, right)


@st.composite
def _agg_outputs(draw: Any, env: Env, edges: bool = False) -> tuple[ast.AggOutput, ...]:
    """AGG outputs over ``env``: registered aggregates, and with ``edges`` (RELATE allowed)
    sometimes FIRST/LAST (spec §5.1)."""
    names = draw(st.lists(st.sampled_from(OUT_NAMES), min_size=1, max_size=3, unique=True))
    outputs = []
    for name in names:
        var = draw(st.sampled_from(sorted(env)))
        attrs = _data_attrs(env, var)
        # FIRST/LAST in AGG (spec §5.1); not over a variable that may hold an AGG's event
        # (an AGG variable, or one AS over an AGG: it gets two events in one step, ties in
        # time, refused by the compiler; CI's Hypothesis found the second)
        created = var in AGG_VARS or bool(env[var] & set(OUT_NAMES))
        if edges and attrs and not created and draw(st.integers(0, 4)) == 4:
            func, attr = draw(st.sampled_from(["FIRST", "LAST"])), draw(st.sampled_from(attrs))
        else:
            func, attr = draw(_aggregate_call(attrs))
        outputs.append(ast.AggOutput(name, func, var, attr))
    return tuple(outputs)


_BINARY: dict[int, Callable[[ast.Formula, ast.Formula], ast.Formula]] = {
    5: ast.Or,
    6: ast.And,
    7: ast.Seq,
    8: ast.Seq,
    9: ast.Contig,
}

_CHOICE_OPERATOR: dict[int, str] = {
    2: "AS", 3: "FILTER", 4: "FILTER", 5: "OR", 6: "AND", 7: "SEQ", 8: "SEQ", 9: "CONTIG",
    11: "PROJECT", 12: "PROJECT_ATTRS", 13: "AGG", 14: "AGG", 15: "AGG", 16: "NOT", 17: "NOT",
    18: "REPEAT", 19: "OPTIONAL",
}
"""What each numbered choice of :func:`_formula_env` builds (0, 1: an atom; 10: ``+``/``:+``)."""


_DRAWN_BY_HAND = frozenset({*_CHOICE_OPERATOR.values(), "PLUS", "CONTIG_PLUS", "NEXT"})
"""The operators the numbered choices build; the rest are drawn from the AST."""

GENERIC = 20
"""The choice of :func:`_formula_env` that builds an operator the other choices do not
know: an :class:`acel.lang.ast.Infix` or ``Postfix`` of the AST (issue 34: a new one is
generated with no edit here)."""


def generic_operators(ops: frozenset[str]) -> list[type]:
    """The binary and postfix formula classes of the AST that no numbered choice builds,
    among those ``ops`` allows (none today: then the draws are as before)."""
    return list(_generic_operators(ops, ast.NODE_KINDS["formula"]))


@lru_cache(maxsize=64)
def _generic_operators(ops: frozenset[str], kinds: tuple[type, ...]) -> tuple[type, ...]:
    return tuple(
        cls for cls in kinds
        if issubclass(cls, (ast.Infix, ast.Postfix))
        and cls.operator not in _DRAWN_BY_HAND and cls.operator in ops
    )


@st.composite
def _generic_env(
    draw: Any, schema: Schema, depth: int, plus_budget: int, ops: frozenset[str]
) -> tuple[ast.Formula, Env]:
    """One of :func:`generic_operators` over drawn operands: environments merged, as the
    checker's generic case does; a postfix one spends the iteration budget (it may
    iterate)."""
    cls = draw(st.sampled_from(generic_operators(ops)))
    if issubclass(cls, ast.Postfix):
        if plus_budget <= 0:
            return draw(_formula_env(schema, depth - 1, plus_budget, ops))
        operand, env = draw(_formula_env(schema, depth - 1, plus_budget - 1, ops))
        return cls(operand), env
    sub = _formula_env(schema, depth - 1, plus_budget, ops)
    (left, lenv), (right, renv) = draw(sub), draw(sub)
    return cls(_closed(left, lenv, ops, always=False), right), _merge(lenv, renv)


def _choices(ops: frozenset[str]) -> list[int]:
    """The choices of :func:`_formula_env` that ``ops`` allows, in shrinking order."""
    out = []
    for choice in range(20):
        if choice == 10:
            if ops & {"PLUS", "CONTIG_PLUS"}:
                out.append(choice)
        elif choice == 19:
            chains = ops & {"SEQ", "CONTIG"} and ops & {"PROJECT", "OR"}
            if "OPTIONAL" in ops and chains:
                out.append(choice)
        elif choice <= 1 or _CHOICE_OPERATOR[choice] in ops:
            out.append(choice)
    if generic_operators(ops):
        out.append(GENERIC)  # last: it shrinks to the others
    return out


@st.composite
def _formula_env(
    draw: Any, schema: Schema, depth: int, plus_budget: int, ops: frozenset[str] = ALL_OPERATORS
) -> tuple[ast.Formula, Env]:
    """A well-formed formula with the variables it binds."""
    types = schema.type_names()
    if depth <= 0:
        type_name = draw(st.sampled_from(types))
        # NEXT expands to a :+ iteration, so it spends the iteration budget too.
        use_next = "NEXT" in ops and plus_budget > 0 and draw(st.integers(0, 9)) == 9
        node: ast.Formula = ast.Next(type_name) if use_next else ast.Atom(type_name)
        return node, {type_name: frozenset(schema.attributes(type_name))}

    choice = draw(st.sampled_from(_choices(ops)))
    if choice <= 1:
        return draw(_formula_env(schema, 0, plus_budget, ops))
    sub = _formula_env(schema, depth - 1, plus_budget, ops)
    if choice == GENERIC:
        return draw(_generic_env(schema, depth, plus_budget, ops))
    if choice in (16, 17):  # middle negation: φ1 ; NOT ψ1 [; NOT ψ2] ; φ2
        (left, lenv), (right, renv) = draw(sub), draw(sub)
        left = _closed(left, lenv, ops, always=False)
        count = draw(st.sampled_from((1, 1, 1, 2)))
        excluded = tuple(
            draw(_negated(schema, depth - 1, plus_budget, ops)) for _ in range(count)
        )
        return ast.SeqNot(left, excluded, right), _merge(lenv, renv)
    if choice == 2:  # AS
        f, env = draw(sub)
        var = draw(st.sampled_from(AS_VARS))
        collected = frozenset().union(*env.values())
        return ast.As(f, var), _merge(env, {var: collected})
    if choice in (3, 4):  # FILTER
        f, env = draw(sub)
        if not env:
            return f, env
        flt = draw(_filters(env, types, bag="BAG" in ops, relate="RELATE" in ops))
        return ast.FilterF(f, flt), env
    if choice in (5, 6, 7, 8, 9):  # binary
        (left, lenv), (right, renv) = draw(sub), draw(sub)
        if choice >= 7:
            left = _closed(left, lenv, ops, always=False)
        return _BINARY[choice](left, right), _merge(lenv, renv)
    if choice >= 18:  # quantifiers (spec §3.2)
        return draw(_quantified(schema, depth, plus_budget, ops, choice == 18))
    if choice == 10 and plus_budget > 0:  # iterations
        f, env = draw(_formula_env(schema, depth - 1, plus_budget - 1, ops))
        if "CONTIG_PLUS" not in ops:
            return ast.Plus(f), env
        if "PLUS" not in ops:
            return ast.ContigPlus(f), env
        return (ast.Plus(f) if draw(st.booleans()) else ast.ContigPlus(f)), env
    if choice == 11:  # PROJECT[...]
        f, env = draw(sub)
        keep = draw(st.lists(st.sampled_from(sorted(env)), max_size=2, unique=True)) if env else []
        return ast.ProjectVars(tuple(keep), f), {v: env[v] for v in keep}
    if choice == 12:  # PROJECT X[...]
        f, env = draw(sub)
        carriers = sorted(v for v in env if env[v])
        if not carriers:
            return f, env
        var = draw(st.sampled_from(carriers))
        attrs = draw(
            st.lists(st.sampled_from(sorted(env[var])), min_size=1, max_size=2, unique=True)
        )
        return ast.ProjectAttrs(var, tuple(attrs), f), {**env, var: frozenset(attrs)}
    if "AGG" not in ops:  # choice 10 without iteration budget left
        return draw(sub)
    # AGG (choices 13-15), sometimes filtered through its new variable
    f, env = draw(sub)
    if not env:
        return f, env
    var = draw(st.sampled_from(AGG_VARS))
    outputs = draw(_agg_outputs(env, "RELATE" in ops))
    new_env = _merge(env, {var: frozenset(o.name for o in outputs)})
    node = ast.Agg(var, outputs, f)
    if "FILTER" in ops and draw(st.booleans()):
        node = ast.FilterF(node, draw(_filters(new_env, types, 0, var, "BAG" in ops, "RELATE" in ops)))
    return node, new_env


_SPINE = (ast.Seq, ast.Contig, ast.SeqNot)


def _closed(f: ast.Formula, env: Env, ops: frozenset[str], always: bool = True) -> ast.Formula:
    """``f`` made one element when it stands on the left of a ``;``/``:`` chain.

    A chain on the left of another is flattened into it (the AST has no parentheses),
    which may mix ``;`` and ``:`` around an optional element (an error, spec §3.2):
    ``PROJECT[all its variables]`` is the identity and closes it.  With
    ``always=False`` only chains holding an optional element are closed.
    """
    if not isinstance(f, _SPINE):
        return f
    if not always:
        node: ast.Formula = f
        while isinstance(node, _SPINE) and not isinstance(node.right, ast.Opt):
            node = node.left
        if not isinstance(node, (*_SPINE, ast.Opt)):
            return f
    if "PROJECT" in ops:
        return ast.ProjectVars(tuple(sorted(env)), f)
    return ast.Or(f, f)  # OPTIONAL is generated only with PROJECT or OR


@st.composite
def _quantified(
    draw: Any, schema: Schema, depth: int, plus_budget: int, ops: frozenset[str], repeat: bool
) -> tuple[ast.Formula, Env]:
    """``φ{n}``, ``φ{n,m}``, ``φ{n,}`` (an iteration: it spends the budget), or a ``;``
    or ``:`` chain of two or three elements with one or two ``ψ?``/``ψ*`` (spec §3.2)."""
    if repeat:
        low = draw(st.integers(1, 2))
        unbounded = plus_budget > 0 and draw(st.booleans())
        high = None if unbounded else draw(st.integers(low, 3))
        budget = plus_budget - 1 if unbounded else plus_budget
        inner, inner_env = draw(_formula_env(schema, depth - 1, budget, ops))
        return ast.Repeat(inner, low, high, draw(st.booleans())), inner_env
    sub = _formula_env(schema, depth - 1, plus_budget, ops)
    size = draw(st.integers(2, 3))
    parts = [draw(sub) for _ in range(size)]
    optional = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=size - 1, unique=True))
    joins = [j for j, name in ((ast.Seq, "SEQ"), (ast.Contig, "CONTIG")) if name in ops]
    join: Callable[[ast.Formula, ast.Formula], ast.Formula] = draw(st.sampled_from(joins))
    elements: list[ast.Formula] = []
    for index, (f, part_env) in enumerate(parts):
        if index == 0:
            f = _closed(f, part_env, ops)
        if index in optional:
            star = plus_budget > 0 and "PLUS" in ops and draw(st.integers(0, 2)) == 2
            f = ast.Opt(f, star)
        elements.append(f)
    node = elements[0]
    env: Env = {}
    for f in elements[1:]:
        node = join(node, f)
    for _f, part_env in parts:
        env = _merge(env, part_env)
    return node, env


@st.composite
def _negated(
    draw: Any, schema: Schema, depth: int, plus_budget: int, ops: frozenset[str] = ALL_OPERATORS
) -> ast.Formula:
    """A small ψ for ``NOT ψ`` (depth ≤ 2, at most one iteration): the oracle
    evaluates it over the whole stream; it may hold a negation itself."""
    inner_depth = draw(st.integers(0, max(0, min(depth, 2))))
    psi, _env = draw(_formula_env(schema, inner_depth, min(plus_budget, 1), ops))
    return psi


def formulas_with_env(
    schema: Schema = TEST_SCHEMA,
    max_depth: int = 4,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
) -> st.SearchStrategy[tuple[ast.Formula, Env]]:
    """Well-formed formulas with their variable environment (var → attributes)."""
    ops = allowed(operators, without)
    return st.integers(1, max_depth).flatmap(lambda d: _formula_env(schema, d, 2, ops))


def formulas(
    schema: Schema = TEST_SCHEMA,
    max_depth: int = 4,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
) -> st.SearchStrategy[ast.Formula]:
    """Well-formed formulas over ``schema`` (they pass the checker), using only the
    allowed operators (see the module doc)."""
    return formulas_with_env(schema, max_depth, operators, without).map(lambda pair: pair[0])


@st.composite
def _negation_env(
    draw: Any, schema: Schema, depth: int, ops: frozenset[str] = ALL_OPERATORS
) -> tuple[ast.Formula, Env]:
    """``φ1 ; NOT ψ.. ; φ2``, sometimes inside ``+``, ``AND``, ``OR``, ``AGG`` or FILTER."""
    types = schema.type_names()
    (left, lenv), (right, renv) = (draw(_formula_env(schema, depth - 1, 1, ops)) for _ in range(2))
    left = _closed(left, lenv, ops, always=False)
    count = draw(st.sampled_from((1, 1, 2)))
    excluded = tuple(draw(_negated(schema, 2, 1, ops)) for _ in range(count))
    node: ast.Formula = ast.SeqNot(left, excluded, right)
    env = _merge(lenv, renv)
    wanted = {"plus": "PLUS", "and": "AND", "or": "OR", "agg": "AGG", "filter": "FILTER"}
    # a FILTER or an AGG needs a variable to read (the sides may bind none)
    contexts = ["none"] + [
        c for c, op in wanted.items() if op in ops and (env or c not in ("filter", "agg"))
    ]
    context = draw(st.sampled_from(contexts))
    if context == "plus":
        node = ast.Plus(node)
    elif context in ("and", "or"):
        other, oenv = draw(_formula_env(schema, depth - 1, 1, ops))
        node = ast.And(node, other) if context == "and" else ast.Or(other, node)
        env = _merge(env, oenv)
    elif context == "agg":
        var = draw(st.sampled_from(AGG_VARS))
        outputs = draw(_agg_outputs(env, "RELATE" in ops))
        node = ast.Agg(var, outputs, node)
        env = _merge(env, {var: frozenset(o.name for o in outputs)})
    elif context == "filter":
        node = ast.FilterF(node, draw(_filters(env, types, bag="BAG" in ops)))
    return node, env


def negation_formulas_with_env(
    schema: Schema = TEST_SCHEMA,
    max_depth: int = 3,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
) -> st.SearchStrategy[tuple[ast.Formula, Env]]:
    """Well-formed formulas that always hold a middle negation (see :func:`formulas`)."""
    ops = allowed(operators, without) | {"NOT"}
    return st.integers(1, max_depth).flatmap(lambda d: _negation_env(schema, d, ops))


def negation_formulas(
    schema: Schema = TEST_SCHEMA,
    max_depth: int = 3,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
) -> st.SearchStrategy[ast.Formula]:
    """Well-formed formulas that always hold a middle negation."""
    return negation_formulas_with_env(schema, max_depth, operators, without).map(
        lambda pair: pair[0]
    )


# ----------------------------------------------------------------- queries


@st.composite
def _windows(draw: Any, max_size: int = 7, on: str | None = None) -> ast.Window:
    """``n EVENTS``, or (when ``on`` names an attribute) sometimes ``d ON on``
    (EVENTS first, so that shrinking goes there)."""
    if on is not None and draw(st.booleans()):
        return ast.Window(draw(st.integers(1, 4)), on)
    return ast.Window(draw(st.integers(1, max_size)))


def window_attribute(schema: Schema) -> str | None:
    """The attribute generated ``WITHIN d ON attr`` windows use: ``x`` when every
    type has it (as in :data:`TEST_SCHEMA`), else the first numeric attribute shared
    by every type, else none (no ON windows)."""
    shared = set(schema.all_attributes()) - {"type"}
    for _name, attrs in schema.types:
        shared &= set(attrs)
    numeric = sorted(a for a in shared if schema.kind(a) != "str")
    if "x" in numeric:
        return "x"
    return numeric[0] if numeric else None


def _on_attribute(schema: Schema, ops: frozenset[str], windows_on: bool) -> str | None:
    return window_attribute(schema) if windows_on and "WITHIN_ON" in ops else None


@st.composite
def _with_top_negation(
    draw: Any, formula: ast.Formula, schema: Schema, ops: frozenset[str] = ALL_OPERATORS
) -> ast.Formula:
    """``formula`` with a leading and/or trailing negation (spec §3.1), in the
    canonical shape (LeadingNot outermost), sometimes under the formula's FILTER."""
    kind = draw(st.sampled_from(("leading", "trailing", "both")))
    filt: ast.Filter | None = None
    if isinstance(formula, ast.FilterF) and draw(st.booleans()):
        filt = formula.filter
        formula = formula.formula

    def some() -> tuple[ast.Formula, ...]:
        count = draw(st.sampled_from((1, 1, 2)))
        return tuple(draw(_negated(schema, 1, 1, ops)) for _ in range(count))

    if kind in ("trailing", "both"):
        formula = ast.TrailingNot(formula, some())
    if kind in ("leading", "both"):
        formula = ast.LeadingNot(some(), formula)
    return formula if filt is None else ast.FilterF(formula, filt)


@st.composite
def _strategy_clauses(
    draw: Any, formula: ast.Formula, schema: Schema, ops: frozenset[str]
) -> tuple[str, ast.Skip | None]:
    """A selection strategy (spec §6.2, ``ALL`` half of the time) and an after-match
    skip (none half of the time), each only if ``ops`` has SELECT / SKIP."""
    select = "ALL"
    if "SELECT" in ops:
        select = draw(st.sampled_from(("ALL",) * 4 + SELECT_STRATEGIES[1:]))
    skip: ast.Skip | None = None
    if "SKIP" in ops:
        kind = draw(st.sampled_from((None, None, None, "TO_NEXT_ROW", "PAST_LAST_ROW", "TO_FIRST", "TO_LAST")))
        if kind in ("TO_NEXT_ROW", "PAST_LAST_ROW"):
            skip = ast.Skip(kind)
        elif kind is not None:
            variables = sorted(formula_env(formula, schema))
            if variables:
                skip = ast.Skip(kind, draw(st.sampled_from(variables)))
    return select, skip


def _partition_attribute(schema: Schema) -> str | None:
    """``k`` when the schema has it (as the test schemas do), else the first shared attribute."""
    shared = set(schema.all_attributes()) - {"type"}
    for _name, attrs in schema.types:
        shared &= set(attrs)
    if "k" in shared:
        return "k"
    return min(shared) if shared else None


@st.composite
def queries(
    draw: Any,
    schema: Schema = TEST_SCHEMA,
    max_depth: int = 4,
    top_negation: bool = False,
    of: st.SearchStrategy[ast.Formula] | None = None,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
    windows_on: bool = False,
) -> ast.Query:
    """A formula with an optional ``PARTITION BY k`` and an optional ``WITHIN n EVENTS``
    (with ``top_negation``, sometimes leading/trailing negation and then WITHIN;
    ``of`` replaces the formula strategy; ``operators``/``without`` as in :func:`formulas`,
    and ``PARTITION_BY``, ``WITHIN``, ``TOP_NOT`` there decide the clauses).  With
    ``windows_on`` and ``WITHIN_ON`` allowed, some windows are ``WITHIN d ON attr``
    (:func:`window_attribute`): the stream must then carry that attribute in every event."""
    ops = allowed(operators, without)
    formula = draw(of if of is not None else formulas(schema, max_depth, ops))
    key = _partition_attribute(schema)
    partition = (key,) if key and "PARTITION_BY" in ops and draw(st.booleans()) else ()
    on = _on_attribute(schema, ops, windows_on)
    within = draw(st.none() | _windows(on=on)) if "WITHIN" in ops else None
    if top_negation and "TOP_NOT" in ops and "WITHIN" in ops and draw(st.booleans()):
        formula = draw(_with_top_negation(formula, schema, ops))
        within = within or draw(_windows(on=on))
    select, skip = draw(_strategy_clauses(formula, schema, ops))
    return ast.Query(formula, None, partition, within, None, select, skip)


@st.composite
def trend_queries(
    draw: Any,
    schema: Schema = TEST_SCHEMA,
    max_depth: int = 4,
    top_negation: bool = False,
    of: st.SearchStrategy[tuple[ast.Formula, Env]] | None = None,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
    windows_on: bool = False,
) -> ast.Query:
    """A RETURN query: COUNT(*), COUNT(X), SUM/MIN/MAX/AVG(X.a), the partition attribute;
    optional PARTITION BY k, WITHIN n EVENTS and SLIDE s EVENTS (s <= n; both ON
    attr with ``windows_on``, as in :func:`queries`; with ``s < n`` the first events
    also sit in windows that start before 0, spec §6, so those are checked); with
    ``top_negation``, sometimes leading/trailing negation (and then WITHIN);
    ``of`` replaces the strategy of (formula, environment) pairs; ``operators``/``without``
    as in :func:`queries` (``SLIDE`` too)."""
    ops = allowed(operators, without)
    formula, env = draw(of if of is not None else formulas_with_env(schema, max_depth, ops))
    key = _partition_attribute(schema)
    partition = (key,) if key and "PARTITION_BY" in ops and draw(st.booleans()) else ()
    candidates: list[ast.ReturnItem] = [ast.CountStar()]
    for var in sorted(env):
        for func in aggregate_names(attribute=False):
            candidates.append(ast.ReturnAgg(func, var, None))
        for attr in _data_attrs(env, var):
            for func in aggregate_names(attribute=True):
                candidates.append(ast.ReturnAgg(func, var, attr))
    if partition:
        candidates.append(ast.ReturnAttr(partition[0]))
    items = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=4, unique=True))
    on = _on_attribute(schema, ops, windows_on)
    within = draw(st.none() | _windows(on=on)) if "WITHIN" in ops else None
    if top_negation and "TOP_NOT" in ops and "WITHIN" in ops and draw(st.booleans()):
        formula = draw(_with_top_negation(formula, schema, ops))
        within = within or draw(_windows(on=on))
    slide = None
    if within is not None and "SLIDE" in ops and draw(st.booleans()):
        slide = ast.Window(draw(st.integers(1, int(within.size))), within.attr)
    select, skip = draw(_strategy_clauses(formula, schema, ops))
    return ast.Query(formula, tuple(items), partition, within, slide, select, skip)
