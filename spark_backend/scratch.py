"""Spark's scratch folders (the copy of the events beside the input), named by their owner
so that a later run can remove the ones a killed run left (issue 36 D12).

A folder is ``.acel-spark-<host>-<pid>-<start>-<random>``: ``host`` a short hash of
the machine's name (on a shared file system another machine's folders are never
touched), ``pid`` the owning process and ``start`` its start time (so a reused pid
is not taken for the owner).  A folder is stale when its host is this one and its
process is gone; only those are removed.  Folders of other names are left alone.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import tempfile

PREFIX = ".acel-spark-"
_NAME = re.compile(r"\.?acel-spark-([0-9a-f]{8})-(\d+)-(\d+)-[^/]*\Z")


def host_tag() -> str:
    """Eight hex digits naming this machine."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, Linux), or None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            text = handle.read()
        return int(text[text.rindex(")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def owner_tag(pid: int | None = None) -> str:
    """``<host>-<pid>-<start>-`` of this process (or ``pid``): the folder name's middle."""
    pid = os.getpid() if pid is None else pid
    return f"{host_tag()}-{pid}-{start_time(pid) or 0}-"


def make_folder(parent: str | None, hidden: bool = True) -> str:
    """A new scratch folder in ``parent`` (None: the system's temporary folder)."""
    prefix = (PREFIX if hidden else PREFIX[1:]) + owner_tag()
    return tempfile.mkdtemp(prefix=prefix, dir=parent)


def _alive(pid: int, start: int) -> bool:
    """Whether process ``pid`` runs and is the one that started at ``start`` (0: unknown)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: it exists
    now = start_time(pid)
    return not (start and now is not None and now != start)


def is_stale(name: str) -> bool:
    """Whether the folder called ``name`` is a scratch folder of a dead process of this machine."""
    found = _NAME.match(name)
    if found is None or found.group(1) != host_tag():
        return False
    return not _alive(int(found.group(2)), int(found.group(3)))


def remove_stale(parent: str) -> list[str]:
    """Remove the stale scratch folders in ``parent`` (see the module doc); their paths."""
    removed: list[str] = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        path = os.path.join(parent, name)
        if not is_stale(name) or os.path.islink(path) or not os.path.isdir(path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed
