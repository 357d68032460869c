"""The ``acel`` command line (also ``python -m acel``).

Each subcommand is a :class:`Command` in the registry :data:`COMMANDS`
(``fmt``, ``check``, ``run``, ``compile`` here); later commands (``conform``,
``bench``, ``demo``) join with :func:`add_command` without touching the others.
Engines, the checker and the compiler are imported lazily, so a missing piece
only affects the command that needs it.  Every user error (:class:`AcelError`,
a missing file) is printed on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acel.io.formats import could_be_path
from acel.lang.errors import AcelError, DataError, QueryError
from acel.lang.events import Event
from acel.lang.schema import Schema

EXIT_USER_ERROR = 2

QUERY_SUFFIXES = (".acel", ".sase", ".txt", ".query", ".cel")
"""A QUERY argument ending like this is a file name even when the file is missing."""


@dataclass(frozen=True)
class Command:
    """A subcommand: its help line, an example epilog, argument set-up and handler."""

    name: str
    help: str
    setup: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]
    epilog: str = ""


COMMANDS: dict[str, Command] = {}
"""The registry of subcommands, in the order they appear in ``acel --help``."""


def add_command(
    name: str,
    setup: Callable[[argparse.ArgumentParser], None],
    handler: Callable[[argparse.Namespace], int],
    *,
    help: str = "",
    epilog: str = "",
) -> None:
    """Register (or replace) a subcommand; ``handler(args)`` returns the exit status."""
    COMMANDS[name] = Command(name, help, setup, handler, epilog)


class UsageError(AcelError):
    """A bad combination of command-line options."""


# ----------------------------------------------------------------- shared helpers


def load_query_text(arg: str) -> str:
    """The text of QUERY: the file it names, or QUERY itself.

    Decided by what the argument is, never by trying to open any string: it
    names a file when it could be a path on this system (no line break or
    NUL, each part between slashes at most NAME_MAX bytes, PATH_MAX in all)
    and either that file exists or it ends like a query file (``.acel``, ...;
    then a missing file is an error, not a query).  Anything else, e.g. a
    query of more than 255 bytes without a slash, is query text.
    """
    if could_be_path(arg):
        if os.path.isfile(arg):
            from acel.io.formats import read_text_file

            return read_text_file(arg)
        if Path(arg).suffix.lower() in QUERY_SUFFIXES and not any(c.isspace() for c in arg):
            raise UsageError(f"query file {arg!r} not found")
    return arg


def parse_text(text: str) -> tuple[Any, Any]:
    """Parse query text; returns ``(query, locations)`` for located check errors."""
    from acel.lang.parser import parse_query_located

    return parse_query_located(text)


def check(query: Any, schema: Schema, text: str, locations: Any) -> bool:
    """Check a query against a schema; errors name line and column (as the API's do)."""
    from acel.api import Query

    Query(query, text, locations).check(schema)
    return True


def load_schema(args: argparse.Namespace) -> tuple[Schema | None, list[Event] | None]:
    """The schema from ``--schema``, else inferred from ``--data`` (with its events)."""
    from acel.io import read_events, read_schema

    schema = read_schema(args.schema) if getattr(args, "schema", None) else None
    data = getattr(args, "data", None)
    if data and schema is None:
        events, schema = read_events(
            data, type_col=args.type_col, time_col=getattr(args, "time_col", None)
        )
        if not events:
            raise DataError(f"{data}: the file holds no events, so there is no schema to check "
                            "the query against (give --schema instead)")
        return schema, events
    return schema, None


def describe(query: Any) -> str:
    """``types A, B; variables x, y`` and the clauses, for ``acel check``."""
    from acel.lang import ast

    types: dict[str, None] = {}
    variables: dict[str, None] = {}
    negated: set[int] = set()
    for node in ast.walk(query.formula):
        for psi in getattr(node, "excluded", ()):
            negated.update(id(inner) for inner in ast.walk(psi))
        if isinstance(node, (ast.Atom, ast.Next)):
            types.setdefault(node.type, None)
        elif isinstance(node, (ast.As, ast.Agg)) and id(node) not in negated:
            variables.setdefault(node.var, None)  # a negated formula's are local
    parts = [
        "types " + (", ".join(types) or "none"),
        "variables " + (", ".join(variables) or "none (only the types)"),
    ]
    if query.returns is not None:
        parts.append(f"RETURN with {len(query.returns)} item(s)")
    if query.partition_by:
        parts.append("PARTITION BY " + ", ".join(query.partition_by))
    if query.within is not None:
        parts.append("WITHIN")
    if query.slide is not None:
        parts.append("SLIDE")
    return "; ".join(parts)


def _type_col(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--type-col", default="type", metavar="C",
        help="column holding the event type (default: type); it becomes 'type'",
    )


def _eprint(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------- fmt


def _setup_fmt(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="a query file or the query text")


def cmd_fmt(args: argparse.Namespace) -> int:
    """Print the canonical text of a query."""
    from acel.api import parse

    print(parse(load_query_text(args.query)))
    return 0


# ----------------------------------------------------------------- check


def _setup_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", nargs="+",
                   help="a query file or the query text; several files, a folder or a file of "
                        "'QUERY name:' sections: a workload")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--data", metavar="FILE", help="events to infer the schema from")
    source.add_argument("--schema", metavar="FILE", help='schema JSON: {"types": {T: [a, ...]}}')
    _type_col(p)


def cmd_check(args: argparse.Namespace) -> int:
    """Parse and check a query; print what it uses."""
    from acel.app import workload_cmd

    if workload_cmd.dispatch(args):
        return workload_cmd.cmd_check(args)
    text = load_query_text(args.query)
    query, locations = parse_text(text)
    schema, _ = load_schema(args)
    info = describe(query)
    if schema is None:
        print(f"ok (parsed; give --schema or --data to check names): {info}")
        return 0
    check(query, schema, text, locations)
    print(f"ok: {info}")
    return 0


# ----------------------------------------------------------------- run



def _setup_run(p: argparse.ArgumentParser) -> None:
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
    _type_col(p)
    p.add_argument("--time-col", metavar="C",
                   help="sort events by this column (stable) before numbering them; with "
                        "--stream, the events' time for the watermark (they come numbered)")
    p.add_argument("--schema", metavar="FILE", help="check the data against this schema")
    p.add_argument("--out", metavar="FILE",
                   help="write results to FILE.jsonl, .csv or .parquet (default: JSON Lines on stdout)")
    p.add_argument("--limit", metavar="N", type=_non_negative,
                   help="write at most the first N results (in output order)")
    p.add_argument("--max-events", metavar="N", type=_non_negative,
                   help="use only the first N events of the stream (after sorting)")
    p.add_argument("--max-delay", metavar="D", type=float,
                   help="with --data - and --time-col: how late (in time units) an event may "
                        "arrive after a later one; later ones are reported, never reordered silently")
    p.add_argument("--max-memory", metavar="MIB", type=float,
                   help="stop with a message when the run uses more memory than this "
                        "(default: three quarters of the machine's memory)")
    p.add_argument("--sase", metavar="FILE", help="with --engine sase: a SASE+ query file")
    p.add_argument("--master", metavar="URL", help="with --engine spark: the Spark master")
    p.add_argument("--partitions", metavar="N", type=_positive,
                   help="with --engine spark: number of partitions")
    _setup_spark_stream(p)


def _engine_names() -> list[str]:
    from acel.engines import ENGINES

    return list(ENGINES)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


class Progress:
    """Progress lines on stderr, at most one a second (the first phase is always silent)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.last = self.start

    def note(self, message: str, *, force: bool = False) -> None:
        now = time.perf_counter()
        if force or now - self.last >= 1.0:
            _eprint(f"acel run: {message} ({now - self.start:.1f} s)")
            self.last = now

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


def cmd_run(args: argparse.Namespace) -> int:
    """Run a query on an event file (or standard input); write results as they become final."""
    progress = Progress()
    from acel.app import workload_cmd

    workload = workload_cmd.dispatch(args)
    if args.stream is not None:
        if workload:
            raise UsageError("--stream runs one query; run each query of the workload on its own")
        return _run_spark_stream(args, progress)
    if args.data is None:
        raise UsageError("give --data FILE (or --engine spark --stream DIR)")
    if args.engine != "sase" and args.sase:
        raise UsageError("--sase FILE needs --engine sase")
    if args.engine != "spark" and (args.master or args.partitions):
        raise UsageError("--master and --partitions need --engine spark")
    if args.engine == "spark" and args.max_events is not None:
        raise UsageError("--max-events is not supported with --engine spark (slice the data instead)")
    if workload:
        return workload_cmd.cmd_run(args, progress)
    if args.query is None and not (args.engine == "sase" and args.sase):
        raise UsageError("give a QUERY (or --engine sase --sase FILE)")
    if args.data == "-" and args.engine in ("spark",):
        raise UsageError("--data - (standard input) needs an engine that reads a stream, not spark")
    if args.max_delay is not None and (args.data != "-" or args.time_col is None):
        raise UsageError("--max-delay is for --data - with --time-col (a live stream's reorder bound)")
    from acel.io.results import check_output

    inputs = [args.data, args.schema, args.sase]
    if args.query is not None and could_be_path(args.query) and os.path.isfile(args.query):
        inputs.append(args.query)
    check_output(args.out, [i for i in inputs if i])  # a bad --out before any work
    if args.engine == "spark":
        results, n_events = _run_spark(args, progress)
        return _write_all(args, results, n_events, progress)
    if args.sase:
        results, n_events = _run_sase_file(args, progress)
        return _write_all(args, results, n_events, progress)
    return _run_stream(args, progress)


def _load_query(args: argparse.Namespace) -> tuple[Any, Schema | None]:
    """The parsed query and the ``--schema`` (checked against each other), before any data."""
    text = load_query_text(args.query)
    query, locations = parse_text(text)  # syntax errors before any data is read
    given = None
    if args.schema:
        from acel.io import read_schema

        given = read_schema(args.schema)
        check(query, given, text, locations)  # names checked before any data is read
    args._query_text, args._locations = text, locations
    return query, given


def _open_stream(args: argparse.Namespace, query: Any, given: Schema | None) -> Any:
    """The event stream of ``--data``, and the query checked against its schema."""
    from acel.io import open_events

    watch = [query.within.attr] if query.within is not None and query.within.attr else []
    stream = open_events(
        args.data, type_col=args.type_col, time_col=args.time_col, schema=given,
        watch=watch, max_delay=args.max_delay,
    )
    if given is None:
        if stream.facts is not None and stream.facts.count == 0:
            raise DataError(
                f"{args.data}: the file holds no events, so there is no schema to check the "
                "query against (give --schema to run it on an empty stream)"
            )
        check(query, stream.schema, args._query_text, args._locations)
    elif stream.schema.kinds != given.kinds:  # kinds the schema left open, read from the data
        check(query, stream.schema, args._query_text, args._locations)
    return stream


def _run_stream(args: argparse.Namespace, progress: Progress) -> int:
    """Events in batches, results written as soon as they are final (spec §12 order)."""
    from acel.engines import engine as engine_named
    from acel.engines.running import result_groups
    from acel.io.lines import LineBuilder
    from acel.io.results import ResultWriter

    query, given = _load_query(args)
    stream = _open_stream(args, query, given)
    engine = engine_named(args.engine)
    report = RunReport(progress, stream, args.max_events, engine)
    guard = MemoryGuard(args.max_memory)
    from acel.lang.checker import attribute_kinds

    writer = ResultWriter(
        args.out, live=args.data == "-", limit=args.limit,
        kinds=attribute_kinds(query, dict(stream.schema.kinds)), key_names=query.partition_by,
    )
    # complex events straight to text, unless Parquet wants their values
    build = LineBuilder(writer.encoder) if writer.kind != "parquet" else None
    groups = result_groups(
        query, stream.schema, stream, engine, max_events=args.max_events,
        progress=report, memory_check=guard.check, build=build,
    )
    written = write_groups(writer, groups, writer.add)
    if written is None:
        return 130
    what = "complex events" if query.returns is None else "rows"
    _summary(args, progress, report.fed, f"{written:,} {what} written"
             + (f" (stopped at --limit {args.limit:,})" if writer.full else ""))
    return 0


class RunReport:
    """The progress line of a run over ``stream`` (``progress(done, found)`` of
    :mod:`acel.engines.running`), remembering how many events were fed."""

    def __init__(self, progress: Progress, stream: Any, max_events: int | None, engine: Any) -> None:
        total = stream.facts.count if stream.facts is not None else None
        if total is not None and max_events is not None:
            total = min(total, max_events)
        self.progress, self.total, self.engine = progress, total, engine
        self.fed = 0

    def __call__(self, done: int, found: int) -> None:
        self.fed = done
        if not self.engine.incremental:  # one call over the whole stream: no count to show
            self.progress.note(f"the {self.engine.name} engine is running on {done:,} events "
                               "(its results come at the end)")
            return
        rate = done / max(self.progress.elapsed(), 1e-9)
        of = f" of {self.total:,}" if self.total else ""
        self.progress.note(f"{done:,}{of} events read, {found:,} results so far, {rate:,.0f} events/s")


def write_groups(writer: Any, groups: Iterable[Any], add: Callable[[Any], None]) -> int | None:
    """Write each group of results as it comes (``add`` then flush; Ctrl-C waits for whole
    lines); the count written, or None when interrupted (the partial file is kept)."""
    from acel.io.results import interrupts_between_writes

    try:
        with interrupts_between_writes():
            for group in groups:
                add(group)
                writer.flush()
                if writer.full:
                    break
            return int(writer.close())
    except KeyboardInterrupt:
        _eprint(f"acel run: interrupted; {writer.abort()}")
        return None
    except BaseException:
        _eprint(f"acel run: stopped; {writer.abort()}")
        raise


def _summary(args: argparse.Namespace, progress: Progress, n_events: int | None, written: str) -> None:
    """The last line on stderr: events, results, time, rate, peak memory, output."""
    seconds = progress.elapsed()
    parts = []
    if n_events is not None:
        parts.append(f"{n_events:,} events read")
    parts.append(written)
    parts.append(f"{seconds:.2f} s")
    if n_events:
        parts.append(f"{n_events / max(seconds, 1e-9):,.0f} events/s")
    parts.append(f"peak RSS {peak_rss_mib():,.0f} MiB")
    _eprint(f"acel run [{args.engine}]: " + ", ".join(parts) + (f" -> {args.out}" if args.out else ""))


def peak_rss_mib() -> float:
    """This process's peak resident memory, in MiB (Linux ``VmHWM``, else ``ru_maxrss``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class MemoryGuard:
    """Stops a run whose memory passes a limit, with a message instead of the kernel's kill.

    The limit is ``--max-memory`` MiB, by default three quarters of the memory
    this process may use: the machine's, or its container's (cgroup) limit when
    lower, which is the one the kernel's out-of-memory killer enforces.
    """

    def __init__(self, limit_mib: float | None) -> None:
        if limit_mib is None:
            try:
                total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except (ValueError, OSError, AttributeError):
                total = None
            cgroup = _cgroup_limit()
            if cgroup is not None and (total is None or cgroup < total):
                total = cgroup
            limit_mib = 0.75 * total / 2**20 if total else float("inf")
        self.limit = limit_mib
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def current_mib(self) -> float:
        try:
            with open("/proc/self/statm", encoding="ascii") as handle:
                return int(handle.read().split()[1]) * self.page / 2**20
        except (OSError, ValueError, IndexError):
            return peak_rss_mib()

    def check(self) -> None:
        used = self.current_mib()
        if used > self.limit:
            raise AcelError(
                f"memory limit reached: the run uses {used:,.0f} MiB (limit {self.limit:,.0f} MiB); "
                "a query without WITHIN keeps every run alive, and per-match output can be "
                "exponential: add WITHIN, use RETURN, or raise --max-memory"
            )


def _cgroup_limit() -> int | None:
    """The memory limit of this process's container in bytes (cgroup v2 or v1), if any."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as handle:
                text = handle.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # v1 writes a huge number for "none"
            return int(text)
    return None


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
    schema = None
    if args.schema:
        from acel.io import read_schema

        schema = read_schema(args.schema)
    events, _ = _read_for_run(args, schema, progress)
    return list(sase.run_sase(sase_query, events)), len(events)


def _run_spark(args: argparse.Namespace, progress: Progress) -> tuple[list[Any], int | None]:
    from acel.spark_backend import run_to_results

    query, given = _load_query(args)
    progress.note(f"starting Spark ({args.master or 'embedded local session'})", force=True)
    results = run_to_results(query, args.data, type_col=args.type_col, time_col=args.time_col,
                             master=args.master, partitions=args.partitions, schema=given,
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
    g.add_argument("--delay", metavar="D", type=float, default=0.0,
                   help="how late an event may arrive, in units of --time-col (default 0)")
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
                                            ("--max-delay", args.max_delay), ("--sase", args.sase),
                                            ("--partitions", args.partitions),
                                            ("--max-memory", args.max_memory))
                   if value is not None]
    if unsupported:
        raise UsageError(f"{', '.join(unsupported)} cannot be used with --stream")
    suffix = Path(args.out.rstrip("/")).suffix.lower()
    if suffix not in ("", ".jsonl", ".json", ".parquet", ".pq"):
        raise UsageError(f"--stream writes a folder of JSON Lines (--out DIR.jsonl) or Parquet "
                         f"(--out DIR or DIR.parquet) files, not {suffix!r}")
    fmt = "jsonl" if suffix in (".jsonl", ".json") else "parquet"
    from acel.spark_backend import get_session
    from acel.spark_backend import streaming as ss

    query, given = _load_query(args)
    progress.note(f"starting Spark ({args.master or 'embedded local session'})", force=True)
    session = get_session(args.master)
    frame, schema = ss.folder_stream(session, args.stream, type_col=args.type_col, schema=given)
    if given is None:
        check(query, schema, args._query_text, args._locations)
    planned = ss.plan_stream(query, frame, schema=schema, pos_col=args.pos_col,
                             type_col=args.type_col, time_col=args.time_col, delay=args.delay)
    checkpoint = args.checkpoint or args.out.rstrip("/") + ".checkpoint"
    running = ss.start(planned, args.out, checkpoint=checkpoint, fmt=fmt, once=args.once)
    progress.note(f"streaming {args.stream} -> {args.out} (checkpoint {checkpoint})", force=True)
    try:
        totals = ss.follow(running, lambda line: progress.note(line, force=True))
    except KeyboardInterrupt:
        running.stop()
        _eprint(f"acel run: interrupted; committed results are in {args.out}, the rest resumes "
                f"from {checkpoint}")
        return 130
    found = len(ss.read_results(planned, args.out, fmt, session))
    state = "the stream ended" if ss.ended(running.lastProgress) else "the stream goes on"
    _summary(args, progress, totals["events"],
             f"{found:,} results in {totals['batches']} micro-batches ({state}"
             + (f"; {totals['dropped']:,} late rows dropped" if totals["dropped"] else "") + ")")
    return 0


def _write_all(args: argparse.Namespace, results: list[Any], n_events: int | None,
               progress: Progress) -> int:
    """Write results computed all at once (Spark, SASE+ files) in the order of spec §12."""
    from acel.io.results import ResultWriter, interrupts_between_writes

    writer = ResultWriter(args.out, limit=args.limit)
    try:
        with interrupts_between_writes():
            writer.add(results)
            written = writer.close()
    except KeyboardInterrupt:
        _eprint(f"acel run: interrupted; {writer.abort()}")
        return 130
    except BaseException:
        _eprint(f"acel run: stopped; {writer.abort()}")
        raise
    what = "rows" if results and not hasattr(results[0], "event") else "complex events"
    total = len(results)
    _summary(args, progress, n_events,
             f"{written:,} {what} written" + (f" (of {total:,})" if written != total else ""))
    return 0


# ----------------------------------------------------------------- compile


def _setup_compile(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", nargs="+",
                   help="a query file or the query text; a workload (several files, a folder, "
                        "'QUERY name:' sections) draws its shared plan and each automaton")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--schema", metavar="FILE", help="schema JSON")
    source.add_argument("--data", metavar="FILE", help="events to infer the schema from")
    _type_col(p)
    p.add_argument("--dot", metavar="FILE", help="write the automaton as Graphviz DOT")
    p.add_argument("--svg", metavar="FILE",
                   help="render the automaton to SVG (without Graphviz's dot: DOT source instead)")
    p.add_argument("--png", metavar="FILE",
                   help="render the automaton to PNG (without Graphviz's dot: DOT source instead)")
    p.add_argument("--simplify", action="store_true",
                   help="fold constants and drop transitions that can never fire (same results)")
    p.add_argument("--detail", choices=("short", "full"), default="short",
                   help="short (default): guards in the query's words, register updates in a "
                        "numbered legend; full: every register, assignment and output")


def cmd_compile(args: argparse.Namespace) -> int:
    """Compile a query to an ACEA; print its size and DOT, or write DOT/SVG/PNG files."""
    from acel.app import workload_cmd

    if workload_cmd.dispatch(args):
        return workload_cmd.cmd_compile(args)
    from acel.api import Query
    from acel.api import compile as compile_query
    from acel.lang import ast

    text = load_query_text(args.query)
    query, locations = parse_text(text)
    schema, _ = load_schema(args)
    if schema is None and ast.contains(query.formula, ast.Next):
        raise UsageError("NEXT(R) expands over every type of the schema: give --schema or --data")
    compiled = compile_query(Query(query, text, locations), schema)  # without one: unchecked
    if args.simplify:
        compiled = compiled.simplify()
    if compiled.negated:
        _eprint("acel compile: the leading/trailing NOT of the pattern is not part of the "
                "automaton: the engines run its ψ beside it, within each window (spec §3.1)")
    from acel.acea.model import render

    summary = ", ".join(f"{k}: {v}" for k, v in compiled.size().items())
    dot = render.to_dot(compiled.automaton, args.detail)
    files = [(args.dot, "dot"), (args.svg, "svg"), (args.png, "png")]
    if not any(path for path, _ in files):
        print(f"// {summary}")
        print(dot)
        return 0
    for path, fmt in files:
        if not path:
            continue
        if fmt == "dot":
            Path(path).write_text(dot + ("" if dot.endswith("\n") else "\n"), encoding="utf-8")
        else:
            written, drawn = render.render_or_dot(compiled.automaton, path, fmt, args.detail)
            if not drawn:  # no Graphviz: the DOT source, and how to draw it
                _eprint(f"acel compile: Graphviz's dot is not installed, so {path} was not "
                        f"drawn; wrote its DOT source to {written} ({render.INSTALL_HINT}, "
                        f"then: {render.draw_command(written, path)})")
                continue
        _eprint(f"acel compile: wrote {path}")
    print(summary)
    return 0


# ----------------------------------------------------------------- registry, main

add_command(
    "fmt", _setup_fmt, cmd_fmt,
    help="print the canonical text of a query",
    epilog="example:\n  acel fmt \"(SELL AS x ; BUY) FILTER x[price > 100]\"\n  acel fmt examples/stocks.acel",
)
add_command(
    "check", _setup_check, cmd_check,
    help="parse a query and check its names against a schema",
    epilog="example:\n  acel check examples/stocks.acel --data tests/data/stocks.jsonl\n"
           "  acel check \"SELL AS x FILTER x[price > 1]\" --schema schema.json",
)
add_command(
    "run", _setup_run, cmd_run,
    help="run a query on an event file",
    epilog="examples:\n  acel run \"SELL ; BUY\" --data tests/data/stocks.jsonl\n"
           "  acel run query.acel --data flights.parquet --time-col ts --out out.parquet\n"
           "  acel run --engine sase --sase query.sase --data events.csv\n"
           "  acel run queries/ --data events.jsonl          # a workload: every .acel file",
)
add_command(
    "compile", _setup_compile, cmd_compile,
    help="compile a query to an automaton (ACEA) and draw it",
    epilog="examples:\n  acel compile \"(SELL AS x)+ FILTER x[INC(price)]\" --svg automaton.svg\n"
           "  acel compile query.acel --data events.jsonl | dot -Tpng > a.png",
)


EXTENSIONS = ("acel.app.commands", "acel.app.stepper")
"""Modules that register more commands with :func:`add_command` when imported
(``conform``, ``bench``, ``demo``, ``stepper``); a module missing from the build is skipped."""


def load_extensions() -> None:
    """Import the command modules of :data:`EXTENSIONS` (once; Python caches modules)."""
    for module in EXTENSIONS:
        try:
            importlib.import_module(module)
        except ImportError as error:
            if error.name != module:
                raise


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subparser per registered command."""
    load_extensions()
    parser = argparse.ArgumentParser(
        prog="acel",
        description="ACEL: complex event recognition with aggregation.",
        epilog="run 'acel COMMAND --help' for the options and an example of each command",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS.values():
        p = sub.add_parser(
            command.name, help=command.help, description=command.help,
            epilog=command.epilog, formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.setup(p)
        p.set_defaults(handler=command.handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse ``argv`` and run the command; user errors exit with status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USER_ERROR
    name = f"acel {args.command}"
    try:
        return int(args.handler(args))
    except QueryError as error:
        _eprint(f"{name}: query error: {error}")
    except DataError as error:
        _eprint(f"{name}: data error: {error}")
    except AcelError as error:
        _eprint(f"{name}: error: {error}")
    except FileNotFoundError as error:
        _eprint(f"{name}: error: no such file: {error.filename}")
    except IsADirectoryError as error:
        _eprint(f"{name}: error: {error.filename} is a directory")
    except UnicodeDecodeError as error:
        _eprint(f"{name}: error: the file is not UTF-8 text ({error.reason})")
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _eprint(f"{name}: error: {where}{error.strerror or error}")
    except KeyboardInterrupt:
        _eprint(f"{name}: interrupted")
        return 130
    return EXIT_USER_ERROR


def _quiet_stdout() -> None:
    """After a closed pipe (``acel run ... | head``), stop Python from complaining at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
