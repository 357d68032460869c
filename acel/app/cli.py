"""The ``acel`` command line (also ``python -m acel``).

Each subcommand is a :class:`Command` in the registry :data:`COMMANDS`
(``fmt``, ``check``, ``run``, ``compile`` here); later commands (``conform``,
``bench``, ``demo``) join with :func:`add_command` without touching the others.
Engines, the checker and the compiler are imported lazily, so a missing piece
only affects the command that needs it; a command's module is imported only
when that command is chosen (``acel run`` imports nothing of the workload, Spark
or ``--version`` machinery: papers/engine.md "Start-up").  Every user error (:class:`AcelError`,
a missing file) is printed on stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acel.app.options import (
    UsageError,
    add_type_col,
    describe,
    load_query,
    load_query_text,
    load_schema,
)
from acel.app.reporting import EXIT_TERMINATED, Terminated, eprint, terminate_as_interrupt
from acel.app.startup import pause_collection, resume_collection
from acel.lang.errors import AcelError, DataError, QueryError

EXIT_USER_ERROR = 2

__all__ = ["COMMANDS", "Command", "UsageError", "add_command", "describe", "load_query_text",
           "main"]


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


# ----------------------------------------------------------------- fmt


def _setup_fmt(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="a query file or the query text")


def cmd_fmt(args: argparse.Namespace) -> int:
    """Print the canonical text of a query."""
    from acel.api import parse

    print(parse(load_query_text(args.query)))
    return 0


# ----------------------------------------------------------------- check


def _add_queries_and_schema(p: argparse.ArgumentParser, query_help: str) -> None:
    """The arguments `check` and `compile` share: queries (one or a workload), where the
    schema comes from, and the type column."""
    p.add_argument("query", metavar="QUERY", nargs="+", help=query_help)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--data", metavar="FILE", help="events to infer the schema from")
    source.add_argument("--schema", metavar="FILE", help='schema JSON: {"types": {T: [a, ...]}}')
    add_type_col(p)


def _setup_check(p: argparse.ArgumentParser) -> None:
    _add_queries_and_schema(p, "a query file or the query text; several files, a folder or a "
                               "file of 'QUERY name:' sections: a workload")


def cmd_check(args: argparse.Namespace) -> int:
    """Parse and check a query; print what it uses."""
    from acel.app import workload_cmd

    if workload_cmd.dispatch(args):
        return workload_cmd.cmd_check(args)
    query = load_query(args.query)
    schema = load_schema(args)
    info = describe(query.ast)
    if schema is None:
        print(f"ok (parsed; give --schema or --data to check names): {info}")
        return 0
    query.check(schema)
    print(f"ok: {info}")
    return 0


# ----------------------------------------------------------------- compile


def _setup_compile(p: argparse.ArgumentParser) -> None:
    _add_queries_and_schema(p, "a query file or the query text; a workload (several files, a "
                               "folder, 'QUERY name:' sections) draws its shared plan and each "
                               "automaton")
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
    from acel.api import compile as compile_query
    from acel.app.hints import no_schema_warning
    from acel.lang import ast

    query = load_query(args.query)
    schema = load_schema(args)
    if schema is None and ast.contains(query.ast.formula, ast.Next):
        raise UsageError("NEXT(R) expands over every type of the schema: give --schema or --data")
    compiled = compile_query(query, schema)  # without one: unchecked
    warning = no_schema_warning(query.ast) if schema is None else None
    if warning is not None:
        eprint(f"acel compile: {warning}")
    if args.simplify:
        compiled = compiled.simplify()
    if compiled.negated:
        eprint("acel compile: the leading/trailing NOT of the pattern is not part of the "
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
                eprint(f"acel compile: Graphviz's dot is not installed, so {path} was not "
                        f"drawn; wrote its DOT source to {written} ({render.INSTALL_HINT}, "
                        f"then: {render.draw_command(written, path)})")
                continue
        eprint(f"acel compile: wrote {path}")
    print(summary)
    return 0


# ----------------------------------------------------------------- registry, main


def lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported at its first call: a command's module is loaded only
    when that command is chosen (issue 23, start-up cost)."""

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{module}.{name}``, imported on first use."
    return call


add_command(
    "fmt", _setup_fmt, cmd_fmt,
    help="print the canonical text of a query",
    epilog="examples:\n  acel fmt \"(SELL AS x ; BUY) FILTER x[price > 100]\"\n"
           "  acel fmt examples/paper/ex3_2_three_sales.acel",
)
add_command(
    "check", _setup_check, cmd_check,
    help="parse a query and check its names against a schema",
    epilog="examples:\n  acel check examples/paper/ex3_2_three_sales.acel --data tests/data/stocks.jsonl\n"
           "  acel check \"SELL AS x FILTER x[price > 1]\" --schema tests/data/stocks_schema.json",
)
add_command(
    "run", lazy("acel.app.run_cmd", "setup_run"), lazy("acel.app.run_cmd", "cmd_run"),
    help="run a query on an event file",
    epilog="examples:\n  acel run \"SELL ; BUY\" --data tests/data/stocks.jsonl\n"
           "  acel run examples/paper/ex3_2_three_sales.acel --data tests/data/stocks.csv "
           "--time-col ts --out out.parquet\n"
           "  acel run --engine sase --sase examples/stocks/msft_then_amzn.sase "
           "--data tests/data/stocks.csv\n"
           "  acel run examples/workloads/ --data tests/data/stocks.jsonl   # a workload: "
           "every .acel file\n"
           "  acel run \"(SELL AS x)+ ; BUY\" --data tests/data/stocks.jsonl --limit 10",
)
add_command(
    "compile", _setup_compile, cmd_compile,
    help="compile a query to an automaton (ACEA) and draw it",
    epilog="examples:\n  acel compile \"(SELL AS x)+ FILTER x[INC(price)]\" --svg automaton.svg\n"
           "  acel compile examples/paper/ex5_1_max_intel_price.acel --data tests/data/stocks.jsonl "
           "| dot -Tpng > a.png",
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


def version() -> str:
    """The toolkit's version: the installed distribution's, else the source tree's."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("acel")
    except PackageNotFoundError:
        from acel._version import __version__

        return __version__


def terminal_width() -> int:
    """``shutil.get_terminal_size().columns`` (``COLUMNS``, else the terminal, else 80)
    without importing shutil, which loads bz2, lzma and zlib: argparse makes a help
    formatter for every option it adds, so every start paid 1.4 ms for it."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Help(argparse.HelpFormatter):
    """argparse's help layout, its width from :func:`terminal_width`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_width() - 2 if width is None else width)


class _RawHelp(_Help, argparse.RawDescriptionHelpFormatter):
    """The same, descriptions and epilogs (the examples) kept as written."""


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked (``importlib.metadata``
    and the ``email`` package it loads cost ~15 ms of every start otherwise)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0,
                         help=help or "show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"acel {version()}")
        parser.exit()


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word not starting with ``-`` (the top level
    has no option taking a value); ``None`` when there is none (``acel --version``,
    ``acel --help``)."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser with one subparser per registered command.  Given the
    ``argv`` it will parse, only the chosen command's options are set up (so only
    that command's module is imported; none for ``--version``); every command is
    still listed by ``acel --help``, whose lines come from the registry."""
    load_extensions()
    parser = argparse.ArgumentParser(
        prog="acel",
        description="ACEL: complex event recognition with aggregation.",
        epilog="run 'acel COMMAND --help' for the options and an example of each command",
        formatter_class=_Help,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    every = argv is None
    only = None if argv is None else chosen_command(argv)
    for command in COMMANDS.values():
        p = sub.add_parser(
            command.name, help=command.help, description=command.help,
            epilog=command.epilog, formatter_class=_RawHelp,
        )
        if every or command.name == only:
            command.setup(p)
        p.set_defaults(handler=command.handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse ``argv`` and run the command; user errors exit with status 2."""
    if argv is None:  # the process is ours (acel, python -m acel)
        argv = sys.argv[1:]
        if chosen_command(argv) == "run":  # resumed by run_cmd before the events
            pause_collection()
    try:
        return _main(argv)
    finally:
        resume_collection()  # if the command stopped before its events (an error, --help)


def _main(argv: Sequence[str]) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USER_ERROR
    name = f"acel {args.command}"
    try:
        with terminate_as_interrupt():
            return int(args.handler(args))
    except QueryError as error:
        eprint(f"{name}: query error: {error}")
    except DataError as error:
        eprint(f"{name}: data error: {error}")
    except AcelError as error:
        eprint(f"{name}: error: {error}")
    except FileNotFoundError as error:
        eprint(f"{name}: error: no such file: {error.filename}")
    except IsADirectoryError as error:
        eprint(f"{name}: error: {error.filename} is a directory")
    except UnicodeDecodeError as error:
        eprint(f"{name}: error: the file is not UTF-8 text ({error.reason})")
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        eprint(f"{name}: error: {where}{error.strerror or error}")
    except Terminated:
        eprint(f"{name}: terminated")
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        eprint(f"{name}: interrupted")
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
