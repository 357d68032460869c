"""Every repository path that the notes cite exists (issue 34: papers/ and docs/ cited files
that had been moved or removed).

A citation is a path under one of the project's folders, written as
``folder/…/file.ext``, ``folder/…/`` (a folder), a glob (``tests/test_workload*.py``),
a brace list (``docs/img/architecture.{dot,svg}``) or ``folder/module.name``
(a module and a name in it, e.g. ``spark_backend/partitioning.slicing_for``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("acel", "acea", "compiler", "reference", "spark_backend", "tests", "bench", "tools",
           "docs", "papers", "examples", ".ci")
CITATION = re.compile(
    r"(?<![\w./{-])((?:" + "|".join(re.escape(f) for f in FOLDERS) + r")/[\w./*{},-]*[\w/*}])")
NOTES = sorted([*ROOT.glob("papers/*.md"), *ROOT.glob("docs/*.md"), ROOT / "README.md"])


def expand(citation: str) -> list[str]:
    """The paths a brace list stands for (``a.{dot,svg}`` → ``a.dot``, ``a.svg``)."""
    match = re.search(r"\{([^{}]*)\}", citation)
    if match is None:
        return [citation]
    head, tail = citation[:match.start()], citation[match.end():]
    return [path for part in match.group(1).split(",") for path in expand(head + part + tail)]


def exists(path: str) -> bool:
    """A file, a folder, a glob with a match, or ``module.name`` whose module file exists."""
    if any(ch in path for ch in "*?"):
        return any(ROOT.glob(path))
    if (ROOT / path).exists():
        return True
    stem = path
    while "." in stem.rsplit("/", 1)[-1]:
        stem = stem.rsplit(".", 1)[0]
        if (ROOT / f"{stem}.py").exists():
            return True
    return False


def is_path(citation: str) -> bool:
    """A citation that names a file or folder (not a table heading such as ``acel/CORE``)."""
    last = citation.rstrip("/").rsplit("/", 1)[-1]
    return citation.endswith("/") or "." in last or "*" in last or "{" in citation \
        or (ROOT / citation).is_dir()


def citations(note: Path) -> list[tuple[int, str]]:
    """``(line, path)`` of every path the note cites."""
    out = []
    for number, line in enumerate(note.read_text(encoding="utf-8").splitlines(), 1):
        for match in CITATION.finditer(line):
            citation = match.group(1).rstrip(".,;:")
            if is_path(citation):
                out.extend((number, path) for path in expand(citation))
    return out


@pytest.mark.parametrize("note", NOTES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cited_path_exists(note: Path) -> None:
    missing = [f"{note.relative_to(ROOT)}:{line}: {path}"
               for line, path in citations(note) if not exists(path)]
    assert not missing, "cited paths that do not exist:\n" + "\n".join(missing)


def test_the_check_finds_a_missing_path(tmp_path: Path) -> None:
    """The check is not vacuous: it sees citations, and a moved file is reported."""
    note = tmp_path / "note.md"
    note.write_text("see `acel/io/no_such_reader.py` and acea/graph.trim_parts, "
                    "`tests/test_docs.py` and spark_backend/partitioning.slicing_for\n")
    found = [path for _, path in citations(note)]
    assert found == ["acel/io/no_such_reader.py", "acea/graph.trim_parts", "tests/test_docs.py",
                     "spark_backend/partitioning.slicing_for"]
    assert [exists(path) for path in found] == [False, False, True, True]
    assert sum(len(citations(n)) for n in NOTES) > 100
