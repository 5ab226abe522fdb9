"""Reading conversations back from a saved notebook (``.ipynb``) — no kernel needed.

A cell's turn may be stored several times: the cell's ``metadata.jupyter_turns`` (written by
the lab extension), its output records (mime ``application/vnd.jupyter-turns+json``, which
also carry the earlier runs of a re-run cell under ``displaced``) and the widget state nbclient
saves. :func:`read_notebook` reads all of them, keeps the newest copy of each turn, groups the
turns by ``conversation_id`` (a thread name can be reused by ``%chat new``), orders each
conversation's turns by when they ran, and rebuilds it as a Conversation that is valid to send.

The file is untrusted input. Nothing here raises for its content: a record or setting that
cannot be read is skipped with a note naming its cell, and every other thread still loads.
Whether the settings may be applied is decided by the caller (:mod:`jupyter_turns.trust`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .conversation import Conversation, parse_events
from .errors import ConversationError, SchemaError
from .events import ChatRequest, ConversationEvent
from .persist import META_KEY, RECORD_MIME, turn_record
from .thread_settings import SavedSettings, parse_settings
from .transcript import to_markdown
from .trust import is_trusted

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

_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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
    trusted: bool = False  # signed by this user's Jupyter: its settings may grant permissions
    problems: list[str] = field(default_factory=list)  # what could not be read, cell by cell
    cell_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by cell id


@dataclass
class _Turn:
    conversation_id: str
    thread: str
    events: list[ConversationEvent]
    cell: int
    cell_id: str | None
    settings: SavedSettings

    @property
    def key(self) -> tuple[str, str]:
        return (self.conversation_id, self.events[0].id)

    @property
    def newest(self) -> tuple[str, int]:
        """Copies of one turn: a later last event wins, then more events."""
        return (self.events[-1].timestamp, len(self.events))

    @property
    def started(self) -> tuple[int, float, int]:
        """When the turn ran (its first event's time), then its cell's place; a turn whose
        time cannot be read sorts after the others, by cell."""
        try:
            when = datetime.fromisoformat(self.events[0].timestamp)
        except ValueError:
            return (1, 0.0, self.cell)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return (0, when.timestamp(), self.cell)


@dataclass
class _WidgetCopy:
    """The events a saved widget state holds: a spare copy of a turn, without its record."""

    thread: str
    events: list[Any]


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
        return SavedNotebook(problems=[f"the file is not readable JSON ({_first(exc)})"])
    if not isinstance(notebook, dict):
        return SavedNotebook(
            problems=[f"the file is a JSON {type(notebook).__name__}, not a notebook"]
        )
    saved = _read(notebook)
    saved.trusted = is_trusted(text)
    return saved


def _read(notebook: Any) -> SavedNotebook:
    saved = SavedNotebook()
    state = _dict(notebook.get("metadata"), "notebook metadata", saved.problems).get(META_KEY)
    state = _dict(state, f"notebook metadata {META_KEY}", saved.problems)
    thread_settings = _dict(state.get("threads"), "saved thread settings", saved.problems)
    turns = _turns(notebook, saved)
    by_conversation: dict[str, list[_Turn]] = {}
    for turn in turns:
        by_conversation.setdefault(turn.conversation_id, []).append(turn)
    named = _names(by_conversation, thread_settings)
    for conversation_id, group in by_conversation.items():
        group.sort(key=lambda t: t.started)
        name = named[conversation_id]
        settings = group[-1].settings
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
    current = state.get("current")
    if isinstance(current, str) and current in saved.threads:
        saved.current = current
    elif turns:  # no extension: the newest turn's thread
        newest = max(turns, key=lambda t: t.started).conversation_id
        saved.current = named[newest]
    return saved


def _turns(notebook: Any, saved: SavedNotebook) -> list[_Turn]:
    """The newest copy of every readable turn in the notebook."""
    widget_states = _widget_states(notebook, saved.problems)
    found: dict[tuple[str, str], _Turn] = {}
    by_first_event: dict[str, str] = {}  # first event id -> conversation id
    orphans: list[tuple[int, str | None, str, list[Any]]] = []  # widget copies, no id
    cells = notebook.get("cells")
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict):
            saved.problems.append(f"cell {index + 1}: not a cell ({type(cell).__name__})")
            continue
        cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
        read_any, failures = False, []
        for record in _records_of_cell(cell, widget_states):
            if isinstance(record, _WidgetCopy):
                orphans.append((index, cell_id, record.thread, record.events))
                continue
            for copy in _with_displaced(record):
                try:
                    turn = _turn(copy, index, cell_id)
                except SchemaError as exc:
                    failures.append(_first(exc))
                    continue
                if turn is None:
                    continue
                read_any = True
                by_first_event[turn.events[0].id] = turn.conversation_id
                if turn.key not in found or turn.newest > found[turn.key].newest:
                    found[turn.key] = turn
        if failures and not read_any:
            saved.problems.append(f"cell {index + 1}: {failures[0]}")
    by_thread = {t.thread: t.conversation_id for t in sorted(found.values(), key=_started)}
    for index, cell_id, thread, raw_events in orphans:
        # a widget's copy has no conversation id: the turn it copies, else its thread's
        first = raw_events[0].get("id") if raw_events and isinstance(raw_events[0], dict) else None
        conversation_id = by_first_event.get(str(first)) or by_thread.get(thread, thread)
        copy = {"version": 1, "conversation_id": conversation_id, "thread": thread}
        try:
            turn = _turn({**copy, "events": raw_events}, index, cell_id)
        except SchemaError:
            continue  # a widget's state is a spare copy: the record copies were reported
        if turn is not None and (turn.key not in found or turn.newest > found[turn.key].newest):
            found[turn.key] = turn
    return list(found.values())


def _started(turn: _Turn) -> tuple[int, float, int]:
    return turn.started


def _turn(record: dict[str, Any], cell: int, cell_id: str | None) -> _Turn | None:
    events = parse_events(record)
    if not events:
        return None
    settings = parse_settings(record.get("settings"), f"cell {cell + 1} settings")
    conversation_id = str(record["conversation_id"])
    return _Turn(conversation_id, _thread_name(record), events, cell, cell_id, settings)


def _records_of_cell(cell: dict[str, Any], widget_states: Mapping[str, Any]) -> Iterator[Any]:
    metadata = cell.get("metadata")
    if isinstance(metadata, dict) and metadata.get(META_KEY) is not None:
        yield metadata[META_KEY]
    outputs = cell.get("outputs")
    for output in outputs if isinstance(outputs, list) else []:
        data = output.get("data") if isinstance(output, dict) else None
        if not isinstance(data, dict):
            continue
        record = data.get(RECORD_MIME)
        if record is not None and not (isinstance(record, dict) and record.get("superseded")):
            yield record
        view = data.get(_WIDGET_VIEW)
        if isinstance(view, dict):
            state = widget_states.get(str(view.get("model_id")))
            if isinstance(state, dict) and isinstance(state.get("events"), list):
                settings = state.get("settings")
                thread = settings.get("thread") if isinstance(settings, dict) else None
                yield _WidgetCopy(_thread_name({"thread": thread}), state["events"])


def _with_displaced(record: Any) -> Iterator[Any]:
    """A record and the earlier runs of its cell that it carries."""
    yield record
    displaced = record.get("displaced") if isinstance(record, dict) else None
    if isinstance(displaced, list):
        yield from displaced


def _widget_states(notebook: Any, problems: list[str]) -> dict[str, Any]:
    metadata = notebook.get("metadata")
    widgets = metadata.get("widgets") if isinstance(metadata, dict) else None
    saved = widgets.get(_WIDGET_STATE) if isinstance(widgets, dict) else None
    models = saved.get("state") if isinstance(saved, dict) else None
    if not isinstance(models, dict):
        return {}
    return {
        str(model_id): model["state"]
        for model_id, model in models.items()
        if isinstance(model, dict) and isinstance(model.get("state"), dict)
    }


def _names(
    by_conversation: Mapping[str, list[_Turn]], thread_settings: Mapping[str, Any]
) -> dict[str, str]:
    """A unique thread name per conversation: the name the notebook's metadata gives it, else
    its newest turn's; a conversation that lost its name to a newer one (``%chat new main``)
    is restored beside it as ``main-earlier``."""
    wanted: dict[str, str] = {}
    for name, raw in thread_settings.items():
        conversation_id = raw.get("conversation_id") if isinstance(raw, dict) else None
        if isinstance(conversation_id, str) and conversation_id in by_conversation:
            wanted[conversation_id] = name if _valid_name(name) else "main"
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


def _thread_name(record: Any) -> str:
    name = record.get("thread") if isinstance(record, dict) else None
    return name if isinstance(name, str) and _valid_name(name) else "main"


def _valid_name(name: str) -> bool:
    return 0 < len(name) <= 100 and not any(c.isspace() for c in name)


def _dict(value: Any, what: str, problems: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{what} ignored: a {type(value).__name__}, not an object")
        return {}
    return value


def _first(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0][:300] if text else type(exc).__name__


def _add_turn(saved: SavedThread, turn: _Turn) -> None:
    """Append one cell's turn, or skip it whole (noting why) if it does not fit."""
    conversation = saved.conversation
    mark = len(conversation)
    seen = {event.id for event in conversation.events}
    try:
        for event in turn.events:
            if event.id in seen:
                continue
            if isinstance(event, ChatRequest):
                conversation.answer_orphans()
            conversation.append(event)
        conversation.answer_orphans()
    except ConversationError as exc:
        conversation.truncate(mark)
        saved.problems.append(f"cell {turn.cell + 1}: {_first(exc)}")


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
