"""Persistent adapters against one process per case (issue 33): the same generated cases
run by a real engine's adapter kept alive for the whole run, and started afresh for every
case (for Flink: one JVM per case, as a per-case adapter command would).

    python bench/conform_persistent.py --engine flink --cases 2000 --per-case 2000
    python bench/conform_persistent.py --engine flink --cases 2000 --per-case 100   # quicker

Only the engine's calls are timed (the oracle is not run).  With ``--per-case`` below
``--cases`` the per-case mode runs the first cases only, and its total for all the cases
is extrapolated from its time per case (printed as such).  Needs the engine installed
(``acel conform --against NAME`` installs it on first use).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed

from acel.lang.errors import AcelError, UnsupportedQuery
from acel.testing.conformance import Case, cases
from acel.testing.real import REAL_ENGINES
from acel.testing.strategies import TEST_SCHEMA, allowed


def generated(engine: str, count: int, seed: int) -> list[Case]:
    """``count`` cases inside the engine's fragment, the kit's defaults, corners on."""
    real = REAL_ENGINES[engine]
    ops = allowed(real.fragment)
    out: list[Case] = []

    @settings(max_examples=count, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(cases(TEST_SCHEMA, operators=ops, null_rate=real.null_rate, corners=True,
                 value_range=(-(2**63), 2**63 - 1)))
    def collect(case: Case) -> None:
        out.append(case)

    hypothesis_seed(seed)(collect)()
    return out[:count]


def make(engine: str, persistent: bool) -> Any:
    if engine == "flink":
        from acel.testing.flink import FlinkEngine

        return FlinkEngine()
    if engine == "core":
        from acel.testing.core import CoreEngine

        return CoreEngine(persistent=persistent)
    from acel.testing.mr import MatchRecognizeEngine

    return MatchRecognizeEngine(persistent=persistent)


def run(engine: str, chosen: list[Case], persistent: bool) -> tuple[float, int, int]:
    """Seconds, cases answered, cases declared unsupported."""
    answered = refused = 0
    fn = make(engine, persistent) if persistent else None
    start = time.perf_counter()
    for case in chosen:
        one = fn if fn is not None else make(engine, False)
        try:
            one(case.query, list(case.stream), case.schema)
            answered += 1
        except UnsupportedQuery:
            refused += 1
        except AcelError:
            answered += 1
        finally:
            if fn is None:
                one.close()  # one process (one JVM) per case
    if fn is not None:
        fn.close()
    return time.perf_counter() - start, answered, refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=sorted(REAL_ENGINES), default="flink")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--per-case", type=int, default=None,
                        help="cases run with one process each (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    chosen = generated(args.engine, args.cases, args.seed)
    per_case = chosen[: args.per_case or len(chosen)]
    warm = make(args.engine, True)  # install, compile, and warm the caches once
    warm(chosen[0].query, list(chosen[0].stream), chosen[0].schema) if chosen else None
    warm.close()
    t_persistent, answered, refused = run(args.engine, chosen, True)
    t_per_case, _a, _r = run(args.engine, per_case, False)
    per_case_each = t_per_case / max(1, len(per_case))
    extrapolated = per_case_each * len(chosen)
    result = {
        "engine": args.engine, "cases": len(chosen), "answered": answered,
        "unsupported": refused,
        "persistent_s": round(t_persistent, 2),
        "persistent_ms_per_case": round(1000 * t_persistent / max(1, len(chosen)), 2),
        "per_case_cases_run": len(per_case),
        "per_case_s": round(t_per_case, 2),
        "per_case_ms_per_case": round(1000 * per_case_each, 1),
        "per_case_s_for_all": round(extrapolated, 1),
        "per_case_extrapolated": len(per_case) < len(chosen),
        "speed_up": round(extrapolated / max(t_persistent, 1e-9), 1),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
