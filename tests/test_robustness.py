"""Bad and extreme query text (issue 17, "Queries"): clean errors, never a traceback.

Each test here failed before the fix it names: infinite floats, integers past
Python's digit limit, deep nesting (a ``RecursionError`` in one stage or
another), long predicates, long query text taken for a file name, and the
caret on the wrong line after Unicode line breaks.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from acel.acea import engine
from acel.acea.engine import naive
from acel.compiler import compile_query
from acel.reference import oracle
from hypothesis import given
from strategies import formulas

from acel.app import cli
from acel.app.cli import describe, load_query_text, main
from acel.lang import ast
from acel.lang.checker import check_query
from acel.lang.errors import AcelSyntaxError, QueryError
from acel.lang.events import Event
from acel.lang.numbers import MAX_INT_DIGITS, int_from_digits, int_to_digits
from acel.lang.parser import MAX_DEPTH, parse_query, parse_query_located
from acel.lang.printer import format_query
from acel.lang.schema import Schema

SCHEMA = Schema.of({"A": ["v", "s"], "B": ["v", "s"]}, {"v": "int", "s": "str"})
DATA = Path(__file__).parent / "data"
STOCKS = DATA / "stocks.jsonl"
STOCKS_SCHEMA = DATA / "stocks_schema.json"
STREAM = [Event.make(i, {"type": "AB"[i % 2], "v": i, "s": "x"}) for i in range(3)]


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def syntax_error(text: str) -> AcelSyntaxError:
    with pytest.raises(AcelSyntaxError) as info:
        parse_query(text)
    return info.value


# ------------------------------------------------------------------ walk


def _walk_recursive(node: object) -> Iterator[object]:
    """The definition ``ast.walk`` had (pre-order, fields in order)."""
    import dataclasses

    yield node
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            yield from _values(getattr(node, f.name))


def _values(value: object) -> Iterator[object]:
    import dataclasses

    if isinstance(value, tuple):
        for item in value:
            yield from _values(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield from _walk_recursive(value)


@given(formulas())
def test_walk_keeps_the_recursive_order(formula: ast.Formula) -> None:
    assert list(ast.walk(formula)) == list(_walk_recursive(formula))


def test_walk_has_no_depth_limit() -> None:
    formula: ast.Formula = ast.Atom("A")
    for _ in range(20_000):
        formula = ast.Seq(formula, ast.Atom("B"))
    nodes = list(ast.walk(formula))
    assert len(nodes) == 40_001
    assert sum(isinstance(n, ast.Atom) and n.type == "B" for n in nodes) == 20_000


# ------------------------------------------------------------------ numbers


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("SELL WITHIN 1e400 EVENTS", 13, "the number 1e400 is too large"),
        ("SELL WITHIN -1e400 EVENTS", 14, "the number 1e400 is too large"),
        ("SELL AS x FILTER x[price > 1e999]", 28, "the number 1e999 is too large"),
        ("SELL AS x FILTER x[price IN (1, -1e999)]", 34, "the number 1e999 is too large"),
        ("SELL WITHIN 1e308 ON ts SLIDE 1.8e308 ON ts", 31, "too large: it would be infinite"),
    ],
)
def test_infinite_floats_are_query_errors(text: str, column: int, message: str) -> None:
    err = syntax_error(text)
    assert (err.line, err.column) == (1, column)
    assert message in err.message
    assert str(err).splitlines()[-1] == "  " + " " * (column - 1) + "^"


def test_the_largest_float_and_tiny_floats_still_work() -> None:
    query = parse_query("SELL AS x FILTER x[price < 1.7976931348623157e308 AND price > 1e-999]")
    assert parse_query(format_query(query)) == query


def test_cli_fmt_infinite_float_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "fmt", "SELL WITHIN 1e400 EVENTS")
    assert code == 2 and out == ""
    assert "line 1, column 13: the number 1e400 is too large" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("template", "column"),
    [
        ("SELL WITHIN {} EVENTS", 13),
        ("SELL AS x FILTER x[price > {}]", 28),
        ("SELL AS x FILTER x[price IN (1, -{})]", 34),
        ("SELL AS x FILTER x[price * {} > 1]", 28),
    ],
)
def test_integers_over_the_digit_limit_are_query_errors(template: str, column: int) -> None:
    err = syntax_error(template.format("9" * (MAX_INT_DIGITS + 1)))
    assert (err.line, err.column) == (1, column)
    assert f"the integer has {MAX_INT_DIGITS + 1:,} digits" in err.message
    assert len(str(err).splitlines()[1]) < 120  # the long line is shown in part


def test_integers_at_the_digit_limit_round_trip_whatever_the_process_limit() -> None:
    digits = "9" * MAX_INT_DIGITS
    text = f"SELL AS x FILTER x[price < -{digits}] WITHIN {digits} EVENTS"
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)  # a program may lower it; the parser does not care
    try:
        query = parse_query(text)
        printed = format_query(query)
        assert parse_query(printed) == query
        assert f"WITHIN {digits} EVENTS" in printed and f"< -{digits}]" in printed
    finally:
        sys.set_int_max_str_digits(old)
    assert query.within is not None and query.within.size == 10**MAX_INT_DIGITS - 1
    assert parse_query("A WITHIN " + "0" * 5000 + "7 EVENTS").within == ast.Window(7)


@pytest.mark.parametrize("digits", [1, 599, 600, 601, 1199, 1200, 1201, 4300, 9001])
def test_chunked_int_conversion(digits: int) -> None:
    text = "7" + "0123456789" * (digits // 10) + "5" * (digits % 10 - 1 if digits % 10 else 9)
    text = text[:digits]
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        value = int(text)
        assert int_from_digits(text) == value
        assert int_to_digits(value) == str(value)
        assert int_to_digits(-value) == str(-value)
    finally:
        sys.set_int_max_str_digits(old)


def test_cli_check_long_integer_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "SELL WITHIN " + "9" * 4301 + " EVENTS")
    assert code == 2
    assert "line 1, column 13: the integer has 4,301 digits" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------ nesting

# Families of deep queries: each ``make(k)`` nests deeper as k grows.
FAMILIES: dict[str, Callable[[int], str]] = {
    "plus": lambda k: "A" + "+" * k,
    "contig_plus": lambda k: "A" + ":+" * k,
    "as": lambda k: "A" + " AS x" * k,
    "seq": lambda k: " ; ".join(["A"] * k),
    "contig": lambda k: " : ".join(["A"] * k),
    "or": lambda k: " OR ".join(["A"] * k),
    "and": lambda k: " AND ".join(["A"] * k),
    "filters": lambda k: "A AS x" + " FILTER x[v > 1]" * k,
    "filter_and": lambda k: "A AS x FILTER " + " AND ".join(["x[v > 1]"] * k),
    "filter_or": lambda k: "A AS x FILTER " + " OR ".join(["x[v > 1]"] * k),
    "pred_and": lambda k: "A AS x FILTER x[" + " AND ".join(["v > 1"] * k) + "]",
    "pred_or": lambda k: "A AS x FILTER x[" + " OR ".join(["v > 1"] * k) + "]",
    "not": lambda k: "A AS x FILTER x[" + "NOT " * k + "v > 1]",
    "arith": lambda k: "A AS x FILTER x[" + " + ".join(["v"] * k) + " > 1]",
    "minus": lambda k: "A AS x FILTER x[" + "- " * k + "v > 1]",
    "agg": lambda k: "AGG m[c := COUNT(A)](" * k + "A" + ")" * k,
    "project": lambda k: "PROJECT[A](" * k + "A" + ")" * k,
    "project_attrs": lambda k: "PROJECT A[v](" * k + "A" + ")" * k,
    "nested_seq": lambda k: "(A AS x ; " * k + "B" + ")" * k,
    "next": lambda k: " ; ".join(["NEXT(A)"] * k),
    "return": lambda k: "RETURN COUNT(*), SUM(x.v) PATTERN (A AS x)+ FILTER x["
    + " AND ".join(["v > 1"] * k)
    + "] WITHIN 3 EVENTS",
}


def _parses(text: str) -> bool:
    try:
        parse_query(text)
    except AcelSyntaxError as err:
        assert "deeper than" in err.message, err
        return False
    return True


def deepest(make: Callable[[int], str]) -> int:
    """The largest ``k`` the parser accepts (binary search on the depth check)."""
    lo, hi = 1, 2 * MAX_DEPTH
    assert _parses(make(lo)) and not _parses(make(hi))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _parses(make(mid)) else (lo, mid)
    return lo


def _padded(frames: int, fn: Callable[[], Any]) -> Any:
    """``fn()`` called from ``frames`` more stack frames (a caller deep in its own code)."""
    return fn() if frames == 0 else _padded(frames - 1, fn)


def _stages(text: str, compile_too: bool) -> dict[str, Callable[[], Any]]:
    query, locations = parse_query_located(text)
    stages: dict[str, Callable[[], Any]] = {
        "parse": lambda: parse_query_located(text),
        "fmt": lambda: parse_query(format_query(query)) == query,
        "hash": lambda: hash(query),
        "pickle": lambda: pickle.loads(pickle.dumps(query)) == query,  # Spark ships queries
        "check": lambda: check_query(query, SCHEMA, locations=locations, text=text),
        "describe": lambda: describe(query),
    }
    if compile_too:
        stages["compile"] = lambda: compile_query(query, SCHEMA)
        stages["oracle"] = lambda: oracle.run(query, STREAM, SCHEMA)
        stages["optimized"] = lambda: engine.run(query, STREAM, SCHEMA)
        # an equal query parsed anew: the engine's cache compares the two ASTs
        stages["optimized again"] = lambda: engine.run(parse_query(text), STREAM, SCHEMA)
    return stages


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_stage_handles_the_deepest_query_with_the_default_recursion_limit(
    family: str,
) -> None:
    """The nesting limit is low enough for every stage, with 150 frames to spare."""
    assert sys.getrecursionlimit() == 1000
    make = FAMILIES[family]
    k = deepest(make)
    text = make(k)
    assert "deeper than 200 levels" in syntax_error(make(k + 1)).message
    # φ+ grows its automaton quadratically (A+ nested 199 times: 40,000
    # transitions) and the engine's ambiguity test with it, so the iterations
    # are compiled less deep; AS, AGG and PROJECT cover deep unary operators.
    if family in ("plus", "contig_plus"):
        for stage in _stages(text, compile_too=False).values():
            _padded(150, stage)
        text = make(12)
    results = {name: _padded(150, stage) for name, stage in _stages(text, True).items()}
    assert results["fmt"] is True and results["pickle"] is True  # parse(print(q)) == q
    assert results["oracle"] == results["optimized"]  # naive runs walk no AST after compile
    assert sys.getrecursionlimit() == 1000


@pytest.mark.parametrize(
    "family",
    ["plus", "contig_plus", "as", "seq", "contig", "or", "and", "filters", "not", "agg", "project"],
)
@pytest.mark.parametrize("k", [500, 999, 1000, 5000])
def test_deep_chains_are_clean_errors(family: str, k: int) -> None:
    """The issue's chains 500 to 999 deep of :+ AS ; : OR AND FILTER NOT AGG PROJECT."""
    err = syntax_error(FAMILIES[family](k))
    assert err.line == 1 and err.column is not None
    assert f"deeper than {MAX_DEPTH} levels" in err.message
    assert str(err).splitlines()[-1].endswith("^")


@pytest.mark.parametrize("family", ["minus", "arith", "pred_and", "pred_or", "filter_and"])
def test_deep_predicates_and_nesting_are_clean_errors(family: str) -> None:
    for k in (500, 999, 1000):
        assert "deeper than" in syntax_error(FAMILIES[family](k)).message


def test_the_error_points_at_the_part_too_deep() -> None:
    text = "A ;\n  " + "(" * 250 + "A AS x" + " AS x" * 250 + ")" * 250
    err = syntax_error(text)
    assert err.line == 2
    assert err.column == 3 + 250  # the inner formula: parentheses do not count


def test_parentheses_do_not_count() -> None:
    depth = 20_000
    assert parse_query("(" * depth + "A" + ")" * depth).formula == ast.Atom("A")
    inner = "x[" + "(" * 5000 + "v" + ")" * 5000 + " > 1]"
    query = parse_query("A AS x FILTER " + inner)
    assert parse_query(format_query(query)) == query


def test_printing_never_makes_a_query_too_deep() -> None:
    """``- - v`` prints as ``-(-v)``: the added parentheses must not break ``fmt``."""
    k = deepest(FAMILIES["minus"])
    query = parse_query(FAMILIES["minus"](k))
    assert "-(-(-" in format_query(query)
    assert parse_query(format_query(query)) == query


def test_cli_check_deep_postfix_chain(capsys: pytest.CaptureFixture[str]) -> None:
    for k in (500, 999):
        code, _, err = run(capsys, "check", "A" + "+" * k)
        assert code == 2 and "deeper than 200 levels" in err and "Traceback" not in err
    code, out, _ = run(capsys, "check", "A" + "+" * 150)
    assert code == 0 and out.startswith("ok")


# ------------------------------------------------------------ long predicates


def test_long_predicate_is_rejected_before_any_stage() -> None:
    text = "SELL AS x FILTER x[" + " AND ".join(f"price > {i}" for i in range(250)) + "]"
    err = syntax_error(text)
    assert "deeper than 200 levels" in err.message


def test_long_predicate_within_the_limit_runs_on_every_engine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    comparisons = " AND ".join(f"v > {i}" for i in range(-190, 0))
    text = f"A AS x FILTER x[{comparisons}]"
    query = parse_query(text)
    results = {
        name: module.run(query, STREAM, SCHEMA) for name, module in
        (("oracle", oracle), ("automaton", naive), ("optimized", engine))
    }
    assert len(results["oracle"]) == 2
    assert results["automaton"] == results["oracle"] == results["optimized"]
    data = tmp_path / "events.jsonl"
    data.write_text('{"type": "A", "v": 3, "s": "x"}\n{"type": "B", "v": 4, "s": "y"}\n')
    code, out, err = run(capsys, "run", text, "--data", data)
    assert code == 0, err
    assert len(out.splitlines()) == 1


# ------------------------------------------------------------ query text or path

SEVEN_GROUPS = (
    " : ".join(f"((SELL OR BUY) AS g{i} FILTER g{i}[price > {i}])" for i in range(7))
    + " WITHIN 1001 EVENTS"
)


@pytest.mark.parametrize(
    "text", [SEVEN_GROUPS, " ".join(["(SELL OR BUY) :"] * 7) + " SELL WITHIN 1001 EVENTS"]
)
def test_long_query_text_is_not_opened_as_a_file(
    capsys: pytest.CaptureFixture[str], text: str
) -> None:
    assert load_query_text(text) == text
    code, out, err = run(capsys, "check", text, "--schema", STOCKS_SCHEMA)
    assert code == 0, err
    assert out.startswith("ok: types SELL, BUY")
    code, out, err = run(capsys, "fmt", text)
    assert code == 0 and out.endswith("WITHIN 1001 EVENTS\n")
    code, out, err = run(capsys, "run", text, "--data", STOCKS)
    assert code == 0 and "Traceback" not in err


def test_the_seven_groups_are_longer_than_a_file_name() -> None:
    assert len(SEVEN_GROUPS.encode()) > 255 and "/" not in SEVEN_GROUPS


def test_query_text_with_slashes_and_long_parts() -> None:
    text = "SELL AS x FILTER x[price / 2 > 1 AND " + " AND ".join(["price > 1"] * 40) + "]"
    assert len(text) > 255 and "/" in text
    assert load_query_text(text) == text
    huge = "A ; " * 1100 + "A"  # longer than PATH_MAX too
    assert load_query_text(huge) == huge


def test_query_files_still_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "q.acel"
    path.write_text("SELL ; BUY\n", encoding="utf-8")
    assert load_query_text(str(path)) == "SELL ; BUY\n"
    monkeypatch.chdir(tmp_path)
    Path("SELL").write_text("BUY", encoding="utf-8")  # a file named like a query
    assert load_query_text("SELL") == "BUY"
    assert load_query_text("BUY") == "BUY"
    with pytest.raises(cli.UsageError, match="not found"):
        load_query_text("missing.acel")
    assert load_query_text("x" * 300 + ".acel") == "x" * 300 + ".acel"  # no such name here


def test_query_text_that_is_not_a_file_name() -> None:
    for text in ("A\nB", "A\0", "", "A \udc80"):
        assert load_query_text(text) == text


# ------------------------------------------------------------ caret lines

BREAKS = ["\r", "\v", "\f", "\x85", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e"]


@pytest.mark.parametrize("brk", BREAKS)
def test_caret_is_on_the_line_the_parser_counts(brk: str) -> None:
    text = f"SELL AS x FILTER x[name = 'a{brk}b']\n  ; BUY"
    err = syntax_error(text)
    assert (err.line, err.column) == (2, 3)
    lines = str(err).splitlines()
    assert lines[1] == "    ; BUY" and lines[2] == "    ^"


@pytest.mark.parametrize("brk", BREAKS)
def test_caret_after_a_line_break_character_on_the_same_line(brk: str) -> None:
    text = f"SELL AS x FILTER x[name = 'a{brk}b' AND price >] ; BUY"
    err = syntax_error(text)
    column = text.index("]") + 1
    assert (err.line, err.column) == (1, column)
    lines = str(err).splitlines()
    assert len(lines) == 3
    assert lines[2].index("^") == lines[1].index("]")  # the caret is under the ']'
    assert all(ch.isprintable() for ch in lines[1])


def test_check_errors_use_the_same_lines() -> None:
    from acel.lang.checker import check_text
    from acel.lang.errors import AcelCheckError

    text = "A AS x FILTER x[s = '\u2028\r']\n  FILTER y[v > 1]"
    with pytest.raises(AcelCheckError) as info:
        check_text(text, SCHEMA)
    err = info.value
    assert (err.line, err.column) == (2, 10)
    assert str(err).splitlines()[1:] == ["    FILTER y[v > 1]", "           ^"]


@pytest.mark.parametrize("ending", ["\n", "\n\n", "\r\n", "  -- a comment\n", "\n-- c\n\n"])
def test_error_at_the_end_of_a_query_ending_in_a_newline_shows_the_line(ending: str) -> None:
    err = syntax_error("SELL ;\n  BUY ;" + ending)
    assert (err.line, err.column) == (2, 8)
    assert str(err).splitlines()[1:] == ["    BUY ;" + ending.split("\n")[0].rstrip("\r"), "         ^"]


def test_tabs_keep_the_caret_aligned() -> None:
    err = syntax_error("SELL\t;\t;")
    assert str(err).splitlines()[1:] == ["  SELL\t;\t;", "      \t \t^"]


def test_query_error_without_text_or_line() -> None:
    assert str(QueryError("bad")) == "bad"
    assert str(QueryError("bad", line=3, column=1, text="one line")) == "line 3, column 1: bad"
