"""The conformance kit: check any event-recognition engine against ACEL's oracle.

- :func:`assert_conforms` runs an engine and the oracle on generated
  queries and streams and fails with a shrunk, minimal case
  (:class:`NonConformance`); :func:`check_case` compares them on one
  :class:`Case`.
- The engine is a registry name (``"optimized"``), a Python function, a
  function that speaks only text (:func:`engine_from_function`) or an
  external program in any language (:func:`engine_from_command`, the adapter
  protocol of ``papers/conformance.md``, also ``acel conform --against``).
- Hypothesis strategies with knobs (operators, depth, stream length, NULL
  rate): :func:`cases`, :func:`schemas`, :func:`streams`, :func:`formulas`,
  :func:`queries`, :func:`trend_queries`, ``raw_formulas``/``raw_queries``.
- :func:`same_results` is the comparison (floats up to relative 1e-9).
- Campaigns for CI (issue 33): :func:`run_generated` (every outcome counted, failures
  shrunk and kept one per shape), :func:`replay` of case files, :func:`judge` of one case.

The strategies and :func:`assert_conforms` need Hypothesis (``pip install
'acel[testing]'``); the adapters and the comparison do not.  Names load on
first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acel.lang.operators import OPERATORS, operators_of
    from acel.testing.adapters import (
        UNSUPPORTED_EXIT,
        EngineFailed,
        as_engine,
        engine_from_command,
        engine_from_function,
    )
    from acel.testing.campaign import replay, run_generated
    from acel.testing.compare import normalise, same_results
    from acel.testing.conformance import (
        Case,
        NonConformance,
        assert_conforms,
        cases,
        check_case,
    )
    from acel.testing.outcomes import judge
    from acel.testing.strategies import (
        DOMAINS,
        NULL_RATE,
        SPEC_STOCK_EVENTS,
        SPEC_STOCK_ROWS,
        SPEC_STOCK_SCHEMA,
        TEST_SCHEMA,
        events_of,
        formulas,
        formulas_with_env,
        negation_formulas,
        negation_formulas_with_env,
        queries,
        raw_formulas,
        raw_queries,
        schemas,
        streams,
        trend_queries,
    )

__all__ = [
    "Case",
    "DOMAINS",
    "EngineFailed",
    "NULL_RATE",
    "NonConformance",
    "OPERATORS",
    "SPEC_STOCK_EVENTS",
    "SPEC_STOCK_ROWS",
    "SPEC_STOCK_SCHEMA",
    "TEST_SCHEMA",
    "UNSUPPORTED_EXIT",
    "as_engine",
    "assert_conforms",
    "cases",
    "check_case",
    "engine_from_command",
    "engine_from_function",
    "events_of",
    "formulas",
    "formulas_with_env",
    "judge",
    "negation_formulas",
    "negation_formulas_with_env",
    "normalise",
    "operators_of",
    "queries",
    "raw_formulas",
    "raw_queries",
    "replay",
    "run_generated",
    "same_results",
    "schemas",
    "streams",
    "trend_queries",
]

_MODULES = {
    "acel.lang.operators": ("OPERATORS", "operators_of"),
    "acel.testing.adapters": (
        "UNSUPPORTED_EXIT",
        "EngineFailed",
        "as_engine",
        "engine_from_command",
        "engine_from_function",
    ),
    "acel.testing.campaign": ("replay", "run_generated"),
    "acel.testing.compare": ("normalise", "same_results"),
    "acel.testing.outcomes": ("judge",),
    "acel.testing.conformance": (
        "Case",
        "NonConformance",
        "assert_conforms",
        "cases",
        "check_case",
    ),
    "acel.testing.strategies": (
        "DOMAINS",
        "NULL_RATE",
        "SPEC_STOCK_EVENTS",
        "SPEC_STOCK_ROWS",
        "SPEC_STOCK_SCHEMA",
        "TEST_SCHEMA",
        "events_of",
        "formulas",
        "formulas_with_env",
        "negation_formulas",
        "negation_formulas_with_env",
        "queries",
        "raw_formulas",
        "raw_queries",
        "schemas",
        "streams",
        "trend_queries",
    ),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'acel.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
