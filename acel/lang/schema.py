"""Schemas: event types and their attributes (spec §1)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Schema:
    """Each event type with its attribute names (``type`` itself is implicit).

    ``kinds`` optionally records each attribute's value kind (``int``,
    ``float``, ``str``, ``bool``) when it is known, for checking data.
    """

    types: tuple[tuple[str, tuple[str, ...]], ...]
    kinds: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def of(types: Mapping[str, Iterable[str]], kinds: Mapping[str, str] | None = None) -> Schema:
        """A schema from ``{type: [attribute, ...]}`` (order kept, sorted by type)."""
        items = tuple(
            (name, tuple(a for a in dict.fromkeys(attrs) if a != "type"))
            for name, attrs in sorted(types.items())
        )
        return Schema(items, tuple(sorted((kinds or {}).items())))

    def type_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.types)

    def has_type(self, name: str) -> bool:
        return any(t == name for t, _ in self.types)

    def attributes(self, type_name: str) -> tuple[str, ...]:
        """The attributes of a type, ``type`` first; empty for an unknown type."""
        for name, attrs in self.types:
            if name == type_name:
                return ("type", *attrs)
        return ()

    def all_attributes(self) -> tuple[str, ...]:
        """Every attribute of every type (``type`` included), sorted."""
        out = {"type"}
        for _, attrs in self.types:
            out.update(attrs)
        return tuple(sorted(out))

    def kind(self, attribute: str) -> str | None:
        return dict(self.kinds).get(attribute)

    def to_json(self) -> dict[str, object]:
        """``{"types": {T: [a, ...]}, "kinds": {a: kind}}``, the schema file format."""
        return {"types": {t: list(a) for t, a in self.types}, "kinds": dict(self.kinds)}

    @staticmethod
    def from_json(data: Mapping[str, object]) -> Schema:
        """Read the schema file format; a bare ``{T: [a, ...]}`` is accepted too."""
        types = data.get("types", data)
        kinds = data.get("kinds", {}) if "types" in data else {}
        if not isinstance(types, Mapping) or not isinstance(kinds, Mapping):
            raise ValueError('a schema is {"types": {TYPE: [attribute, ...]}, "kinds": {...}}')
        schema = Schema.of(
            {str(t): [str(a) for a in attrs] for t, attrs in types.items()},  # type: ignore[union-attr]
            {str(a): str(k) for a, k in kinds.items()},
        )
        reserved = reserved_attribute(schema.all_attributes())
        if reserved is not None:
            raise ValueError(reserved_message(reserved))
        return schema


def reserved_attribute(names: Iterable[str]) -> str | None:
    """The first attribute name holding ``#``, which the automata reserve for their
    registers (``price#3``): such a column would be read as a register (issue 24,
    found by fuzzing the readers)."""
    return next((name for name in names if "#" in name), None)


def reserved_message(name: str) -> str:
    """Why an attribute name with ``#`` is refused (one line)."""
    return f"attribute name {name!r} holds '#', which acel reserves for its registers: rename it"
