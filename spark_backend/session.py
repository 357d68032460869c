"""The embedded Spark session: local, quiet, no UI, Arrow on.

The backend needs nothing but pyspark and Java 17.  ``get_session()`` reuses
the active session when there is one (a caller's cluster session wins), and
otherwise starts ``local[*]`` (or ``master``) with the settings below.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from acel.errors import AcelError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
"""Log4j 2 settings of the embedded session: errors only (no start-up chatter)."""

FAULT_CONF = "spark.acel.test.failFirstAttempt"
"""Runtime conf flag (tests only): every executor task fails on its first attempt."""


def default_settings(shuffle_partitions: int | None = None) -> dict[str, str]:
    """The configuration of the embedded session (also printed by the benchmark)."""
    cores = os.cpu_count() or 2
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions or max(2, min(16, 2 * cores))),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Keep our explicit repartitioning: AQE must not fold the slices into one task.
        "spark.sql.adaptive.coalescePartitions.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        # Event files are small on disk (a compressed million events is ~2 MB): split
        # them so the first stages already run on every core.
        "spark.sql.files.openCostInBytes": str(256 * 1024),
        "spark.driver.memory": os.environ.get("ACEL_SPARK_DRIVER_MEMORY", "2g"),
    }


def get_session(
    master: str | None = None,
    *,
    app_name: str = "acel",
    shuffle_partitions: int | None = None,
    log_level: str = "ERROR",
    extra: dict[str, str] | None = None,
) -> SparkSession:
    """The active session, or a new embedded one (``local[*]`` unless ``master`` is given).

    An explicit ``master`` that differs from the running session's is refused:
    one JVM holds one SparkContext.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        running = active.sparkContext.master
        if master is not None and master != running:
            raise AcelError(
                f"a Spark session with master {running!r} is already running; "
                f"stop it before asking for {master!r}"
            )
        return active
    # Executors must run the same interpreter (and so the same installed acel).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    local = master is None or master.startswith("local")
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # pyspark 4 warns on every import under pandas 3; the Arrow paths used here are fine.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    builder = SparkSession.builder.master(master or "local[*]").appName(app_name)
    settings = {**default_settings(shuffle_partitions), **(extra or {})}
    if local and LOG_CONFIG.exists():
        quiet = f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}"
        for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
            settings[key] = (settings.get(key, "") + " " + quiet).strip()
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    return session
