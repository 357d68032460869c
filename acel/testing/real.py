"""The field's real engines by name, as the kit checks them: ``acel conform --against core``.

Each one is a translator from the fragment of ACEL it shares, the fragment declared (the kit
generates nothing else), its generator defaults (CORE and Flink have no NULL) and a batch
function that installs what it needs on first use (:mod:`acel.testing.cache`).
``papers/conformance.md`` ("Real engines") has the fragments and the findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from acel.engines import Engine
from acel.lang.operators import OPERATORS, operator_names


@dataclass(frozen=True)
class RealEngine:
    """A real engine the kit knows by name."""

    name: str
    description: str
    fragment: frozenset[str]
    """The operators it shares with ACEL (everything else is declared unsupported)."""
    null_rate: float
    """The generators' default chance of a NULL attribute (0: the engine has no NULL)."""
    make: Callable[[float, bool], Any]
    """``make(timeout, drop_last)``: the batch function (``drop_last``: the broken copy)."""

    def engine(self, *, timeout: float = 60.0, unsupported: Iterable[str] = (),
               drop_last: bool = False) -> Engine:
        """The engine, declaring what lies outside its fragment (plus ``unsupported``)."""
        lacks = (frozenset(OPERATORS) - self.fragment) | operator_names(unsupported)
        name = self.name + ("-drop-last" if drop_last else "")
        return Engine(name, self.description, fn=self.make(timeout, drop_last), unsupported=lacks)


def _core(timeout: float, drop_last: bool) -> Any:
    from acel.testing.core import CoreEngine

    return CoreEngine(timeout, drop_last)


def _flink(timeout: float, drop_last: bool) -> Any:
    from acel.testing.flink import FlinkEngine

    return FlinkEngine(timeout, drop_last)


def _mr(timeout: float, drop_last: bool) -> Any:
    from acel.testing.mr import MatchRecognizeEngine

    return MatchRecognizeEngine(timeout, drop_last)


def _fragment(name: str) -> frozenset[str]:
    if name == "core":
        from acel.testing.core import FRAGMENT
    elif name == "flink":
        from acel.testing.flink import FRAGMENT
    else:
        from acel.testing.mr import FRAGMENT
    return FRAGMENT


REAL_ENGINES: dict[str, RealEngine] = {
    "core": RealEngine("core", "CORE (PyPI pycer, Python 3.13, own venv)", _fragment("core"),
                       0.0, _core),
    "flink": RealEngine("flink", "Flink CEP (jars of PyPI's apache-flink, Java 17)",
                        _fragment("flink"), 0.0, _flink),
    "pandas-mr": RealEngine("pandas-mr", "SQL MATCH_RECOGNIZE (PyPI pandas-match-recognize, own venv)",
                            _fragment("pandas-mr"), 0.0, _mr),
}
"""The real engines ``--against NAME`` accepts."""


def real_engine(name: str) -> RealEngine | None:
    """The real engine called ``name`` (case-insensitive), else ``None``."""
    return REAL_ENGINES.get(name.strip().lower())


def against(text: str, *, unsupported: Iterable[str] = (), timeout: float = 60.0) -> tuple[Engine, RealEngine | None]:
    """``acel conform --against TEXT``: a real engine's name (``core``, ``flink``) or a
    command template of the adapter protocol; with the real engine when it is one."""
    from acel.testing.adapters import engine_from_command

    real = real_engine(text)
    if real is not None:
        return real.engine(timeout=timeout, unsupported=unsupported), real
    if " " not in text.strip() and "{" not in text:
        from acel.lang.errors import AcelError

        raise AcelError(
            f"--against {text!r}: not a real engine ({', '.join(REAL_ENGINES)}), and as a "
            "command it names neither {query} nor {data} (papers/conformance.md)"
        )
    return engine_from_command(text, unsupported=unsupported, timeout=timeout), None
