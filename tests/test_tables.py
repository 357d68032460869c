"""Results in a notebook (issue 25 §3): the flat and long tables of acel.tables, the
HTML view with its count."""

from __future__ import annotations

from pathlib import Path

import pytest

import acel
from acel import tables

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_5_1 = (ROOT / "examples" / "paper" / "ex5_1_max_intel_price.acel").read_text()
STOCKS = ROOT / "tests" / "data" / "stocks.jsonl"


def test_flat_form_has_one_column_per_variable_attribute() -> None:
    frame = acel.run(EXAMPLE_5_1, STOCKS).to_pandas(form="flat")
    assert list(frame.columns) == [
        "start", "end", "msft.name", "msft.price", "intel.name", "intel.price",
        "amzn.name", "amzn.price", "m.max_price", "SELL.name", "SELL.price"]
    assert len(frame) == 8
    first = frame.iloc[0]
    assert (first["start"], first["end"], first["msft.price"], first["amzn.price"]) == (0, 4, 101, 1900)
    # intel is a bag (SELL AS intel)+: its cells are lists, one value per event in time order
    assert [list(v) for v in frame["intel.price"]].count([80, 81]) == 2
    assert all(frame["m.max_price"] == [max(v) for v in frame["intel.price"]])


def test_long_form_has_one_row_per_match_variable_and_event() -> None:
    results = acel.run(EXAMPLE_5_1, STOCKS)
    long = results.to_pandas(form="long")
    assert list(long.columns)[:6] == ["match", "start", "end", "variable", "time", "type"]
    flat = results.to_pandas(form="flat")
    events = sum(len(v) for v in flat["SELL.price"]) + sum(len(v) for v in flat["intel.price"])
    assert len(long) == events + 3 * len(flat)  # SELL's and intel's events, msft, amzn, m
    intel = long[(long["match"] == 3) & (long["variable"] == "intel")]
    assert list(intel["price"]) == [80, 81] and list(intel["time"]) == [2, 5]  # BUY at 3


def test_partition_keys_become_columns_and_arrow_matches_pandas() -> None:
    query = "SELL AS a ; SELL AS b PARTITION BY name"
    results = acel.run(query, STOCKS)
    table = results.to_arrow(form="flat")
    assert table.column_names[:3] == ["start", "end", "name"]
    assert table.column("name").to_pylist() == list(results.to_pandas(form="flat")["name"])
    assert all(isinstance(v, (int, float)) for v in table.column("b.price").to_pylist())


def test_return_rows_are_flat_and_have_no_long_form() -> None:
    results = acel.run("RETURN name, COUNT(*) PATTERN (SELL AS s)+ PARTITION BY name", STOCKS)
    flat = results.to_pandas(form="flat")
    assert list(flat.columns) == list(results.to_pandas().columns)
    assert list(flat["COUNT(*)"]) == list(results.to_pandas()["COUNT(*)"])
    with pytest.raises(acel.AcelError, match="RETURN rows have none"):
        results.to_arrow(form="long")


def test_unknown_form_is_one_clear_error() -> None:
    with pytest.raises(acel.AcelError, match="form must be one of nested, flat, long, not 'wide'"):
        acel.run(EXAMPLE_5_1, STOCKS).to_pandas(form="wide")


def test_nested_form_stays_the_default() -> None:
    assert acel.run(EXAMPLE_5_1, STOCKS).to_arrow().column_names == ["start", "end", "vars"]


def test_html_view_is_a_table_truncated_with_a_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "HTML_ROWS", 4)
    page = acel.run(EXAMPLE_5_1, STOCKS)._repr_html_()
    assert "8 complex events (the first 4 shown)" in page
    assert page.count("<tr>") == 1 + 4 and "... and 4 more" in page
    assert "<th>intel.price</th>" in page and "<td>[80, 81]</td>" in page
    assert "&#x27;MSFT&#x27;" in page  # the query text is escaped


def test_html_view_of_nothing_says_so() -> None:
    results = acel.run("SELL AS s FILTER s[price > 10000]", STOCKS)
    page = results._repr_html_()
    assert "0 complex events" in page and "<table>" not in page
    empty = results.to_arrow(form="flat")
    assert empty.num_rows == 0 and str(empty.schema.field("start").type) == "int64"


def test_cells_are_shortened() -> None:
    assert tables._cell(list(range(100)), 20) == "[0, 1, 2, 3, 4, 5..."
    assert tables._cell(None) == "NULL"
