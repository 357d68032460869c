"""Flink CEP (Apache Flink's ``flink-cep`` library) as an engine the conformance kit checks.

- :func:`to_pattern` translates the fragment of ACEL that a Flink ``Pattern`` shares — a
  sequence of stages, each one event type (with ``AS`` names and unary FILTERs pushed
  into its condition), possibly iterated (``+`` as ``oneOrMore().allowCombinations()``,
  ``:+`` as ``oneOrMore().consecutive()``), joined by ``;`` (``followedByAny``) or ``:``
  (``next``), with ``PARTITION BY`` (keyed streams) and ``WITHIN n EVENTS`` (``within``
  over timestamps that count the events of the partition) — into the JSON description
  ``resources/AcelFlinkCep.java`` builds the ``Pattern`` from; anything else is
  :class:`~acel.lang.errors.UnsupportedQuery`;
- :class:`FlinkEngine` runs it: the jars come from PyPI's ``apache-flink-libraries`` (the
  jars of the ``apache-flink`` wheel, ``pyflink/lib``), fetched with pip into the cache on
  first use, and the Java program is compiled there with ``javac``; one JVM serves every
  case of a run (Flink's own NFA, driven as its CepOperator drives it).

Flink reports which pattern stage holds which event, so results are compared whole (§12).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acel.io.lines import LineEncoder
from acel.lang import ast
from acel.lang.clauses import Match, split_partitions
from acel.lang.errors import AcelError, UnsupportedQuery
from acel.lang.events import ComplexEvent, Event
from acel.lang.schema import Schema
from acel.testing.cache import PrerequisiteMissing, locked, run_step
from acel.testing.outcomes import INT64, outside_range

SOURCE = Path(__file__).with_name("resources") / "AcelFlinkCep.java"
WHEEL = "apache-flink-libraries==2.3.0"
"""The PyPI wheel holding the jars of ``apache-flink`` (``pyflink/lib``)."""
JARS = ("flink-cep-", "flink-dist-", "log4j-")
"""The jars of ``pyflink/lib`` the program needs (the rest is SQL and Python support)."""

FRAGMENT = frozenset({"AS", "FILTER", "SEQ", "CONTIG", "PLUS", "CONTIG_PLUS",
                      "PARTITION_BY", "WITHIN"})
"""The operators a Flink ``Pattern`` shares with ACEL (``papers/conformance.md``); FILTERs
must be conjunctions of unary predicates (no OR across variables, no bag predicates)."""

SKIPS = {"TO_NEXT_ROW": "SKIP_TO_NEXT", "PAST_LAST_ROW": "SKIP_PAST_LAST_EVENT",
         "TO_FIRST": "SKIP_TO_FIRST", "TO_LAST": "SKIP_TO_LAST"}
"""ACEL's after-match skip kinds and Flink's ``AfterMatchSkipStrategy`` names."""


# ------------------------------------------------------------------ translator


@dataclass
class Stage:
    """One pattern stage: an event type, the ACEL variables its events belong to, the
    predicates they must pass, its loop and how it is linked to the stage before."""

    type: str
    variables: set[str]
    preds: list[ast.Pred] = field(default_factory=list)
    loop: str | None = None  # None, "any" (+) or "consecutive" (:+)
    link: str = "followedByAny"


def _stages(f: ast.Formula) -> list[Stage]:
    if isinstance(f, ast.Atom):
        return [Stage(f.type, {f.type})]
    if isinstance(f, ast.As):
        inner = _stages(f.formula)
        for stage in inner:
            stage.variables.add(f.var)
        return inner
    if isinstance(f, ast.FilterF):
        inner = _stages(f.formula)
        for var, pred in _conjuncts(f.filter):
            for stage in inner:
                if var in stage.variables:
                    stage.preds.append(pred)
        return inner
    if isinstance(f, (ast.Seq, ast.Contig)):
        left, right = _stages(f.left), _stages(f.right)
        right[0].link = "next" if isinstance(f, ast.Contig) else "followedByAny"
        return left + right
    if isinstance(f, (ast.Plus, ast.ContigPlus)):
        inner = _stages(f.formula)
        if len(inner) != 1 or inner[0].loop is not None:
            raise UnsupportedQuery("Flink adapter: an iteration of more than one event type")
        inner[0].loop = "any" if isinstance(f, ast.Plus) else "consecutive"
        return inner
    raise UnsupportedQuery(f"Flink CEP has no {type(f).__name__} in this adapter")


def _conjuncts(flt: ast.Filter) -> list[tuple[str, ast.Pred]]:
    if isinstance(flt, ast.VarPred):
        return [(flt.var, flt.pred)]
    if isinstance(flt, ast.FilterAnd):
        return _conjuncts(flt.left) + _conjuncts(flt.right)
    raise UnsupportedQuery("Flink adapter: FILTER with OR across variables, or a bag predicate")


def _expr(expr: ast.Expr) -> dict[str, Any]:
    if isinstance(expr, ast.Attr):
        return {"op": "attr", "name": expr.name}
    if isinstance(expr, ast.Lit):
        if isinstance(expr.value, bool) or not isinstance(expr.value, (int, str)):
            raise UnsupportedQuery(f"Flink adapter: the literal {expr.value!r}")
        return {"op": "int" if isinstance(expr.value, int) else "str", "value": expr.value}
    if isinstance(expr, ast.Neg):
        return {"op": "-", "a": {"op": "int", "value": 0}, "b": _expr(expr.operand)}
    if isinstance(expr, ast.BinOp) and expr.op in ("+", "-", "*"):
        return {"op": expr.op, "a": _expr(expr.left), "b": _expr(expr.right)}
    raise UnsupportedQuery("Flink adapter: division and modulo (Java's differ from ACEL's)")


def _node(pred: ast.Pred) -> dict[str, Any]:
    if isinstance(pred, ast.Compare):
        return {"op": pred.op, "a": _expr(pred.left), "b": _expr(pred.right)}
    if isinstance(pred, ast.InList):
        subject = _expr(pred.expr)
        node: dict[str, Any] = {"op": "not", "a": {"op": "true"}}  # the empty list
        for value in pred.values:
            eq = {"op": "=", "a": subject, "b": _expr(ast.Lit(value))}
            node = eq if node.get("a") == {"op": "true"} else {"op": "or", "a": node, "b": eq}
        return {"op": "not", "a": node} if pred.negated else node
    if isinstance(pred, ast.PredNot):
        return {"op": "not", "a": _node(pred.operand)}
    if isinstance(pred, (ast.PredAnd, ast.PredOr)):
        op = "and" if isinstance(pred, ast.PredAnd) else "or"
        return {"op": op, "a": _node(pred.left), "b": _node(pred.right)}
    raise UnsupportedQuery(f"Flink adapter: the predicate {pred!r}")


def _condition(stage: Stage) -> dict[str, Any]:
    node: dict[str, Any] = {"op": "=", "a": {"op": "attr", "name": "type"},
                            "b": {"op": "str", "value": stage.type}}
    for pred in stage.preds:
        node = {"op": "and", "a": node, "b": _node(pred)}
    return node


def to_pattern(query: ast.Query) -> tuple[dict[str, Any], list[Stage]]:
    """The JSON description of ``query``'s Flink ``Pattern`` (without events) and its
    stages (``s0``, ``s1``, …); :class:`UnsupportedQuery` outside the shared fragment."""
    if query.returns is not None:
        raise UnsupportedQuery("Flink CEP has no trend aggregation (RETURN)")
    if query.within is not None and query.within.attr is not None:
        raise UnsupportedQuery("Flink adapter: WITHIN ... ON attr")
    if str(getattr(query, "select", "ALL")).upper() != "ALL":
        raise UnsupportedQuery("Flink CEP has no selection strategy but ALL")
    stages = _stages(query.formula)
    skip = getattr(query, "skip", None)
    skip_text = "NO_SKIP"
    if skip is not None:
        kind = SKIPS.get(str(getattr(skip, "kind", "")))
        if kind is None:
            raise UnsupportedQuery(f"Flink CEP has no after-match skip {skip!r}")
        skip_text = kind
        var = getattr(skip, "var", None)
        if kind in ("SKIP_TO_FIRST", "SKIP_TO_LAST"):
            names = [f"s{k}" for k, s in enumerate(stages) if var in s.variables]
            if len(names) != 1:
                raise UnsupportedQuery("Flink adapter: SKIP TO a variable of one stage only")
            skip_text = f"{kind}:{names[0]}"
    described = []
    for k, stage in enumerate(stages):
        described.append({
            "name": f"s{k}",
            "link": "begin" if k == 0 else stage.link,
            "cond": _condition(stage),
            "loop": "oneOrMore" if stage.loop else None,
            "combinations": stage.loop == "any",
            "consecutive": stage.loop == "consecutive",
        })
    within = int(query.within.size) if query.within is not None else None
    return {"stages": described, "within": within, "skip": skip_text}, stages


def _events(query: ast.Query, stream: Sequence[Event], schema: Schema) -> list[dict[str, Any]]:
    """The events Flink sees: position, partition key, and the position inside the
    partition as the timestamp (ACEL's EVENTS windows count inside the partition)."""
    out: list[tuple[int, dict[str, Any]]] = []
    for part in split_partitions(stream, query.partition_by):
        key = json.dumps([v for _a, v in part.key])
        for local, (event, position) in enumerate(zip(part.events, part.positions)):
            attrs = {a: event.get(a) for a in schema.attributes(str(event.type))[1:]}
            if any(v is None for v in attrs.values()) or any(
                isinstance(v, (bool, float)) for v in attrs.values()
            ):
                raise UnsupportedQuery("Flink adapter: NULL, float or boolean attributes")
            out.append((position, {"pos": position, "ts": local, "key": key,
                                   "type": event.type, "attrs": attrs}))
    return [e for _p, e in sorted(out, key=lambda pair: pair[0])]


# ------------------------------------------------------------------ environment


def _java(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise PrerequisiteMissing(f"Flink CEP needs Java 17 ({tool!r} is not on the PATH)")
    return found


def flink_classpath() -> str:
    """The class path of the compiled program and Flink's jars (``<cache>/flink``),
    fetched from PyPI and compiled on first use."""
    javac = _java("javac")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    with locked("flink") as home:
        jars = home / "jars"
        if not (jars / ".complete").exists():
            with tempfile.TemporaryDirectory(prefix="acel-flink-", dir=home.parent) as tmp:
                run_step([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                          "--only-binary", ":all:", "-d", tmp, WHEEL],
                         f"fetching Flink's jars ({WHEEL}, about 330 MB) from PyPI")
                wheels = list(Path(tmp).glob("apache_flink_libraries-*.whl"))
                if not wheels:
                    raise AcelError(f"pip fetched no wheel of {WHEEL}")
                _extract_jars(wheels[0], jars)
        classes = home / f"classes-{digest}"
        if not (classes / "AcelFlinkCep.class").exists():
            classes.mkdir(parents=True, exist_ok=True)
            run_step([javac, "-nowarn", "-d", str(classes), "-cp", _jar_path(jars), str(SOURCE)],
                     "compiling the Flink CEP adapter")
        return f"{classes}:{_jar_path(jars)}"


def _jar_path(jars: Path) -> str:
    return ":".join(str(p) for p in sorted(jars.glob("*.jar")))


def _extract_jars(wheel: Path, jars: Path) -> None:
    jars.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            base = name.rsplit("/", 1)[-1]
            if name.startswith("pyflink/lib/") and base.endswith(".jar") and base.startswith(JARS):
                with archive.open(name) as src, open(jars / base, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    (jars / ".complete").write_text(str(wheel.name) + "\n", encoding="utf-8")


# ------------------------------------------------------------------ the engine


class FlinkEngine:
    """The batch function of the ``flink`` engine: one JVM serves every case of a run.
    ``drop_last`` makes the deliberately broken copy (Flink never sees the last event)."""

    value_range = INT64
    """The program's evaluator computes in Java's 64-bit long (N5)."""

    def __init__(self, timeout: float = 60.0, drop_last: bool = False) -> None:
        self.timeout = timeout
        self.drop_last = drop_last
        self._process: subprocess.Popen[bytes] | None = None
        self._pending = b""

    def __getstate__(self) -> dict[str, Any]:
        return {"timeout": self.timeout, "drop_last": self.drop_last, "_process": None,
                "_pending": b""}

    def __call__(self, query: ast.Query, stream: Sequence[Event], schema: Schema) -> list[Match]:
        job, stages = to_pattern(query)
        outside = outside_range(query, stream, INT64)
        if outside is not None:
            raise UnsupportedQuery(f"Flink adapter: {outside}")
        shown = list(stream[:-1]) if self.drop_last else list(stream)
        job["events"] = _events(query, shown, schema)
        by_time = {e.time: e for e in stream}
        matches: dict[bytes, Match] = {}
        encoder = LineEncoder()
        for found in self._ask(job):
            bags: dict[str, list[Event]] = {}
            times: list[int] = []
            for k, stage in enumerate(stages):
                events = [by_time[p] for p in found.get(f"s{k}", [])]
                times += [e.time for e in events]
                for var in stage.variables:
                    bags.setdefault(var, []).extend(events)
            first = by_time[min(times)]
            key = tuple((a, first.get(a)) for a in query.partition_by)
            match = Match(key, ComplexEvent.make(min(times), max(times), bags))  # type: ignore[arg-type]
            # stages of one variable (A+ ; A+) give one complex event several ways: N4
            matches.setdefault(encoder.match(match), match)
        return list(matches.values())

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._pending = b""
            self._process = subprocess.Popen(
                [_java("java"), "-cp", flink_classpath(), "AcelFlinkCep"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )
        return self._process

    def _ask(self, job: dict[str, Any]) -> list[dict[str, list[int]]]:
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(job).encode() + b"\n")
        process.stdin.flush()
        out: list[dict[str, list[int]]] = []
        while True:
            line = self._line(process)
            if line == "END":
                return out
            if line.startswith("ERROR "):
                raise AcelError(f"Flink CEP: {line[6:]}")
            if line:
                out.append(json.loads(line))

    def _line(self, process: subprocess.Popen[bytes]) -> str:
        """The JVM's next line."""
        from acel.testing.persistent import next_line

        try:
            line, self._pending = next_line(process, self._pending, self.timeout, "Flink CEP")
        except AcelError:
            self._process = None
            raise
        return line

    def close(self) -> None:
        """Stop the JVM (it also stops when the stream of jobs ends)."""
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=30)
        self._process = None
