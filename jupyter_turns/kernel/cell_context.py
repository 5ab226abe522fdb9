"""What a chat cell sends besides its request: the instruction files (in the system prompt) and
the cells above it (an attachment), and ``%chat instructions``.

Where the notebook is: the file the frontend names (``JPY_SESSION_NAME``, ``__session__``, VS
Code's ``__vsc_ipynb_file__``), else — nbclient, ``jupyter execute``, a console name none — the
kernel's working directory, where those start it. Where the server's root is: the notebook's
path on disk without the path the page reported (``{request: "page", path}``), when both are
known and agree; else unknown (:func:`jupyter_turns.reading.instructions.search` then stops
at a repository's root or the home folder).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..model.content import Attachment
from ..model.events import Notice
from ..ownership import owner
from ..reading.above import cells_above, parse_context
from ..reading.instructions import Instructions, server_root, user_folder
from ..record.notebook import session_paths

if TYPE_CHECKING:
    from .session import CellSettings, Session
    from .threads import Thread

__all__ = [
    "INSTRUCTIONS_USAGE",
    "context_of",
    "instructions_for",
    "notebook_folder",
    "page_said",
    "show_instructions",
]


def notebook_folder(namespace: dict[str, Any]) -> Path:
    """The notebook's folder: the frontend's notebook path's, else the working directory."""
    for candidate in session_paths(namespace):
        folder = Path(candidate).parent
        if Path(candidate).is_absolute() and folder.is_dir():
            return folder
    return Path.cwd()


def page_said(session: Session, message: dict[str, Any]) -> None:
    """A page opened the notebook: keep the path it reports (relative to the server's root)."""
    path = message.get("path")
    if isinstance(path, str) and 0 < len(path) <= 4_096:
        session.page_path = path


def _root(session: Session) -> Path | None:
    if session.page_path is None:
        return None
    for candidate in session_paths(session.namespace):
        root = server_root(candidate, session.page_path)
        if root is not None:
            return root
    return None


def read_instructions(session: Session, settings: CellSettings) -> Instructions:
    """The instruction files this turn sends (none when ``ChatMagics.instructions`` is off)."""
    if not settings.instructions:
        return Instructions()
    return session.instructions.find(notebook_folder(session.namespace), _root(session))


def instructions_for(
    session: Session, settings: CellSettings, thread: Thread
) -> tuple[str | None, list[Notice | str]]:
    """This turn's instruction text, and the card's notes: the files named when they are not
    what the thread's card last named (its first turn, an edited, new or removed file), and
    files that could not be read."""
    found = read_instructions(session, settings)
    summary = found.summary()
    notes: list[Notice | str] = []
    if found.notes != thread.instruction_notes_shown:  # each refused file said once, not per turn
        notes = [f"Instruction file {note}" for note in found.notes]
        thread.instruction_notes_shown = found.notes
    if summary != thread.instructions_shown:
        files = [
            {"file": f.label, "lines": f.lines, **({"cut": f.cut} if f.cut else {})}
            for f in found.files
        ]
        text = summary or "Instructions: none now (the instruction files are gone)."
        notes.insert(0, Notice(level="info", text=text, data={"instructions": files}))
        thread.instructions_shown = summary
    return found.system_text(), notes


def context_of(thread: Thread, settings: CellSettings) -> tuple[bool, int | None]:
    """The thread's ``--context`` (else ``ChatMagics.context``): send the cells above? how
    many? Raises UsageError for a bad ``%config`` value."""
    value = thread.context if thread.context is not None else settings.context
    try:
        return parse_context(value)
    except ValueError as exc:
        raise UsageError(f"ChatMagics.context: {exc}") from None


async def cells_above_for(
    session: Session, settings: CellSettings, thread: Thread
) -> Attachment | None:
    """The cells above this chat cell, when the thread sends them (read as the notebook tools
    read the notebook: the page, else the file, else the kernel's history)."""
    wanted, count = context_of(thread, settings)
    if not wanted or session.reader is None:
        return None
    view = await session.reader.view()
    return cells_above(view, count, thread.above, thread.chat.conversation.events)


INSTRUCTIONS_USAGE = (
    "usage: %chat instructions (show the files sent) | %chat instructions --allow PATH (send "
    "PATH, owned by another user, in this kernel session)"
)


def show_instructions(session: Session, settings: CellSettings, args: list[str]) -> None:
    """``%chat instructions [--allow PATH]``: which files are sent and the text the system
    prompt gets; ``--allow`` first lets a file of another user's be sent in this session."""
    if args:
        if len(args) != 2 or args[0] != "--allow":
            raise UsageError(INSTRUCTIONS_USAGE)
        _allow(session, Path(args[1]))
    if not settings.instructions:
        print("Instruction files are off (%config ChatMagics.instructions = False): none is sent.")
        return
    found = read_instructions(session, settings)
    searched = session.instructions.search(notebook_folder(session.namespace), _root(session))
    print(f"Looked for AGENTS.md and CLAUDE.md {searched.describe()}.")
    for note in found.notes:
        print(f"Not read: {note}")
    text = found.system_text()
    if text is None:
        print(f"No instruction file found; yours would be {user_folder() / 'AGENTS.md'}.")
        return
    print(f"{found.summary()}. Sent in the system prompt of every turn, the nearest last:\n")
    print(text)


def _allow(session: Session, path: Path) -> None:
    """``--allow PATH``: the file is sent in this kernel session although another user owns it
    (while they do); every other rule still holds."""
    if not path.is_absolute():
        path = notebook_folder(session.namespace) / path
    try:
        real, uid = session.instructions.allow(path)
    except ValueError as exc:
        raise UsageError(f"%chat instructions --allow: {exc}") from None
    whose = owner(uid)
    print(
        f"Allowed for this kernel session: {shlex.quote(str(real))}, owned by {whose}. It is "
        f"sent while it belongs to {whose}; the other rules for instruction files still hold."
    )
