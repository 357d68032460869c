"""``acel run``, ``check`` and ``compile`` on a workload (several queries, spec §6.1).

:mod:`acel.app.cli` hands a command over when its QUERY arguments name a
workload (:func:`acel.workload.is_workload`: several files, a folder, or a
file with ``QUERY name:`` headers).  ``run`` reads the stream once: the
optimized engine runs the workload's shared plan as events arrive and writes
each line as soon as it is final, tagged ``"query"`` (spec §12); Spark runs
it as one job; the other engines run each query in turn on the events read
once.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acel.app.options import (
    UsageError,
    describe,
    load_schema,
    no_events,
    read_given_schema,
    source_options,
)
from acel.app.reporting import (
    MemoryGuard,
    Progress,
    RunReport,
    eprint,
    spark_session,
    summary,
    write_groups,
)
from acel.io.formats import could_be_path, read_text_file
from acel.lang.schema import Schema

if TYPE_CHECKING:
    from acel.workload import NamedQuery

# acel.api and acel.workload are imported where a workload is run: one query's
# `acel run` never loads them (papers/engine.md "Start-up").


def dispatch(args: argparse.Namespace) -> bool:
    """Whether the command's QUERY arguments are a workload (then this module runs it);
    otherwise ``args.query`` becomes the one QUERY (or ``None``) the command expects."""
    queries = args.query if isinstance(args.query, list) else [args.query] if args.query else []
    if queries and may_be_workload(queries):
        from acel.workload import is_workload

        if is_workload(queries):
            args.query = queries
            return True
    args.query = queries[0] if queries else None
    return False


def may_be_workload(queries: list[str]) -> bool:
    """False when the QUERY arguments surely are one query: a single text or file that
    never says ``query`` cannot hold a ``QUERY name:`` header.  Otherwise
    :func:`acel.workload.is_workload` decides (it agrees on every False given here)."""
    if len(queries) != 1:
        return True
    text = queries[0]
    if could_be_path(text):
        path = Path(text)
        if path.is_dir():
            return True
        if path.is_file():
            text = read_text_file(path)
    return "query" in text.lower()


def _load(args: argparse.Namespace) -> tuple[list[NamedQuery], Schema | None]:
    """The workload, checked against ``--schema`` before any data is read."""
    from acel.workload import check_workload, workload_from_args

    workload = workload_from_args(args.query)
    given = read_given_schema(args)
    if given is not None:
        check_workload(workload, given)
    return workload, given


# ----------------------------------------------------------------- check


def cmd_check(args: argparse.Namespace) -> int:
    """``acel check`` of a workload: each query, and the shared plan with a schema."""
    from acel.workload import check_workload, workload_from_args

    workload = workload_from_args(args.query)
    schema = load_schema(args)
    if schema is not None:
        check_workload(workload, schema)
    head = "ok" if schema is not None else "ok (parsed; give --schema or --data to check names)"
    print(f"{head}: a workload of {len(workload)} queries")
    for q in workload:
        print(f"  {q.name}: {describe(q.query)}")
    if schema is not None:
        from acel.workload import describe_plan

        print("plan:")
        for line in describe_plan(workload, schema):
            print(f"  {line}")
    return 0


# ----------------------------------------------------------------- compile


def _suffixed(path: str, name: str) -> Path:
    p = Path(path)
    return p.with_name(f"{p.stem}.{name}{p.suffix}")


def cmd_compile(args: argparse.Namespace) -> int:
    """Every query's automaton and the shared plan (text, or DOT/SVG/PNG files)."""
    from acel.acea.engine.workload import WorkloadRunner
    from acel.acea.model import render
    from acel.api import Query, schema_of
    from acel.api import compile as compile_query
    from acel.workload import check_workload, workload_from_args

    workload = workload_from_args(args.query)
    schema = load_schema(args)
    if schema is None:  # the workload's own types (NEXT needs a schema: a clear error)
        types: dict[str, list[str]] = {}
        for q in workload:
            for name in schema_of(Query(q.query, q.text, q.locations)).type_names():
                types.setdefault(name, [])
        schema = Schema.of(types)
    else:
        check_workload(workload, schema)
    runner = WorkloadRunner([(q.name, q.query) for q in workload], schema)
    out: list[str] = [f"// workload of {len(workload)} queries"]
    out.extend(f"// {line}" for line in runner.describe())
    drawings: list[tuple[str, Any, str]] = []  # (name, automaton or None, DOT text)
    for n, plan in enumerate(runner.plans, start=1):
        drawings.append((f"shared{n}", None, plan.to_dot()))
    for n, group in enumerate(runner.prefixes, start=1):
        automaton = group.merged.automaton
        drawings.append((f"prefix{n}", automaton, render.to_dot(automaton)))
    for q in workload:
        compiled = compile_query(Query(q.query, q.text, q.locations), schema)
        if getattr(args, "simplify", False):
            compiled = compiled.simplify()
        size = ", ".join(f"{k}: {v}" for k, v in compiled.size().items())
        out.append(f"// {q.name}: {size}")
        drawings.append((q.name, compiled.automaton, compiled.dot))
    files = [(args.dot, "dot"), (args.svg, "svg"), (args.png, "png")]
    if not any(path for path, _ in files):
        print("\n".join(out))
        for name, _, dot in drawings:
            print(f"// ---- {name}")
            print(dot)
        return 0
    for path, fmt in files:
        if not path:
            continue
        for name, automaton, dot in drawings:
            target = _suffixed(path, name)
            if fmt == "dot":
                target.write_text(dot + "\n", encoding="utf-8")
            elif automaton is None:
                target = _render_dot(dot, target, fmt)
            else:
                target, drawn = render.render_or_dot(automaton, target, fmt)
                if not drawn:
                    eprint(f"acel compile: Graphviz's dot is not installed: wrote the DOT "
                            f"source {target} instead")
                    continue
            eprint(f"acel compile: wrote {target}")
    print("\n".join(out))
    return 0


def _render_dot(dot: str, target: Path, fmt: str) -> Path:
    """Render DOT text (the shared plan is not an automaton); its source without Graphviz."""
    import graphviz

    try:
        written = graphviz.Source(dot).render(outfile=str(target), format=fmt, cleanup=True)
    except graphviz.ExecutableNotFound:
        source = target.with_suffix(".dot")
        source.write_text(dot + "\n", encoding="utf-8")
        return source
    return Path(written)


# ----------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace, progress: Progress) -> int:
    """``acel run`` of a workload (the options already checked by
    :func:`acel.app.options.check_run_options`): one pass over the data."""
    if args.sase:
        raise UsageError("--sase FILE runs one SASE+ query, not a workload")
    from acel.io.results import check_output

    check_output(args.out, [args.data])
    if args.engine == "spark":
        return _run_spark(args, progress)
    return _run_stream(args, progress)


def _open(args: argparse.Namespace, workload: list[NamedQuery], given: Schema | None) -> Any:
    """The stream of ``--data``, every query checked against its schema
    (:func:`acel.api.open_stream`, as one query's run opens it)."""
    from acel.api import EmptyData, open_stream
    from acel.workload import check_workload

    watch = sorted(
        {q.query.within.attr for q in workload if q.query.within is not None and q.query.within.attr}
    )
    try:
        options = replace(source_options(args, given), watch=tuple(watch))
        return open_stream(args.data, lambda schema: check_workload(workload, schema), options)
    except EmptyData:
        raise no_events(args.data, "workload") from None


def _one_table(args: argparse.Namespace, workload: list[NamedQuery]) -> None:
    """CSV and Parquet hold one table: complex events and RETURN rows cannot share a file."""
    from acel.io.results import output_format

    kinds = {q.query.returns is None for q in workload}
    if len(kinds) == 2 and args.out is not None and output_format(args.out) != "jsonl":
        raise UsageError(
            "this workload has per-match and RETURN queries: their lines have different "
            "columns, so write them as JSON Lines (--out FILE.jsonl) or split the workload"
        )


def _run_stream(args: argparse.Namespace, progress: Progress) -> int:
    from acel.engines import engine as engine_named
    from acel.io.results import ResultWriter
    from acel.workload import workload_groups

    workload, given = _load(args)
    _one_table(args, workload)
    stream = _open(args, workload, given)
    engine = engine_named(args.engine)
    report = RunReport(progress, stream, args.max_events, engine)
    writer = ResultWriter(args.out, live=args.data == "-", limit=args.limit, workload=True)
    if engine.incremental:
        groups = workload_groups(
            workload, stream.schema, stream, max_events=args.max_events,
            progress=report, memory_check=MemoryGuard(args.max_memory).check,
        )
    else:
        groups = _batch_groups(engine, workload, stream, args.max_events, report)

    def add(group: list[tuple[str, Any]]) -> None:
        by_query: dict[str, list[Any]] = {}
        for name, result in group:
            by_query.setdefault(name, []).append(result)
        for name, results in by_query.items():
            writer.add(results, query=name)

    written = write_groups(writer, groups, add, progress)
    if written is None:
        return 130
    summary(args, progress, report.fed, _written(written, workload, writer.full, args.limit))
    return 0


def _written(written: int, workload: list[NamedQuery], full: bool, limit: int | None) -> str:
    text = f"{written:,} lines written for {len(workload)} queries"
    return text + (f" (stopped at --limit {limit:,})" if full and limit is not None else "")


def _batch_groups(engine: Any, workload: list[NamedQuery], stream: Any, max_events: int | None,
                  report: Any) -> Any:
    """An engine without a runner: the stream read once, each query run on it in turn;
    one group (complex events of all queries are ordered together when written)."""
    events = stream.events(limit=max_events)
    report(len(events), 0)
    group: list[tuple[str, Any]] = []
    for q in workload:
        group.extend((q.name, r) for r in engine.batch(q.query, events, stream.schema))
    yield group


def _run_spark(args: argparse.Namespace, progress: Progress) -> int:
    from acel.io.results import ResultWriter
    from acel.spark_backend.workload import run_workload_to_results
    from acel.workload import check_workload

    workload, given = _load(args)
    _one_table(args, workload)
    progress.note(f"starting Spark ({args.master or 'embedded local session'})", force=True)
    with spark_session(args.master) as session:
        results = run_workload_to_results(
            [(q.name, q.query) for q in workload], args.data, type_col=args.type_col,
            time_col=args.time_col, session=session, partitions=args.partitions, schema=given,
            progress=lambda line: progress.note(line, force=True),
            check=lambda schema: check_workload(workload, schema),
        )
    writer = ResultWriter(args.out, limit=args.limit, workload=True)
    try:
        for name, found in results.items():
            writer.add(found, query=name)
        written = writer.close()
    except BaseException:
        eprint(f"acel run: stopped; {writer.abort()}")
        raise
    summary(args, progress, None, _written(written, workload, writer.full, args.limit))
    return 0
