"""Reading conversations back from a saved notebook (``.ipynb``) — no kernel needed.

A cell's turn may be stored three times: the cell's ``metadata.jupyter_turns`` (written by the
lab extension), its output records (mime ``application/vnd.jupyter-turns+json``) and the
widget state nbclient saves. :func:`load_threads` reads all of them, keeps the newest copy of
each cell's turn, orders the turns of a thread by time and rebuilds each thread as a
Conversation that is valid to send (calls a dead kernel left unanswered get error responses).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from .conversation import Conversation
from .errors import ConversationError, SchemaError
from .events import ChatRequest, ConversationEvent, event_adapter
from .persist import META_KEY, RECORD_MIME
from .transcript import to_markdown

__all__ = [
    "SavedThread",
    "export_markdown",
    "find_notebook",
    "load",
    "load_threads",
    "session_paths",
]

_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@dataclass
class SavedThread:
    name: str
    conversation: Conversation
    settings: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # turns that could not be read


@dataclass
class _Turn:
    thread: str
    conversation_id: str | None
    events: list[dict[str, Any]]
    cell: int
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def newest(self) -> tuple[str, int, bool]:
        """Later last event first, then more events, then a copy that carries settings."""
        last = self.events[-1].get("timestamp", "") if self.events else ""
        return (str(last), len(self.events), bool(self.settings))

    @property
    def started(self) -> str:
        return str(self.events[0].get("timestamp", "")) if self.events else ""


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
        if candidate and str(candidate).endswith(".ipynb") and Path(str(candidate)).exists():
            return Path(str(candidate))
    return None


def _records_of_cell(cell: Any, widget_states: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
    meta = (cell.get("metadata") or {}).get(META_KEY)
    if isinstance(meta, dict):
        yield meta
    for output in cell.get("outputs") or []:
        data = output.get("data", {})
        record = data.get(RECORD_MIME)
        if isinstance(record, dict) and not record.get("superseded"):
            yield record
        view = data.get(_WIDGET_VIEW)
        if isinstance(view, dict):
            state = widget_states.get(str(view.get("model_id")), {})
            if isinstance(state.get("events"), list) and state["events"]:
                settings = state.get("settings") or {}
                yield {"thread": settings.get("thread", "main"), "events": state["events"]}


def _turns(notebook: Any) -> list[_Turn]:
    widget_states: dict[str, Any] = {}
    saved = notebook.get("metadata", {}).get("widgets", {}).get(_WIDGET_STATE, {})
    for model_id, model in (saved.get("state") or {}).items():
        if isinstance(model, dict) and isinstance(model.get("state"), dict):
            widget_states[model_id] = model["state"]
    turns = []
    for index, cell in enumerate(notebook.get("cells") or []):
        best: _Turn | None = None
        for record in _records_of_cell(cell, widget_states):
            events = record.get("events")
            if not isinstance(events, list) or not events:
                continue
            settings = record.get("settings")
            turn = _Turn(
                str(record.get("thread") or "main"),
                record.get("conversation_id"),
                events,
                index,
                settings if isinstance(settings, dict) else {},
            )
            if best is None or turn.newest > best.newest:
                best = turn
        if best is not None:
            turns.append(best)
    return turns


def load_threads(path: str | os.PathLike[str]) -> tuple[dict[str, SavedThread], str | None]:
    """Every thread saved in the notebook at ``path``, and which one was current."""
    notebook = nbformat.read(os.fspath(path), as_version=4)
    state = notebook.get("metadata", {}).get(META_KEY) or {}
    saved_settings = state.get("threads") or {}
    by_thread: dict[str, list[_Turn]] = {}
    for turn in _turns(notebook):
        by_thread.setdefault(turn.thread, []).append(turn)
    threads: dict[str, SavedThread] = {}
    for name, turns in by_thread.items():
        turns.sort(key=lambda t: (t.started, t.cell))
        newest = max(turns, key=lambda t: t.started)
        settings = {**newest.settings, **(saved_settings.get(name) or {})}
        conversation_id = settings.get("conversation_id") or next(
            (t.conversation_id for t in reversed(turns) if t.conversation_id), None
        )
        conversation = Conversation(conversation_id=conversation_id)
        saved = SavedThread(name, conversation, settings)
        for turn in turns:
            _add_turn(saved, turn)
        conversation.answer_orphans()
        threads[name] = saved
    current = state.get("current")
    if not isinstance(current, str) and by_thread:  # no extension: the newest turn's thread
        current = max(
            (t for turns in by_thread.values() for t in turns), key=lambda t: t.started
        ).thread
    return threads, current if isinstance(current, str) else None


def _add_turn(saved: SavedThread, turn: _Turn) -> None:
    """Append one cell's turn, or skip it whole (noting why) if it cannot be read."""
    conversation = saved.conversation
    mark = len(conversation)
    seen = {event.id for event in conversation.events}
    try:
        events: list[ConversationEvent] = [event_adapter.validate_python(e) for e in turn.events]
        for event in events:
            if event.id in seen:
                continue
            if isinstance(event, ChatRequest):
                conversation.answer_orphans()
            conversation.append(event)
    except (ValueError, ConversationError, SchemaError) as exc:
        conversation.truncate(mark)
        saved.problems.append(f"cell {turn.cell + 1}: {str(exc).splitlines()[0]}")


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
