"""API keys: where the Anthropic key comes from, and ``%chat key``.

The key is never written into the notebook. :func:`api_key` finds it, in this order:

1. the process environment (``ANTHROPIC_API_KEY`` set before Jupyter started, or by ``%chat
   key``, which asks for it with a hidden prompt and sets it in this kernel's environment);
2. a ``.env`` file next to the notebook or in the working directory: its ``ANTHROPIC_*``
   variables are read into the environment, never overriding one that is already set, and a
   line says which file they came from (the key itself masked).

:mod:`jupyter_turns.redaction` withholds the key in use (read from the environment at each
call) and every key handed out here (:func:`~jupyter_turns.redaction.remember`) from whatever
the package sends to the model, shows or saves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "ENV_KEY",
    "api_key",
    "key_command",
    "load_dotenv",
    "masked",
    "parse_dotenv",
]

from .redaction import ENV_KEY, remember


def masked(key: str) -> str:
    """A form of ``key`` that identifies it without revealing it: ``sk-ant-…wXyZ``."""
    prefix = "sk-ant-" if key.startswith("sk-ant-") else ""
    tail = key[-4:] if len(key) >= 20 else ""
    return f"{prefix}…{tail}"


# ---------------------------------------------------------------------------- finding the key


def api_key(namespace: dict[str, Any] | None = None) -> str | None:
    """The key to use: the environment's, else one read from a ``.env`` file into it.

    A key handed out is withheld from text for the rest of the session, even after the
    environment changes (``%chat key``).
    """
    key = os.environ.get(ENV_KEY) or None
    if key is None:
        load_dotenv(_dotenv_dirs(namespace))
        key = os.environ.get(ENV_KEY) or None
    if key is not None:
        remember(key)
    return key


def _dotenv_dirs(namespace: dict[str, Any] | None) -> list[Path]:
    """The notebook's directory (if the frontend told the kernel), then the working directory."""
    from .notebook import session_paths

    if namespace is None:
        namespace = _ipython_namespace()
    dirs = [Path(p).parent for p in session_paths(namespace) if p.endswith(".ipynb")]
    dirs.append(Path.cwd())
    unique: list[Path] = []
    for directory in dirs:
        resolved = directory.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def _ipython_namespace() -> dict[str, Any]:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return {}
    shell = get_ipython()
    return dict(shell.user_ns) if shell is not None else {}


def load_dotenv(directories: Iterable[Path], *, announce: bool = True) -> Path | None:
    """Read ``ANTHROPIC_*`` variables from the first ``.env`` that sets any (never overriding).

    Returns the file read, or None. With ``announce`` it prints where they came from, with the
    key masked.
    """
    for directory in directories:
        path = directory / ".env"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found = {k: v for k, v in parse_dotenv(text).items() if k.startswith("ANTHROPIC_") and v}
        if not found:
            continue
        taken = {k: v for k, v in found.items() if not os.environ.get(k)}
        os.environ.update(taken)
        if announce and taken:
            names = ", ".join(
                f"{name} ({masked(value)})" if name == ENV_KEY else name
                for name, value in sorted(taken.items())
            )
            print(f"jupyter_turns: read {names} from {path}")
        return path
    return None


_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_QUOTED = re.compile(r"""^(['"])(.*?)\1\s*(?:#.*)?$""")


def parse_dotenv(text: str) -> dict[str, str]:
    """``NAME=value`` lines of a ``.env`` file (``export``, quotes and ``#`` comments allowed)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        name, value = match.group(1), match.group(2).strip()
        quoted = _QUOTED.match(value)
        if quoted is not None:
            value = quoted.group(2)
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        values[name] = value
    return values


# ---------------------------------------------------------------------------- %chat key


def key_command(args: list[str]) -> None:
    """``%chat key``: ask for the key with a hidden prompt and set it for this kernel only."""
    import getpass

    from IPython.core.error import StdinNotImplementedError, UsageError

    if args:
        # Whatever was typed is in the cell's source now, which the notebook saves.
        raise UsageError(
            "%chat key takes no arguments: it asks for the key with a hidden prompt. "
            "If you typed a key on this line, delete it from the cell: cell sources are saved."
        )
    try:
        key = getpass.getpass("Anthropic API key (hidden; kept in this kernel only): ")
    except (StdinNotImplementedError, EOFError):
        raise UsageError(
            "this frontend cannot ask for input. Set ANTHROPIC_API_KEY in the environment "
            "before starting Jupyter, or put it in a .env file next to the notebook."
        ) from None
    key = key.strip()
    if not key:
        print("No key entered; nothing changed.")
        return
    os.environ[ENV_KEY] = key
    note = "" if key.startswith("sk-ant-") else " (Anthropic keys usually start with sk-ant-)"
    print(
        f"{ENV_KEY} set for this kernel: {masked(key)}{note}. It is not saved in the notebook; "
        "a restarted kernel asks again."
    )
