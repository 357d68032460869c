"""Mutated-query fuzzing (issue 17): bad query text gives an AcelError, never a traceback.

Seeds are the project's example queries (``examples/**/*.acel``) and query
texts printed from Hypothesis-generated ASTs.  Each is mutated (tokens
deleted, duplicated, swapped; operators and keywords inserted; a token or an
operator repeated up to 1,000 times; odd numbers; odd characters and Unicode
line breaks; truncation) and then

* in-process: printed (``fmt``), checked against a schema, and, when it
  checks and is small, compiled and run on a tiny stream by the optimized
  engine; every exception must be an :class:`acel.lang.errors.AcelError` with a
  message, and whatever parses must print to text that parses to the same AST;
* through the command line (``acel.app.cli.main``, fewer examples): exit
  status 0 or 2 and no traceback on stderr.

CI-sized by default (the ``dev``/``ci`` profiles: a few seconds); run with
``HYPOTHESIS_PROFILE=thorough`` for ten times more.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acel.acea import engine
from acel.compiler import compile_query
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark.exceptions import UnexpectedInput
from strategies import TEST_SCHEMA, queries, raw_queries, trend_queries

from acel.app.cli import main
from acel.lang import ast
from acel.lang.checker import check_query
from acel.lang.errors import AcelError
from acel.lang.events import Event
from acel.lang.parser import _lark, parse_query_located
from acel.lang.printer import format_query
from acel.lang.schema import Schema
from acel.workload import has_headers, parse_workload

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("**/*.acel"))
# every example query, named by its file (a workload file: each of its queries)
EXAMPLE_QUERIES: dict[str, str] = {}
for _path in EXAMPLES:
    _text = _path.read_text(encoding="utf-8")
    if has_headers(_text):
        for _q in parse_workload(_text, str(_path)):
            EXAMPLE_QUERIES[f"{_path.name}:{_q.name}"] = _q.text.strip()
    else:
        EXAMPLE_QUERIES[_path.name] = _text
EXAMPLE_TEXTS = list(EXAMPLE_QUERIES.values())

# ------------------------------------------------------------------ schema


def _names_in(text: str) -> tuple[dict[str, set[str]], set[str]]:
    """The types and the attribute names a well-formed query uses."""
    query, _ = parse_query_located(text)
    types: dict[str, set[str]] = {}
    attrs: set[str] = set(query.partition_by)
    for window in (query.within, query.slide):
        if window is not None and window.attr is not None:
            attrs.add(window.attr)
    for item in query.returns or ():
        if isinstance(item, ast.ReturnAgg) and item.attr is not None:
            attrs.add(item.attr)
    for node in ast.walk(query.formula):
        if isinstance(node, (ast.Atom, ast.Next)):
            types.setdefault(node.type, set())
        elif isinstance(node, ast.Attr):
            attrs.add(node.name)
        elif isinstance(node, (ast.BagPred, ast.AggOutput)) and node.attr is not None:
            attrs.add(node.attr)
        elif isinstance(node, ast.ProjectAttrs):
            attrs.update(node.attrs)
    return types, attrs


def _universe() -> Schema:
    """One schema under which every example (and TEST_SCHEMA's queries) checks.

    Every type carries every attribute some seed mentions, so a mutated query
    is rejected for what the mutation broke, not for a schema mismatch; kinds
    come from the project's schema files (``str`` names exercise the SUM rule).
    """
    types: dict[str, set[str]] = {t: set(a) for t, a in TEST_SCHEMA.types}
    attrs: set[str] = set(TEST_SCHEMA.all_attributes()) - {"type"}
    for text in EXAMPLE_TEXTS:
        found, used = _names_in(text)
        for name in found:
            types.setdefault(name, set())
        attrs |= used
    attrs -= {"type"}
    kinds: dict[str, str] = {}
    for path in (REPO / "examples" / "paper" / "schema.json", REPO / "tests" / "data" / "stocks_schema.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        for attr, kind in data.get("kinds", {}).items():
            kinds[attr] = kind if kinds.get(attr, kind) == kind else "mixed"
    kinds = {a: k for a, k in kinds.items() if k != "mixed"}
    return Schema.of({t: sorted(attrs) for t in types}, kinds)


SCHEMA = _universe()
KINDS = dict(SCHEMA.kinds)


def _value(attr: str, i: int) -> Any:
    kind = KINDS.get(attr)
    return {"str": "ab"[i % 2], "bool": i % 2 == 0, "float": i + 0.5}.get(kind, i % 3)


STREAM = [
    Event.make(i, {"type": name, **{a: _value(a, i) for a in SCHEMA.attributes(name)[1:]}})
    for i, name in enumerate(SCHEMA.type_names()[:3] * 2)
]

# ------------------------------------------------------------------ mutations

OPERATORS = (
    "; : + :+ AS FILTER OR AND NOT IN ( ) [ ] , . := * / % - = != < <= > >= RETURN PATTERN "
    "PARTITION BY WITHIN SLIDE EVENTS ON AGG PROJECT NEXT SAME INC DEC TRUE FALSE COUNT(*) "
    "x A SELL 'it''s' 0 -1 2.5 ? {2} {1,3} {2,} :{2} SELECT MAX NEXT LAST STRICT AFTER MATCH "
    "SKIP TO RUNNING PREV FIRST LAST"
).split()
ODD_NUMBERS = (
    "1e400", "-1e999", "9" * 4301, "9" * 4300, "0" * 5000 + "1", "1e-400", "1.7976931348623157e308",
    "1.8e308", "00", "-0", "0.0", "1_000", "0x10", "1e", "2.", ".", "-", "--1", "1e+", "١٢",
)
ODD_CHARS = (
    "\x00", "\t", "\r", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029", "\ufeff", "\u00a0", "é",
    "'", "''", '"', "$", "#", "`", "\\", "--", "-- comment\n", "😀", "\r\n", "\n", "\udc80", "ǅ",
)
LINE_BREAKS = ("\n", "\r", "\r\n", "\v", "\f", "\x85", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e")
REPEATS = (2, 3, 50, 150, 199, 200, 201, 500, 1000)
REPEATED = ("+", ":+", " AS x", " ; A", " : A", " OR A", " AND A", "NOT ", "- ", "(", ")",
            " FILTER x[v > 1]", " AND x[v > 1]", " AND v > 1", " + v", "AGG m[c := COUNT(A)](",
            # issue 35: quantifiers, optional elements and stars, nested bounds
            " ; B?", " ; B*", " ; (B AS y)?", "{2,5}", "{1,30}", "{1000000}", "{10,}")
HOSTILE_SEEDS = (
    "A ; " + " ; ".join(["B?"] * 30) + " ; C",
    "A ; " + " ; ".join(f"(B AS b{i})?" for i in range(20)) + " ; C",
    "A ; " + " ; ".join(["B*"] * 25) + " ; C",
    "A{2,5}{3,7}{10,20}",
    "((A{1,30}){1,30}){1,30}",
    "A{20000}",
    "A{100000} ; B",
    "A{1,3000}",
    "A{1000000,}",
    "RETURN COUNT(*) PATTERN (A AS x)+ FILTER x[v > RUNNING AVG(v)]",
    "(A AS x)+ FILTER x[v > RUNNING SUM(v)] WITHIN 1000000000 EVENTS",
    "RETURN COUNT(*) PATTERN ((A AS x)+ ; B)+ FILTER x[v > PREV(v)]",
    "RETURN COUNT(*) PATTERN (A AS x)+ ; (B AS y) FILTER y[v >= FIRST(x.v) AND v <= LAST(x.v)]",
    "SELECT MAX (A AS x)+ ; B",
    "SELECT NEXT (A AS x)+ ; B",
    "SELECT LAST (A AS x)+ ; B",
    "SELECT STRICT (A AS x)+ ; B",
    "(A AS x)+ ; B AFTER MATCH SKIP TO LAST x",
)
"""The shapes of issue 35's hostile-input probe, as seeds (in-process they run on a tiny
stream: what they must never do is crash)."""


def _tokens(text: str) -> list[str]:
    """The text cut into lark tokens, blanks and comments kept as separators."""
    try:
        toks = list(_lark().lex(text))
    except UnexpectedInput:
        return text.split(" ")
    out: list[str] = []
    position = 0
    for tok in toks:
        start = tok.start_pos or 0
        if start > position:
            out.append(text[position:start])
        out.append(str(tok))
        position = tok.end_pos or start + len(tok)
    out.append(text[position:])
    return out


@st.composite
def mutated(draw: Any, seed: str) -> str:
    """``seed`` after one to three random mutations."""
    text = seed
    for _ in range(draw(st.integers(1, 3))):
        tokens = _tokens(text)
        kind = draw(st.integers(0, 9))
        i = draw(st.integers(0, max(len(tokens) - 1, 0)))
        j = draw(st.integers(0, max(len(tokens) - 1, 0)))
        if kind == 0 and tokens:  # delete a token
            del tokens[i]
        elif kind == 1 and tokens:  # duplicate a token
            tokens.insert(i, tokens[i])
        elif kind == 2 and tokens:  # swap two tokens
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == 3:  # insert an operator or keyword
            tokens.insert(i, f" {draw(st.sampled_from(OPERATORS))} ")
        elif kind == 4:  # repeat a token many times
            tokens.insert(i, (tokens[j] if tokens else "A") * draw(st.sampled_from(REPEATS)))
        elif kind == 5:  # repeat an operator many times
            tokens.insert(i, draw(st.sampled_from(REPEATED)) * draw(st.sampled_from(REPEATS)))
        elif kind == 6:  # an odd number
            numbers = [k for k, t in enumerate(tokens) if t[:1].isdigit()] or [i]
            k = draw(st.sampled_from(numbers))
            tokens[k:k + 1] = [draw(st.sampled_from(ODD_NUMBERS))]
        elif kind == 7:  # an odd character anywhere
            flat = "".join(tokens)
            at = draw(st.integers(0, len(flat)))
            tokens = [flat[:at], draw(st.sampled_from(ODD_CHARS)), flat[at:]]
        elif kind == 8:  # other line breaks
            brk = draw(st.sampled_from(LINE_BREAKS))
            tokens = ["".join(tokens).replace(draw(st.sampled_from(["\n", " "])), brk)]
        else:  # truncate
            flat = "".join(tokens)
            tokens = [flat[: draw(st.integers(0, len(flat)))]]
        text = "".join(tokens)
    return text


def generated_texts() -> st.SearchStrategy[str]:
    """Query texts printed from generated ASTs (well-formed or arbitrary)."""
    return st.one_of(
        queries().map(format_query), trend_queries().map(format_query), raw_queries.map(_printable)
    )


def _printable(query: ast.Query) -> str:
    try:
        return format_query(query)
    except ValueError:  # e.g. an empty RETURN list: no text at all
        return "A"


seeds = st.one_of(st.sampled_from(EXAMPLE_TEXTS), st.sampled_from(HOSTILE_SEEDS),
                  generated_texts())
texts = seeds.flatmap(lambda seed: st.one_of(st.just(seed), mutated(seed)))

# ------------------------------------------------------------------ in-process


@dataclass
class Outcome:
    stage: str
    error: AcelError | None = None


def _small(query: ast.Query) -> bool:
    """Worth compiling and running in a fuzz test (iterations, AND and NEXT multiply states)."""
    nodes = list(ast.walk(query))
    loops = sum(isinstance(n, (ast.Plus, ast.ContigPlus, ast.Next)) for n in nodes)
    ands = sum(isinstance(n, ast.And) for n in nodes)
    return len(nodes) <= 80 and loops <= 3 and ands <= 2 and (ands == 0 or loops <= 1)


def _run_schema(query: ast.Query) -> Schema:
    """The fuzz schema cut down to the query's types (NEXT expands over every type)."""
    used = {n.type for n in ast.walk(query) if isinstance(n, (ast.Atom, ast.Next))}
    return Schema.of({t: SCHEMA.attributes(t)[1:] for t in sorted(used)}, KINDS)


def process(text: str) -> Iterator[Outcome]:
    """Every stage a query goes through; stops at the first AcelError."""
    try:
        query, locations = parse_query_located(text)
    except AcelError as error:
        yield Outcome("parse", error)
        return
    printed = format_query(query)
    again, _ = parse_query_located(printed)
    assert again == query, (text, printed)
    yield Outcome("fmt")
    try:
        check_query(query, SCHEMA, locations=locations, text=text)
    except AcelError as error:
        yield Outcome("check", error)
        return
    yield Outcome("check")
    if not _small(query):
        return
    schema = _run_schema(query)
    try:
        compile_query(query, schema)
        engine.run(query, [e for e in STREAM if schema.has_type(e.type or "")], schema)
    except AcelError as error:
        yield Outcome("run", error)
        return
    yield Outcome("run")


def _assert_clean(text: str) -> list[Outcome]:
    try:
        outcomes = list(process(text))
    except Exception as error:  # anything but an AcelError is a bug
        raise AssertionError(f"{type(error).__name__} on query {text!r}") from error
    for outcome in outcomes:
        if outcome.error is not None:
            message = str(outcome.error)
            assert message.strip(), (text, outcome)
            assert "Traceback" not in message
    return outcomes


@settings(suppress_health_check=list(HealthCheck))
@given(texts)
def test_mutated_queries_fail_cleanly_in_process(text: str) -> None:
    _assert_clean(text)


@pytest.mark.parametrize("text", EXAMPLE_TEXTS, ids=list(EXAMPLE_QUERIES))
def test_every_example_checks_compiles_and_runs_under_the_fuzz_schema(text: str) -> None:
    """Every example query (each query of a workload file too)."""
    outcomes = _assert_clean(text)
    assert [o.stage for o in outcomes][:2] == ["fmt", "check"]
    assert all(o.error is None for o in outcomes)


# ------------------------------------------------------------------ command line

_CLI_EXAMPLES = max(20, settings.default.max_examples // 10)
_WORKDIR = tempfile.mkdtemp(prefix="acel-fuzz-")  # no file there shares a query's name
atexit.register(shutil.rmtree, _WORKDIR, ignore_errors=True)  # made at import: removed at exit
_SCHEMA_FILE = os.path.join(_WORKDIR, "schema.json")
with open(_SCHEMA_FILE, "w", encoding="utf-8") as _f:
    json.dump(SCHEMA.to_json(), _f)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(_WORKDIR)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse's usage errors
                code = int(exit_.code or 0)
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


COMMANDS: dict[str, Callable[[str], list[str]]] = {
    "fmt": lambda text: ["fmt", "--", text],
    "check": lambda text: ["check", "--schema", _SCHEMA_FILE, "--", text],
}


@settings(max_examples=_CLI_EXAMPLES, suppress_health_check=list(HealthCheck))
@given(texts, st.sampled_from(sorted(COMMANDS)))
def test_mutated_queries_fail_cleanly_through_the_cli(text: str, command: str) -> None:
    code, out, err = _cli(COMMANDS[command](text))
    assert code in (0, 2), (text, code, err)
    assert "Traceback" not in err and "Traceback" not in out
    if code == 2:
        assert err.strip(), text  # a message saying what is wrong
        assert err.startswith(f"acel {command}: ") or err.startswith("usage:"), err
    else:
        assert err == "" and out.strip()
