"""Copies of frozen dataclasses with some fields changed, at a quarter of the cost of
:func:`dataclasses.replace`.

Every command makes a new game state and a new room record, each through a few replaces, and
:func:`dataclasses.replace` walks the class's fields and calls the frozen ``__init__``, which
sets every field through ``object.__setattr__``: 3.5 to 6 us a copy, a few percent of the
server's CPU in the vs-computer benchmark (BENCHMARKS.md, fourteenth session). :func:`replaced`
copies the instance's ``__dict__`` and overlays the changes instead (under 1 us). It is only
for the plain frozen dataclasses registered with :func:`copyable`: no ``__slots__``, no
``__post_init__``, no ``cached_property`` (a copy must not skip a check or a derived field), every
field set by ``__init__``; an unknown field name is a :class:`TypeError`, as with
:func:`dataclasses.replace`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Final, TypeVar

__all__ = ["copyable", "replaced"]

T = TypeVar("T")

#: the registered classes and their field names
_FIELDS: Final[dict[type, frozenset[str]]] = {}


def copyable(cls: type[T]) -> type[T]:
    """Register the frozen dataclass ``cls`` for :func:`replaced` (a class decorator, applied
    over ``@dataclass``); a class it cannot copy correctly is refused at import."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass")
    if hasattr(cls, "__slots__") or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __slots__ or __post_init__: use dataclasses.replace")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if any(not f.init for f in fields):
        raise TypeError(f"{cls.__name__} has a field __init__ does not set")
    if any(isinstance(v, functools.cached_property) for v in vars(cls).values()):
        # its cached values live in the instance dict: a copy would carry stale ones
        raise TypeError(f"{cls.__name__} has a cached_property")
    _FIELDS[cls] = frozenset(f.name for f in fields)
    return cls


def replaced(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` (of a :func:`copyable` class) with ``changes``; ``obj`` is unchanged."""
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        raise TypeError(f"{cls.__name__} is not registered with copyable()")
    if not names.issuperset(changes):
        unknown = ", ".join(sorted(set(changes) - names))
        raise TypeError(f"{cls.__name__} has no field {unknown}")
    new = object.__new__(cls)
    state = new.__dict__  # a frozen class refuses setattr, not its instance dict
    state.update(obj.__dict__)
    state.update(changes)
    return new
