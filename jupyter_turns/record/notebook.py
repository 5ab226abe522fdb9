"""Reading conversations back from a saved notebook (``.ipynb``) — no kernel needed.

:func:`read_notebook` takes the newest copy of each turn from the cells' stores (see
:mod:`jupyter_turns.record.saved_turns`), groups the turns by ``conversation_id`` (a thread name can
be reused by ``%chat new``), orders each conversation's turns by when they ran, and rebuilds it
as a Conversation that is valid to send.

The file is untrusted input. Nothing here raises for its content: a record or setting that
cannot be read is skipped with a note naming its cell, and every other thread still loads.
What of a thread's settings may be applied, and which of its turns are the user's own, is
decided by the kernel from the user's own stores when it adopts the thread
(:mod:`jupyter_turns.kernel.grants`, :meth:`jupyter_turns.kernel.threads.Threads.adopt`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.window import fork_history, fork_origin
from ..errors import ConversationError
from ..model.conversation import Conversation
from ..model.events import ChatRequest
from .format import META_KEY, turn_record
from .saved_turns import SavedTurn, first_line, saved_turns, valid_thread_name
from .thread_settings import SavedSettings, parse_settings
from .transcript import to_markdown

__all__ = [
    "SavedNotebook",
    "SavedThread",
    "export_markdown",
    "find_notebook",
    "load",
    "load_threads",
    "read_notebook",
    "session_paths",
]


@dataclass
class SavedThread:
    name: str
    conversation: Conversation
    settings: SavedSettings = field(default_factory=SavedSettings)
    problems: list[str] = field(default_factory=list)  # turns that could not be read


@dataclass
class SavedNotebook:
    """Everything a notebook file says about its conversations."""

    threads: dict[str, SavedThread] = field(default_factory=dict)
    current: str | None = None
    problems: list[str] = field(default_factory=list)  # what could not be read, cell by cell
    cell_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by cell id


def session_paths(namespace: Mapping[str, Any]) -> list[str]:
    """What the frontend told this kernel about its notebook: JupyterLab's ``__session__`` and
    ``JPY_SESSION_NAME``, VS Code's ``__vsc_ipynb_file__`` (empty under nbclient)."""
    candidates = (
        namespace.get("__session__"),
        os.environ.get("JPY_SESSION_NAME"),
        namespace.get("__vsc_ipynb_file__"),
    )
    return [str(c) for c in candidates if c]


def find_notebook(namespace: Mapping[str, Any]) -> Path | None:
    """The notebook file this kernel belongs to, if the frontend said so."""
    for candidate in session_paths(namespace):
        if candidate.endswith(".ipynb") and Path(candidate).exists():
            return Path(candidate)
    return None


def read_notebook(path: str | os.PathLike[str]) -> SavedNotebook:
    """Every conversation saved in the notebook at ``path``; problems are notes, not errors.

    Raises ``OSError`` only when the file itself cannot be opened.
    """
    with open(os.fspath(path), encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    try:
        notebook = json.loads(text)  # read raw: one malformed cell must not hide the others
    except (ValueError, RecursionError) as exc:
        return SavedNotebook(problems=[f"the file is not readable JSON ({first_line(exc)})"])
    if not isinstance(notebook, dict):
        return SavedNotebook(
            problems=[f"the file is a JSON {type(notebook).__name__}, not a notebook"]
        )
    return _read(notebook)


def _read(notebook: Any) -> SavedNotebook:
    saved = SavedNotebook()
    state = _dict(notebook.get("metadata"), "notebook metadata", saved.problems).get(META_KEY)
    state = _dict(state, f"notebook metadata {META_KEY}", saved.problems)
    thread_settings = _dict(state.get("threads"), "saved thread settings", saved.problems)
    turns = saved_turns(notebook, saved.problems)
    by_conversation: dict[str, list[SavedTurn]] = {}
    for turn in turns:
        by_conversation.setdefault(turn.conversation_id, []).append(turn)
    named = _names(by_conversation, thread_settings)
    for conversation_id, group in by_conversation.items():
        group.sort(key=lambda t: t.started)
        name = named[conversation_id]
        settings = group[-1].settings  # the newest turn's
        for key, raw in thread_settings.items():
            if isinstance(raw, dict) and raw.get("conversation_id") == conversation_id:
                settings = settings.merged(parse_settings(raw, f"settings of thread {key!r}"))
        thread = SavedThread(name, Conversation(conversation_id=conversation_id), settings)
        for turn in group:
            _add_turn(thread, turn)
            if turn.cell_id:
                record = turn_record(conversation_id, turn.thread, turn.events)
                saved.cell_records.setdefault(turn.cell_id, []).append(record)
        thread.conversation.answer_orphans()
        saved.threads[name] = thread
    _graft_forks(saved, by_conversation)
    current = state.get("current")
    if isinstance(current, str) and current in saved.threads:
        saved.current = current
    elif turns:  # no extension: the newest turn's thread
        newest = max(turns, key=lambda t: t.started).conversation_id
        saved.current = named[newest]
    return saved


def _graft_forks(saved: SavedNotebook, by_conversation: Mapping[str, list[SavedTurn]]) -> None:
    """Give each forked thread (``%chat fork``) the history it started with: its source's,
    before the turn it was forked at, as the fork made it
    (:func:`jupyter_turns.engine.window.fork_history`). Sources first: a fork of a fork."""
    threads = {t.conversation.conversation_id: t for t in saved.threads.values()}
    for conversation_id in sorted(by_conversation, key=lambda c: by_conversation[c][0].started):
        thread = threads[conversation_id]
        origin = fork_origin(thread.conversation.events)
        if origin is None:
            continue
        source = threads.get(origin[0])
        events = source.conversation.events if source is not None else ()
        if source is None or (origin[1] is not None and all(e.id != origin[1] for e in events)):
            thread.problems.append(
                "forked from a thread this notebook does not hold: its history before the "
                "fork is missing"
            )
            continue
        try:
            grafted = Conversation(
                [*fork_history(events, origin[1]), *thread.conversation.events],
                conversation_id=conversation_id,
            )
        except ConversationError as exc:
            thread.problems.append(f"its history before the fork: {first_line(exc)}")
            continue
        thread.conversation = grafted


def _names(
    by_conversation: Mapping[str, list[SavedTurn]], thread_settings: Mapping[str, Any]
) -> dict[str, str]:
    """A unique thread name per conversation: the name the notebook's metadata gives it, else
    its newest turn's; a conversation that lost its name to a newer one (``%chat new main``)
    is restored beside it as ``main-earlier``."""
    wanted: dict[str, str] = {}
    for name, raw in thread_settings.items():
        conversation_id = raw.get("conversation_id") if isinstance(raw, dict) else None
        if isinstance(conversation_id, str) and conversation_id in by_conversation:
            wanted[conversation_id] = name if valid_thread_name(name) else "main"
    wanted_by_metadata = set(wanted)
    for conversation_id, group in by_conversation.items():
        if conversation_id not in wanted:
            wanted[conversation_id] = max(group, key=lambda t: t.started).thread
    taken: set[str] = set()
    named: dict[str, str] = {}
    newest_first = sorted(
        by_conversation,
        key=lambda c: (c in wanted_by_metadata, max(t.started for t in by_conversation[c])),
        reverse=True,
    )
    for conversation_id in newest_first:
        base = wanted[conversation_id]
        name, n = base, 1
        while name in taken:
            name = f"{base}-earlier" if n == 1 else f"{base}-earlier-{n}"
            n += 1
        taken.add(name)
        named[conversation_id] = name
    return named


def _dict(value: Any, what: str, problems: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{what} ignored: a {type(value).__name__}, not an object")
        return {}
    return value


def _add_turn(saved: SavedThread, turn: SavedTurn) -> None:
    """Append one cell's turn, or skip it whole (noting why) if it does not fit."""
    conversation = saved.conversation
    mark = len(conversation)
    seen = {event.id for event in conversation.events}
    try:
        for event in turn.events:
            if event.id in seen:
                continue
            if isinstance(event, ChatRequest) and event.parent is None:
                conversation.answer_orphans()
            conversation.append(event)
        conversation.answer_orphans()
    except ConversationError as exc:
        conversation.truncate(mark)
        saved.problems.append(f"cell {turn.cell + 1}: {first_line(exc)}")


def load_threads(path: str | os.PathLike[str]) -> tuple[dict[str, SavedThread], str | None]:
    """Every thread saved in the notebook at ``path``, and which one was current."""
    saved = read_notebook(path)
    return saved.threads, saved.current


def load(path: str | os.PathLike[str]) -> dict[str, Conversation]:
    """The conversations saved in a notebook, by thread name."""
    threads, _ = load_threads(path)
    return {name: thread.conversation for name, thread in threads.items()}


def export_markdown(path: str | os.PathLike[str], thread: str = "main") -> str:
    """One saved thread as a markdown transcript."""
    conversations = load(path)
    if thread not in conversations:
        available = ", ".join(sorted(conversations)) or "none"
        raise KeyError(f"no thread {thread!r} in {path} (threads: {available})")
    return to_markdown(conversations[thread].events)
