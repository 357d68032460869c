"""What the commands share to read their arguments: QUERY text, schemas, option types.

Every command (``fmt``, ``check``, ``run``, ``compile``, their workload forms in
:mod:`acel.app.workload_cmd`, ``conform``...) reads its inputs through these
functions, which go through :mod:`acel.api`, so the command line and the
library open, parse and check the same way (issue 26 §3).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acel.io.formats import could_be_path
from acel.io.options import SourceOptions
from acel.lang.errors import AcelError, DataError
from acel.lang.schema import Schema

if TYPE_CHECKING:
    from acel.api import Query

QUERY_SUFFIXES = (".acel", ".sase", ".txt", ".query", ".cel")
"""A QUERY argument ending like this is a file name even when the file is missing."""


class UsageError(AcelError):
    """A bad combination of command-line options."""


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


def load_query(arg: str) -> Query:
    """QUERY (a file or the text) parsed: a :class:`acel.api.Query` that keeps its text, so
    that check errors name line and column."""
    from acel.api import Query

    return Query.parse(load_query_text(arg))


def read_given_schema(args: argparse.Namespace) -> Schema | None:
    """The schema of ``--schema FILE``, if given."""
    from acel.io import read_schema

    path = getattr(args, "schema", None)
    return read_schema(path) if path else None


def load_schema(args: argparse.Namespace) -> Schema | None:
    """The schema from ``--schema``, else inferred from ``--data``: one pass that keeps no
    event (issue 37: ``acel check`` on the demo's Parquet file held all 362,891 events,
    16 s and 630 MB, to learn a schema; now 3 s and 150 MB)."""
    from acel.io.source import STDIN, open_events

    schema = read_given_schema(args)
    data = getattr(args, "data", None)
    if not data or schema is not None:
        return schema
    options = SourceOptions(type_col=args.type_col, time_col=getattr(args, "time_col", None))
    stream = open_events(data, options=options)
    if data == STDIN:
        if not stream.events():
            raise no_events(data)
        return stream.schema
    if (stream.facts.count == 0 if stream.facts is not None else not stream.schema.type_names()):
        raise no_events(data)
    return stream.schema


def no_events(data: str, what: str = "query") -> DataError:
    """The error for an empty ``--data`` file when no ``--schema`` says what it would hold."""
    return DataError(f"{data}: the file holds no events, so there is no schema to check the "
                     f"{what} against (give --schema to run it on an empty stream)")


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
    from acel.lang.printer import format_window

    if query.within is not None:
        parts.append(f"WITHIN {format_window(query.within)}")
    if query.slide is not None:
        parts.append(f"SLIDE {format_window(query.slide)}")
    return "; ".join(parts)


def source_options(args: argparse.Namespace, schema: Schema | None = None) -> SourceOptions:
    """The command line's source options (``--type-col``, ``--time-col``, ``--max-delay``,
    ``--idle-advance``, where the command has them) as the one record the readers take."""
    return SourceOptions(
        type_col=getattr(args, "type_col", "type"), time_col=getattr(args, "time_col", None), schema=schema,
        max_delay=getattr(args, "max_delay", None), idle_advance=getattr(args, "idle_advance", None),
    )


def add_type_col(parser: argparse.ArgumentParser) -> None:
    """The ``--type-col C`` option every command that reads events has."""
    parser.add_argument(
        "--type-col", default="type", metavar="C",
        help="column holding the event type (default: type); it becomes 'type'",
    )


def non_negative(text: str) -> int:
    """An argparse type: an integer ``>= 0``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def positive(text: str) -> int:
    """An argparse type: an integer ``>= 1``."""
    value = non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def positive_rate(text: str) -> float:
    """An argparse type: a finite number ``> 0`` (``--idle-advance``'s time units a second)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of time units a second")
    return value


def check_run_options(args: argparse.Namespace) -> None:
    """The option combinations ``acel run`` refuses for one query and a workload alike."""
    if args.data is None:
        raise UsageError("give --data FILE (or --engine spark --stream DIR)")
    if args.engine != "sase" and args.sase:
        raise UsageError("--sase FILE needs --engine sase")
    if args.engine != "spark" and (args.master or args.partitions):
        raise UsageError("--master and --partitions need --engine spark")
    if args.engine == "spark" and args.max_events is not None:
        raise UsageError("--max-events is not supported with --engine spark (slice the data instead)")
    if args.data == "-" and args.engine == "spark":
        raise UsageError("--data - (standard input) needs an engine that reads a stream, not spark")
    if args.max_delay is not None and (args.data != "-" or args.time_col is None):
        raise UsageError("--max-delay is for --data - with --time-col (a live stream's reorder bound)")
    if args.idle_advance is not None and (args.data != "-" or args.time_col is None):
        raise UsageError("--idle-advance is for --data - with --time-col (a live stream's event time)")
