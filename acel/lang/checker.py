"""Static checks of a query against a schema (spec §3, §6, §9).

The checker computes, bottom-up, the *environment* of every sub-formula:
the variables that may hold events after it, each with the attributes its
events may carry:

- ``R`` and ``NEXT(R)`` bind ``R`` with ``type`` and the schema attributes of R;
- ``φ AS X`` gives X every attribute of every variable of φ;
- ``AGG Z[b := ...](φ)`` adds the output names to Z's attributes;
- ``PROJECT X[a, ...](φ)`` restricts X to ``a, ...``;
- ``PROJECT[X, ...](φ)`` keeps only the listed variables;
- binary operators merge the environments of both sides;
- negation (spec §3.1): ``φ1 ; NOT ψ ; φ2`` has the environment of
  ``φ1 ; φ2``; ``ψ`` is checked in its own environment, and its variables are
  local to it.  Leading and trailing negation are allowed only in the *top
  chain* of a query's formula (the root, through FILTERs) and need WITHIN.

A name a filter, projection, AGG input or RETURN item uses must be in scope
there, with a known attribute; otherwise :class:`AcelCheckError` names the
place (line, column and caret when the query came from text).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import singledispatch

from acel.lang import aggregates
from acel.lang import ast as A
from acel.lang.errors import AcelCheckError
from acel.lang.expansion import every_repeat, too_large
from acel.lang.numbers import MAX_REPEAT, int_to_digits, repeat_problem
from acel.lang.parser import Locations, parse_query_located
from acel.lang.passes import declare
from acel.lang.printer import format_return_item
from acel.lang.schema import Schema

Env = dict[str, frozenset[str]]
"""Variable → the attributes its events may carry."""


def _list(names: Iterable[str]) -> str:
    items = sorted(names)
    return ", ".join(items) if items else "(none)"


_EDGES = ("FIRST", "LAST")
"""FIRST and LAST: allowed in FILTER and AGG, an error in RETURN (spec §5.1)."""

_PLACES = {A.LeadingNot: ("start", "leading"), A.TrailingNot: ("end", "trailing")}


class _Checker:
    def __init__(
        self, schema: Schema, locations: Locations | None, text: str | None, formula: A.Formula
    ) -> None:
        self.schema = schema
        self.loc = locations
        self.text = text
        self.top: set[int] = set()
        """Ids of the leading/trailing negations allowed where they stand (the top chain)."""
        self.local: dict[str, tuple[object, int]] = {}
        """Variables bound inside a negated formula → (negation node, index of its NOT)."""
        self.kinds = attribute_kinds(formula, dict(schema.kinds))

    def fail(self, message: str, node: object, part: str = "") -> AcelCheckError:
        where = self.loc.get(node, part) if self.loc is not None else None
        line, column = where if where is not None else (None, None)
        return AcelCheckError(message, line=line, column=column, text=self.text)

    # ---------------------------------------------------------- formulas

    def type_env(self, type_name: str, node: object) -> Env:
        if not self.schema.has_type(type_name):
            raise self.fail(
                f"unknown event type {type_name!r}; the schema has {_list(self.schema.type_names())}",
                node,
                "type",
            )
        return {type_name: frozenset(self.schema.attributes(type_name))}

    def formula(self, f: A.Formula) -> Env:
        """The environment of ``f`` (:func:`_env`), checking everything below it."""
        return _env(f, self)

    def negated(self, f: A.SeqNot | A.LeadingNot | A.TrailingNot) -> None:
        """Check each ``ψ`` of ``NOT ψ`` in its own scope; its variables stay local."""
        for index, psi in enumerate(f.excluded):
            for var in _env(psi, self):
                self.local.setdefault(var, (f, index))

    def placed(self, f: A.LeadingNot | A.TrailingNot) -> None:
        """Leading/trailing negation only in the top chain of a query (spec §3.1)."""
        if id(f) in self.top:
            return
        where, kind = _PLACES[type(f)]
        raise self.fail(
            f"NOT at the {where} of a sequence ({kind} negation) is allowed only at the top of a query's pattern, "
            "under its FILTERs, in a query with WITHIN: it looks for ψ inside each complex "
            "event's window (spec §3.1); to guard the gap between two elements write "
            "φ1 ; NOT ψ ; φ2",
            f,
            "excluded.0",
        )

    def local_hint(self, var: str) -> str:
        """Why ``var`` is not in scope when only a negated formula binds it."""
        found = self.local.get(var)
        if found is None:
            return ""
        node, index = found
        where = self.loc.get(node, f"excluded.{index}") if self.loc is not None else None
        place = f" at line {where[0]}, column {where[1]}" if where is not None else ""
        return (
            f" ({var} is bound only inside the NOT{place}: the variables of a negated formula "
            "are local to it, spec §3.1)"
        )

    def variable(
        self, var: str, env: Mapping[str, frozenset[str]], node: object, part: str, where: str
    ) -> None:
        if var not in env:
            raise self.fail(
                f"unknown variable {var!r} in {where}; variables in scope: {_list(env)}"
                + self.local_hint(var),
                node,
                part,
            )

    def attribute(
        self, var: str, attr: str, env: Mapping[str, frozenset[str]], node: object, part: str
    ) -> None:
        if attr not in env[var]:
            raise self.fail(
                f"unknown attribute {attr!r} of variable {var}; {var} may carry {_list(env[var])}",
                node,
                part,
            )

    def function(self, func: str, attr: str | None, node: object) -> None:
        agg = aggregates.lookup(func)
        if agg is None:
            raise self.fail(
                f"unknown aggregate function {func!r}; known: {_list(aggregates.names())}",
                node,
                "func",
            )
        if attr is None and agg.needs_attribute:
            raise self.fail(
                f"{func.upper()} needs an attribute: write {func.upper()}(X.attribute)"
                " (only COUNT may omit it)",
                node,
                "func",
            )

    def numeric(self, func: str, var: str, attr: str | None, node: object) -> None:
        """SUM, AVG, STDDEV add their inputs (``Aggregate.numeric``): reject text or bool inputs."""
        agg = aggregates.lookup(func)
        if attr is None or agg is None or not agg.numeric:
            return
        kind = self.kinds.get(attr)
        if kind in NON_NUMERIC:
            raise self.fail(
                f"{func.upper()}({var}.{attr}) adds numbers, but {attr} holds {kind} values"
                " (MIN, MAX and COUNT take any kind)",
                node,
                "attr",
            )

    # ----------------------------------------------------------- queries

    def window(self, window: A.Window, clause: str) -> None:
        size = window.size
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not size > 0:
            raise self.fail(f"{clause} needs a positive size, not {size!r}", window, "size")
        if window.attr is None and not isinstance(size, int):
            raise self.fail(
                f"{clause} {size!r} EVENTS: a number of events is an integer", window, "size"
            )
        if window.attr is not None and window.attr not in self.schema.all_attributes():
            raise self.fail(
                f"{clause} ... ON {window.attr}: unknown attribute; "
                f"the schema has {_list(self.schema.all_attributes())}",
                window,
                "attr",
            )

    def allow_top(self, formula: A.Formula) -> list[A.LeadingNot | A.TrailingNot]:
        """Allow the leading/trailing negations of ``formula``'s top chain; return them."""
        chain = A.top_chain(formula)
        negations = [n for n in chain if isinstance(n, (A.LeadingNot, A.TrailingNot))]
        self.top = {id(n) for n in negations}
        return negations

    def query(self, q: A.Query) -> None:
        self.expansion(q.formula)
        negations = self.allow_top(q.formula)
        env = self.formula(q.formula)
        if negations and q.within is None:
            where, kind = _PLACES[type(negations[0])]
            raise self.fail(
                f"NOT at the {where} of the pattern ({kind} negation) needs WITHIN: ψ is looked for "
                "inside each complex event's window (spec §3.1)",
                negations[0],
                "excluded.0",
            )
        known = self.schema.all_attributes()
        for index, attr in enumerate(q.partition_by):
            if attr not in known:
                raise self.fail(
                    f"PARTITION BY {attr}: unknown attribute; the schema has {_list(known)}",
                    q,
                    f"partition_by.{index}",
                )
            if attr in q.partition_by[:index]:
                raise self.fail(f"PARTITION BY lists {attr!r} twice", q, f"partition_by.{index}")
        if q.returns is not None:
            self.returns(q, env)
        self.strategy(q, env)
        if q.within is not None:
            self.window(q.within, "WITHIN")
        if q.slide is not None:
            if q.within is None or q.returns is None:
                raise self.fail(
                    "SLIDE needs both RETURN and WITHIN (it slides the window of a trend aggregate)",
                    q.slide,
                    "",
                )
            self.window(q.slide, "SLIDE")
            if q.slide.attr != q.within.attr:
                raise self.fail(
                    "SLIDE must measure the same way as WITHIN (both EVENTS or both ON the same attribute)",
                    q.slide,
                    "",
                )
            per_event = windows_per_event(q.within.size, q.slide.size)
            if per_event > MAX_WINDOWS_PER_EVENT:
                raise self.fail(
                    f"WITHIN {q.within.size!r} with SLIDE {q.slide.size!r} puts each event in up to "
                    f"{_count(per_event)} windows; at most {MAX_WINDOWS_PER_EVENT:,} are allowed "
                    "(make SLIDE larger or WITHIN smaller)",
                    q.slide,
                    "",
                )

    def expansion(self, formula: A.Formula) -> None:
        """Refuse quantifiers whose expansion no evaluator could compile (issue 35),
        pointing at the first quantifier."""
        why = too_large(formula, len(self.schema.type_names()), keep=every_repeat)
        if why is not None:
            first = next(n for n in A.formula_nodes(formula) if isinstance(n, (A.Repeat, A.Opt)))
            raise self.fail(why, first)

    def strategy(self, q: A.Query, env: Env) -> None:
        """SELECT names a strategy of spec §6.2; SKIP TO FIRST/LAST X names a variable."""
        if q.select not in A.SELECT_STRATEGIES:
            raise self.fail(
                f"unknown selection strategy {q.select!r} (choose {_list(A.SELECT_STRATEGIES)})",
                q,
                "select",
            )
        if q.skip is not None and q.skip.kind in ("TO_FIRST", "TO_LAST"):
            if q.skip.var is None:
                raise self.fail("AFTER MATCH SKIP TO FIRST/LAST needs a variable", q, "skip")
            self.variable(q.skip.var, env, q.skip, "var", "AFTER MATCH SKIP")

    def returns(self, q: A.Query, env: Env) -> None:
        assert q.returns is not None
        if not q.returns:
            raise self.fail("RETURN needs at least one item", q)
        seen: set[str] = set()
        for item in q.returns:
            if isinstance(item, A.ReturnAttr):
                if item.name not in q.partition_by:
                    raise self.fail(
                        f"RETURN {item.name}: a bare attribute must be a PARTITION BY attribute"
                        f" (partitioned by: {_list(q.partition_by)})",
                        item,
                        "name",
                    )
            elif isinstance(item, A.ReturnAgg):
                if item.func.upper() in _EDGES:
                    raise self.fail(
                        f"{item.func.upper()} is not allowed in RETURN: there is no order across "
                        "complex events (spec §5.1); use it in AGG or inside a FILTER",
                        item,
                        "func",
                    )
                self.function(item.func, item.attr, item)
                self.variable(item.var, env, item, "var", "RETURN")
                if item.attr is not None:
                    self.attribute(item.var, item.attr, env, item, "attr")
                self.numeric(item.func, item.var, item.attr, item)
            elif not isinstance(item, A.CountStar):
                raise TypeError(f"not a RETURN item: {item!r}")
            name = format_return_item(item)
            if name in seen:
                raise self.fail(f"RETURN lists {name} twice", item)
            seen.add(name)


# ------------------------------------------------------------------ the cases
# One function per node class (functools.singledispatch; acel.lang.passes checks
# that every node has its case).


@singledispatch
def _env(f: A.Formula, chk: _Checker) -> Env:
    """The environment of a formula (the module docstring's rules), checking it."""
    raise TypeError(f"not a formula: {f!r}")


@_env.register(A.Derived)
def _env_derived(f: A.Derived, chk: _Checker) -> Env:  # type: ignore[misc]  # Derived: a base of formula nodes
    return _env(f.expand(), chk)


@_env.register(A.Atom)
@_env.register(A.Next)
def _env_type(f: A.Atom | A.Next, chk: _Checker) -> Env:
    return chk.type_env(f.type, f)


@_env.register(A.As)
def _env_as(f: A.As, chk: _Checker) -> Env:
    env = _env(f.formula, chk)
    collected = frozenset().union(*env.values()) if env else frozenset()
    return merge(env, {f.var: collected})


@_env.register(A.FilterF)
def _env_filter(f: A.FilterF, chk: _Checker) -> Env:
    env = _env(f.formula, chk)
    _filter(f.filter, chk, env)
    return env


@_env.register(A.Infix)
def _env_binary(f: A.Infix, chk: _Checker) -> Env:  # type: ignore[misc]  # Infix: a base of formula nodes
    """``OR``, ``AND``, ``;``, ``:`` and any new binary operator: both sides merged (a
    new one needs a case here only for rules of its own; a derived one is expanded)."""
    if isinstance(f, A.Derived):  # Infix comes first in a derived operator's MRO
        return _env_derived(f, chk)
    return merge(_env(f.left, chk), _env(f.right, chk))


@_env.register(A.SeqNot)
def _env_seq_not(f: A.SeqNot, chk: _Checker) -> Env:
    left = _env(f.left, chk)
    chk.negated(f)
    return merge(left, _env(f.right, chk))


@_env.register(A.LeadingNot)
def _env_leading_not(f: A.LeadingNot, chk: _Checker) -> Env:
    chk.placed(f)
    chk.negated(f)
    return _env(f.formula, chk)


@_env.register(A.TrailingNot)
def _env_trailing_not(f: A.TrailingNot, chk: _Checker) -> Env:
    chk.placed(f)
    env = _env(f.formula, chk)
    chk.negated(f)
    return env


@_env.register(A.Postfix)
@_env.register(A.Opt)
def _env_iteration(f: A.Postfix | A.Opt, chk: _Checker) -> Env:  # type: ignore[misc]  # Postfix: a base
    """``+``, ``:+``, ``ψ?``/``ψ*`` and any new postfix operator: its operand's."""
    if isinstance(f, A.Derived):
        return _env_derived(f, chk)
    return _env(f.formula, chk)


@_env.register(A.Repeat)
def _env_repeat(f: A.Repeat, chk: _Checker) -> Env:
    """Bounds above :data:`MAX_REPEAT` are refused where they stand (issue 35)."""
    for part, bound in (("low", f.low), ("high", f.high)):
        if bound is not None and bound > MAX_REPEAT:
            problem = repeat_problem(int_to_digits(bound)) or ""
            raise chk.fail(problem, f, part)
    return _env(f.formula, chk)


@_env.register(A.ProjectVars)
def _env_project_vars(f: A.ProjectVars, chk: _Checker) -> Env:
    env = _env(f.formula, chk)
    for index, var in enumerate(f.vars):
        if var not in env:
            raise chk.fail(
                f"PROJECT keeps variable {var!r}, which does not occur in its formula "
                f"(variables there: {_list(env)})" + chk.local_hint(var),
                f,
                f"vars.{index}",
            )
    return {v: env[v] for v in f.vars}


@_env.register(A.ProjectAttrs)
def _env_project_attrs(f: A.ProjectAttrs, chk: _Checker) -> Env:
    env = _env(f.formula, chk)
    chk.variable(f.var, env, f, "var", "PROJECT")
    for index, attr in enumerate(f.attrs):
        if attr not in env[f.var]:
            raise chk.fail(
                f"PROJECT {f.var}[...] keeps unknown attribute {attr!r}; "
                f"{f.var} may carry {_list(env[f.var])}",
                f,
                f"attrs.{index}",
            )
    return {**env, f.var: frozenset(f.attrs)}


@_env.register(A.Agg)
def _env_agg(f: A.Agg, chk: _Checker) -> Env:
    env = _env(f.formula, chk)
    seen: set[str] = set()
    for out in f.outputs:
        if out.name in seen:
            raise chk.fail(f"AGG output {out.name!r} is assigned twice", out, "name")
        if out.name == "type":
            raise chk.fail("'type' cannot be an AGG output: created events are untyped", out, "name")
        seen.add(out.name)
        if out.func not in _EDGES or out.attr is None:
            chk.function(out.func, out.attr, out)
        chk.variable(out.var, env, out, "var", "AGG")
        if out.attr is not None:
            chk.attribute(out.var, out.attr, env, out, "attr")
        chk.numeric(out.func, out.var, out.attr, out)
    return merge(env, {f.var: frozenset(seen)})


@singledispatch
def _filter(flt: A.Filter, chk: _Checker, env: Env) -> None:
    raise TypeError(f"not a filter: {flt!r}")


@_filter.register(A.FilterAnd)
@_filter.register(A.FilterOr)
def _filter_binary(flt: A.FilterAnd | A.FilterOr, chk: _Checker, env: Env) -> None:
    _filter(flt.left, chk, env)
    _filter(flt.right, chk, env)


@_filter.register(A.BagPred)
def _filter_bag(flt: A.BagPred, chk: _Checker, env: Env) -> None:
    chk.variable(flt.var, env, flt, "var", "FILTER")
    chk.attribute(flt.var, flt.attr, env, flt, "attr")


@_filter.register(A.VarPred)
def _filter_var(flt: A.VarPred, chk: _Checker, env: Env) -> None:
    chk.variable(flt.var, env, flt, "var", "FILTER")
    _pred(flt.pred, chk, flt.var, env)


@singledispatch
def _pred(pred: A.Pred, chk: _Checker, var: str, env: Env) -> None:
    raise TypeError(f"not a predicate: {pred!r}")


@_pred.register(A.Compare)
def _pred_compare(pred: A.Compare, chk: _Checker, var: str, env: Env) -> None:
    _expr(pred.left, chk, var, env)
    _expr(pred.right, chk, var, env)


@_pred.register(A.InList)
def _pred_in(pred: A.InList, chk: _Checker, var: str, env: Env) -> None:
    _expr(pred.expr, chk, var, env)


@_pred.register(A.PredNot)
def _pred_not(pred: A.PredNot, chk: _Checker, var: str, env: Env) -> None:
    _pred(pred.operand, chk, var, env)


@_pred.register(A.PredAnd)
@_pred.register(A.PredOr)
def _pred_binary(pred: A.PredAnd | A.PredOr, chk: _Checker, var: str, env: Env) -> None:
    _pred(pred.left, chk, var, env)
    _pred(pred.right, chk, var, env)


@singledispatch
def _expr(expr: A.Expr, chk: _Checker, var: str, env: Env) -> None:
    raise TypeError(f"not an expression: {expr!r}")


@_expr.register(A.Attr)
def _expr_attr(expr: A.Attr, chk: _Checker, var: str, env: Env) -> None:
    chk.attribute(var, expr.name, env, expr, "")


@_expr.register(A.BinOp)
def _expr_binop(expr: A.BinOp, chk: _Checker, var: str, env: Env) -> None:
    _expr(expr.left, chk, var, env)
    _expr(expr.right, chk, var, env)


@_expr.register(A.Neg)
def _expr_neg(expr: A.Neg, chk: _Checker, var: str, env: Env) -> None:
    _expr(expr.operand, chk, var, env)


@_expr.register(A.Lit)
def _expr_lit(expr: A.Lit, chk: _Checker, var: str, env: Env) -> None:
    return None


@_expr.register(A.VarAttr)
@_expr.register(A.BagAgg)
@_expr.register(A.FirstLast)
@_expr.register(A.Prev)
@_expr.register(A.Running)
def _expr_relating(expr: A.Relating, chk: _Checker, var: str, env: Env) -> None:
    """Names and kinds of a term that relates events (spec §5.1)."""
    where = f"FILTER {var}[...]"
    if isinstance(expr, (A.VarAttr, A.FirstLast)):
        chk.variable(expr.var, env, expr, "var", where)
        chk.attribute(expr.var, expr.attr, env, expr, "attr")
    elif isinstance(expr, A.BagAgg):
        chk.function(expr.func, expr.attr, expr)
        chk.variable(expr.var, env, expr, "var", where)
        if expr.attr is not None:
            chk.attribute(expr.var, expr.attr, env, expr, "attr")
        chk.numeric(expr.func, expr.var, expr.attr, expr)
    elif isinstance(expr, A.Prev):
        if expr.attr not in env[var]:
            raise chk.fail(
                f"unknown attribute {expr.attr!r} behind PREV: PREV reads the previous "
                f"event of {var}, which may carry {_list(env[var])}",
                expr,
                "attr",
            )
    else:
        chk.function(expr.func, expr.attr, expr)
        if expr.attr not in env[var]:
            raise chk.fail(
                f"unknown attribute {expr.attr!r} behind RUNNING {expr.func}: it reads the "
                f"earlier events of {var}, which may carry {_list(env[var])}",
                expr,
                "attr",
            )
        chk.numeric(expr.func, var, expr.attr, expr)


declare("checker.formula", "formula", _env)
declare("checker.filter", "filter", _filter)
declare("checker.predicate", "predicate", _pred)
declare("checker.expression", "expression", _expr)


# ------------------------------------------------------------------ value kinds

NON_NUMERIC = ("str", "bool")
"""Value kinds SUM and AVG refuse (``papers/semantics.md``, "Value kinds")."""


def output_kind(output: A.AggOutput, kinds: Mapping[str, str]) -> str | None:
    """The value kind of an AGG output (None: unknown, always NULL; ``mixed``: several).

    COUNT gives ``int``, AVG ``float``, SUM the kind of its numeric input
    (``int`` when unknown), MIN and MAX the kind of their input; a user's
    aggregate may give anything (``mixed``): each ``Aggregate.result_kind``.
    """
    source = kinds.get(output.attr) if output.attr is not None else None
    if output.func.upper() in _EDGES:
        return source  # FIRST/LAST: one of the inputs (spec §5.1)
    agg = aggregates.lookup(output.func)
    if agg is None:
        return "mixed"
    return agg.result_kind(source)


def attribute_kinds(query: A.Query | A.Formula, columns: Mapping[str, str]) -> dict[str, str]:
    """Value kinds of every attribute the query can see: columns and AGG outputs.

    An attribute created by ``AGG`` (say ``n := AVG(C.k)``) has the kind of its
    function, whatever the stream's columns are; a name with two kinds is
    ``mixed`` (the Spark backend then sends its RETURN values as JSON text).
    Repeated to a fixpoint, since an AGG output may aggregate another AGG's
    output.  The checker and the Spark backend share this one definition.
    """
    formula = query.formula if isinstance(query, A.Query) else query
    kinds = dict(columns)
    outputs = [o for node in A.walk(formula) if isinstance(node, A.Agg) for o in node.outputs]
    changed = True
    while changed:
        changed = False
        for output in outputs:
            kind = output_kind(output, kinds)
            old = kinds.get(output.name)
            new = kind if old in (None, kind) else "mixed" if kind is not None else old
            if new != old and new is not None:
                kinds[output.name] = new
                changed = True
    return kinds


def merge(a: Mapping[str, frozenset[str]], b: Mapping[str, frozenset[str]]) -> Env:
    """The environment of a binary operator: variables of both sides, attributes united."""
    out = dict(a)
    for var, attrs in b.items():
        out[var] = out.get(var, frozenset()) | attrs
    return out


def formula_env(formula: A.Formula, schema: Schema) -> Env:
    """The variables a well-formed formula binds, with the attributes each may carry.

    A query's formula may have leading/trailing negation at its top: its
    environment is the body's.
    """
    checker = _Checker(schema, None, None, formula)
    checker.allow_top(formula)
    return checker.formula(formula)


def check_formula(
    formula: A.Formula, schema: Schema, *, locations: Locations | None = None, text: str | None = None
) -> None:
    """Check a formula against ``schema``; raise :class:`AcelCheckError`.

    A bare formula has no window, so leading/trailing negation is refused.
    """
    _Checker(schema, locations, text, formula).formula(formula)


MAX_WINDOWS_PER_EVENT = 100_000
"""The most SLIDE windows one event may fall in (``⌈WITHIN / SLIDE⌉``, issue 36): each
event's result is folded into every window holding it, so the bound keeps one event's
work (pure and native alike) below a second; papers/engine.md "Window coordinates"."""


def windows_per_event(within: int | float, slide: int | float) -> int | float:
    """``⌈within / slide⌉``, the most windows ``[k·slide, k·slide + within)`` holding a point
    (exact for ints; ``inf`` when a float quotient overflows)."""
    if isinstance(within, int) and isinstance(slide, int):
        return -(-within // slide)
    ratio = within / slide
    return ratio if math.isinf(ratio) else math.ceil(ratio)


def _count(n: int | float) -> str:
    return "infinitely many" if math.isinf(n) else f"{n:,}"


def check_query(
    query: A.Query, schema: Schema, *, locations: Locations | None = None, text: str | None = None
) -> None:
    """Check a query against ``schema``; raise :class:`AcelCheckError` naming the place.

    ``locations`` and ``text`` (from :func:`acel.lang.parser.parse_query_located`)
    give the error a line, a column and a caret.
    """
    _Checker(schema, locations, text, query.formula).query(query)


def check_text(text: str, schema: Schema) -> A.Query:
    """Parse and check query text; return the query or raise a located QueryError."""
    query, locations = parse_query_located(text)
    check_query(query, schema, locations=locations, text=text)
    return query
