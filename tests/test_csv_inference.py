"""CSV kind inference never changes an answer silently (issue 37 item 1).

One text cell in a column of numbers used to make the whole column text, so
``price > 100`` was false on every row: 0 results, exit 0.  Now such a column is an
error naming the text rows, on the native scanner and the Python reader alike; a column
mostly of text stays text; a schema's kind decides when one is given.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acel.io import read_events
from acel.lang.errors import DataError

PATHS = ["1", "0"]  # ACEL_NATIVE: the C scanner, then the Python reader


@pytest.fixture(params=PATHS, ids=["native", "pure"])
def native(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "1":
        pytest.importorskip("acel.io._native_reader", reason="not built")
    monkeypatch.setenv("ACEL_NATIVE", request.param)
    return str(request.param)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text(text)
    return path


def test_one_text_cell_in_a_numeric_column_is_an_error_naming_its_row(native: str, tmp_path: Path) -> None:
    path = write(tmp_path, "type,price\nA,120\nA,abc\nA,150\nA,90\n")
    with pytest.raises(DataError) as error:
        read_events(path)
    lines = str(error.value).splitlines()
    assert lines[0] == (f"{path}: column 'price' holds numbers or bools (3 rows) and text (1 row), so "
                        "no kind reads every cell; fix that row, or declare the column's kind with --schema:")
    assert lines[1:] == ["  row 2 (line 3): 'abc'"]


def test_many_text_cells_are_counted_and_the_first_five_shown(native: str, tmp_path: Path) -> None:
    rows = [f"A,{i}" for i in range(20)] + [f"A,x{i}" for i in range(7)] + ["A,true"]
    path = write(tmp_path, "type,price\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError) as error:
        read_events(path)
    lines = str(error.value).splitlines()
    assert "(21 rows) and text (7 rows)" in lines[0]
    assert lines[1:] == [f"  row {21 + i} (line {22 + i}): 'x{i}'" for i in range(5)] + ["  … and 2 more"]


def test_a_column_mostly_of_text_stays_text(native: str, tmp_path: Path) -> None:
    path = write(tmp_path, "type,code\nA,x\nA,007\nA,y\n")
    events, schema = read_events(path)
    assert [e.get("code") for e in events] == ["x", "007", "y"]
    assert dict(schema.kinds)["code"] == "str"


def test_clean_columns_keep_their_kinds(native: str, tmp_path: Path) -> None:
    path = write(tmp_path, "type,price,ok,name\nA,120,true,x\nA,,false,\nA,1.5,,y\n")
    events, schema = read_events(path)
    assert dict(schema.kinds) == {"price": "float", "ok": "bool", "name": "str"}
    assert [e.get("price") for e in events] == [120.0, None, 1.5]


def test_a_schema_decides_the_kind_of_a_mixed_column(native: str, tmp_path: Path) -> None:
    path = write(tmp_path, "type,price\nA,120\nA,abc\nA,150\n")
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"types": {"A": ["price"]}, "kinds": {"price": "str"}}))
    from acel.io import read_schema

    events, _ = read_events(path, schema=read_schema(schema))
    assert [e.get("price") for e in events] == ["120", "abc", "150"]


def test_the_command_line_refuses_instead_of_answering_nothing(tmp_path: Path) -> None:
    """The reproduction of the issue: exit 2 and the row, never 0 results with exit 0."""
    import subprocess
    import sys

    path = write(tmp_path, "type,price\nA,120\nA,abc\nA,150\nA,90\n")
    for command in ("run", "check"):
        done = subprocess.run([sys.executable, "-m", "acel", command, "A AS a FILTER a[price > 100]",
                               "--data", str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert done.stderr.splitlines()[0].startswith(f"acel {command}: data error: {path}: column 'price'")
        assert "Traceback" not in done.stderr
