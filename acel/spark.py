"""ACEL on Apache Spark, from Python: ``acel.spark.run(query, spark_df)``.

``run``/``collect`` a query on a DataFrame or a file, ``stream`` it on a
streaming DataFrame, ``run_workload`` many queries in one job.

The same query gives the same results as :func:`acel.run`; Spark numbers
the stream, splits it by PARTITION BY keys or time slices and runs the
optimized engine on each piece (``papers/spark.md``).  The implementation is
:mod:`acel.spark_backend`; this module is its public face.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from acel.api import QueryLike, SchemaLike, as_query, as_schema
from acel.lang.errors import AcelError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from acel.api import Query
    from acel.lang.clauses import Match, TrendRow
    from acel.lang.schema import Schema


def session(master: str | None = None) -> SparkSession:
    """The active Spark session, else an embedded ``local[*]`` one (or ``master``'s)."""
    from acel.spark_backend import get_session

    return get_session(master)


F = TypeVar("F", bound=Callable[..., Any])
_FLAG = re.compile(r"--(type-col|time-col|schema)\b")
_NO_TYPE = re.compile(r"the type column '[^']*' is not in the (data|header)")


def python_words(text: str) -> str:
    """A message in the words of a Python call: the command line's ``--type-col`` is the
    argument ``type_col=`` here (issue 37 §2), and a missing type column says so."""
    text = _FLAG.sub(lambda m: m.group(1).replace("-", "_") + "=", text)
    if _NO_TYPE.search(text) and "type_col=" not in text:
        text += "; name it with type_col="
    return text


def _in_python_words(function: F) -> F:
    """``function`` whose plain errors (an ``AcelError`` whose text is its argument) name
    Python arguments, not command-line flags."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except AcelError as error:
            text = str(error)
            if type(error).__str__ is not Exception.__str__ or python_words(text) == text:
                raise
            raise type(error)(python_words(text)) from error.__cause__

    return wrapper  # type: ignore[return-value]


@_in_python_words
def run(
    query: QueryLike,
    data: Any,
    *,
    schema: SchemaLike = None,
    type_col: str = "type",
    time_col: str | None = None,
    session: SparkSession | None = None,
    partitions: int | None = None,
    vars: str = "struct",
    counts: str = "long",
) -> DataFrame:
    """Run ``query`` on Spark; a lazy Spark DataFrame of its results (no Spark job runs
    until an action; without ``schema`` a DataFrame's schema is inferred by one job).

    ``data``: a Spark DataFrame (one event per row, its type in
    ``type_col``) or a path Spark can read (Parquet, JSON Lines, CSV).
    Complex events come as the PARTITION BY columns, ``start``, ``end`` and
    ``vars``: a struct with one field per variable, the array of its events, each a
    struct of ``time`` (the position) and that variable's attributes, typed
    (``vars="json"`` gives the §12 JSON text instead).  RETURN rows come as the
    PARTITION BY columns, ``window_lo``/``window_hi`` with SLIDE, and one column per
    item named without backticks: ``count`` for ``COUNT(*)``, ``sum_b_v`` for
    ``SUM(b.v)``; integer counts and sums are ``bigint`` (a value past 2^63 − 1 fails
    the action; ``counts="decimal"`` gives exact DECIMAL(38,0)).  Row order is not
    specified: :func:`collect` sorts (papers/spark.md, "Results shaped for people").
    """
    from acel.spark_backend.run import plan
    from acel.spark_backend.shaped import shaped

    _shape_options(vars, counts)
    parsed, given = _checked(query, schema)
    planned = plan(
        parsed.ast, data, type_col=type_col, time_col=time_col, schema=given,
        session=session or _session_of(data), partitions=partitions, lazy=True,
    )
    if vars == "json" and planned.layout.mode == "matches":
        return planned.frame
    return shaped(planned, "decimal" if counts == "decimal" else "long")


def _shape_options(vars: str, counts: str) -> None:
    """Refuse a ``vars=`` or ``counts=`` that :mod:`acel.spark_backend.shaped` has not."""
    if vars not in ("struct", "json"):
        raise AcelError(f"vars={vars!r}: choose 'struct' (typed) or 'json' (§12 text)")
    if counts not in ("long", "decimal"):
        raise AcelError(f"counts={counts!r}: choose 'long' (bigint) or 'decimal' (DECIMAL(38,0))")


@_in_python_words
def collect(
    query: QueryLike,
    data: Any,
    *,
    schema: SchemaLike = None,
    type_col: str = "type",
    time_col: str | None = None,
    session: SparkSession | None = None,
    partitions: int | None = None,
) -> list[Match] | list[TrendRow]:
    """:func:`run`, collected into the results :func:`acel.run` gives, in the order of
    spec §12 (so ``acel.io.results.to_json_lines`` of both are equal)."""
    from acel.spark_backend import run_to_results

    parsed, given = _checked(query, schema)
    return run_to_results(
        parsed.ast, data, type_col=type_col, time_col=time_col, schema=given,
        session=session or _session_of(data), partitions=partitions,
    )


@_in_python_words
def stream(
    query: QueryLike,
    data: DataFrame,
    *,
    schema: SchemaLike,
    pos_col: str = "pos",
    type_col: str = "type",
    time_col: str | None = None,
    delay: float = 0,
    vars: str = "struct",
    counts: str = "long",
) -> DataFrame:
    """Run ``query`` on a *streaming* Spark DataFrame: a streaming DataFrame of results,
    each emitted once, when final (Structured Streaming; each PARTITION BY key's
    incremental runner lives in Spark's state store, so a query restarted from its
    checkpoint loses and repeats nothing).  The stream carries positions in
    ``pos_col`` and ends with an end row; see :mod:`acel.spark_backend.streaming`.
    Its columns are :func:`run`'s for the same query (``vars=``, ``counts=`` as there).
    """
    from acel.spark_backend.streaming import stream as spark_stream

    _shape_options(vars, counts)
    parsed = as_query(query)
    given = as_schema(schema)
    if given is None:
        raise AcelError("a streaming DataFrame needs its schema (schema=...): no data to infer it from")
    parsed.check(given)
    return spark_stream(parsed.ast, data, schema=given, pos_col=pos_col, type_col=type_col,
                        time_col=time_col, delay=delay, vars=vars,
                        counts="decimal" if counts == "decimal" else "long")


@_in_python_words
def run_workload(
    queries: Any,
    data: Any,
    *,
    schema: SchemaLike = None,
    type_col: str = "type",
    time_col: str | None = None,
    session: SparkSession | None = None,
    partitions: int | None = None,
) -> dict[str, list[Match] | list[TrendRow]]:
    """Every query of a workload (``{name: query}`` or ``[(name, query)]``) on Spark in
    one job; each query's results as :func:`collect` gives them."""
    from acel.spark_backend.workload import run_workload_to_results

    named = list(queries.items()) if isinstance(queries, dict) else list(queries)
    pairs = [(name, as_query(q)) for name, q in named]
    given = as_schema(schema)

    def check(found: Schema) -> None:
        for _, q in pairs:
            q.check(found)

    if given is not None:
        check(given)
    return run_workload_to_results(
        [(name, q.ast) for name, q in pairs], data, type_col=type_col, time_col=time_col,
        schema=given, session=session or _session_of(data), partitions=partitions, check=check,
    )


def _checked(query: QueryLike, schema: SchemaLike) -> tuple[Query, Schema | None]:
    """The query, checked against ``schema`` when one is given: located errors before
    Spark reads anything (without one, the data's schema is checked once known)."""
    parsed = as_query(query)
    given = as_schema(schema)
    if given is not None:
        parsed.check(given)
    return parsed, given


def _session_of(data: Any) -> SparkSession | None:
    """The session a Spark DataFrame belongs to (``None`` for a path)."""
    return getattr(data, "sparkSession", None)


__all__ = ["collect", "run", "run_workload", "session", "stream"]
