"""A data-only encoding of engine state: nothing in a state file can run code (issue 24 §1).

Saved runner state and Structured Streaming checkpoints are written as UTF-8
JSON over a closed set of value kinds, after a magic line naming the format
and its version.  Scalars are JSON scalars (ints beyond 64 bits, ±inf and NaN
are tagged); every other value is a one-key object naming its kind:

========  ===============================================================
``t``     tuple (a list of values)
``l``     list
``d``     dict, as a list of ``[key, value]`` pairs (keys may be tuples)
``s``     set; ``fs`` frozenset
``b``     bytes (base64)
``i``     an int too large for 64 bits (hexadecimal text)
``f``     a float that is not finite: ``"inf"``, ``"-inf"`` or ``"nan"``
``q``     an exact rational (STDDEV's sums of floats): ``"num/den"`` in hexadecimal
``r``     one of the engine's own records, by name, with its fields in order
``@``     the n-th mutable value (list, dict, set, held result, accumulator)
          written before: shared values stay shared, as in the running engine
========  ===============================================================

Decoding builds only these kinds, and records only from the fixed table
:data:`RECORDS` (plain frozen dataclasses of the language core and the
runner's held results): unlike ``pickle``, reading a state never imports,
calls or constructs anything else.  Anything outside the closed set is
refused with a one-line :class:`StateMismatch`.  papers/streaming.md, papers/io.md.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any

from acel.acea.engine.held import Held

from acel.lang.clauses import Match, TrendAccumulator, TrendRow
from acel.lang.errors import AcelError
from acel.lang.events import ComplexEvent, Event

MAGIC = b"ACEL-STATE"
"""The first bytes of every state file: ``ACEL-STATE <version>\\n`` then the JSON."""
FORMAT_VERSION = 2
"""Version 1 was a pickle (refused: it could run code)."""
_SMALL = 2**63
MAX_DEPTH = 200
"""The deepest nesting of JSON brackets a state may have (a state the engine writes
stays below 40: its DAG is a flat table); checked before parsing (issue 35, 36 D8)."""


class StateMismatch(AcelError):
    """Saved state that is not data-only state of this version, or that belongs to
    another query, schema or engine version: one line, nothing run."""


class Context:
    """What records need from the runner that reads them (derived data, not saved)."""

    __slots__ = ("returns",)

    def __init__(self, returns: tuple[Any, ...] = ()) -> None:
        self.returns = returns


def _held_fields(held: Any) -> list[Any]:
    return [held.end, held.local, held.deadline, held.item, held.windows, held.status]


def _make_held(fields: list[Any], _ctx: Context) -> Any:
    end, local, deadline, item, windows, status = fields
    held = Held(end, local, deadline, item, windows)
    held.status = status
    return held


def _make_acc(fields: list[Any], ctx: Context) -> TrendAccumulator:
    count, accs = fields
    acc = TrendAccumulator(ctx.returns)
    if not isinstance(accs, list) or len(accs) != len(acc.accs) or not isinstance(count, int):
        raise StateMismatch("not a saved runner state: an accumulator does not fit the query")
    acc.count, acc.accs = count, accs
    return acc


def _plain(cls: type) -> Callable[[list[Any], Context], Any]:
    def make(fields: list[Any], _ctx: Context) -> Any:
        return cls(*fields)

    return make


RECORDS: dict[str, tuple[int, Callable[[list[Any], Context], Any]]] = {
    "Event": (2, _plain(Event)),
    "ComplexEvent": (3, _plain(ComplexEvent)),
    "Match": (2, _plain(Match)),
    "TrendRow": (3, _plain(TrendRow)),
    "TrendAccumulator": (2, _make_acc),
    "Held": (6, _make_held),
}
"""The engine's own records a state may hold: name → (number of fields, constructor)."""


def _record(value: Any) -> tuple[str, list[Any]] | None:
    """``value`` as a record ``(name, fields)``, or None if it is none of ours."""
    kind = type(value)
    if kind is Event:
        return "Event", [value.time, value.attrs]
    if kind is ComplexEvent:
        return "ComplexEvent", [value.start, value.end, value.vars]
    if kind is Match:
        return "Match", [value.key, value.event]
    if kind is TrendRow:
        return "TrendRow", [value.key, value.window, value.values]
    if kind is TrendAccumulator:
        return "TrendAccumulator", [value.count, value.accs]
    if kind is Held:
        return "Held", _held_fields(value)
    return None


# ------------------------------------------------------------------ encoding

_MUTABLE = (list, dict, set)
_MUTABLE_RECORDS = ("TrendAccumulator", "Held")


class _Encoder:
    """Encodes one state; a mutable value met again (a held result in the release order
    and in its partition's queue) is written once and then referred to as ``{"@": n}``,
    ``n`` counting mutable values in the order they are first written."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.keep: list[Any] = []

    def shared(self, value: Any) -> dict[str, int] | None:
        number = self.seen.get(id(value))
        if number is not None:
            return {"@": number}
        self.seen[id(value)] = len(self.seen)
        self.keep.append(value)
        return None

    def encode(self, value: Any) -> Any:  # noqa: C901 - one branch per value kind, flat
        """``value`` as JSON data (see the module doc); refuses any other kind."""
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value if -_SMALL < value < _SMALL else {"i": format(value, "x")}
        if kind is float:
            if math.isfinite(value):
                return value
            return {"f": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
        if kind is tuple:
            return {"t": [self.encode(v) for v in value]}
        if kind is frozenset:
            return {"fs": [self.encode(v) for v in value]}
        if kind is bytes:
            return {"b": base64.b64encode(value).decode("ascii")}
        if kind.__name__ == "Fraction" and kind.__module__ == "fractions":  # STDDEV's exact sums
            return {"q": f"{value.numerator:x}/{value.denominator:x}"}
        if kind in _MUTABLE:
            return self.shared(value) or self.container(value)
        record = _record(value)
        if record is None:
            raise StateMismatch(
                f"cannot save a value of kind {kind.__name__}: runner state holds only ints, "
                "floats, text, booleans, NULL, tuples, lists, dicts, sets and the engine's "
                "own records"
            )
        if record[0] in _MUTABLE_RECORDS:
            ref = self.shared(value)
            if ref is not None:
                return ref
        return {"r": record[0], "v": [self.encode(v) for v in record[1]]}

    def container(self, value: Any) -> dict[str, Any]:
        if type(value) is list:
            return {"l": [self.encode(v) for v in value]}
        if type(value) is dict:
            return {"d": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        return {"s": [self.encode(v) for v in value]}


def dumps(value: Any) -> bytes:
    """``value`` as data-only state bytes (magic line, then JSON)."""
    data = _Encoder().encode(value)
    body = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return MAGIC + b" %d\n" % FORMAT_VERSION + body.encode("ascii")


# ------------------------------------------------------------------ decoding


def _refuse_constant(name: str) -> Any:
    raise StateMismatch(f"not a saved runner state: bare {name} (non-finite floats are tagged)")


def _items(data: Any, what: str) -> list[Any]:
    if not isinstance(data, list):
        raise StateMismatch(f"not a saved runner state: a {what} that is not a list")
    return data


_PENDING = object()


class _Decoder:
    """Decodes one state, building only the closed set of kinds (the module doc)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.shared: list[Any] = []

    def decode(self, data: Any) -> Any:
        if data is None or isinstance(data, (bool, str, int, float)):
            return data
        if isinstance(data, dict):
            return self.tagged(data)
        raise StateMismatch("not a saved runner state: a bare JSON list (containers are tagged)")

    def tagged(self, data: dict[str, Any]) -> Any:  # noqa: C901 - one branch per tag
        if len(data) == 2 and "r" in data and "v" in data:
            return self.record(data["r"], _items(data["v"], "record"))
        if len(data) != 1:
            raise StateMismatch("not a saved runner state: an object that is no value kind")
        ((tag, inner),) = data.items()
        if tag == "@" and type(inner) is int and 0 <= inner < len(self.shared):
            found = self.shared[inner]
            if found is _PENDING:
                raise StateMismatch("not a saved runner state: a value that contains itself")
            return found
        if tag == "t":
            return tuple(self.decode(v) for v in _items(inner, "tuple"))
        if tag == "fs":
            return frozenset(_hashable(self.decode(v)) for v in _items(inner, "set"))
        if tag == "l":
            out: list[Any] = []
            self.shared.append(out)
            out.extend(self.decode(v) for v in _items(inner, "list"))
            return out
        if tag == "d":
            return self.dict(_items(inner, "dict"))
        if tag == "s":
            members: set[Any] = set()
            self.shared.append(members)
            members.update(_hashable(self.decode(v)) for v in _items(inner, "set"))
            return members
        if tag in ("b", "i", "f", "q") and isinstance(inner, str):
            return _scalar(tag, inner)
        raise StateMismatch(f"not a saved runner state: unknown value kind {str(tag)[:40]!r}")

    def dict(self, pairs: list[Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        self.shared.append(out)
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise StateMismatch("not a saved runner state: a dict entry that is not a pair")
            key = _hashable(self.decode(pair[0]))
            out[key] = self.decode(pair[1])
        return out

    def record(self, name: Any, fields: list[Any]) -> Any:
        entry = RECORDS.get(name) if isinstance(name, str) else None
        if entry is None or len(fields) != entry[0]:
            raise StateMismatch(f"not a saved runner state: unknown record {str(name)[:40]!r}")
        slot = len(self.shared)
        if name in _MUTABLE_RECORDS:
            self.shared.append(_PENDING)
        values = [self.decode(v) for v in fields]
        try:
            made = entry[1](values, self.ctx)
        except (TypeError, ValueError) as error:
            raise StateMismatch(f"not a saved runner state: a bad {name} record ({error})") from None
        if name in _MUTABLE_RECORDS:
            self.shared[slot] = made
        return made


def _scalar(tag: str, text: str) -> Any:
    try:
        if tag == "b":
            return base64.b64decode(text.encode("ascii"), validate=True)
        if tag == "i":
            return int(text, 16)
        if tag == "q":
            return _fraction(text)
    except ValueError:
        raise StateMismatch(f"not a saved runner state: a bad {tag!r} value") from None
    if text in ("inf", "-inf", "nan"):
        return float(text)
    raise StateMismatch("not a saved runner state: a bad float")


def _fraction(text: str) -> Any:
    """An exact rational ``num/den`` (hexadecimal), as STDDEV's accumulator keeps floats."""
    from fractions import Fraction  # here: only states of STDDEV over floats hold one

    num, slash, den = text.partition("/")
    if not slash or not den or den.startswith("-") or "_" in text:
        raise ValueError(text)
    denominator = int(den, 16)
    if denominator == 0:
        raise ValueError(text)
    return Fraction(int(num, 16), denominator)


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise StateMismatch(
            "not a saved runner state: a dict key or set member that is not hashable"
        ) from None
    return value


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SQUARE = bytes.maketrans(b"{}", b"[]")


def check_depth(text: bytes | str, what: str, limit: int = MAX_DEPTH, offset: int = 0) -> None:
    """Refuse JSON ``text`` nested deeper than ``limit`` brackets, naming the byte where it
    gets too deep (counted from ``offset``), without parsing it: no recursion, the
    innermost pairs removed a level a pass at C speed (a state's few levels, few passes)."""
    body = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")  # escapes, left to right
    outside = b"".join(unescaped.split(b'"')[::2])  # the text between strings
    brackets = outside.translate(_SQUARE, _NOT_BRACKETS)
    for level in range(limit + 1):
        inner = brackets.replace(b"[]", b"")  # the innermost pairs: one level
        if inner == brackets:  # none left: what remains is unbalanced, ]]…[[
            if level + brackets.count(b"[") <= limit:
                return  # (the parser says where it is unbalanced)
            break
        brackets = inner
    raise StateMismatch(f"not a {what}: nested deeper than {limit} levels "
                        f"(at byte {offset + _too_deep_at(body, limit):,})")


def _too_deep_at(body: bytes, limit: int) -> int:
    """The offset where ``body`` first nests deeper than ``limit`` (a plain scan: only
    on refusal)."""
    depth, in_string, escaped = 0, False, False
    for at, byte in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return at
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return len(body)


def loads(blob: bytes, ctx: Context | None = None) -> Any:
    """Decode state bytes :func:`dumps` wrote; any other bytes raise :class:`StateMismatch`."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise StateMismatch(f"not a saved runner state: a {type(blob).__name__}, not bytes")
    blob = bytes(blob)
    head, _, body = blob.partition(b"\n")
    if not head.startswith(MAGIC):
        old = blob[:1] == b"\x80"
        raise StateMismatch(
            "not a saved runner state of this acel"
            + (": a pickle (older acel states are refused: loading one could run code)" if old else "")
        )
    if head != MAGIC + b" %d" % FORMAT_VERSION:
        version = head[len(MAGIC):].strip()[:20].decode("ascii", "replace")
        raise StateMismatch(f"a runner state of format {version!r}; this acel reads {FORMAT_VERSION}")
    check_depth(body, "saved runner state", offset=len(head) + 1)
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
        return _Decoder(ctx or Context()).decode(data)
    except StateMismatch:
        raise
    except RecursionError:
        raise StateMismatch("not a saved runner state: nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise StateMismatch(f"not a saved runner state: {str(error).splitlines()[0][:120]}") from None
