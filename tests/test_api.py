"""The public Python API (``import acel``): parse, check, compile, run, results, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import graphviz
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from acel.acea.engine import naive

import acel
from acel.app.cli import main
from acel.engines import in_process_engines
from acel.io.results import to_json_lines
from acel.lang.clauses import Match, TrendRow
from acel.lang.events import Event
from acel.testing import SPEC_STOCK_EVENTS, SPEC_STOCK_ROWS, SPEC_STOCK_SCHEMA

DATA = Path(__file__).parent / "data"
STOCK_SCHEMA = {"SELL": ["name", "price"], "BUY": ["name", "price"]}
EXAMPLE_3_2 = """(SELL AS msft ; SELL AS intel ; SELL AS amzn)
  FILTER msft[name = 'MSFT' AND price > 100] AND intel[name = 'INTL']
     AND amzn[name = 'AMZN' AND price < 2000]"""
INTERVALS_3_2 = [(0, 4), (1, 4), (0, 6), (0, 6), (1, 6), (1, 6)]
"""Spec §10: Example 3.2 has these six complex events."""


def stock_frame() -> pd.DataFrame:
    return pd.DataFrame(SPEC_STOCK_ROWS, columns=["type", "name", "price"])


def intervals(results: acel.Results) -> list[tuple[int, int]]:
    out = []
    for result in results:
        assert isinstance(result, Match)
        out.append((result.event.start, result.event.end))
    return out


# ------------------------------------------------------------------ import


def test_import_is_light_and_help_fits_a_screen() -> None:
    code = (
        "import sys, io, contextlib, acel\n"
        "heavy = [m for m in ('pyarrow', 'pandas', 'lark', 'acel.lang.parser', 'hypothesis') "
        "if m in sys.modules]\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    help(acel)\n"
        "print(heavy, len(out.getvalue().splitlines()))\n"
        "print(out.getvalue())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, _, text = done.stdout.partition("\n")
    heavy, lines = first.rsplit(" ", 1)
    assert heavy == "[]"
    assert int(lines) <= 80
    for name in ("parse", "compile", "run", "check", "acel.engines", "acel.spark", "acel.testing",
                 "CompiledQuery", "Results", "QueryError"):
        assert name in text


def test_package_is_typed() -> None:
    assert (Path(acel.__file__).parent / "py.typed").exists()
    assert "py.typed" in (Path(__file__).parents[1] / "pyproject.toml").read_text()


def test_unknown_attribute_of_the_package() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        acel.nope  # noqa: B018


# ------------------------------------------------------------------ parse, check


def test_parse_gives_canonical_text_and_compares_by_syntax() -> None:
    query = acel.parse("SELL as x;BUY  filter x[price>100]")
    assert str(query) == "SELL AS x ; BUY FILTER x[price > 100]"
    assert repr(query) == "acel.Query('SELL AS x ; BUY FILTER x[price > 100]')"
    assert query == acel.parse(str(query)) and hash(query) == hash(acel.parse(str(query)))
    assert query.types == ("SELL", "BUY")
    assert acel.parse(str(query)).text == str(query)


def test_errors_carry_the_text_the_command_line_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = "SELL AS x FILTER x[prize > 1]"
    with pytest.raises(acel.QueryError) as caught:
        acel.check(text, STOCK_SCHEMA)
    assert (caught.value.line, caught.value.column) == (1, 20)
    assert main(["check", text, "--schema", str(DATA / "stocks_schema.json")]) == 2
    assert f"acel check: query error: {caught.value}" in capsys.readouterr().err

    with pytest.raises(acel.QueryError) as syntax:
        acel.parse("SELL ; ; BUY")
    assert main(["fmt", "SELL ; ; BUY"]) == 2
    assert f"acel fmt: query error: {syntax.value}" in capsys.readouterr().err
    assert "^" in str(syntax.value)


def test_run_checks_before_reading_results() -> None:
    with pytest.raises(acel.QueryError, match="unknown attribute 'prize'"):
        acel.run("SELL AS x FILTER x[prize > 1]", stock_frame())
    with pytest.raises(acel.AcelError, match="unknown engine 'fast'"):
        acel.run("SELL", stock_frame(), "fast")


# ------------------------------------------------------------------ compile


def test_compile_shows_its_automaton() -> None:
    compiled = acel.compile(EXAMPLE_3_2, STOCK_SCHEMA)
    size = compiled.size()
    assert size == {"states": 4, "transitions": 5, "registers": 9, "loops": 2}
    assert compiled.dot.startswith("digraph")
    svg = compiled._repr_svg_()
    assert svg is not None and svg.lstrip().startswith("<?xml") and "<svg" in svg
    summary = compiled.summary().splitlines()
    assert summary[0] == f"ACEA of {acel.parse(EXAMPLE_3_2)}"
    assert summary[1] == "  4 states, 5 transitions, 9 registers, 2 loops"
    assert len([line for line in summary if " -> " in line]) == 5
    assert "4 states, 5 transitions, 9 registers" in repr(compiled)


def test_without_graphviz_jupyter_gets_the_text_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    from acel.acea.model import render

    def missing(_automaton: object, **_options: object) -> str:
        raise graphviz.ExecutableNotFound(("dot",))

    monkeypatch.setattr(render, "to_svg", missing)
    compiled = acel.compile("SELL ; BUY")
    assert compiled._repr_svg_() is None
    with pytest.raises(acel.AcelError, match="Graphviz"):
        compiled.svg()

    class Printer:
        text_out = ""

        def text(self, value: str) -> None:
            self.text_out += value

    printer = Printer()
    compiled._repr_pretty_(printer, False)
    assert printer.text_out == compiled.summary()


def test_compile_without_schema_uses_the_query_types() -> None:
    assert acel.compile("(A ; B)+").schema == acel.Schema.of({"A": [], "B": []})
    # names are checked only against a schema that is given
    assert acel.compile("(SELL AS x)+ FILTER x[INC(price)]").size()["loops"] == 1
    with pytest.raises(acel.AcelError, match="NEXT"):
        acel.compile("NEXT(A)")
    assert acel.compile("NEXT(A)", {"A": [], "B": []}).size()["states"] > 1


def test_simplified_automaton_has_the_same_complex_events() -> None:
    query = "(A AS x ; B) AND (A ; B AS y) FILTER x[v = 1] AND y[v = 2]"
    compiled = acel.compile(query, {"A": ["v"], "B": ["v"]})
    smaller = compiled.simplify()
    assert smaller.size()["transitions"] <= compiled.size()["transitions"]
    stream = [Event.make(k, {"type": "AB"[k % 2], "v": k % 3}) for k in range(8)]
    assert naive.evaluate(smaller.automaton, stream) == naive.evaluate(compiled.automaton, stream)


def test_compile_command_simplifies(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"A": ["v"], "B": ["v"]}))
    query = "(A AS x ; B) FILTER x[v = 1] AND x[v = 2]"
    assert main(["compile", query, "--schema", str(schema)]) == 0
    assert capsys.readouterr().out.startswith("// states: 3, transitions: 3, registers: 4, loops: 1")
    assert main(["compile", query, "--schema", str(schema), "--simplify"]) == 0
    assert capsys.readouterr().out.startswith("// states: 1, transitions: 0, registers: 0, loops: 0")


def test_compiled_query_runs() -> None:
    compiled = acel.compile(EXAMPLE_3_2, STOCK_SCHEMA)
    assert intervals(compiled.run(stock_frame())) == INTERVALS_3_2


# ------------------------------------------------------------------ run


def test_every_kind_of_data_gives_the_same_results(tmp_path: Path) -> None:
    frame = stock_frame()
    path = tmp_path / "stocks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))
    inputs = [frame, pa.Table.from_pandas(frame), frame.to_dict("records"), path, str(path)]
    answers = [acel.run(EXAMPLE_3_2, data).to_json_lines() for data in inputs]
    assert all(answer == answers[0] for answer in answers)
    assert len(answers[0]) == 6
    assert intervals(acel.run(EXAMPLE_3_2, frame)) == INTERVALS_3_2


@pytest.mark.parametrize("engine", [n for n in in_process_engines() if n != "optimized"])
def test_engines_agree_through_the_api(engine: str) -> None:
    want = acel.run(EXAMPLE_3_2, stock_frame()).to_json_lines()
    assert acel.run(EXAMPLE_3_2, stock_frame(), engine).to_json_lines() == want


def test_results_are_computed_as_they_are_read(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    n = 60_000
    with open(path, "w") as handle:
        for k in range(n):
            handle.write(json.dumps({"type": "AB"[k % 2], "v": k}) + "\n")
    results = acel.run("A ; B WITHIN 2 EVENTS", path)
    first = next(iter(results))
    assert isinstance(first, Match) and (first.event.start, first.event.end) == (0, 1)
    assert results.stream.read < n  # only the first batches were read


def test_trend_rows_to_pandas_and_arrow(tmp_path: Path) -> None:
    query = ("RETURN name, COUNT(*), MAX(i.price) PATTERN (SELL AS i)+ FILTER i[INC(price)] "
             "PARTITION BY name")
    results = acel.run(query, stock_frame())
    rows = results.to_list()
    assert all(isinstance(r, TrendRow) for r in rows)
    frame = results.to_pandas()
    assert list(frame.columns) == ["name", "COUNT(*)", "MAX(i.price)"]
    assert frame.to_dict("records") == [
        {"name": "AMZN", "COUNT(*)": 3, "MAX(i.price)": 1920},
        {"name": "INTL", "COUNT(*)": 3, "MAX(i.price)": 81},
        {"name": "MSFT", "COUNT(*)": 3, "MAX(i.price)": 102},
    ]
    # the same table as `acel run --out FILE.parquet`
    out = tmp_path / "rows.parquet"
    data = tmp_path / "stocks.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in stock_frame().to_dict("records")))
    assert main(["run", query, "--data", str(data), "--out", str(out)]) == 0
    assert results.to_arrow().equals(pq.read_table(out))


def test_complex_events_to_arrow_and_files(tmp_path: Path) -> None:
    results = acel.run(EXAMPLE_3_2, stock_frame())
    table = results.to_arrow()
    assert table.column_names == ["start", "end", "vars"]  # no PARTITION BY: no key
    assert list(zip(table["start"].to_pylist(), table["end"].to_pylist())) == INTERVALS_3_2
    first = dict(table["vars"][0].as_py())
    assert first["msft"][0]["attrs"]["price"] == 101  # typed columns, not JSON text
    assert str(table.schema.field("vars").type.item_type.value_type.field("attrs").type.field("price").type) == "int64"
    assert results.write(tmp_path / "out.jsonl") == 6
    assert (tmp_path / "out.jsonl").read_text().splitlines() == results.to_json_lines()


def test_a_function_is_an_engine() -> None:
    seen = []

    def mine(query: object, events: list[object], schema: object) -> list[object]:
        from acel.reference import oracle

        seen.append(len(events))
        return oracle.run(query, events, schema)  # type: ignore[arg-type]

    assert intervals(acel.run(EXAMPLE_3_2, stock_frame(), mine)) == INTERVALS_3_2
    assert seen == [7]


def test_engines_are_listed() -> None:
    """The project's engines are in the registry (a new one may join: tests iterate it)."""
    assert set(acel.engines.ENGINES) >= {"optimized", "oracle", "automaton", "sase", "spark"}
    assert "spark" not in acel.engines.in_process_engines()


def test_spec_stream_of_the_kit_is_the_frame() -> None:
    assert [e.as_dict() for e in SPEC_STOCK_EVENTS] == stock_frame().to_dict("records")
    assert SPEC_STOCK_SCHEMA == acel.api.as_schema(STOCK_SCHEMA)


def test_a_runner_hands_back_results_as_they_become_final_and_restores() -> None:
    """acel.runner (fresh or from a saved state) / CompiledQuery.runner: the incremental interface gives,
    over any cut, the results acel.run gives on the whole stream."""
    text = "A AS a ; B AS b FILTER a[v < 3] WITHIN 3 EVENTS"
    events = [{"type": "AB"[i % 3 == 2], "v": i % 5} for i in range(12)]
    whole = acel.run(text, events).to_json_lines()
    assert len(whole) >= 3
    for cut in range(len(events) + 1):
        runner = acel.compile(text, {"A": ["v"], "B": ["v"]}).runner()
        found = [r for e in events[:cut] for r in runner.push(e)]
        later = acel.runner(text, {"A": ["v"], "B": ["v"]}, state=runner.save())
        found += [r for e in events[cut:] for r in later.push(e)] + later.finish()
        assert to_json_lines(found) == whole, cut
    # a bare runner checks the query against the query's own names
    assert acel.runner("A ; B").push({"type": "A"}) == []


def test_restoring_another_querys_state_is_an_error() -> None:
    blob = acel.runner("A ; B WITHIN 2 EVENTS").save()
    with pytest.raises(acel.AcelError, match="another query"):
        acel.runner("A ; C WITHIN 2 EVENTS", state=blob)


def test_long_and_flat_tables_keep_integers_with_missing_values() -> None:
    """Issue 37: an integer attribute some events lack came out as floats (``101.0``)."""
    import acel

    results = acel.run("A AS x ; B AS y", [{"type": "A", "v": 101}, {"type": "B", "w": 1.5}])
    long = results.to_pandas(form="long")
    assert str(long["v"].dtype) == "Int64" and long["v"].tolist()[0] == 101
    assert long["v"].isna().tolist() == [False, True, False, True]
    assert str(long["w"].dtype) == "float64"
    assert str(results.to_pandas(form="flat")["x.v"].dtype) == "int64"  # no NULL: plain int64


def test_the_notebook_picture_fits_the_cell() -> None:
    """Issue 37: a wide automaton kept its 1,507 px and its final state fell off the page."""
    from acel.api import fit_to_width

    svg = '<?xml version="1.0"?>\n<svg width="1507pt" height="80pt" viewBox="0 0 1507 80"><g/></svg>'
    fitted = fit_to_width(svg)
    assert fitted.count("<svg") == 1
    assert '<svg style="max-width:100%;height:auto" width="1507pt"' in fitted
    assert fitted.replace(' style="max-width:100%;height:auto"', "") == svg
