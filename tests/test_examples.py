"""Every example query of examples/ on a slice of its real data: the optimized
engine and the Spark backend give the same results (issue 8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acel.io.results import to_json_lines

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

pytestmark = [pytest.mark.spark]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    from acel.app.datasets import flights_stream, stocks_stream

    folder = tmp_path_factory.mktemp("examples")
    flights = folder / "flights.parquet"
    flights_stream(limit_days=2).to_parquet(flights, index=False)
    stocks = folder / "stocks.parquet"
    stocks_stream().to_parquet(stocks, index=False)
    return {"flights": (flights, "ts"), "stocks": (stocks, "month")}


QUERIES = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.glob("*/*.acel")
                 if p.parent.name in ("flights", "stocks"))

# Examples whose slice must give a non-empty answer (so the comparison means something).
NON_EMPTY = {
    "flights/delay_propagation.acel", "flights/daily_delay_trends.acel",
    "stocks/three_sales.acel", "stocks/max_price_between.acel", "stocks/yearly_down_trends.acel",
    "flights/unabsorbed_delays.acel",
}


def test_every_example_is_covered() -> None:
    assert len(QUERIES) == 7
    assert NON_EMPTY <= set(QUERIES)


@pytest.mark.parametrize("name", QUERIES)
def test_example_gives_the_same_results_on_spark_and_optimized(
    name: str, data: dict[str, tuple[Path, str]], spark: Any
) -> None:
    from acel.acea.engine import run
    from acel.spark_backend import run_to_results

    from acel.io import read_events
    from acel.lang.checker import check_query
    from acel.lang.parser import parse_query

    path, time_col = data[name.split("/")[0]]
    text = (EXAMPLES / name).read_text()
    events, schema = read_events(path, time_col=time_col)
    query = parse_query(text)
    check_query(query, schema)
    single = to_json_lines(run(query, events, schema))
    on_spark = to_json_lines(run_to_results(text, str(path), time_col=time_col, session=spark))
    assert on_spark == single
    if name in NON_EMPTY:
        assert single, f"{name} found nothing on its slice"


def test_demo_runs_end_to_end_on_two_days(tmp_path: Path, spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import xml.etree.ElementTree as ET

    import pyarrow.parquet as pq

    from acel.app.demo import run_demo

    figures = run_demo(tmp_path, days=2)
    printed = capsys.readouterr().out
    assert figures["events"] > 1000 and figures["complex_events"] >= 1 and figures["trend_rows"] >= 1
    assert "Top delay propagations" in printed and "Done:" in printed
    assert pq.read_table(tmp_path / "delay_propagation.parquet").num_rows == figures["complex_events"]
    sample = (tmp_path / "delay_propagation.sample.jsonl").read_text().splitlines()
    assert len(sample) == min(50, figures["complex_events"])
    assert all("m" in json.loads(line)["vars"] for line in sample)
    svg = ET.parse(tmp_path / "delay_propagation.svg").getroot()
    assert svg.tag.endswith("svg")
    trend = (tmp_path / "daily_delay_trends.jsonl").read_text().splitlines()
    assert len(trend) == figures["trend_rows"]
