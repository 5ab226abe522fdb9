"""What a ``python`` tool run did to the user's namespace, and undoing it.

Before and after each run the user's names are snapshotted: each name's object identity and,
where it is cheap and safe, a content fingerprint (DataFrames, Series and arrays up to
:data:`MAX_ELEMENTS` elements, lists, tuples, sets and dicts up to :data:`MAX_ITEMS` items).
The difference says which names were **created**, **rebound** and **deleted**, each with a
one-line summary, and which objects were **changed in place**. It goes to the model with the
result, shows in the tool card and is saved on the response (``state``).

Undoing a run (:mod:`jupyter_turns.editing.undo`) starts from this difference.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..reading.variables import one_line

__all__ = ["StateDiff", "diff", "fingerprint", "snapshot"]

MAX_ELEMENTS = 1_000_000
MAX_ITEMS = 10_000
_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})

Snapshot = dict[str, tuple[int, str | None]]  # name -> (id of the object, fingerprint)


def _users(namespace: Mapping[str, Any]) -> dict[str, Any]:
    return {
        name: value
        for name, value in list(namespace.items())
        if not name.startswith("_")
        and name not in _IPYTHON_NAMES
        and not isinstance(value, types.ModuleType)
    }


def fingerprint(value: Any) -> str | None:
    """A digest of ``value``'s content where that is cheap and safe, else None."""
    with contextlib.suppress(Exception):
        module = type(value).__module__ or ""
        if module.startswith("pandas") and hasattr(value, "size"):
            if value.size <= MAX_ELEMENTS:
                pandas: Any = sys.modules["pandas"]  # the value is a pandas object: loaded
                hashed = pandas.util.hash_pandas_object(value, index=True).to_numpy().tobytes()
                return hashlib.blake2b(hashed, digest_size=16).hexdigest()
            return None
        if module.startswith("numpy") and hasattr(value, "tobytes"):
            if getattr(value, "size", MAX_ELEMENTS + 1) <= MAX_ELEMENTS:
                return hashlib.blake2b(value.tobytes(), digest_size=16).hexdigest()
            return None
        if isinstance(value, list | tuple | set | frozenset | dict) and len(value) <= MAX_ITEMS:
            return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()
    return None


def snapshot(namespace: Mapping[str, Any]) -> Snapshot:
    return {name: (id(value), fingerprint(value)) for name, value in _users(namespace).items()}


@dataclass
class StateDiff:
    created: list[tuple[str, str]] = field(default_factory=list)  # (name, one-line summary)
    rebound: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)  # changed in place

    def __bool__(self) -> bool:
        return bool(self.created or self.rebound or self.deleted or self.changed)

    def text(self) -> str:
        """What the model reads after the result."""
        parts = []
        for label, items in (("created", self.created), ("rebound", self.rebound)):
            if items:
                parts.append(f"{label} " + ", ".join(f"{n} ({s})" for n, s in items))
        if self.deleted:
            parts.append("deleted " + ", ".join(self.deleted))
        if self.changed:
            parts.append("changed in place " + ", ".join(f"{n} ({s})" for n, s in self.changed))
        return "kernel state: " + "; ".join(parts) if parts else ""

    def as_dict(self) -> dict[str, Any]:
        """Saved on the response as ``state``."""

        def rows(items: list[tuple[str, str]]) -> list[dict[str, str]]:
            return [{"name": n, "summary": s} for n, s in items]

        return {
            "created": rows(self.created),
            "rebound": rows(self.rebound),
            "deleted": list(self.deleted),
            "changed": rows(self.changed),
        }


def diff(before: Snapshot, namespace: Mapping[str, Any]) -> StateDiff:
    """What changed since ``before`` (a :func:`snapshot` of the same namespace)."""
    users = _users(namespace)
    result = StateDiff()
    for name, value in users.items():
        if name not in before:
            result.created.append((name, one_line(value)))
        elif before[name][0] != id(value):
            result.rebound.append((name, one_line(value)))
        else:
            old = before[name][1]
            if old is not None and fingerprint(value) != old:
                result.changed.append((name, one_line(value)))
    result.deleted = [name for name in before if name not in users]
    return result
