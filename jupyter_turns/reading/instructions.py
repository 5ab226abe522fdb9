"""Instruction files: ``AGENTS.md`` / ``CLAUDE.md`` next to the notebook, in its parent folders
up to the Jupyter server's root, and the user's own, sent in the system prompt.

A team keeps "how we work here" in the folder it shares; a user keeps theirs in
``jupyter_config_dir()/jupyter_turns/AGENTS.md`` (``~/.jupyter``: the folder for what a user
writes to configure Jupyter; the settings secret, which the package makes, lives in the data
folder instead). They are text for the model and nothing else: no setting, approval, tool, MCP
server or run mode is read from them (the kernel never looks at what they say).

Which folders: the notebook's, then each parent up to the server's root, when the page said
where that is (:func:`server_root`). Without it, up to the home folder when the notebook is
under it, else the notebook's folder alone: never a folder above where the user's own files
start (``/tmp/AGENTS.md`` could be anyone's). Files are read again at every turn, from a cache
kept by modification time and size, so a stat is all an unchanged file costs. Each file is sent
up to :data:`FILE_CHARS` characters, all of them up to :data:`TOTAL_CHARS` (the nearest first),
with a note where one is cut; secrets are withheld like everywhere (:mod:`jupyter_turns.redaction`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..model.content import framed
from ..redaction import redact
from ..text import plural

__all__ = [
    "FILE_CHARS",
    "NAMES",
    "TOTAL_CHARS",
    "InstructionFile",
    "InstructionFinder",
    "Instructions",
    "server_root",
    "user_folder",
]

NAMES = ("AGENTS.md", "CLAUDE.md")  # in each folder, in this order
FILE_CHARS = 10_000  # of one file (≈ 2,500 tokens)
TOTAL_CHARS = 30_000  # of all of them, the nearest kept first
_READ_BYTES = 1_000_000  # more of a file is never read
_TAG = "instructions"
RULE = (
    "The user's instruction files follow: AGENTS.md or CLAUDE.md in the notebook's folder and "
    "its parent folders, and the user's own, each inside <instructions file=...> tags naming "
    "its path (relative to the notebook's folder), the nearest last; where they disagree, the "
    "nearer one wins. Follow them as the user's instructions about how to work here. They "
    "grant no permission: which tools may run, and whether they ask first, is decided by the "
    "user in the notebook, whatever a file says."
)


@dataclass(frozen=True)
class InstructionFile:
    path: Path
    label: str  # its path as the model and the card name it: "AGENTS.md", "../CLAUDE.md", "~/…"
    where: str  # "this folder", "2 folders up", "yours"
    text: str  # what is sent (cut, secrets withheld)
    lines: int  # lines of the file (of its first megabyte)
    cut: int  # characters of it not sent

    def describe(self) -> str:
        """``AGENTS.md (this folder, 24 lines)``: the card's and ``%chat instructions``' line."""
        cut = ", cut" if self.cut else ""
        where = f"{self.where}, " if self.where != "yours" else ""
        return f"{self.label} ({where}{plural(self.lines, 'line')}{cut})"


@dataclass(frozen=True)
class Instructions:
    files: tuple[InstructionFile, ...] = ()  # in the order they are sent: the nearest last
    notes: tuple[str, ...] = ()  # files that could not be read

    def system_text(self) -> str | None:
        """What the system prompt gets: the rule, then each file framed with its path."""
        if not self.files:
            return None
        frames = [framed(f.text, _TAG, "file", f.label) for f in self.files]
        return "\n\n".join([RULE, *frames])

    def summary(self) -> str | None:
        """``Instructions: AGENTS.md (this folder, 24 lines), ~/.jupyter/… (5 lines)``, the
        nearest first; None without a file."""
        if not self.files:
            return None
        return "Instructions: " + ", ".join(f.describe() for f in reversed(self.files))


def user_folder() -> Path:
    """Where the user's own ``AGENTS.md`` lives: ``jupyter_turns`` in Jupyter's config folder
    (``~/.jupyter``, or ``$JUPYTER_CONFIG_DIR``)."""
    from jupyter_core.paths import jupyter_config_dir

    return Path(jupyter_config_dir()) / "jupyter_turns"


def server_root(notebook: str | os.PathLike[str], relative: str) -> Path | None:
    """The server's root folder, from the notebook's path on disk (``JPY_SESSION_NAME``) and
    its path on the server, relative to the root (the page says it): the first without the
    second's end. None when they do not end alike (a notebook renamed since the kernel
    started, a remote kernel)."""
    parts = [p for p in PurePosixPath(relative.replace("\\", "/")).parts if p not in ("", ".")]
    absolute = Path(os.path.abspath(notebook))
    if not parts or ".." in parts or len(parts) >= len(absolute.parts):
        return None
    if list(absolute.parts[-len(parts) :]) != parts:
        return None
    return Path(*absolute.parts[: -len(parts)])


def folders(start: Path, root: Path | None, home: Path) -> list[Path]:
    """The folders searched, the nearest first: ``start`` and its parents up to ``root``; no
    root known: up to ``home`` when ``start`` is under it, else ``start`` alone."""
    start, home = start.resolve(), home.resolve()
    ceiling = root.resolve() if root is not None else home
    if start != ceiling and ceiling not in start.parents:
        return [start]
    chain = [start, *start.parents]
    return chain[: chain.index(ceiling) + 1]


class InstructionFinder:
    """Finds and reads the instruction files for one kernel; keeps each file's text until its
    modification time or size changes."""

    def __init__(self, user: Path | None = None, home: Path | None = None) -> None:
        self._user = user
        self._home = home
        self._cache: dict[Path, tuple[int, int, str, int]] = {}  # path -> mtime, size, text, lines

    def find(self, folder: Path, root: Path | None = None) -> Instructions:
        """The instructions for a notebook in ``folder`` (a server whose root is ``root``)."""
        home = self._home or Path.home()
        user = self._user or user_folder()
        near = folders(folder, root, home)
        found: list[tuple[Path, str, str]] = [
            (place / name, _label(place, near[0], name), _where(near.index(place)))
            for place in near
            for name in NAMES
        ]
        found.append((user / "AGENTS.md", _home_label(user / "AGENTS.md", home), "yours"))
        return self._read_all(found)

    def _read_all(self, found: list[tuple[Path, str, str]]) -> Instructions:
        files: list[InstructionFile] = []
        notes: list[str] = []
        seen: set[Path] = set()
        left = TOTAL_CHARS
        for path, label, where in found:  # the nearest first: they keep the budget
            read = self._read(path, notes)
            if read is None or path.resolve() in seen:
                continue  # CLAUDE.md linked to AGENTS.md is sent once
            seen.add(path.resolve())
            text, lines = read
            budget = max(0, min(FILE_CHARS, left))
            sent, cut = _cut(text, budget)
            left -= len(sent)
            files.append(InstructionFile(path, label, where, sent, lines, cut))
        return Instructions(tuple(reversed(files)), tuple(notes))

    def _read(self, path: Path, notes: list[str]) -> tuple[str, int] | None:
        """The file's text (secrets withheld) and line count; None when there is none."""
        try:
            info = path.stat()
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None  # a folder, or a FIFO that would block the kernel
        cached = self._cache.get(path)
        if cached is not None and cached[:2] == (info.st_mtime_ns, info.st_size):
            return cached[2], cached[3]
        try:
            with open(path, "rb") as handle:
                raw = handle.read(_READ_BYTES)
        except OSError as exc:
            notes.append(f"{path}: not read ({type(exc).__name__})")
            return None
        text = redact(raw.decode("utf-8", errors="replace")).text
        lines = len(text.splitlines())
        self._cache[path] = (info.st_mtime_ns, info.st_size, text, lines)
        return text, lines


def _cut(text: str, budget: int) -> tuple[str, int]:
    """``text`` within ``budget`` characters, with a note saying how much is not sent."""
    if len(text) <= budget:
        return text, 0
    cut = len(text) - budget
    note = (
        f"\n[… {cut:,} more characters of this file are not sent: an instruction file is "
        f"sent up to {FILE_CHARS:,} characters, all of them up to {TOTAL_CHARS:,}]"
    )
    return text[:budget] + note, cut


def _label(place: Path, nearest: Path, name: str) -> str:
    up = len(nearest.parts) - len(place.parts)
    return "/".join([*([".."] * up), name])


def _where(up: int) -> str:
    if up == 0:
        return "this folder"
    return "the folder above" if up == 1 else f"{up} folders up"


def _home_label(path: Path, home: Path) -> str:
    """``path`` with the home folder written ``~`` (the card does not show the user's name)."""
    try:
        return "~/" + path.resolve().relative_to(home.resolve()).as_posix()
    except ValueError:
        return str(path)
