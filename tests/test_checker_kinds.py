"""The value-kind rule of the checker (issue 17, "Data / Types", query side).

SUM and AVG add their inputs, so the checker rejects them over an attribute
whose kind is ``str`` or ``bool`` (schema kinds, and the kinds of AGG
outputs); MIN, MAX and COUNT take any kind.  Before, ``RETURN SUM(s.name)``
passed the checker and ended in a traceback, and with ``AGG`` the engines
disagreed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acel.app.cli import main
from acel.lang.checker import attribute_kinds, check_text, output_kind
from acel.lang.errors import AcelCheckError
from acel.lang.parser import parse_query
from acel.lang.schema import Schema

SCHEMA = Schema.of(
    {"SELL": ["name", "price", "ok"], "BUY": ["name", "price", "ok"]},
    {"name": "str", "price": "int", "ok": "bool", "type": "str"},
)
UNTYPED = Schema.of({"SELL": ["name", "price", "ok"], "BUY": ["name", "price", "ok"]})


def rejected(text: str, schema: Schema = SCHEMA) -> AcelCheckError:
    with pytest.raises(AcelCheckError) as info:
        check_text(text, schema)
    return info.value


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("RETURN SUM(s.name) PATTERN SELL AS s", 14, "SUM(s.name) adds numbers, but name holds str"),
        ("RETURN AVG(s.name) PATTERN SELL AS s", 14, "AVG(s.name) adds numbers, but name holds str"),
        ("RETURN sum(s.ok) PATTERN SELL AS s", 14, "SUM(s.ok) adds numbers, but ok holds bool"),
        ("RETURN COUNT(*), SUM(SELL.type) PATTERN SELL", 27, "but type holds str"),
        ("AGG m[t := SUM(s.name)](SELL AS s)", 18, "SUM(s.name) adds numbers"),
        ("AGG m[t := AVG(s.ok)](SELL AS s)", 18, "AVG(s.ok) adds numbers"),
        # an AGG output has the kind of its function: MAX of a str is a str
        ("RETURN SUM(m.t) PATTERN AGG m[t := MAX(s.name)](SELL AS s)", 14, "t holds str"),
        (
            "AGG n[u := AVG(m.t)](AGG m[t := MIN(s.name)](SELL AS s))",
            18,
            "AVG(m.t) adds numbers, but t holds str",
        ),
    ],
)
def test_sum_and_avg_over_text_or_bool_are_rejected(text: str, column: int, message: str) -> None:
    err = rejected(text)
    assert (err.line, err.column) == (1, column)
    assert message in err.message
    assert "MIN, MAX and COUNT take any kind" in err.message
    assert str(err).splitlines()[-1] == "  " + " " * (column - 1) + "^"


@pytest.mark.parametrize(
    "text",
    [
        "RETURN MIN(s.name), MAX(s.name), COUNT(s), SUM(s.price), AVG(s.price) PATTERN SELL AS s",
        "AGG m[lo := MIN(s.name), hi := MAX(s.ok), n := COUNT(s)](SELL AS s)",
        # COUNT gives an int, AVG a float: both add up
        "RETURN SUM(m.n), AVG(m.a) PATTERN AGG m[n := COUNT(s), a := AVG(s.price)](SELL AS s)",
        # a name that is text in the schema but an int AGG output is 'mixed': allowed
        "RETURN SUM(m.name) PATTERN AGG m[name := COUNT(s)](SELL AS s)",
    ],
)
def test_numbers_and_min_max_over_anything_pass(text: str) -> None:
    check_text(text, SCHEMA)


def test_without_kinds_nothing_is_rejected() -> None:
    check_text("RETURN SUM(s.name) PATTERN SELL AS s", UNTYPED)


def test_kinds_follow_agg_outputs() -> None:
    query = parse_query(
        "AGG z[n := AVG(C.k), c := COUNT(C), m := MAX(C.k), s := SUM(C.k), w := MIN(C.w)]"
        "(C AS C)"
    )
    kinds = attribute_kinds(query, {"k": "int", "w": "str"})
    assert kinds == {"k": "int", "w": "str", "n": "float", "c": "int", "m": "int", "s": "int"}
    assert attribute_kinds(query.formula, {"k": "float"})["s"] == "float"
    outputs = {o.name: o for o in query.formula.outputs}  # type: ignore[union-attr]
    assert output_kind(outputs["s"], {}) == "int"
    assert output_kind(outputs["s"], {"k": "str"}) == "mixed"
    assert output_kind(outputs["w"], {}) is None


def test_spark_backend_uses_the_checker_rule() -> None:
    import importlib

    layout = importlib.import_module("acel.spark_backend.layout")  # the result layout's kinds
    shaped = importlib.import_module("acel.spark_backend.shaped")  # the typed vars' kinds
    assert layout.attribute_kinds is attribute_kinds and shaped.attribute_kinds is attribute_kinds


def test_cli_check_with_kinds_from_data(capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).parent / "data" / "stocks.jsonl"
    code = main(["check", "RETURN SUM(s.name) PATTERN SELL AS s", "--data", str(data)])
    err = capsys.readouterr().err
    assert code == 2
    assert "line 1, column 14: SUM(s.name) adds numbers, but name holds str values" in err
    assert "Traceback" not in err
