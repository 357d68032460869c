"""A real Spark standalone cluster for the tests and benches: one master, ``workers`` workers, on 127.0.0.1.

Both daemons come from the installed pyspark distribution
(``<pyspark>/bin/spark-class``), each in its own process group, on free
ports, logging into a temporary folder.  By default the worker's Python is a *bare*
interpreter (``bare_python``): the test venv's interpreter run with ``-S`` over
links to only what PySpark itself needs (pyarrow, pandas and theirs), so neither
acel nor its own dependencies (lark, orjson, ...) import unless the backend ships
them or does without.  ``bench/spark_scale.py`` starts ``clusterN`` (N one-core workers)
with ``python=`` the venv's own interpreter and ``conf={"spark.acel.ship": "false"}``: workers
with acel installed, native core included, as an operator would run them.

Drivers are separate processes (``run_driver``): one Python process holds one
SparkContext, and the test session already holds a ``local[2,2]`` one.  A
driver gets the cluster's settings the way a user's would come, from
``$SPARK_CONF_DIR/spark-defaults.conf`` (the executors' Python, their memory).

``stop`` ends every process of both groups (executors and their Python workers
included), SIGTERM first and SIGKILL after a grace period, and says so if
anything survives; the daemons also get SIGTERM if the test process dies
(Linux ``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORKER_ENTRIES = ("pyarrow", "pandas", "numpy", "dateutil", "python_dateutil", "pytz", "tzdata", "six")
"""The site-packages entries a bare worker keeps: PySpark's own needs (pyarrow, pandas)
and what they import; Spark puts pyspark and py4j on the workers' path itself."""


def spark_home() -> Path:
    """The pyspark distribution's folder: it holds ``bin/spark-class`` and ``jars/``."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the daemons bind it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bare_python(folder: Path) -> Path:
    """A worker Python with only what PySpark needs: ``<folder>/python`` (a shell wrapper).

    ``-S`` skips site-packages and its ``.pth`` files (so an editable install's
    import hook never loads); ``PYTHONPATH`` then names a folder of links to the
    :data:`WORKER_ENTRIES` of site-packages (no acel, lark or orjson), which works
    for editable and normal installs alike.  Spark's own ``PYTHONPATH`` (pyspark's
    zips) stays.
    """
    site = Path(sysconfig.get_paths()["purelib"])
    packages = folder / "site-packages"
    packages.mkdir(parents=True, exist_ok=True)
    for entry in site.iterdir():
        if not entry.name.lower().startswith(WORKER_ENTRIES):
            continue
        link = packages / entry.name
        if not link.exists():
            link.symlink_to(entry)
    wrapper = folder / "python"
    wrapper.write_text(
        "#!/bin/sh\n"
        "# A Spark worker's Python without acel (tests/spark_cluster.py).\n"
        f'PYTHONPATH="{packages}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" -S "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to SIGTERM this child when the test process dies (no orphan JVMs)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except OSError:
        return None


_PRCTL = _prctl()  # resolved before any fork: the child only calls it


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def stop_group(process: subprocess.Popen[Any], grace: float = 15.0) -> bool:
    """End a process and its whole group (SIGTERM, then SIGKILL); True if none survive."""
    pgid = process.pid  # started with start_new_session: the group is the leader's pid
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _group_alive(pgid) or process.poll() is None:
        _signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        for _ in range(50):
            if not _group_alive(pgid):
                break
            time.sleep(0.1)
    return not _group_alive(pgid)


def tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log file ("(empty)" when there is none)."""
    if not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:]) or "(empty)"


class ClusterError(RuntimeError):
    """The test cluster did not come up (the message carries the daemons' log tails)."""


@dataclass
class StandaloneCluster:
    """One Spark master and ``workers`` workers (``cores`` cores, ``memory`` each) under ``root``.

    ``python``: the executors' interpreter (None: a bare one, see ``bare_python``);
    ``conf``: more lines of the drivers' ``spark-defaults.conf``.
    """

    root: Path
    cores: int = 2
    memory: str = "1g"
    executor_memory: str = "512m"
    timeout: float = 120.0
    workers: int = 1
    python_path: Path | None = None
    conf: dict[str, str] = field(default_factory=dict)
    master_port: int = field(default_factory=free_port)
    master_ui_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[Any]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def conf_dir(self) -> Path:
        return self.root / "conf"

    @property
    def python(self) -> Path:
        """The executors' Python (a bare interpreter unless ``python_path`` names one)."""
        return self.python_path or self.root / "bare" / "python"

    @property
    def worker_names(self) -> list[str]:
        """``worker`` (the first, as the tests name it), ``worker2``, ``worker3`` ..."""
        return ["worker" if i == 0 else f"worker{i + 1}" for i in range(self.workers)]

    def pids(self) -> dict[str, int]:
        """The daemons' process ids by name (their executors are their descendants)."""
        return {name: p.pid for name, p in self.processes.items() if p.poll() is None}

    def log(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.log"

    def _daemon_env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_CONF_DIR", "PYTHONPATH"):
            env.pop(key, None)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_CONF_DIR=str(self.conf_dir),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOCAL_DIRS=str(self.root / "scratch"),
            SPARK_DAEMON_MEMORY="512m",
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        )
        return env

    def driver_env(self, **extra: str) -> dict[str, str]:
        """Environment of a driver process: the cluster's conf folder, loopback only."""
        env = dict(os.environ)
        for key in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME", "PYTHONPATH"):
            env.pop(key, None)
        env.update(SPARK_CONF_DIR=str(self.conf_dir), SPARK_LOCAL_IP="127.0.0.1", **extra)
        return env

    def _spawn(self, name: str, *args: str) -> None:
        log = self.log(name)
        with log.open("wb") as out:
            self.processes[name] = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self._daemon_env(), cwd=self.root, start_new_session=True,
                preexec_fn=_die_with_parent if _PRCTL is not None else None,
            )

    def status(self) -> dict[str, Any] | None:
        """The master's JSON status page (None while it is not answering)."""
        url = f"http://127.0.0.1:{self.master_ui_port}/json/"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return dict(json.load(response))
        except (OSError, ValueError):
            return None

    def _fail(self, why: str) -> ClusterError:
        parts = [f"Spark test cluster: {why}"]
        for name, process in self.processes.items():
            state = "running" if process.poll() is None else f"exited with {process.returncode}"
            parts.append(f"--- {name} ({state}), last lines of {self.log(name)}:\n"
                         + tail(self.log(name)))
        return ClusterError("\n".join(parts))

    def _wait(self, what: str, ready: Any) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise self._fail(f"the {name} exited while waiting for {what}")
            status = self.status()
            if status is not None and ready(status):
                return
            time.sleep(0.25)
        raise self._fail(f"no {what} after {self.timeout:.0f} s")

    def start(self) -> StandaloneCluster:
        """Start master and workers; return once every worker has registered (ALIVE)."""
        for folder in ("logs", "conf", "scratch", "work", "bare"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        if self.python_path is None:
            bare_python(self.root / "bare")
        extra = "".join(f"{key} {value}\n" for key, value in self.conf.items())
        (self.conf_dir / "spark-defaults.conf").write_text(
            "# The test cluster's settings, read by every driver started with this SPARK_CONF_DIR.\n"
            f"spark.pyspark.python {self.python}\n"
            f"spark.executor.memory {self.executor_memory}\n"
            "spark.driver.host 127.0.0.1\n" + extra
        )
        try:
            # Both JVMs boot at once; the worker retries registering until the master listens.
            self._spawn(
                "master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                "--port", str(self.master_port), "--webui-port", str(self.master_ui_port),
            )
            for name in self.worker_names:
                self._spawn(
                    name, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                    "--port", str(free_port()), "--webui-port", str(free_port()),
                    "--cores", str(self.cores), "--memory", self.memory,
                    "--work-dir", str(self.root / "work" / name), self.url,
                )
            wanted = self.workers
            self._wait(f"{wanted} registered worker(s)",
                       lambda s: int(s.get("aliveworkers", 0)) >= wanted)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the workers (and their executors) and then the master; no process may survive."""
        survivors = []
        for name in [*self.worker_names, "master"]:
            process = self.processes.pop(name, None)
            if process is not None and not stop_group(process):
                survivors.append(name)
        if survivors:
            raise ClusterError(f"processes of the Spark test {', '.join(survivors)} survived SIGKILL")


@contextlib.contextmanager
def standalone_cluster(root: Path, **options: Any) -> Iterator[StandaloneCluster]:
    """A started cluster for the body; stopped afterwards, whatever happens."""
    cluster = StandaloneCluster(root, **options).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def run_driver(
    argv: Sequence[str], env: dict[str, str], *, timeout: float = 240.0, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a driver process in its own group; on timeout the whole group is killed."""
    process = subprocess.Popen(
        list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=cwd, start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(process, grace=5.0)
        out, err = process.communicate()
        raise AssertionError(
            f"driver {' '.join(argv)} ran over {timeout:.0f} s; stderr tail:\n"
            + "\n".join(err.splitlines()[-30:])
        ) from None
    finally:
        if process.poll() is None:
            stop_group(process, grace=5.0)
    # The driver's gateway JVM is its child: once the driver has exited, nothing may be left.
    stop_group(process, grace=5.0)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)
