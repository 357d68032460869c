"""The subcommands that sit on top of every engine: ``conform``, ``bench``, ``demo``.

They join the command registry of :mod:`acel.app.cli` with ``add_command``.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

from acel.app.cli import (
    UsageError,
    _eprint,
    add_command,
    check,
    load_query_text,
    parse_text,
)

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ conform


def _setup_conform(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="a query file or the query text")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--data", metavar="FILE", help="events to compare the engines on")
    source.add_argument("--schema", metavar="FILE", help="schema for generated streams only")
    p.add_argument("--type-col", default="type", metavar="C", help="the event type column (default type)")
    p.add_argument("--time-col", metavar="C", help="sort events by this column first")
    p.add_argument("--engines", default=None,
                   help="comma-separated engines (default: automaton,optimized, plus oracle "
                        "when the stream is small)")
    p.add_argument("--generate", type=int, default=0, metavar="N",
                   help="also compare on N random streams over the schema")
    p.add_argument("--length", type=int, default=8, metavar="L", help="longest generated stream (default 8)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the generated streams")
    p.add_argument("--max-events", type=int, default=None, metavar="N",
                   help="compare on the first N events of the data only")


def cmd_conform(args: argparse.Namespace) -> int:
    from acel.app.conform import ORACLE_LIMIT, conform
    from acel.io import read_events, read_schema

    text = load_query_text(args.query)
    query, locations = parse_text(text)
    stream = None
    if args.data:
        stream, schema = read_events(args.data, type_col=args.type_col, time_col=args.time_col)
        if args.max_events is not None:
            stream = stream[: args.max_events]
    else:
        schema = read_schema(args.schema)
        if not args.generate:
            raise UsageError("with --schema only, give --generate N streams to compare on")
    check(query, schema, text, locations)
    if args.engines:
        engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    else:
        engines = ["automaton", "optimized"]
        small = stream is None or len(stream) <= ORACLE_LIMIT
        if small and args.length <= ORACLE_LIMIT:
            engines.insert(0, "oracle")
    compared, found = conform(
        query, schema, engines, stream=stream, generate=args.generate, length=args.length,
        seed=args.seed, progress=lambda m: _eprint(f"acel conform: {m}"),
    )
    if found is None:
        print(f"ok: {', '.join(engines)} agree on {compared} stream(s)")
        return 0
    print(found.report())
    return 1


# -------------------------------------------------------------------- bench


def _setup_bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="small sizes only (under a minute)")
    p.add_argument("--spark", action="store_true", help="run the Spark benchmark (bench/spark_bench.py)")
    p.add_argument("--out", default="bench-out", help="folder for the table, JSON and plot (default bench-out)")


def cmd_bench(args: argparse.Namespace) -> int:
    script = REPO / "bench" / ("spark_bench.py" if args.spark else "run.py")
    if not script.exists():
        raise UsageError(f"the benchmarks live in a clone of the project: {script} is missing")
    argv = ["--out", args.out] + (["--quick"] if args.quick else [])
    namespace = runpy.run_path(str(script))
    main = namespace.get("main")
    if main is None:
        raise UsageError(f"{script} has no main(argv)")
    sys.path.insert(0, str(script.parent))
    return int(main(argv) or 0)


# --------------------------------------------------------------------- demo


def _setup_demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="demo-out", help="output folder (default demo-out)")
    p.add_argument("--days", type=int, default=None, help="only the first N days of January (a quick run)")
    p.add_argument("--master", default=None, help="Spark master URL (default: embedded local[*])")


def cmd_demo(args: argparse.Namespace) -> int:
    from acel.app.demo import run_demo

    run_demo(Path(args.out), days=args.days, master=args.master)
    return 0


add_command(
    "conform", _setup_conform, cmd_conform,
    help="run several engines on one query and report the first disagreement, shrunk",
    epilog="examples:\n  acel conform examples/stocks/three_sales.acel --data stocks.csv --max-events 12\n"
           "  acel conform \"(A AS x)+ FILTER x[INC(v)]\" --schema schema.json --generate 200 "
           "--engines oracle,automaton,optimized",
)
add_command(
    "bench", _setup_bench, cmd_bench,
    help="run the benchmarks (optimized engine vs SASE baseline and naive runs; Spark)",
    epilog="examples:\n  acel bench --quick\n  acel bench --out bench-out\n  acel bench --spark",
)
add_command(
    "demo", _setup_demo, cmd_demo,
    help="the main job: an ACEL query on real NYC 2013 flights and weather with Spark",
    epilog="examples:\n  acel demo\n  acel demo --days 7 --out /tmp/demo",
)
