"""Issue 17, "Data", "Output and interruption", "Faults and resources": each report
reproduced as a user hits it (``acel run`` in-process through ``main``, a subprocess
where signals or memory matter, files on disk), in every engine.

Each test failed on the code before the fix it names: ``SUM`` over text
concatenating in one engine and raising in another, an attribute mixing kinds
accepted, duplicate JSON keys keeping the last value, a 4,301-digit integer as a
``json.loads`` traceback, a count of 4,516 digits dying at output with 0 bytes
written, an empty file reported as a query error, a BOM rejecting a file, results
written in place (a full disk or Ctrl-C leaving a file that looks finished), the
progress line stuck at 0 events and a runaway run silent until the kernel killed
it.  The Spark side of each is in the last section (marked ``spark``).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import acel
from acel.app import reporting
from acel.app.cli import main
from acel.engines import in_process_engines
from acel.io.values import int_text
from acel.lang.errors import DataError

DATA = Path(__file__).parent / "data"
STOCKS = DATA / "stocks.jsonl"
ENGINES = in_process_engines()
"""Every engine of the registry that runs in this process (Spark has its own tests)."""
ROOT = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str, kind: str = "data error") -> str:
    """The error line of a failed run (the only line, or after the 'stopped' line)."""
    lines = [line for line in err.splitlines() if f": {kind}: " in line or f"{kind}:" in line]
    assert lines, err
    assert "Traceback" not in err
    return lines[0]


def write_lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# ===================================================================== Data: types


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "query", ["RETURN SUM(s.name) PATTERN SELL AS s", "AGG Z[t := SUM(s.name)](SELL AS s)"]
)
def test_sum_of_a_text_attribute_is_a_query_error_in_every_engine(
    capsys: pytest.CaptureFixture[str], engine: str, query: str
) -> None:
    """Was: a traceback (RETURN), "AMZNINTL" on two engines and a crash on the oracle (AGG)."""
    code, out, err = run(capsys, "run", query, "--data", STOCKS, "--engine", engine)
    assert code == 2 and out == ""
    assert re.search(
        r"query error: line 1, column \d+: SUM\(s\.name\) adds numbers, but name holds str values",
        err,
    ), err
    assert "AMZN" not in err and "Traceback" not in err


MIXED = [
    {"type": "SELL", "name": "AMZN", "price": 101},
    {"type": "SELL", "name": "INTL", "price": "x"},
    {"type": "SELL", "name": "MSFT", "price": 200},
]
MIXED_PROBLEM = (
    "row 2{line2}, column 'price': value is str, but 'price' is int in row 1{line1}: "
    "an attribute holds one kind of value (int and float mix as float)"
)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "query",
    [
        "RETURN SUM(s.price) PATTERN SELL AS s",
        "RETURN MAX(s.price) PATTERN SELL AS s",
        "SELL AS x FILTER x[price > 150]",
    ],
)
def test_an_attribute_mixing_int_and_text_is_a_data_error_naming_both_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, query: str
) -> None:
    """Was: accepted, then SUM/MAX raised TypeError in every engine (and FILTER kept 1 match)."""
    path = write_lines(tmp_path / "mixed.jsonl", *MIXED)
    code, out, err = run(capsys, "run", query, "--data", path, "--engine", engine)
    assert code == 2 and out == ""
    assert err == (
        f"acel run: data error: {path}: 1 bad row:\n  "
        + MIXED_PROBLEM.format(line1=" (line 1)", line2=" (line 2)")
        + "\n"
    )


def _kindless_schema(tmp_path: Path) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"SELL": ["name", "price"], "BUY": ["name", "price"]}))  # no kinds
    return path


def test_mixed_kinds_are_refused_for_every_input_kind(tmp_path: Path) -> None:
    """Files, records, DataFrames, with and without a schema (the rule is at read time)."""
    import pandas as pd

    query = "RETURN MAX(s.price) PATTERN SELL AS s"
    jsonl = write_lines(tmp_path / "mixed.jsonl", *MIXED)
    array = tmp_path / "mixed.json"
    array.write_text(json.dumps(MIXED))
    frame = pd.DataFrame(MIXED)
    assert frame["price"].dtype == object
    schema = _kindless_schema(tmp_path)
    located = MIXED_PROBLEM.format(line1=" (line 1)", line2=" (line 2)")
    plain = MIXED_PROBLEM.format(line1="", line2="")
    cases: list[tuple[Any, Any, str]] = [
        (jsonl, None, located),
        (jsonl, schema, located),
        (jsonl, {"SELL": ["name", "price"]}, located),
        (array, None, plain),
        (MIXED, None, plain),
        (MIXED, schema, plain),
        (frame, None, plain),
        (frame, {"SELL": ["name", "price"]}, plain),
    ]
    for data, given, problem in cases:
        for engine in ENGINES:
            with pytest.raises(DataError) as info:
                acel.run(query, data, engine, schema=given).to_list()
            assert str(info.value).endswith("1 bad row:\n  " + problem), (data, given, engine)


def test_a_csv_column_has_one_kind(tmp_path: Path) -> None:
    """CSV cells are text: a column with one non-number is a text column (as on Spark);
    with a schema saying int, the cell is a wrong-kind error naming its row and line."""
    path = tmp_path / "mixed.csv"
    path.write_text("type,price\nSELL,101\nSELL,x\n")
    rows = acel.run("RETURN MAX(s.price) PATTERN SELL AS s", path).to_json_lines()
    assert rows == ['{"MAX(s.price)":"x"}']
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"types": {"SELL": ["price"]}, "kinds": {"price": "int"}}))
    with pytest.raises(DataError, match=r"row 2 \(line 3\), column 'price': 'x' is not an int"):
        acel.run("SELL", path, schema=schema).to_list()


@pytest.mark.parametrize("engine", ENGINES)
def test_int_and_float_mix_as_float_in_every_engine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str
) -> None:
    """One kind per attribute: the ints of a float attribute are floats (written 101.0)."""
    path = write_lines(
        tmp_path / "prices.jsonl",
        {"type": "SELL", "price": 101}, {"type": "SELL", "price": 180.5},
    )
    code, out, _ = run(capsys, "run", "SELL AS x FILTER x[price > 100]", "--data", path,
                       "--engine", engine)
    assert code == 0
    prices = [e["attrs"]["price"] for line in out.splitlines() for e in json.loads(line)["vars"]["x"]]
    assert prices == [101.0, 180.5] and isinstance(prices[0], float)
    assert '"price":101.0' in out


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_live_stream_with_a_kindless_schema_keeps_one_kind(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    engine: str,
) -> None:
    """Standard input is read once: the first value fixes the kind (a later one that
    differs names that row); SUM over text stops with one DataError in every engine."""
    schema = _kindless_schema(tmp_path)
    _stdin(monkeypatch, "".join(json.dumps(r) + "\n" for r in MIXED))
    code, out, err = run(capsys, "run", "RETURN MAX(s.price) PATTERN SELL AS s", "--data", "-",
                         "--schema", schema, "--engine", engine)
    assert code == 2 and "Traceback" not in err
    assert ("<stdin>: row 2 (line 2), column 'price': value 'x' is str, but 'price' is int "
            "in row 1 (line 1): an attribute holds one kind of value") in err
    _stdin(monkeypatch, STOCKS.read_text())
    code, out, err = run(capsys, "run", "RETURN SUM(s.name) PATTERN SELL AS s", "--data", "-",
                         "--schema", schema, "--engine", engine)
    assert code == 2 and "Traceback" not in err and "MSFTMSFT" not in out
    assert re.search(r"acel run: data error: SUM adds numbers, but an event holds the str value "
                     r"'[A-Z]+' \(give the attribute a numeric kind in the schema\)\n$", err), err


# ===================================================================== Data: silent loss


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "record, problem",
    [
        ('{"type":"SELL","price":101,"price":999}', "key 'price' appears twice (101, then 999)"),
        ('{"type":"SELL","type":"BUY","price":1}', "key 'type' appears twice ('SELL', then 'BUY')"),
    ],
)
def test_duplicate_json_keys_are_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, record: str, problem: str
) -> None:
    """Was: the second value won silently (999; a BUY instead of a SELL)."""
    path = tmp_path / "dup.jsonl"
    path.write_text('{"type":"SELL","price":5}\n' + record + "\n")
    code, out, err = run(capsys, "run", "SELL", "--data", path, "--engine", engine)
    assert code == 2 and out == ""
    assert err == (f"acel run: data error: {path}: 1 bad row:\n"
                   f"  row 2 (line 2): duplicate key: {problem}\n")
    array = tmp_path / "dup.json"
    array.write_text("[" + record + "]")
    code, out, err = run(capsys, "run", "SELL", "--data", array, "--engine", engine)
    assert code == 2 and err == f"acel run: data error: {array}: duplicate key: {problem}\n"


# ===================================================================== Data: huge integers


@pytest.mark.parametrize("engine", ENGINES)
def test_a_4301_digit_integer_in_the_data_is_exact(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str
) -> None:
    """Was: an uncaught json.loads traceback (Python's 4,300-digit conversion limit)."""
    big = 10**4301 - 1  # "9" * 4301
    path = tmp_path / "big.jsonl"
    path.write_text('{"type":"SELL","price":' + "9" * 4301 + '}\n{"type":"SELL","price":1}\n')
    code, out, err = run(capsys, "run", "SELL AS s FILTER s[price > 5]", "--data", path,
                         "--engine", engine)
    assert code == 0, err
    assert out.count("9" * 4301) == 2 and '"start":0' in out  # the SELL and s bags
    code, out, err = run(capsys, "run", "RETURN SUM(s.price), MAX(s.price) PATTERN SELL AS s",
                         "--data", path, "--engine", engine)
    assert code == 0, err
    assert out == f'{{"MAX(s.price)":{int_text(big)},"SUM(s.price)":{int_text(big + 1)}}}\n'
    csv = tmp_path / "big.csv"
    csv.write_text("type,price\nSELL," + "9" * 4301 + "\nSELL,1\n")
    code, out, err = run(capsys, "run", "SELL AS s FILTER s[price > 5]", "--data", csv,
                         "--engine", engine)
    assert code == 0 and out.count("9" * 4301) == 2, err


# ===================================================================== Data: huge counts

HUGE = 2**15000 - 1  # the complex events of (A AS a)+ over 15,000 A events: 4,516 digits


@pytest.fixture(scope="module")
def fifteen_thousand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("counts") / "a.jsonl"
    path.write_text('{"type":"A","v":1}\n' * 15_000)
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_huge_counts_are_written_in_full(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fifteen_thousand: Path, suffix: str
) -> None:
    """Was: the run died at output and left --out at 0 bytes."""
    out_path = tmp_path / f"out{suffix}"
    code, _, err = run(capsys, "run", "RETURN COUNT(*) PATTERN (A AS a)+", "--data",
                       fifteen_thousand, "--out", out_path)
    assert code == 0, err
    assert len(int_text(HUGE)) == 4516
    if suffix == ".jsonl":
        assert out_path.read_text() == f'{{"COUNT(*)":{int_text(HUGE)}}}\n'
    elif suffix == ".csv":
        assert out_path.read_text() == f"COUNT(*)\n{int_text(HUGE)}\n"
    else:
        import pyarrow.parquet as pq

        assert pq.read_table(out_path).to_pylist() == [{"COUNT(*)": int_text(HUGE)}]


def test_huge_counts_through_the_api(fifteen_thousand: Path) -> None:
    results = acel.run("RETURN COUNT(*), SUM(a.v) PATTERN (A AS a)+", fifteen_thousand)
    from acel.io.values import int_from_digits

    line = json.loads(results.to_json_lines()[0], parse_int=int_from_digits)
    assert line == {"COUNT(*)": HUGE, "SUM(a.v)": 15_000 * 2**14_999}
    table = results.to_arrow()
    assert table.column("COUNT(*)").to_pylist() == [int_text(HUGE)]
    frame = results.to_pandas()
    assert frame["SUM(a.v)"][0] == int_text(15_000 * 2**14_999)


# ===================================================================== Data: empty files, BOMs


def _empty_files(tmp_path: Path) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n")
    header = tmp_path / "header.csv"
    header.write_text("type,price\n")
    parquet = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"type": pa.array([], pa.string()), "price": pa.array([], pa.int64())}),
                   parquet)
    return [empty, blank, header, parquet]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_empty_file_says_it_holds_no_events(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str
) -> None:
    """Was: "unknown event type 'SELL'; the schema has (none)", a query error."""
    for path in _empty_files(tmp_path):
        code, out, err = run(capsys, "run", "SELL", "--data", path, "--engine", engine)
        assert code == 2 and out == ""
        assert err == (f"acel run: data error: {path}: the file holds no events, so there is no "
                       "schema to check the query against (give --schema to run it on an empty "
                       "stream)\n")
        for command in ("check", "compile"):
            code, _, err = run(capsys, command, "SELL", "--data", path)
            assert code == 2 and f"{path}: the file holds no events" in err
    schema = tmp_path / "schema.json"
    schema.write_text('{"SELL": ["price"]}')
    for path in _empty_files(tmp_path):
        code, out, err = run(capsys, "run", "RETURN COUNT(*) PATTERN SELL", "--data", path,
                             "--schema", schema, "--engine", engine)
        assert code == 0 and out == '{"COUNT(*)":0}\n', err


def test_the_api_on_empty_data_says_it_holds_no_events() -> None:
    import pandas as pd

    for data, source in [([], "<records>"), (pd.DataFrame({"type": [], "price": []}), "<DataFrame>"),
                         (pd.DataFrame(), "<DataFrame>")]:
        with pytest.raises(DataError) as info:
            acel.run("SELL", data)
        assert str(info.value).startswith(f"{source}: the data holds no events")
        assert acel.run("RETURN COUNT(*) PATTERN SELL", data, schema={"SELL": []}).to_json_lines() \
            == ['{"COUNT(*)":0}']


@pytest.mark.parametrize("engine", ENGINES)
def test_a_byte_order_mark_is_accepted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str
) -> None:
    """Was: a BOM rejected a whole JSON Lines file and made CSV's first header '\\ufefftype'."""
    bom = "\ufeff"
    jsonl = tmp_path / "bom.jsonl"
    jsonl.write_text(bom + STOCKS.read_text(), encoding="utf-8")
    csv = tmp_path / "bom.csv"
    csv.write_text(bom + (DATA / "stocks.csv").read_text(), encoding="utf-8")
    array = tmp_path / "bom.json"
    array.write_text(bom + json.dumps([json.loads(x) for x in STOCKS.read_text().splitlines()]),
                     encoding="utf-8")
    for path, plain in ((jsonl, STOCKS), (csv, DATA / "stocks.csv"), (array, STOCKS)):
        _, expected, _ = run(capsys, "run", "SELL AS s ; BUY", "--data", plain, "--engine", engine)
        code, out, err = run(capsys, "run", "SELL AS s ; BUY", "--data", path, "--engine", engine)
        assert code == 0 and out == expected and expected, err
    assert "\ufeff" not in str(acel.run("SELL", csv).schema)


def test_bad_utf8_names_the_file_and_the_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Was: "the file is not UTF-8 text", without the file."""
    query = tmp_path / "q.acel"
    query.write_bytes(b"SELL \xff")
    code, _, err = run(capsys, "run", query, "--data", STOCKS)
    assert code == 2 and err == (f"acel run: data error: {query}: not UTF-8 text: line 1, byte 6 "
                                 "of the line (0xff); save the file as UTF-8\n")
    schema = tmp_path / "s.json"
    schema.write_bytes(b'{"SELL":\n["\xe9"]}')
    code, _, err = run(capsys, "run", "SELL", "--data", STOCKS, "--schema", schema)
    assert code == 2 and f"{schema}: not UTF-8 text: line 2, byte 3 of the line (0xe9)" in err
    data = tmp_path / "latin.csv"
    data.write_bytes(b"type,name\nSELL,a\nSELL,\xe9\n")
    code, _, err = run(capsys, "run", "SELL", "--data", data)
    assert code == 2 and err == (f"acel run: data error: {data}: line 3: not UTF-8 text (byte 6 "
                                 "of the line); save the file as UTF-8\n")
    jsonl = tmp_path / "latin.jsonl"
    jsonl.write_bytes(b'{"type":"SELL"}\n{"type":"SELL","name":"\xe9"}\n')
    code, _, err = run(capsys, "run", "SELL", "--data", jsonl)
    assert code == 2 and err == (f"acel run: data error: {jsonl}: 1 bad row:\n"
                                 "  row 2 (line 2): not UTF-8 text (byte 24 of the line)\n")


def test_an_unclosed_csv_quote_is_reported_as_the_quote(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Was: reported as a field count."""
    path = tmp_path / "quote.csv"
    path.write_text('type,name,price\nSELL,MSFT,1\nSELL,"INTL,2\nSELL,AMZN,3\n')
    code, _, err = run(capsys, "run", "SELL", "--data", path)
    assert code == 2 and err == (f"acel run: data error: {path}: line 3: a quoted field is never "
                                 "closed (an unmatched '\"')\n")


# ===================================================================== Data: ±infinity


def _infinite_inputs(tmp_path: Path) -> list[tuple[Any, str]]:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    jsonl = tmp_path / "inf.jsonl"
    jsonl.write_text('{"type":"SELL","price":5.5}\n{"type":"SELL","price":Infinity}\n'
                     '{"type":"SELL","price":-1e999}\n')
    csv = tmp_path / "inf.csv"
    csv.write_text("type,price\nSELL,5.5\nSELL,inf\nSELL,-Infinity\n")
    parquet = tmp_path / "inf.parquet"
    table = pa.table({"type": ["SELL"] * 3, "price": [5.5, math.inf, -math.inf]})
    pq.write_table(table, parquet)
    records = [{"type": "SELL", "price": p} for p in (5.5, math.inf, -math.inf)]
    return [
        (jsonl, " (line 2)"), (csv, " (line 3)"), (parquet, ""), (table, ""),
        (records, ""), (pd.DataFrame(records), ""),
    ]


INFINITY = ("row 2{line}, column 'price': value +infinity is not a finite number: attributes "
            "hold finite numbers (JSON, the results' format, has no infinity); use NULL or a "
            "large finite value")


def test_infinity_is_a_data_error_naming_the_row_in_every_reader(tmp_path: Path) -> None:
    """Was: written as null by the optimized engine and dropped by Spark (one behaviour now)."""
    for data, line in _infinite_inputs(tmp_path):
        for engine in ENGINES:
            with pytest.raises(DataError) as info:
                acel.run("SELL AS x FILTER x[price > 1]", data, engine).to_list()
            message = str(info.value)
            assert "2 bad rows:\n  " + INFINITY.format(line=line) in message, (data, message)
            assert "row 3" in message and "-infinity" in message
    with pytest.raises(DataError, match="value -infinity is not a finite number"):
        acel.run("SELL", [{"type": "SELL", "price": -math.inf}], schema={"SELL": ["price"]})\
            .to_list()


def test_a_computed_infinity_is_written_as_null(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    """A sum may still overflow to infinity: JSON has none, so it is written as null."""
    path = write_lines(tmp_path / "big.jsonl", {"type": "A", "x": 1e308}, {"type": "A", "x": 1e308})
    for engine in ENGINES:
        code, out, _ = run(capsys, "run", "RETURN SUM(a.x) PATTERN (A AS a)+", "--data", path,
                           "--engine", engine)
        assert code == 0 and out == '{"SUM(a.x)":null}\n', engine


# ===================================================================== Output: --out


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the data was read before --out was checked")

    monkeypatch.setattr("acel.io.open_events", refuse)
    monkeypatch.setattr("acel.io.source.open_events", refuse)
    monkeypatch.setattr("acel.io.read_events", refuse)


@pytest.mark.parametrize("engine", [*ENGINES, "spark"])
@pytest.mark.parametrize("name", ["missing/out.jsonl", "missing/out.parquet", "missing/out.csv"])
def test_a_missing_output_folder_is_reported_before_reading(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    engine: str, name: str,
) -> None:
    """Was: reported after the whole run (Parquet: "no such file: None")."""
    _no_reading(monkeypatch)
    out = tmp_path / name
    code, _, err = run(capsys, "run", "SELL", "--data", STOCKS, "--out", out, "--engine", engine)
    assert code == 2 and err == (f"acel run: data error: {out}: cannot write results: the folder "
                                 f"{str(out.parent)!r} does not exist\n")


@pytest.mark.parametrize("engine", [*ENGINES, "spark"])
def test_out_equal_to_an_input_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    engine: str,
) -> None:
    """Was: the input was silently replaced by the results."""
    data = tmp_path / "events.jsonl"
    shutil.copy(STOCKS, data)
    link = tmp_path / "link.jsonl"
    link.symlink_to(data)
    schema = tmp_path / "schema.json"
    shutil.copy(DATA / "stocks_schema.json", schema)
    monkeypatch.chdir(tmp_path)
    _no_reading(monkeypatch)
    for argv, out, source in [
        (["SELL", "--data", data], data, data),
        (["SELL", "--data", "events.jsonl"], "./events.jsonl", "events.jsonl"),
        (["SELL", "--data", link], data, link),
        (["SELL", "--data", data], link, data),
        (["SELL", "--data", data, "--schema", schema], schema, schema),
    ]:
        code, _, err = run(capsys, "run", *argv, "--out", out, "--engine", engine)
        assert code == 2 and err == (f"acel run: data error: {out}: the output would overwrite "
                                     f"the input {source}; choose another --out\n")
    assert data.read_bytes() == STOCKS.read_bytes()


def test_a_failing_serialisation_keeps_the_old_results(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Was: 0 bytes left and the old content destroyed.

    Pure Python: the failure is planted in the Python encoder, which the native writer
    does not call (the same failure path is taken by every writer)."""
    monkeypatch.setenv("ACEL_NATIVE", "0")
    from acel.io.lines import LineEncoder

    out = tmp_path / "out.jsonl"
    out.write_text("the previous results\n")
    original = LineEncoder.match
    calls = [0]

    def failing(self: LineEncoder, match: Any, query: str | None = None) -> bytes:
        calls[0] += 1
        if calls[0] > 3:
            raise ValueError("cannot serialise")
        return original(self, match, query)

    monkeypatch.setattr(LineEncoder, "match", failing)
    with pytest.raises(ValueError, match="cannot serialise"):
        main(["run", "SELL AS s ; SELL", "--data", str(STOCKS), "--out", str(out)])
    err = capsys.readouterr().err
    assert out.read_text() == "the previous results\n"
    partial = tmp_path / "out.jsonl.partial"
    assert err == (f"acel run: stopped; 3 results written to {partial}, which is incomplete "
                   f"({out} was not written)\n")
    assert partial.read_text().count("\n") == 3


def _tiny_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "tiny"
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB file system (a tmpfs), to fill up."""
    yield from _tiny_disk(tmp_path)


@pytest.mark.parametrize("engine", ["optimized", "automaton"])
def test_a_full_disk_leaves_a_partial_file_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tiny_disk: Path, engine: str
) -> None:
    """Was: a file cut mid-record under the final name, looking finished."""
    data = write_lines(tmp_path / "a.jsonl", *({"type": "A", "v": i} for i in range(2000)))
    out = tiny_disk / "out.jsonl"
    code, _, err = run(capsys, "run", "A AS a", "--data", data, "--out", out, "--engine", engine)
    assert code == 2
    *progress, stopped, error = err.splitlines()  # a loaded machine may show a progress line first
    assert all(re.search(r"[\d,]+ events", line) for line in progress), progress
    assert re.fullmatch(rf"acel run: stopped; [\d,]+ results written to {out}\.partial, which is "
                        rf"incomplete \({out} was not written\)", stopped), stopped
    assert error == f"acel run: error: {out}: cannot write results: No space left on device"
    assert not out.exists() and (tiny_disk / "out.jsonl.partial").exists()


def test_a_full_disk_without_a_tmpfs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same through a file object that fails as a full disk does (runs everywhere)."""
    import errno

    import acel.io.results as results

    real_open = open

    class Full(io.RawIOBase):
        def __init__(self, path: Any) -> None:
            self.file = real_open(path, "wb")
            self.room = 300

        def writable(self) -> bool:
            return True

        def write(self, data: Any) -> int:
            if len(data) > self.room:
                self.file.write(bytes(data[: self.room]))
                self.room = 0
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.room -= len(data)
            return self.file.write(data)

        def close(self) -> None:
            self.file.close()
            super().close()

    real_partial = results.open_partial

    def fake_partial(path: Path) -> tuple[Any, Path]:
        handle, partial = real_partial(path)  # created exclusively, then failing as a full disk
        handle.close()
        return io.BufferedWriter(Full(partial), buffer_size=64), partial

    monkeypatch.setattr(results, "open_partial", fake_partial)
    out = tmp_path / "out.jsonl"
    code, _, err = run(capsys, "run", "SELL AS s ; SELL", "--data", STOCKS, "--out", out)
    assert code == 2 and err.endswith(
        f"acel run: error: {out}: cannot write results: No space left on device\n")
    assert "which is incomplete" in err and not out.exists()


def _wait_for(condition: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def long_stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough complex events to take a few seconds to write."""
    path = tmp_path_factory.mktemp("long") / "ab.jsonl"
    path.write_text("".join(
        json.dumps({"type": "AB"[(i * 7) % 3 == 0], "k": i % 10, "v": i}) + "\n"
        for i in range(100_000)
    ))
    return path


def _acel(*argv: object, **kwargs: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "acel", *map(str, argv)], cwd=ROOT, **kwargs)


LONG_QUERY = "A AS a ; B AS b PARTITION BY k WITHIN 20 EVENTS"


def test_ctrl_c_on_standard_output_ends_with_a_complete_line(long_stream: Path) -> None:
    """Was: Ctrl-C could cut a line in half; now the last line is whole, exit 130."""
    process = _acel("run", LONG_QUERY, "--data", long_stream, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    head = process.stdout.read(200_000)  # results are coming out
    process.send_signal(signal.SIGINT)
    rest = process.stdout.read()
    err = process.stderr.read().decode()
    assert process.wait(60) == 130, err
    out = head + rest
    assert out.endswith(b"\n") and len(out) > 200_000
    lines = out.splitlines()
    for line in lines:
        json.loads(line)
    assert re.search(rf"acel run: interrupted; {len(lines):,} results written \(incomplete\)\n$",
                     err), err


def test_ctrl_c_with_out_leaves_only_a_partial_file(long_stream: Path, tmp_path: Path) -> None:
    """Was: complete lines under the final name, looking like a finished result."""
    out = tmp_path / "out.jsonl"
    partial = tmp_path / "out.jsonl.partial"
    process = _acel("run", LONG_QUERY, "--data", long_stream, "--out", out,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for(lambda: partial.exists() and partial.stat().st_size > 100_000)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert not out.exists()
    text = partial.read_bytes()
    assert text.endswith(b"\n")
    count = text.count(b"\n")
    assert err.decode().endswith(
        f"acel run: interrupted; {count:,} results written to {partial}, which is incomplete "
        f"({out} was not written)\n")


def test_sigterm_ends_a_run_as_ctrl_c_does(long_stream: Path, tmp_path: Path) -> None:
    """Issue 24 item 11: SIGTERM killed the run before any clean-up; now it ends as an
    interrupted run does (the partial file kept and said), with exit status 143."""
    out = tmp_path / "out.jsonl"
    partial = tmp_path / "out.jsonl.partial"
    process = _acel("run", LONG_QUERY, "--data", long_stream, "--out", out,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for(lambda: partial.exists() and partial.stat().st_size > 100_000)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    count = partial.read_bytes().count(b"\n")
    assert err.decode().endswith(
        f"acel run: terminated; {count:,} results written to {partial}, which is incomplete "
        f"({out} was not written)\n")
    assert not out.exists()


# ===================================================================== progress


def test_progress_lines_advance(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Was: "0 of N events done, 12,288 results so far, 0 events/s" through the engine phase.

    Pure Python: the native path reads this file in a few large batches, too fast for four lines."""
    monkeypatch.setenv("ACEL_NATIVE", "0")
    original = reporting.Progress.note
    monkeypatch.setattr(reporting.Progress, "note",
                        lambda self, message, force=False: original(self, message, force=True))
    data = write_lines(tmp_path / "ab.jsonl",
                       *({"type": "AB"[i % 3 == 0], "v": i} for i in range(20_000)))
    code, _, err = run(capsys, "run", "A AS a ; B WITHIN 3 EVENTS", "--data", data,
                       "--out", tmp_path / "out.jsonl")
    assert code == 0
    lines = re.findall(r"acel run: ([\d,]+) of 20,000 events read, ([\d,]+) results so far, "
                       r"([\d,]+) events/s", err)
    read = [int(r.replace(",", "")) for r, _, _ in lines]
    found = [int(f.replace(",", "")) for _, f, _ in lines]
    assert len(lines) >= 4 and read == sorted(read) and read[0] > 0 and read[-1] == 20_000
    assert found == sorted(found) and found[0] > 0 and found[-1] > found[0]
    assert all(int(rate.replace(",", "")) > 0 for _, _, rate in lines)


def test_progress_inside_one_exploding_event(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One event that ends 2^14 complex events: the count moves while it is enumerated."""
    original = reporting.Progress.note
    monkeypatch.setattr(reporting.Progress, "note",
                        lambda self, message, force=False: original(self, message, force=True))
    data = write_lines(tmp_path / "ab.jsonl", *([{"type": "A"}] * 14 + [{"type": "B"}]))
    code, out, err = run(capsys, "run", "(A AS a)+ ; B", "--data", data)
    assert code == 0 and out.count("\n") == 2**14 - 1
    found = [int(f.replace(",", "")) for f in
             re.findall(r"14 of 15 events read, ([\d,]+) results so far", err)]
    assert found[:3] == [1024, 2048, 3072] and len(found) >= 10


def test_a_batch_engine_says_it_is_running(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    original = reporting.Progress.note
    monkeypatch.setattr(reporting.Progress, "note",
                        lambda self, message, force=False: original(self, message, force=True))
    data = write_lines(tmp_path / "a.jsonl", *({"type": "A", "v": i} for i in range(15)))
    code, _, err = run(capsys, "run", "(A AS a)+ FILTER a[v >= 0]", "--data", data,
                       "--engine", "oracle", "--out", tmp_path / "out.jsonl")
    assert code == 0
    assert err.count("acel run: the oracle engine is running on 15 events (its results come "
                     "at the end)") >= 2


# ===================================================================== memory


def _rss_mib() -> float:
    return reporting.MemoryGuard(None).current_mib()


@pytest.fixture(scope="module")
def exploding(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """9,999 A events and one B: (A AS a)+ ; B ends 2^9999 - 1 complex events at the B.

    Each event carries 2,000 characters, so that the complex events held grow the
    memory in seconds (with short events the first ones, which are short, take a
    minute to fill 24 MiB).
    """
    path = tmp_path_factory.mktemp("explode") / "ab.jsonl"
    text = "x" * 2000
    path.write_text(f'{{"type":"A","v":"{text}"}}\n' * 9_999 + '{"type":"B","v":"b"}\n')
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_a_runaway_run_stops_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, exploding: Path,
    tmp_path: Path, engine: str,
) -> None:
    """Was: every result held in memory, nothing written for minutes, then the kernel's kill.

    The incremental engine checks inside the enumeration of the one exploding step;
    the batch engines' one call is checked on a timer.
    """
    monkeypatch.setenv("ACEL_ORACLE_MAX_EVENTS", "10000")
    monkeypatch.setenv("ACEL_ORACLE_MAX_COMPLEX_EVENTS", str(10**9))
    limit = _rss_mib() + 24
    started = time.monotonic()
    code, out, err = run(capsys, "run", "(A AS a)+ ; B", "--data", exploding,
                         "--max-memory", f"{limit:.0f}", "--engine", engine,
                         "--out", tmp_path / "out.jsonl")
    assert code == 2 and out == ""
    assert re.search(r"acel run: error: memory limit reached: the run uses [\d,]+ MiB \(limit "
                     rf"{limit:,.0f} MiB\); .* raise --max-memory\n$", err), err
    assert time.monotonic() - started < 120


def test_the_watch_hook_runs_inside_one_step() -> None:
    """The engine calls its watcher every 1,024 complex events of a single push."""
    from acel.acea.engine import Runner

    from acel.lang.parser import parse_query
    from acel.lang.schema import Schema

    calls: list[int] = []

    def watch(found: int) -> None:
        calls.append(found)
        if found >= 4096:
            raise DataError("stop")

    runner = Runner(parse_query("(A AS a)+ ; B"), Schema.of({"A": [], "B": []}), watch=watch)
    for _ in range(14):
        assert runner.push({"type": "A"}) == []
    with pytest.raises(DataError, match="stop"):
        runner.push({"type": "B"})
    assert calls == [1024, 2048, 3072, 4096]


def test_the_default_memory_limit_honours_the_container(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reporting, "_cgroup_limit", lambda: 2 * 2**30)
    assert reporting.MemoryGuard(None).limit == pytest.approx(0.75 * 2048)
    monkeypatch.setattr(reporting, "_cgroup_limit", lambda: None)
    assert reporting.MemoryGuard(None).limit > 0


def test_a_partitioned_windowed_run_streams_in_bounded_memory(tmp_path: Path) -> None:
    """Was: PARTITION BY with WITHIN 20 EVENTS over 10^5 events grew to 24 GB, no message.

    Results come out while the stream is read, and memory does not grow with it:
    the peak after 10^5 events is about the peak after 2·10^4.
    """
    def stream(n: int) -> Path:
        path = tmp_path / f"events{n}.jsonl"
        path.write_text("".join(
            json.dumps({"type": "ABCCC"[(i * 7) % 5], "k": i % 47, "v": i}) + "\n"
            for i in range(n)
        ))
        return path

    peaks = {}
    sizes = {}
    for n in (20_000, 100_000):
        out = tmp_path / f"out{n}.jsonl"
        process = _acel("run", "(A AS a)+ ; B AS b PARTITION BY k WITHIN 20 EVENTS",
                        "--data", stream(n), "--out", out, stderr=subprocess.PIPE)
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        peaks[n] = float(re.search(rb"peak RSS ([\d,]+) MiB", err).group(1).replace(b",", b""))
        sizes[n] = out.stat().st_size
    assert sizes[100_000] > 4 * sizes[20_000] > 0
    assert peaks[100_000] < peaks[20_000] + 25, peaks


# ===================================================================== Spark


def _spark_results(spark: Any, query: str, data: Any, **options: Any) -> list[str]:
    import warnings

    from acel.spark_backend import run_to_results

    from acel.io.results import to_json_lines

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return to_json_lines(run_to_results(query, data, session=spark, **options))


def _bad_files(tmp_path: Path) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = {
        "mixed.jsonl": "".join(json.dumps(r) + "\n" for r in MIXED),
        "dup_price.jsonl": '{"type":"SELL","price":101,"price":999}\n',
        "dup_type.jsonl": '{"type":"SELL","type":"BUY","price":1}\n',
        "inf.jsonl": '{"type":"SELL","price":5}\n{"type":"SELL","price":Infinity}\n',
        "inf.csv": "type,price\nSELL,5\nSELL,-inf\n",
        "quote.csv": 'type,price\nSELL,1\nSELL,"2\nSELL,3\n',
        "empty.jsonl": "",
        "header.csv": "type,price\n",
    }
    paths = []
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(text)
        paths.append(path)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"type,name\nSELL,a\nSELL,\xe9\n")
    parquet = tmp_path / "inf.parquet"
    pq.write_table(pa.table({"type": ["SELL", "SELL"], "price": [1.5, math.inf]}), parquet)
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"type": pa.array([], pa.string())}), empty)
    return [*paths, latin, parquet, empty]


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_spark_reports_the_single_process_data_errors(spark: Any, tmp_path: Path) -> None:
    """Was: Spark read mixed kinds as text (0 matches instead of 1), kept the last of two
    equal keys or failed with COLUMN_ALREADY_EXISTS, dropped ±infinity, read an unclosed
    quote as data, and called an empty file an unknown event type.  Now every file goes
    through the single-process reader: the same error, word for word, before any job."""
    from acel.spark_backend import run_to_results

    query = "SELL AS x FILTER x[price > 150]"
    for path in _bad_files(tmp_path):
        with pytest.raises(DataError) as single:
            acel.run(query, path).to_list()
        with pytest.raises(DataError) as on_spark:
            run_to_results(query, str(path), session=spark)
        assert str(on_spark.value) == str(single.value), path
        assert "Traceback" not in str(on_spark.value)


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_spark_gives_the_single_process_results_on_files_it_misread(
    spark: Any, tmp_path: Path
) -> None:
    """int+float as float (Spark: 101 vs 101.0), BOMs, quoted line breaks, a time column."""
    bom = "\ufeff"
    prices = write_lines(tmp_path / "prices.jsonl", {"type": "SELL", "price": 101, "ts": 3},
                         {"type": "SELL", "price": 180.5, "ts": 1}, {"type": "BUY", "ts": 2})
    bom_jsonl = tmp_path / "bom.jsonl"
    bom_jsonl.write_text(bom + prices.read_text(), encoding="utf-8")
    bom_csv = tmp_path / "bom.csv"
    bom_csv.write_text(bom + 'type,price,ts,note\nSELL,101,3,"a\nb"\nSELL,180.5,1,\nBUY,,2,\n',
                       encoding="utf-8")
    for path in (prices, bom_jsonl, bom_csv):
        for query, time_col in (
            ("SELL AS x FILTER x[price > 150]", None),
            ("RETURN COUNT(*), SUM(x.price), MAX(x.price) PATTERN SELL AS x ; BUY", "ts"),
        ):
            expected = acel.run(query, path, time_col=time_col).to_json_lines()
            assert expected
            got = _spark_results(spark, query, str(path), time_col=time_col)
            assert got == expected, (path, query, time_col)


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_an_integer_beyond_64_bits_on_spark_is_an_error_naming_the_row(
    capsys: pytest.CaptureFixture[str], spark: Any, tmp_path: Path
) -> None:
    """Was: a CAST_OVERFLOW traceback on Spark only; the engine reads it exactly."""
    path = tmp_path / "big.jsonl"
    path.write_text('{"type":"SELL","price":1}\n\n{"type":"SELL","price":' + str(2**100) + "}\n")
    code, out, err = run(capsys, "run", "SELL AS x FILTER x[price > 150]", "--data", path)
    assert code == 0 and str(2**100) in out
    code, out, err = run(capsys, "run", "SELL AS x FILTER x[price > 150]", "--data", path,
                         "--engine", "spark")
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        f"acel run: data error: {path}: row 2, column 'price': the integer "
        "1267650600228229401496703205376 (31 digits) does not fit in 64 bits, the largest "
        "integers a Spark column holds; the single-process engines read it exactly (--engine "
        "optimized), or store it as a float or a string"
    )


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_infinity_in_a_spark_dataframe_is_reported_with_its_rows(spark: Any) -> None:
    from acel.spark_backend import run_to_results

    frame = spark.createDataFrame(
        [("SELL", 1.5), ("SELL", float("inf")), ("SELL", 2.0), ("SELL", float("-inf"))],
        "type string, price double",
    )
    with pytest.raises(DataError) as info:
        run_to_results("SELL", frame, session=spark)
    assert str(info.value) == (
        "<DataFrame>: bad input rows, nothing was run:\n"
        "  2 row(s) with ±infinity in a float column: it is not a finite number: attributes "
        "hold finite numbers (JSON, the results' format, has no infinity); use NULL or a large "
        "finite value, e.g.:\n"
        "    row 2: type='SELL', price=inf\n"
        "    row 4: type='SELL', price=-inf"
    )


@pytest.mark.spark
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_a_huge_count_on_spark_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], spark: Any, fifteen_thousand: Path
) -> None:
    """Counts beyond DECIMAL(38,0) are exact on the engine; Spark says so in one line
    (was: a ValueError traceback from the worker, the count having 4,516 digits)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code, out, err = run(capsys, "run", "RETURN COUNT(*) PATTERN (A AS a)+", "--data",
                             fifteen_thousand, "--engine", "spark")
    assert code == 2 and out == ""
    digits = int_text(HUGE)
    assert err.splitlines()[-1] == (
        f"acel run: data error: COUNT(*) = {digits[:12]}…{digits[-6:]} (4,516 digits) does not "
        "fit the DataFrame column DECIMAL(38,0); use the single-process engine for such counts "
        "(--engine optimized)"
    )


def test_a_dead_worker_is_retried_by_default() -> None:
    """Issue 17, "One dead worker kills the job": done with issue 16 (retries by default,
    a two-line error when every attempt fails); its tests live beside the other Spark ones."""
    source = (Path(__file__).parent / "test_spark.py").read_text()
    assert "def test_a_killed_python_worker_is_retried_with_the_same_results(" in source
    assert "def test_a_failed_job_is_a_short_error(" in source
    cluster = (Path(__file__).parent / "test_spark_cluster.py").read_text()
    assert "def test_a_killed_python_worker_on_the_cluster_is_retried(" in cluster


def test_no_progress_line_comes_after_the_last_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24 item 14: after Ctrl-C, "interrupted; 779 results written" was followed by
    "277 of 100,000 events read ...": the run's generator reported its progress when it
    was collected, after the last line.  Now it is closed first, its report silenced."""
    import gc

    progress = reporting.Progress()

    def groups() -> Any:
        try:
            yield ["a"]
            yield ["b"]
        finally:
            progress.note("277 of 100,000 events read", force=True)

    class Writer:
        full = False

        def add(self, group: list[str]) -> None:
            if group == ["b"]:
                raise KeyboardInterrupt

        def flush(self) -> None:
            pass

        def close(self) -> int:
            return 1

        def abort(self) -> str:
            return "1 results written (incomplete)"

    writer = Writer()
    run_ = groups()
    assert reporting.write_groups(writer, run_, writer.add, progress) is None
    del run_
    gc.collect()
    reporting.summary(argparse.Namespace(engine="optimized", out=None), progress, 2, "1 written")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "acel run: interrupted; 1 results written (incomplete)"
    assert len(lines) == 2 and lines[1].startswith("acel run [optimized]: 2 events read")


# ===================================================================== runaway runs


def test_a_runaway_per_match_run_stops_with_its_count(tmp_path: Path) -> None:
    """Issue 24 item 7: ``(A AS a)+ ; B`` over 9,999 short A events and one B listed its
    2^9999 - 1 complex events for ever (67,584 after 300 s, 0 written, memory flat).
    Now they are counted without listing them and the run stops in one line."""
    data = write_lines(tmp_path / "ab.jsonl", *({"type": "A", "v": i} for i in range(9_999)),
                       {"type": "B"})
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "acel", "run", "(A AS a)+ ; B", "--data", data],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 60
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        "acel run: error: this query has about 9.9·10^3009 complex events (counted without "
        "listing them), more than any output can hold: aggregate them with RETURN (e.g. RETURN "
        "COUNT(*)), bound them with WITHIN, or write only the first ones with --limit N")
    assert "Traceback" not in done.stderr


def test_counting_complex_events_agrees_with_listing_them() -> None:
    from acel.engines.running import count_complex_events

    for text in ["(SELL AS x ; SELL AS y) FILTER x[name = 'MSFT']", "(SELL AS x)+ ; BUY",
                 "SELL AS x ; SELL PARTITION BY name", "(SELL AS x)+ WITHIN 3 EVENTS"]:
        query = acel.parse(text)
        stream = acel.api.open_checked(query, STOCKS)
        expected = len(acel.run(query, STOCKS).to_list())
        assert count_complex_events(query.ast, stream.schema, stream) == expected, text
    query = acel.parse("RETURN COUNT(*) PATTERN SELL")  # already a count
    stream = acel.api.open_checked(query, STOCKS)
    assert count_complex_events(query.ast, stream.schema, stream) is None


def test_a_large_run_under_the_bound_goes_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The guard counts once, and a count any output can hold changes nothing."""
    from acel.app import runaway

    monkeypatch.setattr(runaway, "STEP_RESULTS", 1)
    data = write_lines(tmp_path / "ab.jsonl", *({"type": "A", "v": i} for i in range(12)),
                       {"type": "B"})
    code, out, err = run(capsys, "run", "(A AS a)+ ; B", "--data", data)
    assert code == 0 and len(out.splitlines()) == 2**12 - 1
    assert "counting them all first" in err and "4,095 complex events written" in err
    monkeypatch.setattr(runaway, "MAX_COMPLEX_EVENTS", 4_000)
    code, out, err = run(capsys, "run", "(A AS a)+ ; B", "--data", data, "--limit", "3")
    assert code == 2 and err.splitlines()[-1] == (
        "acel run: error: this query has 4,095 complex events (counted without listing them), "
        "more than any output can hold: aggregate them with RETURN (e.g. RETURN COUNT(*)) or "
        "bound them with WITHIN")


@pytest.mark.parametrize("returns", ["MIN(b.v)", "MAX(b.v)"])
def test_events_pushed_by_hand_with_mixed_kinds_stop_in_one_line(returns: str) -> None:
    """A runner fed by hand (no reader checks the kinds) stops on a text value meeting a number
    in an aggregate with one DataError line naming the event, never a TypeError traceback
    (found by the native fuzzer with counted patterns)."""
    import acel

    runner = acel.runner(f"RETURN COUNT(*), {returns} PATTERN A AS a ; (B AS b)+",
                         {"A": ["v"], "B": ["v"]})
    runner.push({"type": "A", "v": 1})
    runner.push({"type": "B", "v": 1.5})
    with pytest.raises(acel.AcelError) as caught:
        runner.push({"type": "B", "v": "x"})
    assert str(caught.value).startswith("event 2: values of different kinds met")
    assert "\n" not in str(caught.value)
