"""The engines a query can run on, behind one declared protocol.

Every engine answers a checked query on a stream (spec §6) with the same
results; they differ in how.  An :class:`Engine` says what it can do: run a
whole stream held in memory (``batch``), or follow a stream event by event
(``incremental``: a :class:`acel.acea.engine.Runner`, results as soon as they
are final).  ``ENGINES`` is the one registry the command line, ``acel
conform`` and :func:`acel.run` use.  Modules load on first use, so a missing
optional piece (Spark) only affects its own engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from acel.lang.ast import Query
from acel.lang.clauses import Match, TrendRow
from acel.lang.errors import AcelError
from acel.lang.events import Event
from acel.lang.schema import Schema

Result = Any
"""A :class:`~acel.lang.clauses.Match` or a :class:`~acel.lang.clauses.TrendRow`."""


class BatchRun(Protocol):
    def __call__(
        self, query: Query, stream: Sequence[Event], schema: Schema
    ) -> list[Match] | list[TrendRow]: ...


@dataclass(frozen=True)
class Engine:
    """One way of evaluating queries (see the module doc)."""

    name: str
    description: str
    module: str = ""
    function: str = "run"
    incremental: bool = False
    """Whether :func:`runner` follows a stream event by event (else: batch only)."""
    fn: BatchRun | None = None
    """The batch function itself (an engine defined outside the project), else
    ``module.function``, imported on first use."""
    unsupported: frozenset[str] = frozenset()
    """Operators it does not run, named as in :data:`acel.lang.operators.OPERATORS`
    (conformance checks generate only the rest)."""

    check: str = ""
    """A function of ``module``, ``check(query)``, that raises ``UnsupportedQuery`` for a
    query the engine cannot run, before any data is read (empty: no such check)."""
    in_process: bool = True
    """Runs in this Python process (else it starts a cluster session, as Spark does)."""

    def check_supported(self, query: Query) -> None:
        """Raise ``UnsupportedQuery`` before any data is read when the engine cannot run
        ``query`` (the declared operators, then the engine's own ``check``)."""
        if self.check and self.module:
            getattr(importlib.import_module(self.module), self.check)(query)
        refused = self.refuses(query)
        if refused:
            from acel.lang.errors import UnsupportedQuery

            raise UnsupportedQuery(
                f"engine {self.name} does not run {', '.join(sorted(refused))} "
                "(papers/conformance.md; --engine optimized runs every query)"
            )

    def refuses(self, query: Query) -> frozenset[str]:
        """The operators of ``query`` this engine declares unsupported (empty: it may run it)."""
        if not self.unsupported:
            return frozenset()
        from acel.lang.operators import operators_of

        return operators_of(query) & self.unsupported

    def batch(self, query: Query, stream: Sequence[Event], schema: Schema) -> list[Any]:
        """Every result of ``query`` on a stream held in memory, in the order of spec §12."""
        fn: Callable[..., Any] | None = self.fn
        if fn is None:
            fn = getattr(importlib.import_module(self.module), self.function)
        return list(fn(query, stream, schema))

    def runner(self, query: Query, schema: Schema, **options: Any) -> Any:
        """An incremental runner (:class:`acel.acea.engine.Runner`) for ``query``."""
        if not self.incremental:
            raise AcelError(f"engine {self.name} has no incremental runner")
        from acel.acea.engine import Runner

        return Runner(query, schema, **options)


SASE_SUPPORTS = frozenset(
    {"AS", "FILTER", "BAG", "SEQ", "CONTIG", "PLUS", "CONTIG_PLUS", "OR", "PROJECT",
     "PROJECT_ATTRS", "AGG", "REPEAT", "OPTIONAL", "RELATE", "PARTITION_BY", "WITHIN",
     "WITHIN_ON", "SLIDE", "RETURN", "SELECT", "SKIP"}
)
"""What the two-step SASE+ baseline runs (spec §8, ``papers/sase.md``): sequences of ``T``,
``T AS v``, ``(T AS v)+`` and ``(T AS v):+`` joined by ``;``/``:``, ``OR`` between whole
alternatives, quantifiers, filters relating events, and PROJECT/AGG over each match.  A
shape of these operators outside it (``(A OR B)+``, an AGG inside a sequence) raises
``NotInFragment`` before any data is read; every operator not listed is declared
unsupported, so a new operator counts as unsupported until it is added here."""


def lacking(supported: frozenset[str]) -> frozenset[str]:
    """The operator names (:data:`acel.lang.operators.OPERATORS`) outside ``supported``."""
    from acel.lang.operators import OPERATORS, operator_names

    return frozenset(OPERATORS) - operator_names(supported)


ENGINES: dict[str, Engine] = {
    engine.name: engine
    for engine in (
        Engine(
            "optimized",
            "the streaming engine: shared runs, trend aggregation without enumeration (default)",
            "acel.acea.engine",
            incremental=True,
        ),
        Engine("oracle", "the definition, operator by operator (small inputs only)", "acel.reference.oracle"),
        Engine("automaton", "naive runs of the compiled ACEA", "acel.acea.engine.naive"),
        Engine("sase", "the two-step SASE+ baseline (its fragment of ACEL)", "acel.reference.sase",
               unsupported=lacking(SASE_SUPPORTS), check="check_fragment"),
        Engine("spark", "the optimized engine on Apache Spark, partition by partition", "acel.spark_backend",
               function="run_events", in_process=False),
    )
}
"""The registry of engines, by name."""


def in_process_engines(*operators: str, query: Query | None = None) -> list[str]:
    """The names of the registry's engines that run in this process (every one but those
    that start a cluster session) and declare none of ``operators`` (nor any operator of
    ``query``) unsupported: what a test runs on each engine, by declared capability."""
    from acel.lang.operators import operator_names, operators_of

    needed = operator_names(operators) | (operators_of(query) if query is not None else frozenset())
    return [
        name for name, found in ENGINES.items()
        if found.in_process and not needed & found.unsupported
    ]


def engine(name: str) -> Engine:
    """The engine called ``name``; an error naming the choices otherwise."""
    found = ENGINES.get(name)
    if found is None:
        raise AcelError(f"unknown engine {name!r} (choose from {', '.join(ENGINES)})")
    return found


def resolve(given: str | Engine | BatchRun) -> Engine:
    """An :class:`Engine` from a registry name, an Engine, or a batch function
    ``fn(query, events, schema)`` returning Match/TrendRow objects (an engine of
    one's own, run like the registry's)."""
    if isinstance(given, Engine):
        return given
    if isinstance(given, str):
        return engine(given)
    if callable(given):
        name = str(getattr(given, "__name__", type(given).__name__))
        return Engine(name, f"the Python function {name}", fn=given)
    raise TypeError(f"not an engine: {given!r} (give a name, an Engine or a function)")
