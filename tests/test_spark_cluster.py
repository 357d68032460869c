"""The Spark backend on a real standalone cluster whose workers lack acel (issue 16).

The session fixture ``spark_cluster`` (tests/spark_cluster.py) runs a master
and a worker from the installed pyspark; the worker's Python is a bare
interpreter without acel.  Drivers are subprocesses configured by the
cluster's ``spark-defaults.conf``, as a user's would be: ``cluster_driver.py``
(negative control, shipping, the three strategies, a killed Python worker)
and ``acel demo --master spark://...``.  Results are compared with the
single-process engine's, as spec §12 JSON Lines.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acel.acea import engine
from cluster_driver import CASES, IN_PLACE, KEYED_CASE, KILLED_CASE, SCHEMA, stream
from spark_cluster import StandaloneCluster, run_driver, tail

from acel.io.results import to_json_lines
from acel.lang.parser import parse_query

pytestmark = [
    pytest.mark.spark,
    pytest.mark.cluster,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java"),
]

DRIVER = Path(__file__).with_name("cluster_driver.py")


def _explain(cluster: StandaloneCluster, result: subprocess.CompletedProcess[str]) -> str:
    """Why a driver failed: its stderr tail and the worker's log tail."""
    return (f"exit status {result.returncode}\n--- driver stderr:\n"
            + "\n".join(result.stderr.splitlines()[-40:])
            + f"\n--- worker log:\n{tail(cluster.log('worker'), 20)}")


@pytest.fixture(scope="module")
def driven(spark_cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """What ``cluster_driver.py`` saw on the cluster (one driver process for every case)."""
    folder = tmp_path_factory.mktemp("cluster-driver")
    report = folder / "report.json"
    marker = folder / "killed-worker"
    result = run_driver(
        [sys.executable, str(DRIVER), spark_cluster.url, str(report), str(marker)],
        spark_cluster.driver_env(), cwd=folder,
    )
    assert result.returncode == 0, _explain(spark_cluster, result)
    seen = json.loads(report.read_text())
    print("cluster driver phases (s):", seen["seconds"])
    return seen


def _expected(name: str) -> list[str]:
    return to_json_lines(engine.run(parse_query(CASES[name][0]), stream(), SCHEMA))


def test_the_bare_worker_python_has_only_what_pyspark_needs(
    spark_cluster: StandaloneCluster,
) -> None:
    # Run where executors run (not in the repository, whose acel/ folder would import).
    cwd, env = spark_cluster.root / "work", spark_cluster.driver_env()
    python = str(spark_cluster.python)
    ok = subprocess.run([python, "-c", "import pyarrow, pandas, numpy"],
                        capture_output=True, text=True, cwd=cwd, env=env)
    assert ok.returncode == 0, ok.stderr
    for module in ("acel", "lark", "orjson", "networkx"):  # acel and its own dependencies
        missing = subprocess.run([python, "-c", f"import {module}"], capture_output=True,
                                 text=True, cwd=cwd, env=env)
        assert missing.returncode != 0
        assert f"No module named '{module}'" in missing.stderr


def test_without_shipping_the_workers_cannot_import_acel(
    driven: Any, spark_cluster: StandaloneCluster
) -> None:
    assert driven["master"] == spark_cluster.url
    assert driven["parallelism"] == 2  # the worker's two cores
    # spark.pyspark.python from the cluster's spark-defaults.conf won over any default.
    assert driven["python"] == str(spark_cluster.python)
    message = driven["without_shipping"]
    assert "No module named 'acel'" in message, message
    assert len(message.splitlines()) <= 2 and " at org.apache" not in message


def test_shipped_acel_is_imported_from_the_zip_on_the_bare_worker(
    driven: Any, spark_cluster: StandaloneCluster
) -> None:
    executable, no_site, acel_file = driven["worker"]
    assert no_site is True  # the executor really ran the bare interpreter (python -S)
    assert executable.startswith(sys.prefix)
    # The executor's copy of the zip (Spark fetched it into the application's folder).
    assert acel_file.endswith(f"/{Path(driven['zip']).name}/acel/__init__.py"), acel_file


@pytest.mark.parametrize("name", sorted(set(CASES) - {KEYED_CASE}))
def test_cluster_results_equal_the_single_process_engine(driven: Any, name: str) -> None:
    expected = _expected(name)
    assert len(expected) >= 5, "the comparison must mean something"
    kind, got = driven[name]
    assert kind == CASES[name][2]
    assert got == expected


def test_keyed_slices_on_the_cluster_equal_the_single_process_engine(driven: Any) -> None:
    # PARTITION BY g WITHIN 5 ON t cut into time slices of 3 units holding every key
    # (issue 31): the executors' merged per-key rows are the single process's.
    expected = _expected(KEYED_CASE)
    rows = [json.loads(line) for line in expected]
    assert sorted(r["g"] for r in rows) == [0, 1, 2, 3, 4]  # one row per key
    assert all(r["COUNT(*)"] >= 1 for r in rows), "every key must have complex events"
    kind, got = driven[KEYED_CASE]
    assert kind == "slice"
    assert got == expected


def test_a_file_read_in_place_by_the_cluster_equals_the_single_process_engine(driven: Any) -> None:
    # spark.acel.sharedFiles: the executors read the user's Parquet file themselves
    # (issue 31), no copy is written, and the rows are the single process's.
    got = driven[IN_PLACE]
    assert got["kind"] == "slice"
    assert got["copies"] == []
    assert got["rows"] == _expected(KEYED_CASE)


def test_a_killed_python_worker_on_the_cluster_is_retried(driven: Any) -> None:
    assert driven["marker"] is True  # one Python worker did kill itself
    kind, got = driven["killed"]
    assert kind == CASES[KILLED_CASE][2]
    assert got == _expected(KILLED_CASE)


def _acel_command() -> list[str]:
    script = Path(sys.executable).with_name("acel")
    return [str(script)] if script.exists() else [sys.executable, "-m", "acel"]


def test_demo_on_the_cluster_equals_the_single_process_engine(
    spark_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    from acel.app.demo import MATCH_QUERY, TREND_QUERY, example_text
    from acel.io import read_events

    out = tmp_path / "demo"
    result = run_driver(
        [*_acel_command(), "demo", "--master", spark_cluster.url, "--days", "2", "--out", str(out)],
        spark_cluster.driver_env(), cwd=tmp_path,
    )
    assert result.returncode == 0, _explain(spark_cluster, result)
    assert "Done:" in result.stdout
    figures = json.loads((out / "figures.json").read_text())
    print("demo on the cluster:", {k: round(v, 1) if isinstance(v, (int, float)) else v for k, v in figures.items()})
    events, schema = read_events(out / "flights_weather.parquet", time_col="ts")
    assert figures["events"] == len(events) > 500

    matches = engine.run(parse_query(example_text(MATCH_QUERY)), events, schema)
    assert figures["complex_events"] == len(matches) >= 1
    sample = (out / "delay_propagation.sample.jsonl").read_text().splitlines()
    assert sample == to_json_lines(matches[:50])
    table = pq.read_table(out / "delay_propagation.parquet").to_pylist()

    def canonical(value: Any) -> str:
        return json.dumps(value, sort_keys=True)

    assert sorted(
        (r["tailnum"], r["start"], r["end"], canonical(json.loads(r["vars"]))) for r in table
    ) == sorted(
        (dict(m.key)["tailnum"], m.event.start, m.event.end, canonical(json.loads(line)["vars"]))
        for m, line in zip(matches, to_json_lines(matches))
    )

    trends = engine.run(parse_query(example_text(TREND_QUERY)), events, schema)
    written = (out / "daily_delay_trends.jsonl").read_text().splitlines()
    assert figures["trend_rows"] == len(trends) >= 1
    assert written == to_json_lines(trends)
