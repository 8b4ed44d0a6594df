"""Typed JSON documents: one class declares a document's keys, their types and meaning.

The documents the tool writes for other programs (the cell's result record, the
``check --json`` answer) are each declared once, as a frozen dataclass or a NamedTuple
whose annotations are the JSON types of its keys, in the order they are written. As
packaging's ``pylock`` does for lock files, :func:`from_json` checks a parsed document
key by key against those annotations and names the first key that is wrong
(:class:`DocumentError`); :func:`to_json` writes the keys back in declaration order.
Nested documents, ``str`` enums and ``str`` subclasses (a cell id) are converted both
ways; a ``TypedDict`` (a small section of a fixed shape) is checked key by key and stays a
mapping; mappings and lists keep the order they were read in, so a document read and
written again is the same JSON.

A dataclass field carries its meaning and tags with :func:`declare` (``evidence``,
``expected``, ``check``): the reference documentation and subsets of a document (the
evidence form of a record) derive from them. Two optional class hooks: ``_from_keys``
builds the document from its checked values and the keys the JSON had (a record
remembers them, to write back no more than it read), and ``_written(name)`` says
whether :func:`to_json` writes a key (an optional section only when it is set).

Cheap to import (neither :mod:`dataclasses` nor :mod:`inspect`): ``check`` writes its
answer with it on the start-up path.
"""

from __future__ import annotations

import collections.abc
import enum
import sys
import typing
from typing import Any, Callable, Dict, FrozenSet, Mapping, NamedTuple, Optional, Tuple, Type, TypeVar

from .errors import AdapterMatrixError

__all__ = ["DocumentError", "Key", "declare", "keys_of", "is_document", "from_json", "to_json", "json_type", "what_is"]

T = TypeVar("T")


class DocumentError(AdapterMatrixError, ValueError):
    """A JSON document that is not what its type declares; the message names the key."""


class Key(NamedTuple):
    """One key of a document: its name, Python type, meaning and tags."""

    name: str
    hint: object  # a type, or a typing form (Optional[str], Dict[str, int])
    doc: str
    tags: Mapping[str, object]
    required: bool  # no default: a document without the key is not one

    def tag(self, name: str, default: object = None) -> object:
        return self.tags.get(name, default)


# Any: a field's default stands for a value of the field's own type, as dataclasses.field's does
def declare(doc: str, *, default: object = None, factory: Optional[Callable[[], object]] = None, **tags: object) -> Any:
    """A dataclass field with its meaning (``doc``) and tags: ``required=True`` (a document
    without the key is not one), ``evidence=True`` (the evidence form of a record keeps
    it), ``expected="an ISO date and time"`` (what a message says a value must be),
    ``check=fn`` (a further check of a well-typed value: returns what is wrong, or None),
    ``json=False`` (bookkeeping, not a key of the document)."""
    import dataclasses  # only the classes that declare fields pay for it

    metadata = {"doc": doc, **tags}
    shown = bool(tags.get("json", True))  # bookkeeping is neither compared nor shown
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata, compare=shown, repr=shown)
    return dataclasses.field(default=default, metadata=metadata, compare=shown, repr=shown)


_KEYS: Dict[type, Tuple[Key, ...]] = {}


def is_document(cls: object) -> bool:
    """Whether ``cls`` is a declared document: a dataclass or a NamedTuple."""
    return isinstance(cls, type) and (hasattr(cls, "__dataclass_fields__") or hasattr(cls, "_fields"))


def keys_of(cls: type) -> Tuple[Key, ...]:
    """The keys of a document class, in declaration order, their types resolved."""
    found = _KEYS.get(cls)
    if found is not None:
        return found
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    fields = getattr(cls, "__dataclass_fields__", None)
    if fields is not None:
        missing = sys.modules["dataclasses"].MISSING  # loaded: the class is a dataclass
        found = tuple(
            Key(
                f.name,
                hints[f.name],
                f.metadata.get("doc", ""),
                f.metadata,
                bool(f.metadata.get("required")) or (f.default is missing and f.default_factory is missing),
            )
            for f in fields.values()
            if f.metadata.get("json", True)
        )
    else:
        defaults = getattr(cls, "_field_defaults", {})
        found = tuple(Key(name, hints[name], "", {}, name not in defaults) for name in cls._fields)  # type: ignore[attr-defined]
    _KEYS[cls] = found
    return found


# -- types ---------------------------------------------------------------------------------


def what_is(value: object) -> str:
    """How a message names the JSON type of ``value``: ``a mapping``, ``null``, ``a int``."""
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), f"a {type(value).__name__}"
    )


def _mapping(origin: object) -> bool:
    return origin in (dict, collections.abc.Mapping)


def _typed_dict(hint: object) -> bool:
    """Whether ``hint`` is a ``TypedDict``: a section whose keys are declared, read as a plain
    mapping (its own keys checked, the others kept as read)."""
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__total__")


def json_type(hint: object) -> str:
    """How a message and the reference name the JSON type of ``hint``: ``a string or null``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        named = [json_type(a).replace(" or ", ", ") for a in args if a is not type(None)]
        named += ["null"] if type(None) in args else []
        return ", ".join(named[:-1]) + " or " + named[-1]
    if hint is Any:
        return "any JSON value"
    if hint is bool:
        return "true or false"
    if hint is int:
        return "a whole number"
    if hint is float:
        return "a number"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "one of " + ", ".join(str(m.value) for m in hint)
    if isinstance(hint, type) and issubclass(hint, str):
        return "a string"
    return "a mapping" if is_document(hint) or _typed_dict(hint) or _mapping(origin) else "a list"


def _is_a(value: object, hint: object) -> bool:
    """Whether a JSON ``value`` (as :mod:`json` parsed it) has the JSON type ``hint`` names."""
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return any(value == m.value for m in hint)
    if isinstance(hint, type) and issubclass(hint, str):
        return isinstance(value, str)
    origin = typing.get_origin(hint)
    if _mapping(origin) or is_document(hint) or _typed_dict(hint):
        return isinstance(value, dict)
    if origin in (list, tuple):
        return isinstance(value, list)
    raise TypeError(f"no JSON type for {hint!r}")  # a declaration this module cannot check: a bug, not input


def _read(value: object, hint: object, where: str) -> object:
    """``value`` checked against ``hint`` and converted to it, else :class:`DocumentError`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        for option in args:
            if _is_a(value, option):
                return _read(value, option, where)
    if origin is typing.Union or not _is_a(value, hint):
        raise DocumentError(f"{where} is {what_is(value)}, expected {json_type(hint)}")
    if isinstance(hint, type) and is_document(hint):
        return from_json(hint, value, where)
    if isinstance(hint, type) and _typed_dict(hint) and isinstance(value, dict):
        return _read_typed_dict(value, hint, where)
    if isinstance(hint, type) and issubclass(hint, (enum.Enum, str)) and hint is not str:
        return hint(value)
    if _mapping(origin) and args and args[1] is not Any and isinstance(value, dict):  # (_is_a: it is one)
        return {key: _read(item, args[1], f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list) and origin in (list, tuple):  # (_is_a: it is one)
        if args and args[0] is not Any:
            items = [_read(item, args[0], f"{where}[{i}]") for i, item in enumerate(value)]
            return tuple(items) if origin is tuple else items
        return tuple(value) if origin is tuple else value
    return value


def _read_typed_dict(value: Dict[str, object], hint: type, where: str) -> Dict[str, object]:
    """A mapping checked against a ``TypedDict``: its required keys are there (Python 3.9+ says
    which), each declared key it has is of its type; the keys in the order read, others kept."""
    for name in sorted(getattr(hint, "__required_keys__", ())):
        if name not in value:
            raise DocumentError(f"{where} has no {name}")
    hints = typing.get_type_hints(hint, vars(sys.modules[hint.__module__]))
    return {key: _read(item, hints[key], f"{where}.{key}") if key in hints else item for key, item in value.items()}


def _write(value: object) -> object:
    """A value as plain JSON data."""
    if is_document(type(value)):
        return to_json(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, str):
        return str(value)  # a str subclass (a cell id) is written as the plain string
    if isinstance(value, (tuple, list)):
        return [_write(v) for v in value]
    if isinstance(value, dict):
        return {k: _write(v) for k, v in value.items()}
    return value


# -- reading and writing -------------------------------------------------------------------


def from_json(cls: Type[T], data: object, where: str = "the document") -> T:
    """``data`` (parsed JSON) as a ``cls``, each key checked against its declared type (and
    its ``check``); :class:`DocumentError` naming the first wrong key. Keys the declaration
    does not know are ignored: a newer writer's additions."""
    if not isinstance(data, dict):
        raise DocumentError(f"{where} is {what_is(data)}, expected a mapping")
    values: Dict[str, object] = {}
    for key in keys_of(cls):
        if key.name not in data:
            if key.required:
                raise DocumentError(f"{where} has no {key.name}")
            continue
        value = data[key.name]
        try:
            values[key.name] = _read(value, key.hint, key.name)
        except DocumentError:
            expected = key.tag("expected")
            if expected:  # the declaration says what a value must be
                raise DocumentError(f"{key.name} is {what_is(value)}, expected {expected}") from None
            raise
        check = key.tag("check")  # a function of the value: what is wrong with it, or None
        problem = check(value) if callable(check) and value is not None else None
        if problem:
            raise DocumentError(problem)
    build: Optional[Callable[[Dict[str, object], FrozenSet[str]], T]] = getattr(cls, "_from_keys", None)
    return build(values, frozenset(data)) if build is not None else cls(**values)


def to_json(document: object, keep: Optional[Callable[[Key], bool]] = None) -> Dict[str, Any]:
    """``document`` as plain JSON data, its keys in declaration order (``keep`` selects)."""
    written: Optional[Callable[[str], bool]] = getattr(document, "_written", None)
    return {
        key.name: _write(getattr(document, key.name))
        for key in keys_of(type(document))
        if (keep is None or keep(key)) and (written is None or written(key.name))
    }
