"""Masters for the Spark benches: ``local[N]`` as given, ``clusterN`` a standalone cluster (issue 31).

``clusterN`` starts, on this machine, a Spark standalone master and N workers of one
core each (``tests/spark_cluster.py``, the tests' own cluster), whose executors run
the venv's Python, acel and its native core installed (``spark.acel.ship=false``), as
an operator's cluster would; executors get ``EXECUTOR_MEMORY`` each.  The bench's Spark
child drives it from the cluster's ``SPARK_CONF_DIR`` and adds the daemons' process
trees (master, workers, executors, their Python workers) to its CPU and memory figures
(``spark_warm.DAEMONS_ENV``).  The cluster is stopped, every process of it, afterwards.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # tests/spark_cluster.py

from spark_warm import DAEMONS_ENV  # noqa: E402

CLUSTER = re.compile(r"cluster(\d+)$")
EXECUTOR_MEMORY = "1g"
"""Each executor's heap (Spark's default); a worker offers just that."""


def split_masters(text: str) -> list[str]:
    """``local[1],local[2],cluster2`` or ``local[1,4];local[2,4]``: commas inside brackets stay."""
    if ";" in text:
        return [m for m in text.split(";") if m]
    return [m for m in re.split(r",(?![^\[]*\])", text) if m]


@contextlib.contextmanager
def master_env(master: str, work: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The master URL to hand ``acel.spark.session`` and the Spark child's environment."""
    found = CLUSTER.match(master)
    if found is None:
        yield master, dict(os.environ)
        return
    from spark_cluster import standalone_cluster

    workers = int(found.group(1))
    with standalone_cluster(
        work / master, workers=workers, cores=1, memory=EXECUTOR_MEMORY, executor_memory=EXECUTOR_MEMORY,
        python_path=Path(sys.executable), conf={"spark.acel.ship": "false"},
    ) as cluster:
        pids = ",".join(str(pid) for pid in cluster.pids().values())
        yield cluster.url, cluster.driver_env(**{DAEMONS_ENV: pids})
