"""SQL ``MATCH_RECOGNIZE`` (SQL:2016 row pattern recognition) through PyPI's
``pandas-match-recognize``, as an engine the conformance kit checks.

The fragment both share is contiguous: a chain ``φ1 : φ2 : …`` of single event types
(``AS`` names and conjunctions of unary FILTERs pushed into each row variable's
``DEFINE``), with ``PARTITION BY``.  Such a pattern has no quantifier, so greediness and
preference order never choose between matches, and ``AFTER MATCH SKIP TO NEXT ROW``
makes every row start a match attempt: its matches are exactly ACEL's complex events.
``pandas-match-recognize`` pins pandas and numpy and installs a top-level ``src``
package, so it runs in a virtual environment of its own (created on first use).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acel.lang.ast import Query
from acel.lang.clauses import Match
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.events import ComplexEvent, Event
from acel.lang.schema import Schema
from acel.testing.cache import locked, run_step
from acel.testing.errors import EngineFailed
from acel.testing.flink import Stage, _stages
from acel.testing.outcomes import INT64, outside_range
from acel.testing.persistent import LineProcess

RUNNER = Path(__file__).with_name("resources") / "mr_runner.py"
PACKAGE = "pandas-match-recognize"

FRAGMENT = frozenset({"AS", "FILTER", "CONTIG", "PARTITION_BY"})
"""What a quantifier-free ``MATCH_RECOGNIZE`` pattern shares with ACEL."""


def _sql_expr(node: Any, var: str) -> str:
    from acel.lang.ast import Attr, BinOp, Lit, Neg

    if isinstance(node, Attr):
        return f"{var}.{node.name}"
    if isinstance(node, Lit):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, str)):
            raise UnsupportedQuery(f"MATCH_RECOGNIZE adapter: the literal {node.value!r}")
        return repr(node.value) if isinstance(node.value, str) else f"({node.value})"
    if isinstance(node, Neg):
        return f"(0 - {_sql_expr(node.operand, var)})"
    if isinstance(node, BinOp) and node.op in ("+", "-", "*"):
        return f"({_sql_expr(node.left, var)} {node.op} {_sql_expr(node.right, var)})"
    raise UnsupportedQuery("MATCH_RECOGNIZE adapter: division and modulo")


def _sql_pred(pred: Any, var: str) -> str:
    from acel.lang.ast import Compare, InList, Lit, PredAnd, PredNot, PredOr

    if isinstance(pred, Compare):
        left, right = _sql_expr(pred.left, var), _sql_expr(pred.right, var)
        if pred.op == "!=":  # pandas-match-recognize rejects SQL's <> (finding F3)
            return f"(NOT ({left} = {right}))"
        return f"({left} {pred.op} {right})"
    if isinstance(pred, InList):
        subject = _sql_expr(pred.expr, var)
        text = " OR ".join(f"{subject} = {_sql_expr(Lit(v), var)}" for v in pred.values)
        return f"(NOT ({text}))" if pred.negated else f"({text})"
    if isinstance(pred, PredNot):
        return f"(NOT {_sql_pred(pred.operand, var)})"
    if isinstance(pred, (PredAnd, PredOr)):
        word = "AND" if isinstance(pred, PredAnd) else "OR"
        return f"({_sql_pred(pred.left, var)} {word} {_sql_pred(pred.right, var)})"
    raise UnsupportedQuery(f"MATCH_RECOGNIZE adapter: the predicate {pred!r}")


def to_sql(query: Query) -> tuple[str, list[Stage]]:
    """``query`` as ``SELECT * FROM df MATCH_RECOGNIZE (…)`` with one row variable per
    stage (``v0``, ``v1``, …); :class:`UnsupportedQuery` outside the shared fragment."""
    if query.returns is not None or query.within is not None:
        raise UnsupportedQuery("MATCH_RECOGNIZE adapter: RETURN and WITHIN")
    if str(getattr(query, "select", "ALL")).upper() != "ALL" or getattr(query, "skip", None):
        raise UnsupportedQuery("MATCH_RECOGNIZE adapter: selection and skip strategies")
    stages = _stages(query.formula)
    if any(s.loop is not None for s in stages) or any(s.link != "next" for s in stages[1:]):
        raise UnsupportedQuery("MATCH_RECOGNIZE adapter: only contiguous chains without quantifiers")
    defines = []
    for k, stage in enumerate(stages):
        var = f"v{k}"
        parts = [f"{var}.type = {stage.type!r}"] + [_sql_pred(p, var) for p in stage.preds]
        defines.append(f"{var} AS " + " AND ".join(parts))
    partition = "PARTITION BY acel_key " if query.partition_by else ""
    pattern = " ".join(f"v{k}" for k in range(len(stages)))
    sql = (
        f"SELECT * FROM df MATCH_RECOGNIZE ({partition}ORDER BY acel_pos "
        "MEASURES MATCH_NUMBER() AS acel_match, CLASSIFIER() AS acel_var "
        "ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW "
        f"PATTERN ({pattern}) DEFINE {', '.join(defines)})"
    )
    return sql, stages


def mr_python() -> str:
    """The interpreter of ``<cache>/mr-venv`` with ``pandas-match-recognize`` (first use)."""
    with locked("mr-venv") as venv:
        python = venv / "bin" / "python"
        if python.exists() and (venv / ".installed").exists():
            return str(python)
        if not python.exists():
            run_step([sys.executable, "-m", "venv", str(venv)], f"creating {venv}")
        run_step([str(python), "-m", "pip", "install", "-q", PACKAGE],
                 f"installing {PACKAGE} into {venv}")
        (venv / ".installed").write_text(PACKAGE + "\n", encoding="utf-8")
        return str(python)


class MatchRecognizeEngine:
    """The batch function of the ``pandas-mr`` engine (``drop_last``: the broken copy)."""

    value_range = INT64
    """pandas stores integers as 64-bit (numpy's int64)."""

    def __init__(self, timeout: float = 60.0, drop_last: bool = False,
                 persistent: bool = True) -> None:
        self.timeout = timeout
        self.drop_last = drop_last
        self.persistent = persistent
        """One runner process (one pandas import) for the whole run, not one per case."""
        self._runner: LineProcess | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_runner": None}

    def close(self) -> None:
        """Stop the persistent runner."""
        if self._runner is not None:
            self._runner.close()
        self._runner = None

    def __call__(self, query: Query, stream: Sequence[Event], schema: Schema) -> list[Match]:
        sql, stages = to_sql(query)
        outside = outside_range(query, stream, INT64)
        if outside is not None:
            raise UnsupportedQuery(f"MATCH_RECOGNIZE adapter: {outside}")
        shown = list(stream[:-1]) if self.drop_last else list(stream)
        rows = []
        for event in shown:
            row: dict[str, Any] = {"acel_pos": event.time, "type": event.type}
            for attr in schema.attributes(str(event.type))[1:]:
                value = event.get(attr)
                if value is None or isinstance(value, (bool, float)):
                    raise UnsupportedQuery("MATCH_RECOGNIZE adapter: NULL, float or boolean values")
                row[attr] = value
            row["acel_key"] = json.dumps([event.get(a) for a in query.partition_by])
            rows.append(row)
        by_time = {e.time: e for e in stream}
        grouped: dict[tuple[str, int], dict[str, list[Event]]] = {}
        for number, key, var, position in self._run({"sql": sql, "rows": rows}):
            bags = grouped.setdefault((key, number), {})
            for name in stages[int(var[1:])].variables:
                bags.setdefault(name, []).append(by_time[position])
        matches = []
        for bags in grouped.values():
            times = sorted({e.time for bag in bags.values() for e in bag})
            first = by_time[times[0]]
            key_ = tuple((a, first.get(a)) for a in query.partition_by)
            matches.append(Match(key_, ComplexEvent.make(times[0], times[-1], bags)))  # type: ignore[arg-type]
        return matches

    def _run(self, job: dict[str, Any]) -> list[list[Any]]:
        if self.persistent:
            try:
                if self._runner is None or not self._runner.running:
                    self._runner = LineProcess([mr_python(), str(RUNNER), "--persistent"],
                                               self.timeout, "MATCH_RECOGNIZE")
                    self._runner.start()
                    self._runner.receive()  # {"ready": true}
                self._runner.send(json.dumps(job))
                answer = json.loads(self._runner.receive())
            except EngineFailed as error:
                self._runner = None
                raise AcelError(f"MATCH_RECOGNIZE failed: {error}") from None
            if "error" in answer:
                raise AcelError(f"MATCH_RECOGNIZE failed: {answer['error']}")
            return list(answer["rows"])
        with tempfile.TemporaryDirectory(prefix="acel-mr-") as folder:
            out = Path(folder) / "out.jsonl"
            job["out"] = str(out)
            python = mr_python()
            try:
                done = subprocess.run([python, str(RUNNER)], input=json.dumps(job).encode(),
                                      capture_output=True, timeout=self.timeout, check=False)
            except subprocess.TimeoutExpired:
                raise AcelError(f"MATCH_RECOGNIZE ran longer than {self.timeout:g} s") from None
            if done.returncode != 0:
                err = [ln for ln in done.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
                raise AcelError(f"MATCH_RECOGNIZE failed: {' / '.join(err[-3:])}")
            return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]
