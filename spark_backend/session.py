"""The Spark session: embedded and local by default, or a cluster's; quiet, no UI, Arrow on.

The backend needs nothing but pyspark and Java 17.  ``get_session()`` reuses
the active session when there is one (a caller's cluster session wins), and
otherwise starts ``DEFAULT_MASTER`` (or ``master``) with the settings below.
On a cluster master the toolkit ships itself to the executors (``shipping``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from acel.lang.errors import AcelError

from .shipping import ensure_shipped, needs_shipping

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
"""Log4j 2 settings of the embedded session: errors only (no start-up chatter)."""

FAULT_CONF = "spark.acel.test.failFirstAttempt"
"""Runtime conf (tests only) that makes executor tasks fail; see ``executor.inject_fault``:
``true`` (every task's first attempt raises), ``kill:<marker file>`` (the first task
to create the file kills its own Python worker), ``raise-always``, ``kill-always``,
``hold:<seconds>`` (every task waits first)."""

DEFAULT_MASTER = "local[*,4]"
"""All cores, and a failed task is tried up to 4 times in all (Spark's cluster default).

Local mode ignores ``spark.task.maxFailures``: plain ``local[*]`` gives every
task a single attempt, so one crashed Python worker failed the whole job; the
second number of ``local[N,F]`` is the only retry setting local mode reads."""

PYTHON_CONF = "spark.pyspark.python"
"""The executors' Python, as a user sets it (``--conf`` or ``spark-defaults.conf``)."""


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
        # Adaptive execution runs each stage of a plan as its own job (an acel.spark.run
        # action took 5-12 jobs with it, 2-4 without: papers/spark.md); the plans fix
        # their own partitioning and broadcasts, so it has nothing to adapt.
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        # Event files are small on disk (a compressed million events is ~2 MB): split
        # them so the first stages already run on every core.
        "spark.sql.files.openCostInBytes": str(256 * 1024),
        "spark.driver.memory": os.environ.get("ACEL_SPARK_DRIVER_MEMORY", "2g"),
    }


JAVA_OPTIONS_ENV = "ACEL_SPARK_JAVA_OPTIONS"
"""Options for the embedded driver's JVM, instead of :func:`jit_options`'s choice."""

QUICK_START_BYTES = 64 * 2**20
"""Inputs up to this size start the embedded JVM with its quick compiler only (``jit_options``)."""


def jit_options() -> str:
    """The embedded JVM's compiler: C1 only (``-XX:TieredStopAtLevel=1``) for a run about to
    read a small file, the full tiered JIT otherwise.

    Measured on W0 with 8 keys from the command line (papers/spark.md, "Issue 23
    §3", the A/B table): C1 alone cut a run at 10^6 events by about 40 % (C2's compiler
    threads compete for two cores while Spark starts), and made one at 10^7
    about 45 % slower (the JVM's shuffle and Arrow code then run unoptimised).
    The input's size is known when the command line has started copying it
    (``frames.prefetch``); a session started otherwise (a notebook's, long-lived)
    gets the full JIT.  A Parquet file whose slices' tasks read it in place
    (``frames.tasks_read_the_file``) gets C1 at any size: the JVM then moves slice
    numbers and result rows, no events (measured: the cold run's tree CPU at 10^7
    events 14–15 s instead of 22–25 s, papers/spark.md, "Where the seconds go").
    ``ACEL_SPARK_JAVA_OPTIONS`` replaces this choice.
    """
    own = os.environ.get(JAVA_OPTIONS_ENV)
    if own is not None:
        return own
    from .frames import prefetched_bytes, tasks_read_the_file

    if tasks_read_the_file():
        return QUICK_COMPILER
    size = prefetched_bytes()
    return QUICK_COMPILER if size is not None and size <= QUICK_START_BYTES else ""


QUICK_COMPILER = "-XX:TieredStopAtLevel=1"
"""The JVM's quick compiler only (C1): no C2 compiler threads competing for the cores."""


CDS_ENV = "ACEL_SPARK_CDS"
"""Set to ``0`` to start the embedded JVM without a class-data archive."""


def _java() -> Path | None:
    import shutil

    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.exists():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def cds_options() -> str:
    """JVM options that start the embedded driver from a class-data archive (AppCDS).

    Starting Spark loads some 20,000 classes; a dynamic archive of them (Java
    13+) maps them in ready-made instead (measured: the session up in 7–8 s
    instead of 13–14 s at load 3 on two cores, and the first Parquet read
    1.5–2.5 s instead of 4.3–4.7 s, papers/spark.md).  The first run writes the
    archive when its JVM exits (``-XX:ArchiveClassesAtExit``, a few seconds,
    about 170 MB in ``$TMPDIR/acel-spark-<uid>``), each under its own name so
    that concurrent first runs never share a file; later runs adopt a finished
    one.  The name carries a hash of the Java binary and Spark's jars: another
    JVM or Spark never reads it.  A damaged archive is only a warning the JVM
    keeps to itself (it then loads classes as usual).  With a non-empty
    ``SPARK_CONF_DIR`` (on the class path, where the JVM refuses an archive) it is off.  ``ACEL_SPARK_CDS=0``
    turns this off.
    """
    if os.environ.get(CDS_ENV, "1") == "0":
        return ""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if conf_dir and Path(conf_dir).is_dir() and any(Path(conf_dir).iterdir()):
        # spark-submit puts SPARK_CONF_DIR on the class path, and a JVM refuses a class-data
        # archive when a non-empty directory is on it ("Cannot have non-empty directory in
        # paths"): the user's settings win over a faster start.
        return ""
    java = _java()
    if java is None:
        return ""
    import hashlib

    import pyspark

    from .shipping import cache_dir

    jars = Path(pyspark.__file__).parent / "jars"
    digest = hashlib.sha256()
    stat = java.stat()
    digest.update(f"{java}:{stat.st_size}:{stat.st_mtime_ns}:{pyspark.__version__}".encode())
    for jar in sorted(jars.glob("*.jar")) if jars.is_dir() else ():
        digest.update(jar.name.encode())
    key = digest.hexdigest()[:16]
    folder = cache_dir()
    archive = folder / f"spark-{key}.jsa"
    quiet = "-Xlog:cds=off -Xlog:cds+dynamic=off"
    if not archive.exists():
        for written in sorted(folder.glob(f"spark-{key}.*.jsa")):
            pid = written.name.split(".")[-2]
            if pid.isdigit() and not _alive(int(pid)) and written.stat().st_size > 0:
                try:
                    os.replace(written, archive)
                except OSError:
                    continue
                break
    writing = _tidy(folder, key)
    if archive.exists():
        return f"-XX:SharedArchiveFile={archive} {quiet}"
    if writing:  # another run is writing this archive: start without one, write no second
        return ""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ""
    return f"-XX:ArchiveClassesAtExit={folder / f'spark-{key}.{os.getpid()}.jsa'} {quiet}"


MAX_ARCHIVES = 3
"""Class-data archives kept in the cache folder (each 170–190 MB): this Spark's, one being
written, and one of another Java or Spark; older ones are removed (``_tidy``)."""


def _tidy(folder: Path, key: str) -> bool:
    """Remove the class-data archives no run will read, and say whether one of ``key`` is
    being written now (by a live process).

    Gone: a run's own archive (``spark-<key>.<pid>.jsa``) whose process has ended once
    the finished archive exists (concurrent first runs each wrote one, and the
    losers' stayed forever: 540 MB in three files were found), and beyond
    ``MAX_ARCHIVES``, the oldest archives of other keys (another Java or Spark).  A
    JVM that maps a removed file keeps reading it (Linux keeps it until unmapped).
    """
    try:
        found = sorted(folder.glob("spark-*.jsa"), key=lambda f: f.stat().st_mtime, reverse=True)
    except OSError:
        return False
    final = folder / f"spark-{key}.jsa"
    writing, kept = False, []
    for archive in found:
        parts = archive.name.split(".")
        pid = int(parts[-2]) if len(parts) == 3 and parts[-2].isdigit() else None
        if pid is not None and _alive(pid):
            writing = writing or archive.name.startswith(f"spark-{key}.")
            continue  # being written
        if pid is not None and archive.name.startswith(f"spark-{key}.") and final.exists():
            _unlink(archive)
            continue
        kept.append(archive)
    mine = [a for a in kept if a.name.startswith(f"spark-{key}.")]
    others = [a for a in kept if not a.name.startswith(f"spark-{key}.")]
    for archive in others[max(0, MAX_ARCHIVES - len(mine) - writing):]:
        _unlink(archive)
    return writing


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def get_session(
    master: str | None = None,
    *,
    app_name: str = "acel",
    shuffle_partitions: int | None = None,
    log_level: str = "ERROR",
    extra: dict[str, str] | None = None,
) -> SparkSession:
    """The active session, or a new one (``DEFAULT_MASTER`` unless ``master`` is given).

    An explicit ``master`` that differs from the running session's is refused:
    one JVM holds one SparkContext.  ``extra`` settings override the defaults.
    On a cluster master (``spark://``, ``yarn``, ``k8s://`` ...) the acel
    package is added to the session for the executors (``shipping``, unless
    ``spark.acel.ship=false``), and the executors' Python is the one the user
    configured (``spark.pyspark.python``, else ``PYSPARK_PYTHON``, else
    Spark's default ``python3``); an embedded session runs this interpreter.
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
        prepare_session(active)
        return active
    chosen = master or DEFAULT_MASTER
    local = not needs_shipping(chosen)
    if local:
        # Local executors run this interpreter, and so import this installed acel.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(chosen).appName(app_name)
    settings = {**default_settings(shuffle_partitions), **(extra or {})}
    if LOG_CONFIG.exists():
        # The driver is always quiet; a cluster's executors keep their own logging
        # (this file's path means nothing on another machine).
        quiet = f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}"
        keys = ["spark.driver.extraJavaOptions"] + (["spark.executor.extraJavaOptions"] if local else [])
        for key in keys:
            settings[key] = (settings.get(key, "") + " " + quiet).strip()
    if local:
        settings["spark.driver.extraJavaOptions"] = " ".join(filter(None, [
            settings.get("spark.driver.extraJavaOptions", ""), cds_options(), jit_options(),
        ]))
        settings.setdefault(PYTHON_CONF, os.environ.get("PYSPARK_PYTHON") or sys.executable)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    prepare_session(session)
    return session


def prepare_session(session: SparkSession) -> None:
    """What every run needs of a session, however it was made: the configured
    executor Python and, on a cluster, acel shipped to the executors (both
    idempotent; ``run`` calls this on a session the caller passes in)."""
    use_configured_python(session)
    ensure_shipped(session)


def use_configured_python(session: SparkSession) -> str:
    """Make ``spark.pyspark.python`` (when set) the executors' Python; return the one in use.

    pyspark reads only the ``PYSPARK_PYTHON`` variable when a plain Python
    process starts the session (``spark-submit`` alone turns the conf into the
    variable), so a cluster's ``spark.pyspark.python`` from ``--conf`` or
    ``spark-defaults.conf`` would be ignored.  It wins here, as under
    ``spark-submit``; then ``PYSPARK_PYTHON``; then, for a local master, this
    interpreter (its executors are this machine's processes); else Spark's ``python3``.
    """
    context = session.sparkContext
    configured = context.getConf().get(PYTHON_CONF, None)
    if configured:
        context.pythonExec = configured
    elif not os.environ.get("PYSPARK_PYTHON") and not needs_shipping(context.master or "local"):
        # A local session the user built from a script run as .venv/bin/python (venv not
        # activated) would start the system python3, which lacks this environment's
        # packages: its executors are this machine's processes, so they run this one.
        context.pythonExec = sys.executable
    return str(context.pythonExec)


JVM_EXIT_SECONDS = 60.0
"""How long :func:`end_session` waits for the embedded JVM to exit (a first run writes its
class-data archive then, a few seconds; ``cds_options``)."""


def owns_no_session() -> bool:
    """Whether no Spark session is active here (so a session got now is this caller's to end)."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is None


def end_session(session: SparkSession | None = None, *, wait: float = JVM_EXIT_SECONDS,
                stop: bool = True) -> bool:
    """Stop the session and, when this process started the JVM, end it and wait for it.

    Without this the JVM outlived ``acel run --engine spark`` by a second or more
    (it exits when it sees its standard input close, after the Python process has
    gone), still holding memory and, on a first run, still writing its class-data
    archive; its CPU was counted for no one.  Here its standard input is closed and
    the run waits for its exit, so the run's time and CPU include the JVM's, and no
    Java or Python worker process is left (issue 31).  Returns whether a JVM this
    process started has exited (``False``: none was started here, or it outlived ``wait``).
    ``stop=False`` (an interrupted run) skips stopping the context through py4j: the
    JVM's own shutdown stops it.
    """
    from pyspark import SparkContext

    if stop:
        if session is not None:
            session.stop()
        else:
            active = SparkContext._active_spark_context
            if active is not None:
                active.stop()
    import subprocess

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return False
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=wait)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return False  # left to end on its own
    try:
        gateway.shutdown()
    except Exception:  # noqa: BLE001 - the JVM is gone; py4j may complain about the socket
        pass
    SparkContext._gateway = None
    SparkContext._jvm = None
    return True
