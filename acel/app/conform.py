"""``acel conform``: run several engines on one query and compare their answers.

On the user's data, or on random streams generated over the query's schema,
every chosen engine must give the same JSON Lines (spec §12).  At the first
disagreement the stream is shrunk by delta debugging (Zeller's ddmin: drop
chunks of events while the engines still disagree) to a small example, which
is printed with each engine's answer.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from acel.engines import Engine, resolve
from acel.lang.ast import Attr, Compare, InList, Lit, Query, walk
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.events import Event, Value
from acel.lang.schema import Schema
from acel.testing.adapters import Tally
from acel.testing.compare import Answer, normalise, unmatched

if TYPE_CHECKING:
    from acel.testing.campaign import Failure, Run

ORACLE_LIMIT = 12
"""Streams longer than this are not given to the (exponential) oracle by default."""


EngineLike = Union[str, Engine]


def answer(engine: EngineLike, query: Query, stream: Sequence[Event], schema: Schema) -> Answer | str:
    """An engine's answer (sorted results), or one line naming its error.

    :class:`UnsupportedQuery` is not an answer: it propagates (the engine does not
    run this query, so there is nothing to compare).
    """
    try:
        return normalise(resolve(engine).batch(query, stream, schema), query)
    except UnsupportedQuery:
        raise
    except AcelError as error:
        return f"error: {error}"


def _lines(answer_: Answer | str) -> list[str]:
    from acel.io.results import to_json_lines

    return [answer_] if isinstance(answer_, str) else to_json_lines(answer_)


def _agree(a: Answer | str, b: Answer | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    missing, unexpected = unmatched(a, b)
    return not missing and not unexpected


@dataclass(frozen=True)
class Disagreement:
    """A stream on which the engines' answers differ."""

    stream: tuple[Event, ...]
    answers: dict[str, list[str]]

    def report(self) -> str:
        lines = [f"the engines disagree on this stream of {len(self.stream)} event(s):"]
        lines += ["  " + json.dumps(e.as_dict(), sort_keys=True) for e in self.stream]
        for engine, out in self.answers.items():
            lines.append(f"{engine} ({len(out)} line(s)):")
            lines += ["  " + line for line in out] or ["  (nothing)"]
        return "\n".join(lines)


def disagree(engines: Sequence[EngineLike], query: Query, stream: Sequence[Event], schema: Schema) -> dict[str, list[str]] | None:
    """The engines' answers (JSON Lines) when they differ, else ``None``.

    Complex events are compared exactly, RETURN floats up to relative 1e-9
    (spec §4), and the order of an engine's lines does not matter.  When an
    engine cannot show whole complex events (CORE: no variables), every answer
    is compared on its view (:func:`acel.testing.adapters.view_of`).
    """
    from acel.testing.adapters import view_of

    found = [(resolve(engine).name, answer(engine, query, stream, schema)) for engine in engines]
    for engine in engines:
        view = view_of(resolve(engine))
        if view is not None:
            found = [(name, out if isinstance(out, str) else view(out, query)) for name, out in found]
    first = found[0][1]
    if all(_agree(first, other) for _, other in found[1:]):
        return None
    return {name: _lines(out) for name, out in found}


def renumber(events: Iterable[Event]) -> tuple[Event, ...]:
    """A sub-stream as a stream of its own: positions 0, 1, ..."""
    return tuple(e.at(k) for k, e in enumerate(events))


def _still_disagrees(engines: Sequence[EngineLike], query: Query, stream: Sequence[Event], schema: Schema) -> bool:
    try:
        return disagree(engines, query, stream, schema) is not None
    except UnsupportedQuery:  # a sub-stream an engine does not run shows nothing
        return False


def shrink(engines: Sequence[EngineLike], query: Query, stream: Sequence[Event], schema: Schema) -> Disagreement:
    """Delta debugging: a small sub-stream on which the engines still disagree."""
    current = list(stream)
    chunks = 2
    while len(current) >= 2:
        size = max(1, len(current) // chunks)
        reduced = False
        for start in range(0, len(current), size):
            candidate = current[:start] + current[start + size:]
            if candidate and _still_disagrees(engines, query, renumber(candidate), schema):
                current = candidate
                chunks = max(chunks - 1, 2)
                reduced = True
                break
        if not reduced:
            if size == 1:
                break
            chunks = min(len(current), chunks * 2)
    final = renumber(current)
    answers = disagree(engines, query, final, schema)
    assert answers is not None
    return Disagreement(final, answers)


# ------------------------------------------------------------ generated streams


def _literals_by_attribute(query: Query) -> dict[str, set[Value]]:
    """Literals the query compares each attribute with, to aim generated values
    (negated formulas included)."""
    found: dict[str, set[Value]] = {}

    def attributes(expr: object) -> list[str]:
        return [node.name for node in walk(expr) if isinstance(node, Attr)]

    for node in walk(query.formula):
        if isinstance(node, Compare):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(other, Lit):
                    for name in attributes(side):
                        found.setdefault(name, set()).add(other.value)
        elif isinstance(node, InList):
            for name in attributes(node.expr):
                found.setdefault(name, set()).update(node.values)
    return found


def generate_stream(query: Query, schema: Schema, length: int, rng: random.Random, sample: Sequence[Event] = (),
                    null_rate: float = 0.05) -> tuple[Event, ...]:
    """A random stream over the schema, values drawn near the query's literals.

    With ``sample`` (events of the user's data), values are also drawn from it;
    an attribute is NULL with chance ``null_rate`` (never the attribute of an
    ``ON attr`` window, which must place every event).
    """
    on = {w.attr for w in (query.within, query.slide) if w is not None and w.attr}
    pools: dict[str, list[Value]] = {}
    literals = _literals_by_attribute(query)
    for attr in schema.all_attributes():
        pool: list[Value] = []
        for value in literals.get(attr, ()):
            pool.append(value)
            if isinstance(value, int) and not isinstance(value, bool):
                pool += [value - 1, value + 1]
        pool += [e.get(attr) for e in sample[:200] if e.get(attr) is not None]  # type: ignore[misc]
        kind = schema.kind(attr)
        if kind == "str" or any(isinstance(v, str) for v in pool):
            pool += ["a", "b"]
        else:
            pool += [0, 1, 2, 3]
        pools[attr] = pool
    types = list(schema.type_names())
    events = []
    for k in range(length):
        type_name = rng.choice(types)
        attrs: dict[str, Value | None] = {"type": type_name}
        for attr in schema.attributes(type_name)[1:]:
            missing = attr not in on and rng.random() < null_rate
            attrs[attr] = None if missing else rng.choice(pools[attr])
        events.append(Event.make(k, attrs))
    return tuple(events)


def conform(
    query: Query,
    schema: Schema,
    engines: Sequence[EngineLike],
    *,
    stream: Sequence[Event] | None = None,
    generate: int = 0,
    length: int = 8,
    seed: int = 0,
    progress: Callable[[str], None] = lambda _m: None,
    null_rate: float = 0.05,
    tally: Tally | None = None,
) -> tuple[int, Disagreement | None]:
    """Compare the engines on ``stream`` and/or ``generate`` random streams.

    Returns how many streams were compared and the first disagreement, shrunk.
    A stream an engine declares unsupported (exit 3, :class:`UnsupportedQuery`)
    is skipped and counted in ``tally``; when every stream is, that is an error.
    """
    tally = tally if tally is not None else Tally()
    for engine in engines:
        refused = resolve(engine).refuses(query)  # an unknown name is an error naming the choices
        if refused:
            raise UnsupportedQuery(
                f"engine {resolve(engine).name} declares {', '.join(sorted(refused))} unsupported"
            )
    if len(engines) < 2:
        raise AcelError("conform needs at least two engines")
    compared = 0
    refusal: UnsupportedQuery | None = None
    rng = random.Random(seed)
    candidates: list[tuple[str, Callable[[], tuple[Event, ...]]]] = []
    if stream is not None:
        data = tuple(stream)
        candidates.append(("the data", lambda: data))
    for index in range(generate):
        candidates.append((f"generated stream {index + 1}", lambda: generate_stream(
            query, schema, rng.randint(1, length), rng, stream or (), null_rate)))
    for label, make in candidates:
        candidate = make()
        try:
            differs = disagree(engines, query, candidate, schema) is not None
        except UnsupportedQuery as error:
            tally.skipped += 1
            refusal = error
            continue
        compared += 1
        if differs:
            progress(f"disagreement on {label}; shrinking it")
            return compared, shrink(engines, query, candidate, schema)
    if compared == 0 and refusal is not None:
        raise refusal
    return compared, None


# ------------------------------------------------------------ campaigns, replay, reports


def _names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def _emit_report(args: argparse.Namespace, run: Run) -> None:
    """``--report FORMAT [--report-file FILE]``: the run's report (nothing without --report)."""
    from acel.testing import reports

    fmt = getattr(args, "report", None)
    if fmt is None:
        return
    if fmt == "json":
        text = json.dumps(reports.as_json(run), indent=2, sort_keys=True) + "\n"
    elif fmt == "junit":
        text = reports.as_junit(run)
    else:
        text = reports.as_text(run) + "\n"
    target = getattr(args, "report_file", None)
    if target:
        Path(target).write_text(text, encoding="utf-8")
    else:
        print(text, end="")


def failure_text(failure: Failure, engine: str, reference: str) -> str:
    """A distinct failure as the terminal shows it: the shrunk case and both answers."""
    f = failure
    case, outcome = f.case, f.outcome
    lines = [f"{engine} does not conform to {reference} on this case:", case.describe()]
    lines.append(f"  {reference} ({len(outcome.expected)} result"
                 f"{'s' if len(outcome.expected) != 1 else ''}):")
    lines += [f"    {line}" for line in outcome.expected] or ["    (none)"]
    if outcome.kind == "adapter_error":
        lines.append(f"  {engine} failed: {outcome.reason}")
    if outcome.missing:
        lines.append(f"  missing from {engine}:")
        lines += [f"    {line}" for line in outcome.missing]
    if outcome.unexpected:
        lines.append(f"  {engine} also gave:")
        lines += [f"    {line}" for line in outcome.unexpected]
    if f.path:
        lines.append(f"  saved: {f.path}")
    return "\n".join(lines)


def cmd_generated(args: argparse.Namespace, against: Any) -> int:
    """``acel conform`` without QUERY: generated queries and streams against the reference,
    every outcome counted, failures shrunk (events, query, values), one per shape."""
    from acel.app.options import UsageError
    from acel.app.reporting import eprint

    try:
        from acel.testing.campaign import run_generated, save_failures
        from acel.testing.strategies import NULL_RATE, TEST_SCHEMA
    except ImportError as error:
        raise UsageError(
            f"generating queries needs Hypothesis ({error}); pip install 'acel[testing]', "
            "or give a QUERY"
        ) from None
    from acel.io import read_schema

    a = args
    if a.data:
        raise UsageError("without QUERY, queries and streams are generated: give --schema "
                         "(or nothing, for the test schema), not --data")
    schema = read_schema(a.schema) if a.schema else TEST_SCHEMA
    reference = a.reference or "oracle"
    tested = [against] if against is not None else _names(a.engines) or ["optimized"]
    status = 0
    for engine in tested:
        run = run_generated(
            engine, reference=reference, schema=schema,
            operators=_names(a.operators) or None, without=_names(a.without),
            max_depth=a.max_depth, max_len=a.length or 7,
            null_rate=NULL_RATE if a.null_rate is None else a.null_rate,
            max_examples=a.generate or 300, seed=a.seed,
            keep=a.keep_going or 1, corners=not a.no_corners,
            progress=(lambda m: eprint(f"acel conform: {m}")) if a.keep_going else None,
        )
        if a.save:
            for path in save_failures(run, Path(a.save)):
                eprint(f"acel conform: saved {path}")
        _emit_report(a, run)
        if run.failures:
            if a.report in (None, "text"):
                for failure in run.failures:
                    print(failure_text(failure, run.engine, run.reference))
            status = 1
            continue
        if run.counts.get("agreed", 0) == 0:
            raise UsageError(
                f"{run.engine}: every generated case was skipped (unsupported, or too large for "
                f"{reference}): declare what it lacks with --without or choose --operators"
            )
        skipped = sum(run.counts.get(k, 0) for k in ("unsupported", "too_large"))
        if a.report in (None, "text") or a.report_file:
            note = f" ({skipped} skipped)" if skipped else ""
            print(f"ok: {run.engine} conforms to {reference} on {run.counts['agreed']} "
                  f"generated case(s){note}")
    return status


def cmd_replay(args: argparse.Namespace, against: Any) -> int:
    """``acel conform --replay PATH ...``: recorded cases against the engine; status 1
    when any case's outcome is not the one its record expects."""
    from acel.app.options import UsageError
    from acel.testing.campaign import replay
    from acel.testing.reports import as_text

    a = args
    if a.query is not None:
        raise UsageError("--replay runs the recorded cases: give no QUERY")
    engines = [against] if against is not None else _names(a.engines)
    if not engines:
        raise UsageError("--replay needs the engine to replay against: --against or --engines")
    status = 0
    for engine in engines:
        run = replay(engine, [Path(p) for p in a.replay],
                     reference=a.reference or "oracle")
        _emit_report(a, run)
        if a.report is None or a.report_file:
            print(as_text(run))
        bad = [r for r in run.replayed if not r.ok]
        if bad:
            status = 1
        elif a.report is None:
            print(f"ok: {run.engine}: {len(run.replayed)} recorded case(s) as expected")
    return status


def save_disagreement(found: Disagreement, query: Query, schema: Schema, folder: str) -> str:
    """A disagreement of ``acel conform QUERY`` as a case file in ``folder``; its path."""
    import hashlib

    from acel.lang.printer import format_query
    from acel.testing.casefile import CaseRecord, Expectation, record_file_name, write_records

    names = list(found.answers)
    text = format_query(query)
    digest = hashlib.sha256((text + json.dumps([e.as_dict() for e in found.stream],
                                               sort_keys=True)).encode()).hexdigest()[:8]
    record = CaseRecord(
        name=f"disagreement-{digest}", query=text, schema=schema, stream=found.stream,
        expected=tuple(found.answers[names[0]]), engine=names[-1],
        expects=(Expectation("agree"),), verdict=f"open: disagrees with {names[0]}",
        got=tuple((name, tuple(found.answers[name])) for name in names[1:]),
    )
    path = Path(folder) / record_file_name(record)
    write_records(path, [record])
    return str(path)
