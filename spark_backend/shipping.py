"""Shipping the toolkit to a cluster's Python workers (``SparkContext.addPyFile``).

Executors unpickle the backend's Arrow functions (``executor.evaluate_task``
and friends) by importing ``acel``; on a cluster the workers' Python usually
does not have it.  ``ensure_shipped`` zips the *imported* ``acel`` package
tree (every subpackage, the grammar and the other package data), caches the
zip under its content hash and adds it to the session with ``addPyFile``:
each executor puts it on ``sys.path`` before running a task.

The zip is built from the packages' ``__path__`` folders, not from a source
checkout, because ``acel.acea``, ``acel.compiler``, ``acel.reference`` and
``acel.spark_backend`` live in top-level folders of the repository
(setuptools ``package-dir``) and an editable install maps them at import
time; a normal install has them nested under ``acel/``.  Either way the zip
holds one ``acel/`` tree.  Only acel itself travels: the workers need a
Python of the driver's minor version with pyspark's own needs (pyarrow,
pandas, numpy) and acel's dependencies (lark, networkx, sympy).  Why a zip and
not ``spark.archives`` with a packed environment: see papers/spark.md.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from acel.lang.errors import AcelError

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

PACKAGES = ("acel", "acel.acea", "acel.compiler", "acel.reference", "acel.spark_backend")
"""The roots of the installed tree (pyproject ``package-dir``); subpackages come along."""

DEPENDENCIES = ("lark",)
"""Pure-Python packages the executors import, shipped in the zip beside acel: a worker may
have only what PySpark needs (pyarrow and pandas).  Compiled ones stay off the zip (orjson
has a standard-library fallback, ``acel.io._json_fallback``)."""

SHIP_CONF = "spark.acel.ship"
"""Spark conf: ``false`` turns shipping off (the workers have acel installed)."""

_SKIPPED_DIRS = {"__pycache__"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries carry no build time: same files, same bytes


SHARED_FILES_CONF = "spark.acel.sharedFiles"
"""Spark conf: ``true`` says the executors see the driver's file paths (one machine, an
NFS or fuse mount), so engine tasks may read a file or its copy themselves on a cluster
as they do in a local session (issue 31: no stage scans and shuffles the events)."""


def files_shared(spark: SparkSession) -> bool:
    """Whether engine tasks may open the driver's files: a local session, or a cluster
    whose session sets :data:`SHARED_FILES_CONF` to ``true``."""
    if not needs_shipping(spark.sparkContext.master or "local"):
        return True
    return str(spark.conf.get(SHARED_FILES_CONF, "false")).strip().lower() == "true"


def needs_shipping(master: str) -> bool:
    """True unless the executors are this machine's processes (``local``, ``local[..]``,
    ``local-cluster[..]``), which import acel from the driver's own environment."""
    return not master.startswith("local")


def _walk(folder: Path, prefix: str) -> dict[str, Path]:
    """Files of one package folder and its subpackages, as ``arcname -> file``."""
    found: dict[str, Path] = {}
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        # Only packages (folders with an __init__.py) and package-data folders (resources/)
        # below the root: no stray folders.
        dirs[:] = sorted(
            d for d in dirs
            if d not in _SKIPPED_DIRS and not d.startswith(".")
            and ((here / d / "__init__.py").exists() or d == "resources")
        )
        rel = here.relative_to(folder)
        for name in sorted(files):
            if name.startswith(".") or name.endswith(_SKIPPED_SUFFIXES):
                continue
            found[(Path(prefix) / rel / name).as_posix()] = here / name
    return found


def package_files() -> dict[str, Path]:
    """Every file of the imported acel tree and of :data:`DEPENDENCIES`, keyed by its path
    inside the zip.

    Works for editable installs (each subpackage in its own source folder)
    and normal ones (all nested under ``site-packages/acel``): a file reached
    twice has the same name both times and is kept once.
    """
    files: dict[str, Path] = {}
    for name in PACKAGES:
        module = importlib.import_module(name)
        prefix = name.replace(".", "/")
        for folder in getattr(module, "__path__", []):
            for arcname, path in _walk(Path(folder), prefix).items():
                files.setdefault(arcname, path)
    for name in DEPENDENCIES:
        module = importlib.import_module(name)
        for folder in getattr(module, "__path__", []):
            for arcname, path in _walk(Path(folder), name).items():
                files.setdefault(arcname, path)
    if "acel/__init__.py" not in files or "acel/lang/grammar.lark" not in files:
        raise AcelError("cannot ship acel to the Spark workers: its package files were not found")
    return files


def cache_dir() -> Path:
    """Where built zips are kept (one per content hash, shared by runs of one user)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"acel-spark-{uid}"


def build_zip(directory: Path | None = None) -> Path:
    """The zip of the acel tree, ``acel-<hash>.zip``; built only when its content is new.

    The name carries a hash of every file's name and bytes, so a changed
    source (editable installs) gives a new file, and Spark, which refuses a
    second file of the same name with other content, never sees a clash.
    """
    files = package_files()
    contents = {arcname: path.read_bytes() for arcname, path in sorted(files.items())}
    digest = hashlib.sha256()
    for arcname, data in contents.items():
        digest.update(arcname.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    folder = directory or cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"acel-{digest.hexdigest()[:16]}.zip"
    if target.exists():
        return target
    # Written aside and renamed: concurrent runs never see a half-written zip.
    fd, partial = tempfile.mkstemp(prefix=".acel-", suffix=".zip", dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
            for arcname, data in contents.items():
                info = zipfile.ZipInfo(arcname, _FIXED_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, data)
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    prune_zips(folder, target)
    return target


MAX_ZIPS = 8
"""Zips kept in the cache besides the newest: one per edited source tree or version."""

_ZIP_GRACE_S = 3600.0
"""A zip younger than this may be about to be shipped by a concurrent run: kept."""


def prune_zips(folder: Path, newest: Path) -> list[Path]:
    """Remove the oldest ``acel-*.zip`` beyond :data:`MAX_ZIPS` (an hour old at least):
    each edit of an editable install made one more, and nothing bounded them (issue 37).
    Spark copies a shipped file when it is added, so a removed zip breaks no session."""
    now = time.time()
    try:
        found = sorted((z for z in folder.glob("acel-*.zip") if z != newest),
                       key=lambda z: z.stat().st_mtime, reverse=True)
    except OSError:
        return []
    removed = []
    for old in found[MAX_ZIPS:]:
        try:
            if now - old.stat().st_mtime >= _ZIP_GRACE_S:
                old.unlink()
                removed.append(old)
        except OSError:
            continue
    return removed


_SHIPPED_ATTR = "_acel_shipped_zip"


def shipped(context: SparkContext) -> Path | None:
    """The zip already added to this SparkContext, if any."""
    value = getattr(context, _SHIPPED_ATTR, None)
    return value if isinstance(value, Path) else None


def ship(session: SparkSession) -> Path:
    """Add the acel zip to the session's context (once per context) and return it."""
    context = session.sparkContext
    done = shipped(context)
    if done is not None:
        return done
    path = build_zip()
    context.addPyFile(str(path))
    setattr(context, _SHIPPED_ATTR, path)
    return path


def ensure_shipped(session: SparkSession) -> Path | None:
    """Ship acel when the master runs executors elsewhere and shipping is not turned off.

    Called by ``get_session`` and by every run (a session the caller built
    is covered too); idempotent and cheap once done.
    """
    context = session.sparkContext
    if shipped(context) is not None:
        return shipped(context)
    if not needs_shipping(context.master or "local"):
        return None
    if (session.conf.get(SHIP_CONF, "true") or "true").strip().lower() == "false":
        return None
    return ship(session)


__all__ = [
    "PACKAGES", "SHIP_CONF", "build_zip", "cache_dir", "ensure_shipped", "needs_shipping",
    "package_files", "ship", "shipped",
]
