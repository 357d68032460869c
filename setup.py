"""Optional native (C) parts of ACEL, built at install time (issue 23).

Every module here has a pure-Python twin that stays the reference and the
fallback: each extension is ``optional``, so ``pip install`` still works on a
machine without a C compiler, and ``ACEL_NATIVE`` (``acel.io.native_switch``)
selects the path at run time.  A module whose C source is absent is skipped.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from setuptools import Extension, setup

# The package folders (acel/, acea/, …) sit in the working directory by design (the
# package-dir map of pyproject.toml), so setuptools' "Editable installation … folders
# with the same name as your package" notice is noise at every `make setup` (issue 37).
warnings.filterwarnings("ignore", message="Editable installation")

HERE = Path(__file__).resolve().parent

NATIVE = {
    # extension module                source(s), relative to this file
    "acel.acea.engine._native_core": ["acea/engine/native/core.c"],
    "acel.acea.engine._native_enum": ["acea/engine/native/enumerate.c"],
    "acel.io._native_reader": ["acel/io/native/reader.c"],
    "acel.io._native_writer": ["acel/io/native/writer.c"],
}


def extensions() -> list[Extension]:
    """The native modules whose sources are present, each optional."""
    out = []
    for name, sources in NATIVE.items():
        if all((HERE / s).is_file() for s in sources):
            out.append(Extension(name, sources, optional=True, extra_compile_args=["-O2"]))
    return out


setup(ext_modules=extensions())
