"""What the model reads of the user's variables: a listing, one-line summaries, a summary.

:func:`user_variables` lists what the user made, leaving out IPython's own names, modules,
imported functions and classes, and jupyter_turns' objects, so the listing is about the
user's data. :func:`one_line` names a value in a few words without importing pandas, numpy,
matplotlib or Pillow: it goes by the type's name and attributes (duck typing), so it also
works for look-alikes such as polars frames. :func:`summarize` is the longer description the
``inspect`` tool returns. None of them raises for a value that breaks when read: a listing
must not fail because one object has a bad ``__repr__``.
"""

from __future__ import annotations

import fnmatch
import inspect
import re
import types
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..redaction import SPAN, head

__all__ = ["describe_variables", "is_users", "one_line", "summarize", "user_variables"]

SHORT = 80  # characters of a one-line summary's repr
_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_CONTAINERS = (list, tuple, dict, set, frozenset)
_REGEX_ONLY = frozenset(".^$+{}()|\\")  # a pattern with one of these is a regex, not a glob
_NAME_WIDTH = 20  # column padding stops here, so one long name does not widen every line
_BY = "\u00d7"  # the multiplication sign of "640\u00d7480", escaped for ruff's confusables check


def _clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut note included (cut after its
    secrets are withheld: none is shown in part)."""
    if len(text) <= limit:
        return text
    note = f"\n[output truncated: showing {{}} of {len(text):,} characters]"
    shown = head(text, max(0, limit - len(note.format(f"{limit:,}"))))
    newline = shown.rfind("\n")
    if newline > len(shown) // 2:  # end on a whole line when that loses little
        shown = shown[:newline]
    return shown + note.format(f"{len(shown):,}")


def _columns(columns: Any, dtypes: Any, budget: int) -> str:
    """``name: dtype, …`` within ``budget`` characters, then how many columns were left out."""
    pairs: Iterable[str]
    if dtypes is not None and hasattr(dtypes, "items"):
        pairs = (f"{c}: {t}" for c, t in dtypes.items())
    else:
        pairs = map(str, columns)
    shown: list[str] = []
    used = 0
    for pair in pairs:
        used += len(pair) + 2
        if used > budget:
            break
        shown.append(pair)
    text = ", ".join(shown)
    left = len(columns) - len(shown)
    return f"{text}, … and {left:,} more of {len(columns):,} columns" if left > 0 else text


def summarize(value: Any, limit: int = 4_000) -> str:
    """A short, read-only description of ``value``: type, shape, dtype, columns, length, head.

    At most ``limit`` characters: a wide frame's column list takes at most 40% of them, so the
    first rows still show, and a cut says how much was left out. Never raises: an attribute
    that fails when read is reported as unreadable (a ``@name`` must not fail the cell).
    """
    lines = [f"type: {type(value).__module__}.{type(value).__qualname__}"]
    shape = _read(value, "shape", lines)
    if shape is not None:
        _line(lines, "shape", lambda: f"{tuple(shape) if not isinstance(shape, str) else shape}")
    dtype = _read(value, "dtype", lines)
    if dtype is not None:
        _line(lines, "dtype", lambda: str(dtype))
    columns = _read(value, "columns", lines)
    dtypes = _read(value, "dtypes", lines)
    if columns is not None:
        _line(lines, "columns", lambda: _columns(columns, dtypes, limit * 2 // 5))
    if not isinstance(value, str | bytes) and _has(value, "__len__"):
        _line(lines, "length", lambda: str(len(value)))
    head = _read(value, "head", lines)
    if callable(head) and columns is not None:
        _line(lines, "head", lambda: f"\n{head()}")
    else:
        _line(lines, "repr", lambda: _clip(repr(value), 1_000))
    return _clip("\n".join(lines), limit)


def _has(value: Any, name: str) -> bool:
    try:
        return hasattr(value, name)
    except Exception:  # hasattr only swallows AttributeError
        return False


def _read(value: Any, name: str, lines: list[str]) -> Any:
    """``value.name``, or None (with an "unreadable" line) when reading it raises."""
    try:
        return getattr(value, name, None)
    except Exception as exc:
        lines.append(f"{name}: (unreadable: {type(exc).__name__}: {_short(str(exc))})")
        return None


def _line(lines: list[str], label: str, text: Any) -> None:
    """Add ``label: text()``; a ``text`` that raises is reported instead (a broken
    ``__repr__``, ``__len__``, ``__iter__`` or ``head``)."""
    try:
        shown = text()
    except Exception as exc:
        shown = f"(unreadable: {type(exc).__name__}: {_short(str(exc))})"
    lines.append(f"{label}: {shown}" if not shown.startswith("\n") else f"{label}:{shown}")


def _short(text: str, limit: int = SHORT) -> str:
    if "\n" in text:  # a multi-line repr on one line; str reprs never hold a raw newline
        text = " ".join(text.split())
    return text if len(text) <= limit else head(text, limit - 1) + "…"


def _signature(function: Any) -> str:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):  # builtins without a text signature
        return "(…)"


def _size(value: Any) -> str:
    try:
        return str(len(value))
    except Exception:  # a broken __len__: say so instead of failing the listing
        return "? (len failed)"


def _frame_columns(frame: Any, limit: int = 200) -> str:
    """`` · city: object, rain_mm: float64, …`` — a DataFrame's columns and dtypes, cut."""
    try:
        described = ", ".join(f"{c}: {t}" for c, t in frame.dtypes.items())
    except Exception:
        return ""
    if len(described) > limit:
        described = head(described, limit) + "…"
    return f" · {described}" if described else ""


def _one_line(value: Any) -> str:
    kind = type(value)
    name = kind.__name__
    if isinstance(value, type):
        return f"class {value.__qualname__}"
    if inspect.isroutine(value):
        label = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
        return _short(f"function {label}{_signature(value)}")
    shape = getattr(value, "shape", None)
    if name == "DataFrame" and isinstance(shape, tuple) and len(shape) == 2:
        return f"DataFrame {shape[0]}{_BY}{shape[1]}{_frame_columns(value)}"
    if name == "Series" and hasattr(value, "dtype"):
        return f"Series {_size(value)} ({value.dtype})"
    module = kind.__module__ or ""
    if module.startswith("matplotlib") and hasattr(value, "get_size_inches"):
        width, height = value.get_size_inches() * value.dpi
        return f"{name} {round(width)}{_BY}{round(height)}"
    if module.startswith("PIL") and hasattr(value, "size") and hasattr(value, "mode"):
        return f"Image {value.size[0]}{_BY}{value.size[1]} {value.mode}"
    dtype = getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        # a numpy scalar has shape (): its repr says more than "int64 () int64"
        return f"{name} {shape} {dtype}" if shape else _short(repr(value))
    if isinstance(value, _CONTAINERS):
        return f"{name}[{_size(value)}]"
    if isinstance(value, str | bytes):
        # never repr a huge string whole; past the cut far enough to see a secret across it
        return _short(repr(value[: SHORT + SPAN]))
    if isinstance(value, _SCALARS):
        return _short(repr(value))
    return _short(f"{name} {value!r}")


def one_line(value: Any) -> str:
    """``value`` in a few words for a listing: ``DataFrame 1000x12``, ``list[120]``, ``'abc'``.

    Never raises: a value whose ``__repr__`` or attributes fail is named with a note.
    """
    try:
        return _one_line(value)
    except Exception as exc:  # the user's object is broken; the listing must still work
        return f"{type(value).__name__} (summary failed: {type(exc).__name__})"


def _matcher(pattern: str) -> re.Pattern[str]:
    """A glob (``df*``, ``x?``, ``[ab]*``) as fnmatch, or a regular expression for re.search."""
    if not any(char in _REGEX_ONLY for char in pattern):
        return re.compile(r"\A" + fnmatch.translate(pattern))  # whole name, though searched
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"invalid pattern {pattern!r}: {exc}. Use a glob such as 'df*' or a valid "
            "regular expression such as '^df_\\d+$'."
        ) from exc


def is_users(name: str, value: Any, hidden: Collection[str]) -> bool:
    """Whether ``name`` is the user's own data or code rather than IPython's or a library's."""
    if name.startswith("_") or name in _IPYTHON_NAMES or name in hidden:
        return False
    if isinstance(value, types.ModuleType):
        return False
    if (type(value).__module__ or "").startswith("jupyter_turns"):
        return False
    if isinstance(value, type) or inspect.isroutine(value):
        # defined in a cell (module __main__), not imported from a library
        return getattr(value, "__module__", None) == "__main__"
    return True


def user_variables(
    namespace: Mapping[str, Any], pattern: str | None = None, hidden: Collection[str] = ()
) -> list[tuple[str, str, str]]:
    """``(name, type name, one-line summary)`` of the user's variables, sorted by name.

    ``pattern`` is a glob matched against the whole name, or, when it has a regex character
    other than ``* ? [ ]``, a regular expression searched in the name; an invalid regular
    expression raises ValueError. ``hidden`` is for the shell's ``user_ns_hidden``.
    """
    match = _matcher(pattern) if pattern else None
    rows = []
    # a copy first: the kernel's main thread may add names while a tool thread reads them
    for name, value in sorted(dict(namespace).items(), key=lambda item: item[0]):
        if match is not None and not match.search(name):
            continue
        try:
            keep = is_users(name, value, hidden)
        except Exception:  # e.g. a __class__ property that raises: still the user's value
            keep = True
        if keep:
            rows.append((name, type(value).__name__, one_line(value)))
    return rows


def _more(left: int) -> str:
    return f"[… {left} more variables not shown; call variables with a pattern]"


def describe_variables(rows: Iterable[tuple[str, str, str]], limit: int) -> str:
    """``rows`` as a table, ``name  type  summary`` per line, within ``limit`` characters.

    When rows do not fit, the last line says how many were left out and how to see them.
    """
    rows = list(rows)
    if not rows:
        return "(no variables)"
    name_width = min(_NAME_WIDTH, max(len("name"), *(len(row[0]) for row in rows)))
    type_width = min(_NAME_WIDTH, max(len("type"), *(len(row[1]) for row in rows)))
    lines = [
        f"{name:<{name_width}}  {kind:<{type_width}}  {summary}".rstrip()
        for name, kind, summary in [("name", "type", "summary"), *rows]
    ]
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    shown, used = lines[:1], len(lines[0])
    for line in lines[1:]:
        note = _more(len(rows) - len(shown))  # the note if this line is the last shown
        if used + 1 + len(line) + 1 + len(note) > limit:
            break
        shown.append(line)
        used += 1 + len(line)
    left = len(rows) - (len(shown) - 1)
    return "\n".join([*shown, _more(left)])
