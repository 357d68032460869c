"""The sanitizer pass of CI (`make sanitize`; issues 35 and 36): the four C extensions
built once with AddressSanitizer and UBSan, then the native tests and a short fuzz of
the native paths run against them.  Any sanitizer report fails the pass.

The sanitized modules go to ``build/sanitize/lib`` (the ``.venv``'s own build is not
touched); a ``sitecustomize`` on ``PYTHONPATH`` makes every Python process of the run,
subprocesses included, import them instead of the in-tree ones.  Python itself is not
built with ASan, so ``libasan`` is preloaded; leaks are not checked (CPython keeps
memory until exit by design).  A report halts the process that hit it; the pass fails on
that exit status and on any report line in a step's standard error (pytest runs with
``--capture=sys``: fd capture would swallow a report written just before the halt).
papers/engine.md "The sanitizer pass".

    .venv/bin/python tools/sanitize.py [--fuzz-seconds N] [pytest args...]
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "sanitize"
LIB, SITE = BUILD / "lib", BUILD / "site"
MODULES = (
    "acel.acea.engine._native_core",
    "acel.acea.engine._native_enum",
    "acel.io._native_reader",
    "acel.io._native_writer",
)
SANITIZE = "-fsanitize=address,undefined"
CFLAGS = f"{SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
TESTS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_native_*.py"))
SKIP = [  # pure Python only: nothing native to sanitize
    "tests/test_native_core.py::test_engine_properties_on_the_pure_python_path",
]

SITECUSTOMIZE = '''"""Written by tools/sanitize.py: the sanitized native modules before the in-tree ones."""
import importlib.abc
import importlib.util
import os

_LIB = os.environ["ACEL_SANITIZED_LIB"]
_SUFFIX = {suffix!r}
_MODULES = {modules!r}


class _Sanitized(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name not in _MODULES:
            return None
        return importlib.util.spec_from_file_location(
            name, os.path.join(_LIB, *name.split(".")) + _SUFFIX)


import sys  # noqa: E402

sys.meta_path.insert(0, _Sanitized())
'''


def native_sources() -> dict[str, list[str]]:
    """setup.py's ``NATIVE`` table (read, not run: setup.py calls setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "NATIVE" for t in node.targets):
            table: dict[str, list[str]] = ast.literal_eval(node.value)
            return table
    sys.exit("sanitize: setup.py has no NATIVE table")


def build() -> None:
    """Compile each extension with the sanitizers into LIB, as setup.py's table says (the
    compiler is called directly: setup.py marks them optional, so setuptools would only
    warn about one that does not build)."""
    shutil.rmtree(BUILD, ignore_errors=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    include = sysconfig.get_paths()["include"]
    table = native_sources()
    if sorted(table) != sorted(MODULES):
        sys.exit(f"sanitize: setup.py builds {sorted(table)}, this pass knows {sorted(MODULES)}")
    for name, sources in table.items():
        out = LIB.joinpath(*name.split(".")).with_name(name.split(".")[-1] + suffix)
        out.parent.mkdir(parents=True, exist_ok=True)
        command = ["cc", "-shared", "-fPIC", "-fwrapv", *CFLAGS.split(), f"-I{include}",
                   *(str(ROOT / s) for s in sources), "-o", str(out)]
        if subprocess.run(command).returncode != 0:
            sys.exit(f"sanitize: {name} did not build")
    SITE.mkdir(parents=True)
    (SITE / "sitecustomize.py").write_text(SITECUSTOMIZE.format(suffix=suffix, modules=MODULES))


def environment() -> dict[str, str]:
    """The environment of every sanitized process."""
    libasan = subprocess.run(["cc", "-print-file-name=libasan.so"], capture_output=True, text=True,
                             check=True).stdout.strip()
    if not os.path.isabs(libasan):
        sys.exit("sanitize: the compiler has no libasan.so")
    path = os.pathsep.join(p for p in (str(SITE), os.environ.get("PYTHONPATH", "")) if p)
    return dict(
        os.environ,
        ACEL_SANITIZED_LIB=str(LIB),
        PYTHONPATH=path,
        LD_PRELOAD=libasan,
        ASAN_OPTIONS="detect_leaks=0:halt_on_error=1",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        HYPOTHESIS_PROFILE=os.environ.get("HYPOTHESIS_PROFILE", "ci"),
        ACEL_NATIVE="auto",
    )


CHECK = """
import importlib, os, sys
lib = os.environ["ACEL_SANITIZED_LIB"]
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    if not module.__file__.startswith(lib):
        sys.exit(f"sanitize: {name} came from {module.__file__}, not {lib}")
"""


MARKERS = ("runtime error:", "ERROR: AddressSanitizer", "SUMMARY: AddressSanitizer",
           "SUMMARY: UndefinedBehaviorSanitizer")


def run(command: list[str], env: dict[str, str]) -> tuple[int, int]:
    """Run a step, its standard error shown as it comes: (exit status, sanitizer reports seen)."""
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True,
                               errors="replace")
    assert process.stderr is not None
    seen = 0
    for line in process.stderr:
        sys.stderr.write(line)
        seen += any(marker in line for marker in MARKERS)
    return process.wait(), seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz-seconds", type=float, default=30.0)
    args, pytest_args = parser.parse_known_args()  # the rest goes to pytest (e.g. -k NAME)
    began = time.monotonic()
    build()
    env = environment()
    steps = [
        ("the sanitized modules load", [sys.executable, "-c", CHECK, *MODULES]),
        ("native tests", [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--capture=sys", *TESTS,
                          *(f"--deselect={s}" for s in SKIP), *pytest_args]),
        ("fuzz", [sys.executable, str(ROOT / "tools" / "fuzz_native.py"), f"--seconds={args.fuzz_seconds}"]),
    ]
    for name, command in steps:
        print(f"sanitize: {name}", flush=True)
        code, seen = run(command, env)
        if seen:
            print(f"sanitize: FAILED: {seen} sanitizer report(s) during {name}", file=sys.stderr)
            return 1
        if code != 0:
            print(f"sanitize: FAILED: {name} exited with status {code}", file=sys.stderr)
            return 1
    print(f"sanitize: passed, no sanitizer report ({time.monotonic() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
