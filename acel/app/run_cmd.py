"""``acel run``: one query on an event file, standard input, or a Spark stream.

A thin client of :mod:`acel.api`: the query is parsed with
:func:`acel.api.Query.parse`, the data opened and checked with
:func:`acel.api.open_checked`, the run is :func:`acel.engines.running.result_groups`
(the loop of :class:`acel.Results`), and the results are written and reported
through :mod:`acel.app.reporting`, which the workload form
(:mod:`acel.app.workload_cmd`) shares.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from acel.api import EmptyData, Query, open_checked
from acel.app import workload_cmd
from acel.app.hints import MissingAttributes
from acel.app.options import (
    UsageError,
    add_type_col,
    check_run_options,
    load_query,
    no_events,
    non_negative,
    positive,
    positive_rate,
    read_given_schema,
    source_options,
)
from acel.app.reporting import (
    MemoryGuard,
    Progress,
    RunReport,
    Terminated,
    eprint,
    spark_session,
    stopped_word,
    summary,
    write_groups,
)
from acel.app.runaway import RunawayGuard
from acel.app.startup import resume_collection
from acel.io.formats import could_be_path
from acel.lang.events import Event
from acel.lang.schema import Schema

# ----------------------------------------------------------------- run



def setup_run(p: argparse.ArgumentParser) -> None:
    """The options of ``acel run``."""
    p.add_argument("query", metavar="QUERY", nargs="*",
                   help="a query file or the query text (omit with --engine sase --sase FILE); "
                        "several files, a folder or a file of 'QUERY name:' sections: a workload, "
                        "run in one pass, every line tagged \"query\"")
    p.add_argument("--data", metavar="FILE",
                   help="events: .jsonl/.ndjson/.json, .csv or .parquet; '-' reads JSON Lines "
                        "from standard input as they arrive")
    p.add_argument("--engine", choices=_engine_names(), default="optimized",
                   help="oracle (definition, small inputs), automaton (naive ACEA runs), "
                        "optimized (default), sase (two-step SASE+ baseline), spark")
    add_type_col(p)
    p.add_argument("--time-col", metavar="C",
                   help="sort events by this column (stable) before numbering them; with "
                        "--stream, the events' time for the watermark (they come numbered)")
    p.add_argument("--schema", metavar="FILE", help="check the data against this schema")
    p.add_argument("--absent", metavar="ATTR", action="append", default=[],
                   help="with --schema: the data may lack this declared attribute (repeat, or "
                        "separate with commas); without it, a declared attribute the query reads "
                        "and no event has is an error")
    p.add_argument("--out", metavar="FILE",
                   help="write results to FILE.jsonl, .csv or .parquet (default: JSON Lines on stdout)")
    p.add_argument("--limit", metavar="N", type=non_negative,
                   help="write at most the first N results (in output order)")
    p.add_argument("--max-events", metavar="N", type=non_negative,
                   help="use only the first N events of the stream (after sorting)")
    p.add_argument("--max-delay", metavar="D", type=float,
                   help="with --data - and --time-col: how late (in time units) an event may "
                        "arrive after a later one; later ones are reported, never reordered silently "
                        "(with --stream: the same as --delay)")
    p.add_argument("--idle-advance", metavar="RATE", type=positive_rate,
                   help="with --data - (or --stream DIR) and --time-col: while no line (file) "
                        "arrives, event time moves on "
                        "at RATE time units a second (1: the column counts seconds, 1000: "
                        "milliseconds), so results waiting for a window to close (NOT at the end, "
                        "SLIDE rows) come out on time; a later event below it is late")
    p.add_argument("--max-memory", metavar="MIB", type=float,
                   help="stop with a message when the run uses more memory than this "
                        "(default: three quarters of the machine's memory)")
    p.add_argument("--sase", metavar="FILE", help="with --engine sase: a SASE+ query file")
    p.add_argument("--master", metavar="URL", help="with --engine spark: the Spark master")
    p.add_argument("--partitions", metavar="N", type=positive,
                   help="with --engine spark: number of partitions")
    _setup_spark_stream(p)


def _engine_names() -> list[str]:
    from acel.engines import ENGINES

    return list(ENGINES)


def cmd_run(args: argparse.Namespace) -> int:
    """Run a query on an event file (or standard input); write results as they become final."""
    progress = Progress()
    workload = workload_cmd.dispatch(args)
    if args.stream is not None:
        if workload:
            raise UsageError("--stream runs one query; run each query of the workload on its own")
        resume_collection()  # only one query's own run (_run_stream) starts with it paused
        return _run_spark_stream(args, progress)
    check_run_options(args)
    if workload:
        resume_collection()
        return workload_cmd.cmd_run(args, progress)
    if args.query is None and not (args.engine == "sase" and args.sase):
        raise UsageError("give a QUERY (or --engine sase --sase FILE)")
    from acel.io.results import check_output

    inputs = [args.data, args.schema, args.sase]
    if args.query is not None and could_be_path(args.query) and Path(args.query).is_file():
        inputs.append(args.query)
    check_output(args.out, [i for i in inputs if i])  # a bad --out before any work
    if args.engine == "spark" or args.sase:
        resume_collection()
    if args.engine == "spark":
        results, n_events = _run_spark(args, progress)
        return _write_all(args, results, n_events, progress)
    if args.sase:
        results, n_events = _run_sase_file(args, progress)
        return _write_all(args, results, n_events, progress)
    return _run_stream(args, progress)


def _load_query(args: argparse.Namespace) -> tuple[Query, Schema | None]:
    """The parsed query and the ``--schema`` (checked against each other), before any data."""
    query = load_query(args.query)  # syntax errors before any data is read
    given = read_given_schema(args)
    if given is not None:
        query.check(given)  # names checked before any data is read
    return query, given


def open_data(args: argparse.Namespace, query: Query, given: Schema | None) -> Any:
    """The event stream of ``--data``, and the query checked against its schema
    (:func:`acel.api.open_checked`, its errors in the command line's words)."""
    try:
        return open_checked(query, args.data, source_options(args, given))
    except EmptyData:
        raise no_events(args.data) from None


def _run_stream(args: argparse.Namespace, progress: Progress) -> int:
    """Events in batches, results written as soon as they are final (spec §12 order)."""
    from acel.engines import engine as engine_named
    from acel.engines.running import result_groups
    from acel.io.lines import LineBuilder
    from acel.io.results import ResultWriter
    from acel.lang.checker import attribute_kinds

    parsed, given = _load_query(args)
    engine = engine_named(args.engine)
    engine.check_supported(parsed.ast)  # refuse before any data is read
    stream = open_data(args, parsed, given)
    query = parsed.ast
    report = RunReport(progress, stream, args.max_events, engine)
    guard = MemoryGuard(args.max_memory)
    writer = ResultWriter(
        args.out, live=args.data == "-", limit=args.limit,
        kinds=attribute_kinds(query, dict(stream.schema.kinds)), key_names=query.partition_by,
    )
    # complex events straight to text, unless Parquet wants their values
    build = LineBuilder(writer.encoder) if writer.kind != "parquet" else None
    absent = {name.strip() for names in args.absent for name in names.split(",") if name.strip()}
    missing = MissingAttributes(query, given, absent) if given is not None else None
    groups = result_groups(
        query, stream.schema, stream, engine, max_events=args.max_events,
        progress=report, memory_check=guard.check, build=build, inspect=missing,
        big_step=_runaway_guard(args, parsed, given, progress),
    )
    resume_collection()  # start-up is over: the run collects its own garbage
    written = write_groups(writer, groups, writer.add, progress)
    if written is None:
        return 130
    error = missing.error(report.fed) if missing is not None else None
    what = "complex events" if query.returns is None else "rows"
    summary(args, progress, report.fed, f"{written:,} {what} written"
            + (f" (stopped at --limit {args.limit:,})" if writer.full else ""))
    if error is not None:  # issue 37: a declared attribute no event has is not a quiet 0
        eprint(f"acel run: error: {error}")
        return 2
    return 0


def _runaway_guard(args: argparse.Namespace, parsed: Query, given: Schema | None,
                   progress: Progress) -> RunawayGuard | None:
    """The guard that stops a per-match run with an astronomical output (issue 24 item 7),
    or any run whose one event lists too many complex events to hold (issue 35).  It counts
    them (never for a RETURN query); ``None`` for standard input (read once, and live)."""
    if args.data == "-":  # a live stream: its lines go out as they come, unwatched
        return None
    from acel.engines.running import count_complex_events

    aggregated = parsed.ast.returns is not None

    def count() -> int | None:
        if aggregated:
            return None
        progress.note("many complex events end at one event: counting them all first",
                      force=True)
        again = open_data(args, parsed, given)
        return count_complex_events(parsed.ast, again.schema, again, args.max_events)

    choosing = parsed.ast.select != "ALL" or parsed.ast.skip is not None
    return RunawayGuard(count, args.limit, aggregated=aggregated, choosing=choosing,
                        memory=MemoryGuard(None).current_mib)


def _read_for_run(args: argparse.Namespace, schema: Schema | None,
                  progress: Progress) -> tuple[list[Event], Schema]:
    from acel.io import read_events

    events, schema = read_events(args.data, type_col=args.type_col, time_col=args.time_col,
                                 schema=schema)
    if args.max_events is not None:
        events = events[: args.max_events]
    progress.note(f"read {len(events)} events from {args.data}")
    return events, schema


def _run_sase_file(args: argparse.Namespace, progress: Progress) -> tuple[list[Any], int]:
    from acel.reference import sase

    if args.query is not None:
        raise UsageError("give either QUERY or --sase FILE, not both")
    from acel.io.formats import read_text_file

    text = read_text_file(args.sase)
    sase_query = sase.parse_sase(text)
    events, _ = _read_for_run(args, read_given_schema(args), progress)
    return list(sase.run_sase(sase_query, events)), len(events)


def _run_spark(args: argparse.Namespace, progress: Progress) -> tuple[list[Any], int | None]:
    from acel.spark_backend import run_to_results
    from acel.spark_backend.run import prefetch

    query, given = _load_query(args)
    prefetch(query.ast, args.data, type_col=args.type_col, time_col=args.time_col, schema=given)
    progress.note(f"starting Spark ({args.master or 'embedded local session'})", force=True)
    with spark_session(args.master) as session:
        results = run_to_results(query.ast, args.data, type_col=args.type_col,
                                 time_col=args.time_col, session=session,
                                 partitions=args.partitions, schema=given,
                                 progress=lambda line: progress.note(line, force=True))
        return list(results), None


def _setup_spark_stream(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Structured Streaming (--engine spark --stream DIR)")
    g.add_argument("--stream", metavar="DIR",
                   help="run on the event files landing in DIR (moved in whole) until a row of type "
                        "#end; --out names the output folder (Parquet, JSON when it ends in .jsonl)")
    g.add_argument("--checkpoint", metavar="DIR",
                   help="the streaming query's checkpoint (default: OUT.checkpoint): a restart "
                        "resumes from it, with no result lost or repeated")
    g.add_argument("--pos-col", metavar="C", default="pos",
                   help="each event's 0-based position in the whole stream (default: pos)")
    g.add_argument("--delay", metavar="D", type=float,
                   help="how late an event may arrive, in units of --time-col (default 0; "
                        "--max-delay is the same); with --idle-advance RATE, while no file "
                        "comes, event time moves on at RATE units a second")
    g.add_argument("--once", action="store_true",
                   help="process the files present and stop (the state waits for the next run)")


def _run_spark_stream(args: argparse.Namespace, progress: Progress) -> int:
    """``--engine spark --stream DIR``: a Structured Streaming query over a folder."""
    if args.engine != "spark":
        raise UsageError("--stream DIR needs --engine spark")
    if args.data is not None:
        raise UsageError("give either --data FILE or --stream DIR")
    if not args.out:
        raise UsageError("--stream DIR needs --out DIR (the results' folder)")
    unsupported = [flag for flag, value in (("--limit", args.limit), ("--max-events", args.max_events),
                                            ("--sase", args.sase),
                                            ("--partitions", args.partitions),
                                            ("--max-memory", args.max_memory))
                   if value is not None]
    if unsupported:
        raise UsageError(f"{', '.join(unsupported)} cannot be used with --stream")
    fmt = _stream_output(args.out)
    delay = _stream_delay(args)
    from acel.spark_backend import get_session
    from acel.spark_backend import streaming as ss

    query, given = _load_query(args)
    progress.note(f"starting Spark ({args.master or 'embedded local session'})", force=True)
    session = get_session(args.master)
    frame, schema = ss.folder_stream(session, args.stream, type_col=args.type_col, schema=given)
    if given is None:
        query.check(schema)
    checkpoint = args.checkpoint or args.out.rstrip("/") + ".checkpoint"
    planned = ss.plan_stream(query.ast, frame, schema=schema, pos_col=args.pos_col,
                             type_col=args.type_col, time_col=args.time_col, delay=delay,
                             idle_advance=args.idle_advance,
                             ticks=str(Path(checkpoint) / "acel-ticks") if args.idle_advance else None)
    running = ss.start(planned, args.out, checkpoint=checkpoint, fmt=fmt, once=args.once)
    progress.note(f"streaming {args.stream} -> {args.out} (checkpoint {checkpoint})", force=True)
    try:
        totals = ss.follow(running, lambda line: progress.note(line, force=True), ticks=planned.ticks)
    except KeyboardInterrupt as error:
        running.stop()
        eprint(f"acel run: {stopped_word(error)}; committed results are in {args.out}, the rest "
               f"resumes from {checkpoint}")
        return 143 if isinstance(error, Terminated) else 130
    found = len(ss.read_results(planned, args.out, fmt, session))
    state = "the stream ended" if ss.ended(running.lastProgress) else "the stream goes on"
    summary(args, progress, totals["events"],
             f"{found:,} results in {totals['batches']} micro-batches ({state}"
             + (f"; {totals['dropped']:,} late rows dropped" if totals["dropped"] else "") + ")")
    return 0


def _stream_delay(args: argparse.Namespace) -> float:
    """The stream's watermark delay: ``--delay`` or its live-reader name ``--max-delay``;
    and ``--idle-advance`` checked against the other stream options."""
    if args.max_delay is not None and args.delay is not None:
        raise UsageError("give either --delay or --max-delay (the same bound) with --stream")
    delay = args.max_delay if args.max_delay is not None else (args.delay or 0.0)
    if not 0 <= delay < float("inf"):
        raise UsageError(f"the watermark delay must be a non-negative number, not {delay}")
    if args.idle_advance is not None:
        if args.time_col is None:
            raise UsageError("--idle-advance with --stream needs --time-col (it moves event time)")
        if args.once:
            raise UsageError("--idle-advance cannot be used with --once (a --once run does not "
                             "wait for time to pass)")
    return delay


def _write_all(args: argparse.Namespace, results: list[Any], n_events: int | None,
               progress: Progress) -> int:
    """Write results computed all at once (Spark, SASE+ files) in the order of spec §12."""
    from acel.io.results import ResultWriter, interrupts_between_writes

    writer = ResultWriter(args.out, limit=args.limit)
    try:
        with interrupts_between_writes():
            writer.add(results)
            written = writer.close()
    except KeyboardInterrupt as error:
        eprint(f"acel run: {stopped_word(error)}; {writer.abort()}")
        return 143 if isinstance(error, Terminated) else 130
    except BaseException:
        eprint(f"acel run: stopped; {writer.abort()}")
        raise
    what = "rows" if results and not hasattr(results[0], "event") else "complex events"
    total = len(results)
    summary(args, progress, n_events,
             f"{written:,} {what} written" + (f" (of {total:,})" if written != total else ""))
    return 0


def _stream_output(out: str) -> str:
    """The output format of ``--stream``'s folder (by its extension; none: Parquet): one
    Spark's streaming file sink writes (:mod:`acel.io.output_formats`)."""
    from acel.io.output_formats import output_formats

    suffix = Path(out.rstrip("/")).suffix.lower()
    if suffix == "":
        return "parquet"
    for fmt in output_formats():
        if suffix in fmt.suffixes and fmt.spark_sink is not None:
            return fmt.name
    raise UsageError(f"--stream writes a folder of JSON Lines (--out DIR.jsonl) or Parquet "
                     f"(--out DIR or DIR.parquet) files, not {suffix!r}")
