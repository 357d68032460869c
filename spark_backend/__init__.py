"""ACEL on Apache Spark: the same query, the same answers, partition by partition.

``run(query, data, ...)`` returns a DataFrame; ``run_to_results`` collects it
into the single-process engines' ``Match``/``TrendRow`` objects;
``get_session`` starts the embedded local session; ``stream`` runs a query on
a streaming DataFrame (Structured Streaming, the engine's state in Spark's
state store).  See papers/spark.md.

The package imports nothing itself (PEP 562): each name above is imported from its
module on first use.  A Python worker unpickling a task imports only what the task
runs (``executor`` and what it needs), not the driver's planning (``run``, ``frames``)
or streaming: 15 modules and about 0.03 s of CPU less a worker (papers/spark.md,
"Issue 31: the per-key cost and the workers' imports").
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .run import NotParallelWarning, plan, run, run_events, run_to_results, write
    from .session import get_session
    from .streaming import stream

__all__ = ["NotParallelWarning", "get_session", "plan", "run", "run_events", "run_to_results", "stream",
           "write"]

_HOME = {"NotParallelWarning": "run", "plan": "run", "run": "run", "run_events": "run",
         "run_to_results": "run", "write": "run", "get_session": "session", "stream": "streaming"}
"""The module each public name lives in."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """This package's module object: the function ``run`` keeps its name.

    ``run`` is both a submodule and a function.  Importing the submodule makes the import
    system bind it on the package (``setattr(package, "run", module)``), which would hide
    the function that ``from acel.spark_backend import run`` must give; that binding is
    skipped, so the name resolves through :func:`__getattr__` to the function, as it did
    when this ``__init__`` imported it eagerly.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _HOME.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
