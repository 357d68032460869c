"""C and Python speak one protocol (issue 34): the checked-in headers are what
``tools/native_protocol.py`` writes from the protocol modules, and every built extension
reports (its ``PROTOCOL``, made from its header's names) the module's values.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acel.acea.engine import native_protocol as engine_protocol

from acel.io import native_protocol as io_protocol

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = {
    "acel.acea.engine._native_core": engine_protocol,
    "acel.acea.engine._native_enum": engine_protocol,
    "acel.io._native_reader": io_protocol,
}
"""Each extension that includes a generated header, and the module it is written from."""


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("native_protocol_tool", ROOT / "tools" / "native_protocol.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_headers_are_current() -> None:
    tool = generator()
    assert tool.stale() == [], "a protocol module changed: run .venv/bin/python tools/native_protocol.py"
    for path, (module, _source) in tool.HEADERS.items():
        text = (ROOT / path).read_text()
        assert "do not edit" in text.splitlines()[0]
        defined = re.findall(r"^#define (\w+) ", text, flags=re.M)
        assert defined == list(module.constants())


@pytest.mark.parametrize("name", sorted(EXTENSIONS))
def test_each_extension_speaks_its_module(name: str) -> None:
    try:
        extension: Any = importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} not built")
    reported = extension.PROTOCOL
    expected = EXTENSIONS[name].constants()
    assert reported == expected
    assert {k: type(v) for k, v in reported.items()} == {k: type(v) for k, v in expected.items()}


@pytest.mark.parametrize("module", [engine_protocol, io_protocol], ids=["engine", "io"])
def test_every_shared_name_is_listed_once(module: ModuleType) -> None:
    """A constant added to a protocol module but not to its SECTIONS would reach no header."""
    listed = [name for _title, names in module.SECTIONS for name in names]
    assert len(listed) == len(set(listed))
    public = {n for n, v in vars(module).items() if n.isupper() and isinstance(v, (int, float, str))}
    own = public - ({"CELL_NULL", "CELL_INT", "CELL_FLOAT", "CELL_BOOL"} if module is engine_protocol else set())
    assert own <= set(listed)


def test_the_engine_shares_the_readers_cell_kinds() -> None:
    """The core reads the blocks the reader fills: one set of cell kinds."""
    for name in ("CELL_NULL", "CELL_INT", "CELL_FLOAT", "CELL_BOOL"):
        assert engine_protocol.constants()[name] == io_protocol.constants()[name]


def test_the_tables_name_every_code() -> None:
    assert sorted(engine_protocol.AGG_CODES.values()) == list(range(len(engine_protocol.AGG_CODES)))
    assert sorted(engine_protocol.CMP_CODES.values()) == list(range(6))


@pytest.mark.parametrize("bad", [True, 2**63, "ab", "'", [1]])
def test_the_generator_refuses_what_c_cannot_say(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        generator().literal(bad)
