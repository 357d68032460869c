"""ACEL on Apache Spark: the same query, the same answers, partition by partition.

``run(query, data, ...)`` returns a DataFrame; ``run_to_results`` collects it
into the single-process engines' ``Match``/``TrendRow`` objects;
``get_session`` starts the embedded local session; ``stream`` runs a query on
a streaming DataFrame (Structured Streaming, the engine's state in Spark's
state store).  See papers/spark.md.
"""

from .run import NotParallelWarning, plan, run, run_events, run_to_results, write
from .session import get_session
from .streaming import stream

__all__ = ["NotParallelWarning", "get_session", "plan", "run", "run_events", "run_to_results", "stream",
           "write"]
