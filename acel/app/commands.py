"""The subcommands that sit on top of every engine: ``conform``, ``bench``, ``demo``.

They join the command registry of :mod:`acel.app.cli` with ``add_command``.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import Any

from acel.app.cli import add_command
from acel.app.options import UsageError, load_query_text
from acel.app.reporting import eprint

REPO = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ conform


def _setup_conform(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", nargs="?",
                   help="a query file or the query text (omit it to generate queries too)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--data", metavar="FILE", help="events to compare the engines on")
    source.add_argument("--schema", metavar="FILE",
                        help="schema for generated streams (and queries, without QUERY)")
    p.add_argument("--type-col", default="type", metavar="C", help="the event type column (default type)")
    p.add_argument("--time-col", metavar="C", help="sort events by this column first")
    p.add_argument("--engines", default=None,
                   help="comma-separated engines (default: automaton,optimized, plus oracle "
                        "when the stream is small; without QUERY: optimized)")
    p.add_argument("--against", metavar="CMD",
                   help="check an external engine: a real engine by name (core, flink, pandas-mr: "
                        "installed on first use), or a command line with {query} and {data} "
                        "(also {schema}, {out}) that writes spec §12 results and exits 3 for an "
                        "unsupported query (papers/conformance.md)")
    p.add_argument("--null-rate", type=float, default=None, metavar="P",
                   help="chance that a generated attribute is NULL (default 0.1, or 0.05 with "
                        "QUERY; 0 for the real engines, which have no NULL)")
    p.add_argument("--reference", metavar="ENGINE", default=None,
                   help="the engine the others are compared with (default oracle; "
                        "optimized for long streams)")
    p.add_argument("--operators", metavar="OPS",
                   help="generated queries use only these operators (comma-separated names of "
                        "papers/conformance.md, e.g. SEQ,AS,FILTER)")
    p.add_argument("--without", metavar="OPS", default="",
                   help="operators the engine does not support: never generated")
    p.add_argument("--generate", type=int, default=None, metavar="N",
                   help="also compare on N random streams over the schema (without QUERY: "
                        "N generated queries and streams, default 300)")
    p.add_argument("--length", type=int, default=None, metavar="L",
                   help="longest generated stream (default 8; 7 without QUERY)")
    p.add_argument("--max-depth", type=int, default=3, metavar="D",
                   help="without QUERY: how deeply generated operators nest (default 3)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the generated streams")
    p.add_argument("--max-events", type=int, default=None, metavar="N",
                   help="compare on the first N events of the data only")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="with --against: seconds one run of CMD may take (default 60)")
    p.add_argument("--replay", metavar="PATH", nargs="+",
                   help="replay recorded cases (.case files, or folders of them, e.g. "
                        "tests/conformance) against --against or --engines")
    p.add_argument("--save", metavar="DIR",
                   help="write every distinct disagreement to DIR as a replayable .case file")
    p.add_argument("--keep-going", type=int, nargs="?", const=10, default=None, metavar="N",
                   help="without QUERY: collect distinct disagreements (one per shrunk query "
                        "shape) and stop after N (default 10)")
    p.add_argument("--report", choices=("text", "json", "junit"), default=None,
                   help="print a report: counts (agreed, disagreed, unsupported, too large, "
                        "adapter errors), reasons, coverage, failures")
    p.add_argument("--report-file", metavar="FILE",
                   help="write the report to FILE instead of standard output")
    p.add_argument("--no-corners", action="store_true",
                   help="without QUERY: uniform generation only (corner-seeking is on by default)")


def _names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def cmd_conform(args: argparse.Namespace) -> int:
    from acel.testing.real import against as against_engine

    against = None
    if args.against:
        against, real = against_engine(args.against, unsupported=_names(args.without),
                                       timeout=args.timeout)
        if args.null_rate is None and real is not None:
            args.null_rate = real.null_rate
    if args.replay:
        from acel.app.conform import cmd_replay

        return cmd_replay(args, against)
    if args.query is None:
        from acel.app.conform import cmd_generated

        return cmd_generated(args, against)
    from acel.api import as_query
    from acel.app.conform import ORACLE_LIMIT, conform
    from acel.engines import ENGINES
    from acel.io import read_events, read_schema

    query = as_query(load_query_text(args.query))
    stream = None
    length = args.length or 8
    if args.data:
        stream, schema = read_events(args.data, type_col=args.type_col, time_col=args.time_col)
        if args.max_events is not None:
            stream = stream[: args.max_events]
    elif args.schema:
        schema = read_schema(args.schema)
        if not args.generate:
            raise UsageError("with --schema only, give --generate N streams to compare on")
    else:
        raise UsageError("give --data FILE to compare on, or --schema FILE with --generate N")
    query.check(schema)
    small = (stream is None or len(stream) <= ORACLE_LIMIT) and length <= ORACLE_LIMIT
    engines: list[Any] = _names(args.engines)
    if not engines:
        if against is not None:
            reference = args.reference or ("oracle" if small else "optimized")
            if ENGINES[reference].refuses(query.ast) and reference == "optimized":
                reference = "automaton"
            engines = [reference]
        else:
            engines = ["automaton", "optimized"]
            if small:
                engines.insert(0, "oracle")
    elif args.reference:
        engines.insert(0, args.reference)
    if against is not None:
        engines.append(against)
    from acel.testing.adapters import Tally

    tally = Tally()
    compared, found = conform(
        query.ast, schema, engines, stream=stream, generate=args.generate or 0, length=length,
        seed=args.seed, progress=lambda m: eprint(f"acel conform: {m}"),
        null_rate=0.05 if args.null_rate is None else args.null_rate, tally=tally,
    )
    names = ", ".join(e if isinstance(e, str) else e.name for e in engines)
    if found is None:
        skipped = f" ({tally.skipped} skipped: unsupported)" if tally.skipped else ""
        print(f"ok: {names} agree on {compared} stream(s){skipped}")
        return 0
    print(found.report())
    if args.save:
        from acel.app.conform import save_disagreement

        eprint(f"acel conform: saved {save_disagreement(found, query.ast, schema, args.save)}")
    return 1


# -------------------------------------------------------------------- bench


def _setup_bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="small sizes only (under a minute)")
    p.add_argument("--spark", action="store_true", help="run the Spark benchmark (bench/spark_bench.py)")
    p.add_argument("--out", default="bench-out", help="folder for the table, JSON and plot (default bench-out)")
    p.add_argument("--parts", default=None,
                   help="comma-separated parts of bench/run.py (e.g. peers: acel run against CORE "
                        "and C on W0, bench/peers.py); default: its usual parts")


def cmd_bench(args: argparse.Namespace) -> int:
    script = REPO / "bench" / ("spark_bench.py" if args.spark else "run.py")
    if not script.exists():
        raise UsageError(f"the benchmarks live in a clone of the project: {script} is missing")
    argv = ["--out", args.out] + (["--quick"] if args.quick else [])
    if args.parts is not None:
        if args.spark:
            raise UsageError("--parts chooses parts of bench/run.py, not of the Spark benchmark")
        argv += ["--parts", args.parts]
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
    help="check engines (yours too: --against CMD) against the oracle; report the first "
         "disagreement, shrunk",
    epilog="examples:\n  acel conform examples/paper/ex3_2_three_sales.acel --data tests/data/stocks.csv "
           "--max-events 12\n"
           "  acel conform \"(A AS a)+ FILTER a[INC(x)]\" --schema tests/data/ab_schema.json "
           "--generate 200 "
           "--engines oracle,automaton,optimized\n"
           "  acel conform --engines optimized --generate 200   # generated queries too\n"
           "  acel conform --against \"python3 examples/conformance/seq_engine.py {query} {data}\" "
           "--operators SEQ\n"
           "  acel conform --replay tests/conformance --against core   # CORE's recorded findings "
           "(pycer, installed on first use)",
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
