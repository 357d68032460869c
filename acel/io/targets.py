"""Where results are written: never through a planted link, never over a device (issue 24 §2, §12).

A result file is written under ``FILE.partial`` and renamed to ``FILE`` when
complete (papers/io.md).  The ``.partial`` file is created exclusively and
without following links (``O_CREAT|O_EXCL|O_NOFOLLOW``): a symbolic link or a
hard link planted under that name is refused, never written through.  A
stale ``.partial`` that is a plain file of ours (one link) is left over from
an interrupted run and replaced.  ``FILE`` naming a FIFO or a character
device (``/dev/null``, a terminal) is written into directly, as the shell's
``>`` would: no temporary file, no rename (a rename would replace the device
with a regular file).  Other special files are refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

from acel.io.output_formats import output_named
from acel.lang.errors import DataError

PARTIAL = ".partial"
"""Suffix of a result file being written (renamed away when complete)."""

_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def special_target(path: Path) -> bool:
    """Whether ``path`` is an existing FIFO or character device (written into directly);
    raises a one-line error for a socket or a block device."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return True
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return False
    raise DataError(f"{path}: cannot write results: it is a socket or a block device, not a file")


def open_direct(path: Path, kind: str) -> IO[bytes]:
    """An existing FIFO or character device, opened for writing (no rename follows)."""
    if not output_named(kind).into_pipe:
        raise DataError(f"{path}: cannot write {kind.capitalize()} into a pipe or a device: give a file name")
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise DataError(f"{path}: cannot write results: {error.strerror or error}") from None
    return os.fdopen(fd, "wb")


def open_partial(path: Path) -> tuple[IO[bytes], Path]:
    """``path.partial``, created exclusively without following links, and its name."""
    partial = path.with_name(path.name + PARTIAL)
    try:
        fd = os.open(partial, _EXCLUSIVE, 0o666)
    except FileExistsError:
        _remove_stale(partial)
        fd = _create(partial)
    except OSError as error:
        raise _refusal(partial, error) from None
    return os.fdopen(fd, "wb"), partial


def _create(partial: Path) -> int:
    try:
        return os.open(partial, _EXCLUSIVE, 0o666)
    except OSError as error:
        raise _refusal(partial, error) from None


def _refusal(partial: Path, error: OSError) -> DataError:
    if isinstance(error, FileExistsError) or error.errno == getattr(os, "ELOOP", -1):
        return DataError(
            f"{partial}: cannot write results: it exists and is a link or not a plain file "
            "(remove it if it is yours)"
        )
    return DataError(f"{partial}: cannot write results: {error.strerror or error}")


def _remove_stale(partial: Path) -> None:
    """Remove a ``.partial`` left by an interrupted run; refuse anything else under that name."""
    try:
        info = os.lstat(partial)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        raise DataError(
            f"{partial}: cannot write results: it exists and is a link or not a plain file "
            "(remove it if it is yours)"
        )
    try:
        partial.unlink()
    except OSError as error:
        raise _refusal(partial, error) from None
