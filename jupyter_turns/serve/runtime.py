"""The runtime file that names a running server, for the stdio bridge (``jupyter turns mcp``).

One file per server in Jupyter's runtime folder, ``jupyter_turns-mcp-<pid>-<port>.json``, made
with mode 0600 (it holds the token; only this user reads it) and removed when the server stops
or the kernel exits. It names the server's URL, its token, the kernel's process and its notebook.
Reading one checks it first: a regular file, this user's, readable by nobody else, its kernel
still alive. Stdlib only: the bridge imports this without the kernel's modules.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from ..ownership import not_yours, open_regular, read_at_most

__all__ = ["Found", "RuntimeInfo", "find", "remove", "runtime_dir", "write"]

PREFIX = "jupyter_turns-mcp-"
MAX_BYTES = 64_000


@dataclass(frozen=True)
class RuntimeInfo:
    """What the bridge needs to reach a server, and how a person tells servers apart."""

    url: str
    token: str
    pid: int
    notebook: str | None  # the notebook's path on disk, when the kernel knows it
    tools: str  # read | edit | all


def runtime_dir() -> Path:
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def write(info: RuntimeInfo, folder: Path | None = None) -> Path:
    """Write ``info`` to a new file only this user can read; its path."""
    folder = folder or runtime_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    port = info.url.rsplit(":", 1)[-1].split("/", 1)[0]
    path = folder / f"{PREFIX}{info.pid}-{port}.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(info), handle)
    return path


def remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


@dataclass(frozen=True)
class Found:
    """The servers the runtime folder names, and why other files there were passed over."""

    servers: list[RuntimeInfo]
    skipped: list[str]


def find(folder: Path | None = None) -> Found:
    """Every live server's info, read safely; files that fail a check are named in
    ``skipped`` with the reason (a dead kernel's file is removed)."""
    folder = folder or runtime_dir()
    servers: list[RuntimeInfo] = []
    skipped: list[str] = []
    for path in sorted(folder.glob(f"{PREFIX}*.json")) if folder.is_dir() else []:
        info = _read(path)
        if isinstance(info, str):
            skipped.append(f"{path.name}: {info}")
        elif not _alive(info.pid):
            remove(path)  # the kernel died without removing it
        else:
            servers.append(info)
    return Found(servers, skipped)


def _read(path: Path) -> RuntimeInfo | str:
    opened = open_regular(path, follow=False)
    if opened is None:
        return "gone"
    if isinstance(opened, str):
        return opened
    fd, info = opened
    problem = not_yours(info) or (
        f"others can read it (mode {stat.S_IMODE(info.st_mode):o})"
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        else None
    )
    raw = read_at_most(fd, MAX_BYTES)
    if problem:
        return problem
    try:
        data = json.loads(raw)
        return RuntimeInfo(
            url=str(data["url"]),
            token=str(data["token"]),
            pid=int(data["pid"]),
            notebook=None if data.get("notebook") is None else str(data["notebook"]),
            tools=str(data.get("tools", "")),
        )
    except (ValueError, KeyError, TypeError) as exc:
        return f"not a server's file ({type(exc).__name__})"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
