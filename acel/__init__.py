"""ACEL: complex event recognition with aggregation (ACEL → ACEA → engines → Spark).

    import acel
    q = acel.parse("(SELL AS x ; BUY) FILTER x[price > 100]")   # str(q): canonical text
    c = acel.compile(q, schema={"SELL": ["price"], "BUY": ["price"]})
    c                          # in Jupyter: the automaton; c.dot, c.size(), c.summary()
    r = acel.run(q, data)      # a path, list of dicts, pandas DataFrame or pyarrow Table
    r.to_pandas(); r.to_arrow(); r.to_json_lines(); r.write("out.parquet")
    acel.spark.run(q, spark_df)               # a Spark DataFrame of the results

parse(text) -> Query; check(query, schema) -> Query; compile(query, schema) -> CompiledQuery
run(query, data, engine="optimized", *, schema, type_col, time_col) -> Results
runner(query, schema, state=None) -> Runner: push(event), finish(), save() -> state
step_through(query, events, schema, expect=None) -> str: a standalone HTML page
Query, CompiledQuery, Results, Schema; errors: AcelError > QueryError, DataError,
UnsupportedQuery (a query error's text names line and column, as the CLI prints it)
Submodules: acel.engines (Engine protocol, registry ENGINES), acel.spark (run, collect,
stream, run_workload), acel.workload (many queries, one pass), acel.testing (conformance
kit: strategies, assert_conforms, external engines).  Every other module is internal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from acel._version import __version__ as __version__

if TYPE_CHECKING:
    from acel import engines, spark, testing, workload
    from acel.api import CompiledQuery as CompiledQuery
    from acel.api import Query as Query
    from acel.api import Results as Results
    from acel.api import check, compile, parse, run, runner
    from acel.lang.errors import AcelError as AcelError
    from acel.lang.errors import DataError as DataError
    from acel.lang.errors import QueryError as QueryError
    from acel.lang.errors import UnsupportedQuery as UnsupportedQuery
    from acel.lang.schema import Schema as Schema
    from acel.stepper import step_through

_WHERE = {
    "parse": "acel.api",
    "check": "acel.api",
    "compile": "acel.api",
    "run": "acel.api",
    "runner": "acel.api",
    "step_through": "acel.stepper",
    "Query": "acel.api",
    "CompiledQuery": "acel.api",
    "Results": "acel.api",
    "Schema": "acel.lang.schema",
    "AcelError": "acel.lang.errors",
    "QueryError": "acel.lang.errors",
    "DataError": "acel.lang.errors",
    "UnsupportedQuery": "acel.lang.errors",
}
_SUBMODULES = ("engines", "spark", "testing", "workload")

__all__ = [
    "check", "compile", "engines", "parse", "run", "runner", "spark", "step_through", "testing",
    "workload",
]
"""The functions and submodules; the classes and errors listed in the doc are
attributes too (``acel.Query``, ``acel.AcelError``, …)."""


def __getattr__(name: str) -> Any:
    """Load the public names on first use, so that ``import acel`` stays fast."""
    if name in _SUBMODULES:
        module = importlib.import_module(f"acel.{name}")
        globals()[name] = module
        return module
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'acel' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | set(_SUBMODULES))
