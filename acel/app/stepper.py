"""``acel stepper``: write the step-through page of a query on a short stream (issue 25 §2).

The page (:mod:`acel.stepper`) is one self-contained HTML file: open it in any
browser, no server needed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from acel.app.cli import add_command
from acel.app.options import UsageError, load_query_text
from acel.app.reporting import eprint


def _setup_stepper(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="a query file or the query text")
    p.add_argument("--data", metavar="FILE", required=True,
                   help="the events (a short stream: at most 200)")
    p.add_argument("--schema", metavar="FILE", help="schema JSON (default: read from the data)")
    p.add_argument("--type-col", default="type", metavar="C",
                   help="column holding the event type (default: type)")
    p.add_argument("--time-col", metavar="C", help="sort the events by this column first")
    p.add_argument("--expect", metavar="P,P,...",
                   help="positions of the events of a match you expected: the page says "
                        "why it is missing (the first event where its run died, and why)")
    p.add_argument("--out", metavar="FILE", required=True, help="the HTML page to write")


def _positions(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--expect takes event positions separated by commas, "
                         f"like 0,2,4 (not {text!r})") from None


def cmd_stepper(args: argparse.Namespace) -> int:
    """Write the step-through page of QUERY on --data to --out."""
    from acel.stepper import step_through

    text = load_query_text(args.query)
    page = step_through(text, args.data, args.schema, expect=_positions(args.expect),
                        type_col=args.type_col, time_col=args.time_col)
    Path(args.out).write_text(page, encoding="utf-8")
    eprint(f"acel stepper: wrote {args.out} (open it in a browser; #step=N shows N events read)")
    return 0


add_command(
    "stepper", _setup_stepper, cmd_stepper,
    help="write a page that steps through a query's automaton on a short stream",
    epilog="example:\n  acel stepper examples/paper/ex5_1_max_intel_price.acel "
           "--data tests/data/stocks.jsonl --expect 0,3,4 --out page.html",
)
