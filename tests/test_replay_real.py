"""tests/conformance replayed against the real engines (CORE, Flink CEP, pandas-mr): every
recorded finding must come out as its record says (issue 33).

Marked ``external``: each test runs only when its engine is already installed in the cache
(``acel conform --against NAME`` installs it; in CI, tests/test_real_engines.py does, and this
file runs after it), so the default suite never installs anything here.  A replay takes a
few seconds per engine once installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acel.testing.cache import cache_dir
from acel.testing.campaign import replay
from acel.testing.real import REAL_ENGINES

CORPUS = Path(__file__).resolve().parent / "conformance"
INSTALLED = {
    "core": ("core-venv", ".installed"),
    "flink": ("flink", "jars/.complete"),
    "pandas-mr": ("mr-venv", ".installed"),
}


@pytest.mark.external
@pytest.mark.parametrize("name", sorted(INSTALLED))
def test_the_corpus_replays_against_a_real_engine(name: str) -> None:
    folder, stamp = INSTALLED[name]
    if not (cache_dir() / folder / stamp).exists():
        pytest.skip(f"{name} is not installed in {cache_dir()} (acel conform --against {name} "
                    "installs it)")
    engine = REAL_ENGINES[name].engine()
    try:
        run = replay(engine, [CORPUS])
    finally:
        close = getattr(engine.fn, "close", None)
        if close is not None:
            close()
    bad = [f"{r.record.source} {r.record.name}: {r.message}" for r in run.replayed if not r.ok]
    assert not bad, bad
    mine = [r for r in run.replayed if r.record.engine == name]
    assert mine and all(r.ok for r in mine)
