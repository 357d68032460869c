"""A conformance campaign: many cases, every outcome counted, distinct failures kept.

:func:`run_generated` draws cases (:func:`~acel.testing.conformance.cases`), judges
each (:func:`~acel.testing.outcomes.judge`), shrinks every failure
(:func:`~acel.testing.shrink.shrink_case`) and keeps one per query shape, stopping
after ``keep`` distinct ones.  :func:`replay` runs recorded case files
(:mod:`acel.testing.casefile`).  Both return a :class:`Run` that reports render
(:mod:`acel.testing.reports`) and that :func:`save_failures` writes as case files.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acel.engines import Engine
from acel.lang.errors import AcelError
from acel.lang.schema import Schema
from acel.testing.adapters import EngineLike, as_engine
from acel.testing.casefile import CaseRecord, Expectation, case_files, read_records, write_records
from acel.testing.conformance import Case
from acel.testing.outcomes import (
    ADAPTER_ERROR,
    AGREED,
    DISAGREED,
    KINDS,
    TOO_LARGE,
    UNSUPPORTED,
    Outcome,
    judge,
)
from acel.testing.shrink import shape, shrink_case

WORD = {AGREED: "agree", DISAGREED: "disagree", UNSUPPORTED: "unsupported",
        ADAPTER_ERROR: "error", TOO_LARGE: "too_large"}
"""An outcome kind as the ``expect`` line of a case file writes it."""


@dataclass
class Failure:
    """A distinct failure: the shrunk case, its outcome, its shape, where it was saved."""

    case: Case
    outcome: Outcome
    shape: str
    original: Case
    path: str = ""
    name: str = ""


@dataclass
class Replayed:
    """One recorded case replayed: what was expected, what happened, and whether that
    is what the record says (``ok``)."""

    record: CaseRecord
    outcome: Outcome
    expected: str
    ok: bool
    message: str = ""


@dataclass
class Run:
    """What a campaign saw: counts by kind, unsupported reasons, coverage, failures."""

    engine: str
    reference: str
    counts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    coverage: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    replayed: list[Replayed] = field(default_factory=list)
    stopped: str = ""

    def count(self, case: Case, outcome: Outcome) -> None:
        self.counts[outcome.kind] += 1
        if outcome.kind in (UNSUPPORTED, TOO_LARGE, ADAPTER_ERROR):
            self.reasons[f"{outcome.kind}: {_reason(outcome.reason)}"] += 1
        if outcome.kind in (AGREED, DISAGREED):
            for name in coverage_of(case):
                self.coverage[name] += 1

    @property
    def ok(self) -> bool:
        if self.replayed:
            return all(r.ok for r in self.replayed)
        return not self.failures

    def summary(self) -> str:
        parts = [f"{self.counts.get(k, 0)} {k.replace('_', ' ')}" for k in KINDS]
        return ", ".join(parts)


def _reason(text: str) -> str:
    """A reason without its case-specific tail (values, positions), to count alike ones."""
    first = text.splitlines()[0] if text else "no reason given"
    return first[:400]


def coverage_of(case: Case) -> list[str]:
    """The operators and clauses a case exercises, and the corners it was drawn at."""
    from acel.lang.operators import operators_of

    names = sorted(operators_of(case.query))
    return names + [f"corner:{c}" for c in sorted(case.corners)]


def signature(outcome: Outcome) -> tuple[str, bool, bool, str]:
    """What a failure looks like, kept while shrinking so that a case does not slip to
    another bug: its kind, whether results are missing or unexpected, the error's type."""
    error = outcome.reason.split(":", 1)[0] if outcome.kind == ADAPTER_ERROR else ""
    return outcome.kind, bool(outcome.missing), bool(outcome.unexpected), error


def _fails_like(tested: Engine, reference: Engine, outcome: Outcome) -> Any:
    wanted = signature(outcome)

    def fails(candidate: Case) -> bool:
        return signature(judge(tested, reference, candidate)) == wanted
    return fails


def run_generated(
    engine: EngineLike,
    *,
    reference: EngineLike = "oracle",
    schema: Schema | None = None,
    operators: Iterable[str] | None = None,
    without: Iterable[str] = (),
    max_depth: int = 3,
    max_len: int = 7,
    null_rate: float | None = None,
    max_examples: int = 100,
    seed: int | None = 0,
    keep: int = 1,
    corners: bool = True,
    progress: Any = None,
) -> Run:
    """Judge ``max_examples`` generated cases (the kit's knobs), shrink each failure, keep
    one per shape and stop after ``keep`` distinct failures."""
    from hypothesis import HealthCheck, given, reject, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import Unsatisfiable

    from acel.testing.conformance import cases
    from acel.testing.strategies import NULL_RATE, TEST_SCHEMA, allowed

    tested, ref = as_engine(engine), as_engine(reference)
    ops = allowed(operators, without) - tested.unsupported - ref.unsupported
    bounds = getattr(tested.fn, "value_range", None)
    drawn = cases(schema or TEST_SCHEMA, operators=ops, max_depth=max_depth, max_len=max_len,
                  null_rate=NULL_RATE if null_rate is None else null_rate, corners=corners,
                  value_range=bounds)
    run = Run(tested.name, ref.name)
    shapes: set[str] = set()

    def check(case: Case) -> None:
        if len(run.failures) >= keep:
            return
        outcome = judge(tested, ref, case)
        run.count(case, outcome)
        if outcome.kind in (UNSUPPORTED, TOO_LARGE):
            reject()  # draw another: max_examples counts the cases compared
        if not outcome.failed:
            return
        small = shrink_case(case, _fails_like(tested, ref, outcome))
        found = shape(small)
        if found in shapes:
            return
        shapes.add(found)
        run.failures.append(Failure(small, judge(tested, ref, small), found, case))
        if progress is not None:
            progress(f"{outcome.kind.replace('_', ' ')} #{len(run.failures)}: {found}")
        if len(run.failures) >= keep:
            run.stopped = f"stopped after {keep} distinct failure(s)"

    options: dict[str, Any] = {
        "deadline": None, "database": None, "max_examples": max_examples,
        "suppress_health_check": list(HealthCheck),
    }
    if seed is not None:
        options["derandomize"] = False  # the seed decides, not a digest of the test
    test = settings(**options)(given(drawn)(check))
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    try:
        test()
    except Unsatisfiable:
        run.stopped = "stopped: too many cases were skipped (unsupported, too large)"
    return run


# ------------------------------------------------------------------ case files


def record_of(failure: Failure, engine: str, reference: str, index: int) -> CaseRecord:
    """A failure as a case record: expected = the reference's results, the engine's
    answer under ``got``, and ``expect agree`` (a replay fails until it is fixed)."""
    case, outcome = failure.case, failure.outcome
    notes = [f"found by acel conform against {engine} (reference {reference}); "
             f"shape {failure.shape}"]
    if outcome.reason:
        notes.append(f"{outcome.kind}: {outcome.reason}")
    digest = int(hashlib.sha256(failure.shape.encode()).hexdigest()[:8], 16) % 10**6
    return CaseRecord(
        name=failure.name or f"{engine}-{index:03d}-{digest:06d}",
        query=case.text, schema=case.schema, stream=case.stream,
        expected=outcome.expected, engine=engine,
        expects=(Expectation("agree"),),
        verdict=f"open: {WORD[outcome.kind]}s with {reference}",
        notes=tuple(notes),
        got=((engine, outcome.got),) if outcome.kind == DISAGREED else (),
    )


def save_failures(run: Run, folder: Path) -> list[Path]:
    """Write each distinct failure to ``folder`` as its own case file."""
    from acel.testing.casefile import record_file_name

    paths = []
    for index, failure in enumerate(run.failures, start=1):
        record = record_of(failure, run.engine, run.reference, index)
        path = folder / record_file_name(record)
        write_records(path, [record])
        failure.path, failure.name = str(path), record.name
        paths.append(path)
    return paths


def case_of(record: CaseRecord) -> Case:
    """The record as a case (its query parsed and checked against its schema)."""
    from acel.lang.checker import check_query
    from acel.lang.parser import parse_query

    try:
        query = parse_query(record.query)
        check_query(query, record.schema)
    except AcelError as error:
        raise AcelError(f"{record.source}: case {record.name}: {error}") from None
    return Case(query, record.stream, record.schema)


def replay(engine: EngineLike, targets: Iterable[Path], *, reference: EngineLike = "oracle") -> Run:
    """Replay every record of the case files ``targets`` (files or folders)."""
    from acel.io.results import to_json_lines
    from acel.testing.compare import normalise

    tested, ref = as_engine(engine), as_engine(reference)
    run = Run(tested.name, ref.name)
    for target in targets:
        for path in case_files(Path(target)):
            for record in read_records(path):
                case = case_of(record)
                outcome = judge(tested, ref, case)
                run.count(case, outcome)
                wanted, strict = record.expectation(tested.name)
                word = WORD[outcome.kind]
                ok, message = word == wanted or (not strict and word == "unsupported"), ""
                recorded = tuple(to_json_lines(normalise(list(record.expected), case.query)))
                if outcome.expected and recorded != outcome.expected:
                    ok, message = False, (f"{ref.name} no longer gives the recorded expected "
                                          "results (the reference or the case changed)")
                elif not ok:
                    message = f"expected {wanted}, found {word}"
                    if outcome.reason:
                        message += f" ({outcome.reason})"
                run.replayed.append(Replayed(record, outcome, wanted, ok, message))
    return run


