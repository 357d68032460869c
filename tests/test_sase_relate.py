"""The two-step SASE+ baseline runs filters that relate events (spec §5.1, issue 32 item 2).

SASE+ places iteration predicates (``a[i].price > a[i-1].price``) and aggregates over the
Kleene events (``avg(a[..i-1].price)``) on its NFA^b edges (seed 002 §3.2); the baseline
pushes those it can decide on an edge and checks the rest on each complete match.  The
examples of ``examples/relate/`` and seed 002's Query 3 run on it, and generated queries
of its declared fragment agree with the oracle.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from acel.reference import oracle
from acel.reference.sase import NotInFragment, parse_sase, run, translate
from hypothesis import given
from test_sase import QUERY3, QUERY3_ANY, QUERY3_STREAM, _compact

from acel.app.cli import main
from acel.engines import ENGINES
from acel.lang.checker import check_text
from acel.lang.events import Event
from acel.lang.schema import Schema
from acel.testing import Case, assert_conforms, cases, queries
from acel.testing.adapters import Tally

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "relate"
SCHEMA = Schema.of({"A": ["v"], "B": ["v"], "C": ["v"], "SELL": ["name", "v"], "BUY": ["name", "v"]})


def _events(*rows: tuple[str, dict[str, object]]) -> list[Event]:
    return [Event.make(k, {"type": t, **attrs}) for k, (t, attrs) in enumerate(rows)]  # type: ignore[arg-type]


STREAM = _events(
    ("A", {"v": 1}), ("SELL", {"name": "x", "v": 2}), ("A", {"v": 3}), ("B", {"v": 2}),
    ("A", {"v": 2}), ("BUY", {"name": "x", "v": 1}), ("C", {"v": 9}), ("A", {"v": 4}),
    ("BUY", {"name": "y", "v": 3}), ("B", {"v": 0}),
)


@pytest.mark.parametrize(
    "text",
    [
        "(A AS x)+ FILTER x[v > PREV(v)]",  # issue 32: was TypeError: Prev relates events
        "SELL AS a ; BUY AS b FILTER b[name = a.name]",  # issue 32: the same
        "(A AS x)+ ; B AS b FILTER x[v > RUNNING AVG(v)] AND b[v < LAST(x.v)]",
        "(A AS x)+ FILTER x[FIRST(x.v) < 3 AND v >= FIRST(x.v)]",
        "(A AS x)+ ; C AS c FILTER x[v < MAX(c.v) - 6 OR v = 1]",
        "A AS a ; B AS b ; C AS c FILTER c[v > a.v + b.v]",
        "(A AS x)+ FILTER x[v != FIRST(x.v)]",
        "(A AS x)+ FILTER x[v > AVG(x.v)]",
        "(A AS x){2,3} FILTER x[v > PREV(v)]",
        "(A AS x):+ ; B FILTER x[v >= PREV(v)]",
        "AGG t[n := COUNT(x), f := FIRST(x.v)]((A AS x)+) FILTER t[n >= 2]",
        "A AS a ; (B AS b OR C AS b) FILTER b[v > a.v]",
    ],
)
def test_relating_filters_equal_the_oracle(text: str) -> None:
    query = check_text(text, SCHEMA)
    assert run(query, STREAM, SCHEMA) == oracle.run(query, STREAM, SCHEMA)


def test_issue_32_queries_give_their_matches() -> None:
    rising = check_text("(A AS x)+ FILTER x[v > PREV(v)]", SCHEMA)
    bags = {tuple(e.get("v") for e in m.event.bag("x")) for m in run(rising, STREAM, SCHEMA)}  # type: ignore[union-attr]
    assert (1, 3, 4) in bags and (1, 2, 4) in bags and (3, 2) not in bags
    pairs = check_text("SELL AS a ; BUY AS b FILTER b[name = a.name]", SCHEMA)
    assert [(m.event.start, m.event.end) for m in run(pairs, STREAM, SCHEMA)] == [(1, 5)]  # type: ignore[union-attr]


def test_query3_translation_runs_on_the_baseline() -> None:
    """Seed 002's Query 3 in ACEL (FIRST, RUNNING AVG, LAST) on the two-step baseline
    gives the 68 matches of the NFA^b run on the SASE+ text."""
    query = translate(parse_sase(QUERY3.format(strategy="skip_till_any_match")))
    schema = Schema.of({"Stock": ["symbol", "price", "volume"]})
    assert _compact(run(query, QUERY3_STREAM, schema)) == QUERY3_ANY


@pytest.mark.parametrize(
    ("name", "dataset", "time_col"),
    [
        ("growing_delays", "flights", "ts"),
        ("above_first_sale", "stocks", "month"),
        ("above_running_average", "stocks", "month"),
    ],
)
def test_relate_examples_run_on_the_baseline(name: str, dataset: str, time_col: str,
                                             tmp_path: Path) -> None:
    """``examples/relate/`` on a short prefix of real data: the baseline equals the oracle."""
    from acel.app.datasets import flights_stream, stocks_stream
    from acel.io import read_events

    frame = flights_stream(limit_days=1) if dataset == "flights" else stocks_stream()
    path = tmp_path / "events.parquet"
    frame.to_parquet(path, index=False)
    events, schema = read_events(path, time_col=time_col)
    query = check_text((EXAMPLES / f"{name}.acel").read_text(), schema)
    ENGINES["sase"].check_supported(query)
    key = query.partition_by[0]
    keys = list(dict.fromkeys(e.get(key) for e in events if e.get(key) is not None))[:2]
    prefix = [e for e in events if e.get(key) in keys][:16]
    prefix = [e.at(k) for k, e in enumerate(prefix)]
    assert run(query, prefix, schema) == oracle.run(query, prefix, schema)


def test_outside_the_fragment_is_refused_before_reading(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """One clean line, no traceback, and no data read (a broken line would stop a read)."""
    with pytest.raises(NotInFragment):
        ENGINES["sase"].check_supported(check_text("(A OR B)+", SCHEMA))
    data = tmp_path / "broken.jsonl"
    data.write_text('{"type":"A","v":1}\n{"type":"B","v":1}\n{"type":"C","v":1}\n{broken\n')
    code = main(["run", "(A AS x)+ ; NOT B ; C", "--engine", "sase", "--data", str(data)])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "SASE+" in err and "broken" not in err


def test_relating_cli_run_has_no_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "a.jsonl"
    data.write_text('{"type":"A","v":1}\n{"type":"A","v":3}\n{"type":"A","v":2}\n')
    code = main(["run", "(A AS x)+ FILTER x[v > PREV(v)]", "--engine", "sase", "--data", str(data)])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err
    assert len(out.splitlines()) == 5  # {0} {1} {2} {0,1} {0,2}


@given(cases(of=queries(operators={"AS", "FILTER", "SEQ", "PLUS", "RELATE", "PROJECT", "WITHIN"})))
def test_sase_relating_agrees_with_the_oracle(case: Case) -> None:
    """Property: generated queries with relating terms give the oracle's results on the
    baseline (or a clean NotInFragment for a shape outside it)."""
    try:
        got = run(case.query, case.stream, case.schema)
    except NotInFragment:
        return
    assert got == oracle.run(case.query, case.stream, case.schema)


def test_sase_conforms_on_everything_it_declares() -> None:
    """Through the public kit, generating every operator the baseline declares."""
    tally = Tally()
    assert assert_conforms("sase", max_examples=80, seed=5, tally=tally) > 0
