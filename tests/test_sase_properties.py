"""Property: the SASE+ baseline agrees with the oracle on the translatable fragment.

Generated SASE+ queries (2-4 components, single and Kleene, local and
iterator predicates, maybe ``[k]``, WITHIN, RETURN) on generated streams:
``run_sase(q)`` equals ``oracle.run(translate(q))`` match for match, and the
per-match RETURN rows equal the oracle's AGG events.  The two-step trend
baseline (``two_step_trend``) equals the oracle on ACEL RETURN queries built
from the same patterns, with PARTITION BY, WITHIN and SLIDE.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from acel.reference import oracle
from acel.reference.sase import parse_sase, run, run_sase, translate, two_step_trend
from acel.reference.sase.ast import SaseQuery
from acel.reference.sase.translate import return_outputs, return_variable
from hypothesis import given, settings
from hypothesis import strategies as st

from acel.lang.ast import CountStar, Query, ReturnAgg, ReturnItem, Window
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event
from acel.lang.parser import parse_query
from acel.testing import TEST_SCHEMA, streams
from acel.testing.strategies import aggregate_funcs

ATTRS = {"A": ("x", "y"), "B": ("x", "y"), "C": ("x",)}
HALF = settings(max_examples=max(settings().max_examples // 2, 1))
"""Half the profile's examples: each example runs the oracle (thorough: 1500 each)."""
OPS = ("<", "<=", ">", ">=", "=", "!=")


@st.composite
def _local(draw: Any, ref: str) -> str:
    """A local predicate over one reference (``v.x`` or ``v[i].x``, attribute spliced in)."""
    attr = draw(st.sampled_from(("x", "y")))
    target = ref.format(attr=attr)
    shape = draw(st.integers(0, 5))
    c = draw(st.integers(0, 3))
    if shape == 0:
        return f"{target} {draw(st.sampled_from(OPS))} {c}"
    if shape == 1:
        other = ref.format(attr=draw(st.sampled_from(("x", "y"))))
        return f"({target} < {c} OR {other} = {draw(st.integers(0, 3))})"
    if shape == 2:
        return f"NOT {target} = {c}"
    if shape == 3:
        return f"{target} + 1 > {c}"
    if shape == 4:
        return f"{target} IN (1, {c})"
    other = ref.format(attr=draw(st.sampled_from(("x", "y"))))
    return f"{target} - {other} >= {c - 2}"


@st.composite
def sase_texts(draw: Any, with_return: bool | None = None) -> str:
    """A SASE+ query of the translatable fragment, as text."""
    n = draw(st.integers(2, 4))
    comps: list[tuple[str, str, bool]] = []
    for i in range(n):
        comps.append((draw(st.sampled_from(("A", "B", "C"))), f"v{i}", draw(st.booleans())))
    decls = [f"{t}+ {v}[]" if kleene else f"{t} {v}" for t, v, kleene in comps]
    conjuncts: list[str] = []
    if draw(st.booleans()):
        conjuncts.append("[k]")
    for _t, v, kleene in comps:
        if draw(st.integers(0, 2)) == 0:
            ref = f"{v}[i].{{attr}}" if kleene else f"{v}.{{attr}}"
            conjuncts.append(draw(_local(ref)))
        if kleene and draw(st.integers(0, 2)) == 0:
            attr = draw(st.sampled_from(("x", "y")))
            op = draw(st.sampled_from((">", "<", "=")))
            if draw(st.booleans()):
                conjuncts.append(f"{v}[i].{attr} {op} {v}[i-1].{attr}")
            else:
                conjuncts.append(f"{v}[i-1].{attr} {op} {v}[i].{attr}")
    draw(st.randoms()).shuffle(conjuncts)
    text = f"PATTERN SEQ({', '.join(decls)})"
    if conjuncts:
        if draw(st.booleans()):
            vars_ = ", ".join(f"{v}[]" if k else v for _t, v, k in comps)
            text += f"\nWHERE skip_till_any_match({vars_}) {{ {' AND '.join(conjuncts)} }}"
        else:
            text += f"\nWHERE {' AND '.join(conjuncts)}"
    if draw(st.integers(0, 2)) == 0:
        text += f"\nWITHIN {draw(st.integers(1, 6))}" + draw(st.sampled_from(("", " EVENTS")))
    if with_return is None:
        with_return = draw(st.booleans())
    if with_return:
        items = []
        for _t, v, kleene in comps:
            if kleene:
                func = draw(aggregate_funcs() | st.just("COUNT*"))
                attr = draw(st.sampled_from(("x", "y")))
                items.append(f"COUNT({v}[])" if func == "COUNT*" else f"{func}({v}[].{attr})")
            else:
                items.append(f"{v}.{draw(st.sampled_from(('x', 'y')))}")
        text += "\nRETURN " + ", ".join(items)
    return text


def _oracle_rows(query: SaseQuery, stream: list[Event]) -> Counter[tuple[Any, ...]]:
    """The oracle's translated AGG events as (key, start, end, values) rows."""
    names = [o.name for o in return_outputs(query)]
    var = return_variable(query)
    out: Counter[tuple[Any, ...]] = Counter()
    for match in oracle.run(translate(query), stream, TEST_SCHEMA):
        assert isinstance(match, Match)
        (created,) = match.event.bag(var)
        values = tuple(created.get(n) for n in names)
        out[(match.key, match.event.start, match.event.end, values)] += 1
    return out


def _sase_rows(query: SaseQuery, stream: list[Event]) -> Counter[tuple[Any, ...]]:
    out: Counter[tuple[Any, ...]] = Counter()
    for row in run_sase(query, stream):
        assert isinstance(row, TrendRow)
        values = dict(row.values)
        items = tuple(v for name, v in row.values if name not in ("start", "end"))
        out[(row.key, values["start"], values["end"], items)] += 1
    return out


@HALF
@given(sase_texts(with_return=False), streams(TEST_SCHEMA, max_len=7))
def test_sase_matches_equal_the_oracle_on_the_translation(text: str, stream: list[Event]) -> None:
    query = parse_sase(text)
    assert run_sase(query, stream) == oracle.run(translate(query), stream, TEST_SCHEMA)


@HALF
@given(sase_texts(with_return=True), streams(TEST_SCHEMA, max_len=7))
def test_sase_return_rows_equal_the_oracle_agg(text: str, stream: list[Event]) -> None:
    query = parse_sase(text)
    assert _sase_rows(query, stream) == _oracle_rows(query, stream)


@st.composite
def trend_queries_of_the_fragment(draw: Any) -> Query:
    """An ACEL RETURN query whose formula is a translated SASE+ pattern."""
    sase = parse_sase(draw(sase_texts(with_return=False)))
    base = translate(sase)
    variables = [c.var for c in sase.components]
    items: list[ReturnItem] = [CountStar()]
    for _ in range(draw(st.integers(0, 3))):
        func = draw(aggregate_funcs())
        var = draw(st.sampled_from([*variables, "A", "B"]))
        attr = None if func == "COUNT" and draw(st.booleans()) else draw(st.sampled_from("xy"))
        items.append(ReturnAgg(func, var, attr))
    within = base.within
    slide = None
    if draw(st.booleans()):
        within = Window(draw(st.integers(1, 6)))
        slide = Window(draw(st.integers(1, 6)))
    return Query(base.formula, tuple(items), base.partition_by, within, slide)


@HALF
@given(trend_queries_of_the_fragment(), streams(TEST_SCHEMA, max_len=7))
def test_two_step_trend_equals_the_oracle(query: Query, stream: list[Event]) -> None:
    assert two_step_trend(query, stream, TEST_SCHEMA) == oracle.run(query, stream, TEST_SCHEMA)


@st.composite
def fragment_texts(draw: Any) -> str:
    """ACEL formulas of the two-step fragment beyond SASE+: shared variables, type
    variables, bare types, ``T+ AS v`` and one grouped iteration ``(c1 ; c2)+``."""
    n = draw(st.integers(1, 4))
    parts = []
    for _ in range(n):
        t = draw(st.sampled_from(("A", "B", "C")))
        v = draw(st.sampled_from(("p", "q")))
        parts.append(
            draw(st.sampled_from((t, f"{t} AS {v}", f"({t} AS {v})+", f"{t}+", f"{t}+ AS {v}")))
        )
    if n >= 2 and draw(st.booleans()):
        lo = draw(st.integers(0, n - 2))
        hi = draw(st.integers(lo + 1, n - 1))
        inner = parts[lo : hi + 1]
        if len(inner) > 1 or "+" not in inner[0]:  # ((A AS p)+)+ is nested deeper
            parts = parts[:lo] + [f"({' ; '.join(inner)})+"] + parts[hi + 1 :]
    text = " ; ".join(parts)
    filters = []
    for _ in range(draw(st.integers(0, 3))):
        var = draw(st.sampled_from(("A", "B", "C", "p", "q")))
        attr = draw(st.sampled_from(("x", "y")))
        if draw(st.booleans()):
            filters.append(f"{var}[{draw(st.sampled_from(('INC', 'DEC', 'SAME')))}({attr})]")
        else:
            filters.append(f"{var}[{attr} {draw(st.sampled_from(OPS))} {draw(st.integers(0, 3))}]")
    if filters:
        joiner = draw(st.sampled_from((" AND ", " OR ")))
        text = f"{text} FILTER {joiner.join(filters)}"
    if draw(st.booleans()):
        text = f"PROJECT[p, A]({text})"
    return text


@HALF
@given(fragment_texts(), st.booleans(), streams(TEST_SCHEMA, max_len=6))
def test_two_step_equals_the_oracle_on_the_whole_fragment(
    text: str, trend: bool, stream: list[Event]
) -> None:
    prefix = "RETURN COUNT(*), SUM(A.x), COUNT(p), MAX(q.y) PATTERN " if trend else ""
    query = parse_query(prefix + text)
    assert run(query, stream, TEST_SCHEMA) == oracle.run(query, stream, TEST_SCHEMA)
