"""Hypothesis strategies for ACEL: schemas, streams, formulas, queries and cases.

They are what the project's own cross-checks use, and what
:func:`acel.testing.assert_conforms` draws for an outside engine.  Every
strategy has knobs:

- ``schema``: the event types and attributes (default :data:`TEST_SCHEMA`:
  three types over small integer domains, so predicates both pass and fail on
  short streams); :func:`schemas` draws one.
- ``operators``: the names of :data:`acel.lang.operators.OPERATORS` that may
  appear (default: every one; ``TOP_NOT`` only with ``top_negation=True``).
  An engine that lacks ``AND`` gets formulas without ``AND``, and so on.
- ``max_depth``: how deeply formula operators nest (iterations at most two
  deep, so that the oracle's enumeration stays cheap on 7 events).
- ``max_len`` (streams): the longest stream; ``null_rate``: the chance that
  an event lacks an attribute (NULL); ``present``: attributes never NULL (the
  attribute of a ``WITHIN d ON attr`` window).

- :func:`streams`: short typed streams (times 0..n-1), values from
  :data:`DOMAINS`; shrinking drops events and makes attributes present.
  Optional features (NEXT, bag predicates, NULLs) are drawn so that
  shrinking removes them: a shrunk case uses only what its failure needs.
- :func:`formulas`: well-formed formulas (they pass ``acel.lang.checker``) using
  every allowed operator: atoms, AS, FILTER with unary predicates (arithmetic,
  IN, NOT, AND/OR) and bag predicates, OR, AND, ``;``, ``:``, ``+``, ``:+``,
  both projections (incl. the empty variable list), AGG with 1-3 outputs
  (nested, and filtered through its created variable), NEXT and middle
  negation ``φ1 ; NOT ψ ; φ2`` (one or two NOTs; ψ small, sometimes negated
  inside itself; anywhere a sub-formula may stand).
- :func:`queries` / :func:`trend_queries`: formulas wrapped in the clauses
  of spec §6; with ``top_negation=True`` also leading and/or trailing
  negation at the top (sometimes under a FILTER), always with WITHIN.
- ``raw_formulas`` / ``raw_queries``: arbitrary ASTs (names need not be in
  scope, odd literals) for a parser/printer round trip.

The strategies live in one module per job: :mod:`.schema_streams` (constants, schemas, streams),
:mod:`.formulas` (formulas and queries), :mod:`.relating` (spec §5.1 filters), :mod:`.raw`
(arbitrary ASTs); every name is re-exported here.
"""

from __future__ import annotations

from acel.testing.strategies.formulas import (
    formulas,
    formulas_with_env,
    negation_formulas,
    negation_formulas_with_env,
    queries,
    trend_queries,
    window_attribute,
)
from acel.testing.strategies.raw import (
    raw_exprs,
    raw_filters,
    raw_formulas,
    raw_literals,
    raw_preds,
    raw_queries,
)
from acel.testing.strategies.relating import (
    relating_queries,
)
from acel.testing.strategies.schema_streams import (
    ALL_OPERATORS,
    DOMAINS,
    NULL_RATE,
    SPEC_STOCK_EVENTS,
    SPEC_STOCK_ROWS,
    SPEC_STOCK_SCHEMA,
    TEST_SCHEMA,
    aggregate_funcs,
    aggregate_names,
    allowed,
    events_of,
    schemas,
    streams,
)

__all__ = [
    "ALL_OPERATORS",
    "DOMAINS",
    "NULL_RATE",
    "SPEC_STOCK_EVENTS",
    "SPEC_STOCK_ROWS",
    "SPEC_STOCK_SCHEMA",
    "TEST_SCHEMA",
    "aggregate_funcs",
    "aggregate_names",
    "allowed",
    "events_of",
    "formulas",
    "formulas_with_env",
    "negation_formulas",
    "negation_formulas_with_env",
    "queries",
    "raw_exprs",
    "relating_queries",
    "raw_filters",
    "raw_formulas",
    "raw_literals",
    "raw_preds",
    "raw_queries",
    "schemas",
    "streams",
    "trend_queries",
    "window_attribute",
]
