"""CORE (Bucchi, Grez, Quintana, Riveros, Vansummeren: "CORE: a COmplex event Recognition
Engine", VLDB 2022; PyPI ``pycer``) as an engine the conformance kit checks.

- :func:`to_ceql` translates the fragment of ACEL that CORE's CEQL shares (atoms, ``AS``,
  ``;``, ``:``, ``+``, ``:+``, ``OR``, FILTER with unary comparisons, ``PARTITION BY``,
  ``WITHIN n EVENTS``, the selection strategies of spec §6.2) and raises
  :class:`~acel.lang.errors.UnsupportedQuery` for the rest;
- :class:`CoreEngine` runs it: ``pycer`` needs Python 3.13, so it runs in a virtual
  environment of its own (created in the cache on first use, :func:`core_python`), as a
  subprocess (``resources/core_runner.py``) that prints each complex event as its stream
  positions.

CORE reports the events of a complex event, not which variable holds which: its results
are compared on the positions view (:func:`acel.testing.compare.positions_view`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from acel.lang import ast
from acel.lang.clauses import Match
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.events import ComplexEvent, Event, Value
from acel.lang.schema import Schema
from acel.testing.cache import PrerequisiteMissing, locked, run_step
from acel.testing.compare import positions_view
from acel.testing.errors import EngineFailed
from acel.testing.outcomes import INT64, outside_range
from acel.testing.persistent import LineProcess

RUNNER = Path(__file__).with_name("resources") / "core_runner.py"
PACKAGE = "pycer"
POSITION = "acel_pos"
"""The hidden attribute that carries each event's stream position through CORE."""
TYPE = "acel_type"
"""The hidden attribute standing for ACEL's ``type`` inside predicates."""

FRAGMENT = frozenset({"AS", "FILTER", "OR", "SEQ", "CONTIG", "PLUS", "CONTIG_PLUS",
                      "PARTITION_BY", "WITHIN"})
"""The operators CORE shares with ACEL (``papers/conformance.md``); within FILTER, only
comparisons of attributes and integers with ``+ - *``, ``IN``, ``NOT``, ``AND``, ``OR``."""

SELECTIONS = {"ALL": "ALL", "STRICT": "STRICT", "NEXT": "NEXT", "LAST": "LAST", "MAX": "MAX"}
"""Spec §6.2's strategies and CEQL's words for them (the same, by design)."""


# ------------------------------------------------------------------ translator


def _expr(expr: ast.Expr) -> str:
    if isinstance(expr, ast.Attr):
        return TYPE if expr.name == "type" else expr.name
    if isinstance(expr, ast.Lit):
        value = expr.value
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise UnsupportedQuery(f"CORE: the literal {value!r} (only integers and strings)")
        if isinstance(value, str):
            if "'" in value:  # CEQL has no escape for a quote ('it''s' matches nothing): N6
                raise UnsupportedQuery(f"CORE: the string literal {value!r} (CEQL cannot quote ')")
            return "'" + value + "'"
        return str(value) if value >= 0 else f"(0 - {-value})"
    if isinstance(expr, ast.Neg):
        return f"(0 - {_expr(expr.operand)})"
    if isinstance(expr, ast.BinOp) and expr.op in ("+", "-", "*"):
        return f"({_expr(expr.left)} {expr.op} {_expr(expr.right)})"
    raise UnsupportedQuery(f"CORE: the expression {expr!r} (its division differs from ACEL's)")


def _pred(pred: ast.Pred) -> str:
    if isinstance(pred, ast.Compare):
        if not any(isinstance(side, ast.Attr) or isinstance(side, ast.BinOp) for side in (pred.left, pred.right)):
            raise UnsupportedQuery("CORE: a comparison of constants")
        return f"{_expr(pred.left)} {pred.op} {_expr(pred.right)}"
    if isinstance(pred, ast.InList):
        subject = _expr(pred.expr)
        text = " OR ".join(f"{subject} = {_expr(ast.Lit(v))}" for v in pred.values)
        return f"(NOT ({text}))" if pred.negated else f"({text})"
    if isinstance(pred, ast.PredNot):
        return f"(NOT {_pred(pred.operand)})"
    if isinstance(pred, ast.PredAnd):
        return f"({_pred(pred.left)} AND {_pred(pred.right)})"
    if isinstance(pred, ast.PredOr):
        return f"({_pred(pred.left)} OR {_pred(pred.right)})"
    raise UnsupportedQuery(f"CORE: the predicate {pred!r}")


def _filter(flt: ast.Filter) -> str:
    if isinstance(flt, ast.VarPred):
        return f"{flt.var}[{_pred(flt.pred)}]"
    if isinstance(flt, ast.FilterAnd):
        return f"({_filter(flt.left)} AND {_filter(flt.right)})"
    if isinstance(flt, ast.FilterOr):
        return f"({_filter(flt.left)} OR {_filter(flt.right)})"
    raise UnsupportedQuery("CORE: bag predicates (SAME, INC, DEC)")


def _formula(f: ast.Formula) -> str:
    if isinstance(f, ast.Atom):
        return f.type
    if isinstance(f, ast.As):
        return f"({_formula(f.formula)} AS {f.var})"
    if isinstance(f, (ast.Seq, ast.Contig, ast.Or)):
        op = {ast.Seq: ";", ast.Contig: ":", ast.Or: "OR"}[type(f)]
        return f"({_formula(f.left)} {op} {_formula(f.right)})"
    if isinstance(f, ast.Plus):
        return f"({_formula(f.formula)})+"
    if isinstance(f, ast.ContigPlus):
        return f"({_formula(f.formula)}):+"
    if isinstance(f, ast.FilterF):
        return f"({_formula(f.formula)} FILTER {_filter(f.filter)})"
    raise UnsupportedQuery(f"CORE does not run {type(f).__name__}")


def to_ceql(query: ast.Query, stream_name: str = "S") -> str:
    """``query`` in CORE's CEQL (``SELECT s * FROM S WHERE ... [PARTITION BY [a]]
    [WITHIN n EVENTS]``); :class:`UnsupportedQuery` outside the shared fragment."""
    if query.returns is not None:
        raise UnsupportedQuery("CORE has no trend aggregation (RETURN)")
    if query.slide is not None or (query.within is not None and query.within.attr is not None):
        raise UnsupportedQuery("CORE's time windows assume a non-decreasing time attribute")
    if query.within is not None and query.partition_by:
        raise UnsupportedQuery("CORE's WITHIN n EVENTS counts the whole stream, ACEL's the "
                               "partition (papers/conformance.md, F2)")
    if getattr(query, "skip", None) is not None:
        raise UnsupportedQuery("CORE has no after-match skip")
    wanted = str(getattr(query, "select", "ALL")).upper()
    select = SELECTIONS.get(wanted)
    if select is None:
        raise UnsupportedQuery(f"CORE has no selection strategy {wanted!r}")
    text = f"SELECT {select} * FROM {stream_name} WHERE {_formula(query.formula)}"
    if query.partition_by:
        text += f" PARTITION BY [{', '.join(query.partition_by)}]"
    if query.within is not None:
        # CORE keeps spans j - i <= n, ACEL (spec §6) j - i < n: papers/conformance.md, F1
        text += f" WITHIN {int(query.within.size) - 1} EVENTS"
    return text


def _kind(attr: str, schema: Schema, stream: Sequence[Event]) -> str:
    kind = schema.kind(attr)
    values = [e.get(attr) for e in stream if e.get(attr) is not None]
    if kind == "str" or any(isinstance(v, str) for v in values):
        return "string"
    if kind == "float" or any(isinstance(v, float) for v in values):
        return "double"
    if kind == "bool" or any(isinstance(v, bool) for v in values):
        raise UnsupportedQuery(f"CORE adapter: boolean attribute {attr!r}")
    return "int"


def declaration(schema: Schema, stream: Sequence[Event], stream_name: str = "S") -> str:
    """``CREATE STREAM S { EVENT T { a:int, ..., acel_type:string, acel_pos:int }, ... }``."""
    events = []
    for name, attrs in schema.types:
        fields = [f"{a}:{_kind(a, schema, stream)}" for a in attrs]
        fields += [f"{TYPE}:string", f"{POSITION}:int"]
        events.append(f"EVENT {name} {{ {', '.join(fields)} }}")
    return f"CREATE STREAM {stream_name} {{\n" + ",\n".join(events) + "\n}"


def _values(event: Event, attrs: Sequence[str]) -> list[Value]:
    out: list[Value] = []
    for attr in attrs:
        value = event.get(attr)
        if value is None:
            raise UnsupportedQuery(f"CORE has no NULL: event {event.time} lacks {attr!r}")
        out.append(value)
    return [*out, str(event.type), event.time]


# ------------------------------------------------------------------ environment


def _python_version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                              capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = done.stdout.split()
    return (int(parts[0]), int(parts[1])) if done.returncode == 0 and len(parts) == 2 else None


def find_python313() -> str:
    """A Python 3.13 interpreter: ``$ACEL_PYTHON313``, pyenv's 3.13.x, or ``python3.13``
    on the PATH (pycer's wheels are built for 3.13)."""
    candidates: list[str] = []
    if os.environ.get("ACEL_PYTHON313"):
        candidates.append(os.environ["ACEL_PYTHON313"])
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin" / "python3.13") for p in sorted(pyenv.glob("3.13*"), reverse=True)]
    found = shutil.which("python3.13")
    if found:
        candidates.append(found)
    for python in candidates:
        if Path(python).exists() and _python_version(python) == (3, 13):
            return python
    raise PrerequisiteMissing(
        "CORE (pycer) needs Python 3.13: none found (set ACEL_PYTHON313, or install "
        "python3.13 or pyenv's 3.13)"
    )


def core_python() -> str:
    """The interpreter of CORE's virtual environment (``<cache>/core-venv``), created with
    ``pycer`` from PyPI on first use."""
    with locked("core-venv") as venv:
        python = venv / "bin" / "python"
        if python.exists() and (venv / ".installed").exists():
            return str(python)
        base = find_python313()
        if not python.exists():
            run_step([base, "-m", "venv", str(venv)], f"creating {venv}")
        run_step([str(python), "-m", "pip", "install", "-q", PACKAGE],
                 f"installing {PACKAGE} (CORE) into {venv}")
        (venv / ".installed").write_text(PACKAGE + "\n", encoding="utf-8")
        return str(python)


# ------------------------------------------------------------------ the engine

PORT_LOCK = Path(tempfile.gettempdir()) / "acel-core-port.lock"
"""pycer's offline server binds a fixed local port: one CORE run at a time on the machine
(whatever the cache folder), and a few retries when another program holds the port."""


def _run_alone(argv: list[str], data: bytes, timeout: float) -> subprocess.CompletedProcess[bytes]:
    for attempt in range(5):
        with open(PORT_LOCK, "a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                done = subprocess.run(argv, input=data, capture_output=True, timeout=timeout,
                                      check=False)
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        if b"Address already in use" not in done.stderr or attempt == 4:
            return done
        time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")



class CoreEngine:
    """The batch function of the ``core`` engine (picklable). ``drop_last`` makes the
    deliberately broken copy the tests catch (it never shows CORE the last event)."""

    view = staticmethod(positions_view)
    """CORE reports no variables: compare on the positions view."""
    value_range = INT64
    """CORE's integers are 64-bit: beyond, it answers "Failed to process client request" (N5)."""

    def __init__(self, timeout: float = 60.0, drop_last: bool = False,
                 persistent: bool = True) -> None:
        self.timeout = timeout
        self.drop_last = drop_last
        self.persistent = persistent
        """One runner process for the whole run (``core_runner.py --persistent``), not one
        per case."""
        self._runner: LineProcess | None = None

    def __call__(self, query: ast.Query, stream: Sequence[Event], schema: Schema) -> list[Match]:
        ceql = to_ceql(query)
        outside = outside_range(query, stream, INT64)
        if outside is not None:
            raise UnsupportedQuery(f"CORE adapter: {outside}")
        shown = list(stream[:-1]) if self.drop_last else list(stream)
        ids = {name: k for k, (name, _attrs) in enumerate(schema.types)}
        job: dict[str, object] = {
            "declaration": declaration(schema, shown),
            "query": ceql,
            "events": [[ids[str(e.type)], _values(e, schema.attributes(str(e.type))[1:])]
                       for e in shown],
        }
        positions = self._run(job)
        by_time = {e.time: e for e in stream}
        matches = []
        for found in positions:
            events = [by_time[p] for p in sorted(found)]
            key = tuple((a, events[0].get(a)) for a in query.partition_by)
            ce = ComplexEvent.make(events[0].time, events[-1].time, {"*": events})
            matches.append(Match(key, ce))  # type: ignore[arg-type]
        return matches

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_runner": None}

    def close(self) -> None:
        """Stop the persistent runner (it also stops when the kit's process ends)."""
        if self._runner is not None:
            self._runner.close()
        self._runner = None

    def _run_persistent(self, job: dict[str, object]) -> tuple[int, str]:
        if self._runner is None or not self._runner.running:
            self._runner = LineProcess([core_python(), str(RUNNER), "--persistent"],
                                       self.timeout, "CORE")
            self._runner.start()
            self._runner.receive()  # {"ready": true}
        with open(PORT_LOCK, "a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # pycer's server binds a fixed port
            try:
                self._runner.send(json.dumps(job))
                answer = json.loads(self._runner.receive())
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return int(answer["status"]), str(answer.get("message", ""))

    def _run(self, job: dict[str, object]) -> list[list[int]]:
        with tempfile.TemporaryDirectory(prefix="acel-core-") as folder:
            out = Path(folder) / "out.jsonl"
            job["out"] = str(out)
            if self.persistent:
                try:
                    status, message = self._run_persistent(job)
                except EngineFailed as error:
                    self._runner = None
                    raise AcelError(f"CORE failed: {error}") from None
                if status == 3:
                    raise UnsupportedQuery(message or "CORE rejects the query")
                if status != 0:
                    raise AcelError(f"CORE failed: {message}")
                return [json.loads(line)
                        for line in out.read_text(encoding="utf-8").splitlines() if line]
            python = core_python()
            try:
                done = _run_alone([python, str(RUNNER)], json.dumps(job).encode(), self.timeout)
            except subprocess.TimeoutExpired:
                raise AcelError(f"CORE ran longer than {self.timeout:g} s") from None
            err = [ln for ln in done.stderr.decode("utf-8", "replace").splitlines()
                   if ln.strip() and not ln.startswith("Logging to file")]
            if done.returncode == 3:
                raise UnsupportedQuery(" / ".join(err[-2:]) or "CORE rejects the query")
            if done.returncode != 0:
                raise AcelError(f"CORE failed (status {done.returncode}): {' / '.join(err[-3:])}")
            return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]

