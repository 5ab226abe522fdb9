"""Where a saved notebook keeps each cell's turns, read as untrusted input.

A turn may be stored in the cell's ``metadata.jupyter_turns`` (the lab extension), its output
records (mime ``application/vnd.jupyter-turns+json``; a re-run cell's record carries its
earlier runs under ``displaced``) and the widget state nbclient saves (events only: a spare
copy). :func:`saved_turns` returns the newest readable copy of every turn; what cannot be read
becomes a note naming its cell, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..errors import SchemaError
from ..model.conversation import parse_events
from ..model.events import ConversationEvent, conversation_record
from .format import META_KEY, RECORD_MIME, joined_records
from .thread_settings import SavedSettings, parse_settings

__all__ = ["SavedTurn", "first_line", "saved_turns", "valid_thread_name"]

_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@dataclass
class SavedTurn:
    conversation_id: str
    thread: str
    events: list[ConversationEvent]
    cell: int
    cell_id: str | None
    settings: SavedSettings
    summary: dict[str, Any] = field(default_factory=dict)  # the record's "turn": usage, cycles
    displaced: bool = False  # only saved as an earlier run of its cell (a re-run replaced it)

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


def saved_turns(notebook: Any, problems: list[str]) -> list[SavedTurn]:
    """The newest copy of every readable turn in the notebook."""
    widget_states = _widget_states(notebook)
    found: dict[tuple[str, str], SavedTurn] = {}
    by_first_event: dict[str, str] = {}  # first event id -> conversation id
    orphans: list[tuple[int, str | None, str, list[Any]]] = []  # widget copies, no id
    cells = notebook.get("cells")
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict):
            problems.append(f"cell {index + 1}: not a cell ({type(cell).__name__})")
            continue
        cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
        read_any, failures = False, []
        for record in _records_of_cell(cell, widget_states):
            if isinstance(record, _WidgetCopy):
                orphans.append((index, cell_id, record.thread, record.events))
                continue
            for copy, displaced in _with_displaced(record):
                try:
                    turn = _turn(copy, index, cell_id)
                except SchemaError as exc:
                    failures.append(first_line(exc))
                    continue
                if turn is None:
                    continue
                read_any = True
                by_first_event[turn.events[0].id] = turn.conversation_id
                previous = found.get(turn.key)
                # displaced only when no copy of the turn is a current record
                turn.displaced = displaced and (previous is None or previous.displaced)
                if previous is None or turn.newest > previous.newest:
                    found[turn.key] = turn
                found[turn.key].displaced = turn.displaced
        if failures and not read_any:
            problems.append(f"cell {index + 1}: {failures[0]}")
    by_thread = {t.thread: t.conversation_id for t in sorted(found.values(), key=_started)}
    for index, cell_id, thread, raw_events in orphans:
        # a widget's copy has no conversation id: the turn it copies, else its thread's
        first = raw_events[0].get("id") if raw_events and isinstance(raw_events[0], dict) else None
        conversation_id = by_first_event.get(str(first)) or by_thread.get(thread, thread)
        copy = conversation_record(conversation_id, (), thread=thread)
        try:
            turn = _turn({**copy, "events": raw_events}, index, cell_id)
        except SchemaError:
            continue  # a widget's state is a spare copy: the record copies were reported
        if turn is not None and (turn.key not in found or turn.newest > found[turn.key].newest):
            found[turn.key] = turn
    return list(found.values())


def _started(turn: SavedTurn) -> tuple[int, float, int]:
    return turn.started


def _turn(record: dict[str, Any], cell: int, cell_id: str | None) -> SavedTurn | None:
    events = parse_events(record)
    if not events or "serve" in record:  # a %chat serve session's calls: no thread's turn
        return None
    conversation_id = str(record["conversation_id"])
    settings = parse_settings(record.get("settings"), f"cell {cell + 1} settings")
    summary = record.get("turn")
    summary = summary if isinstance(summary, dict) else {}
    thread = _thread_name(record)
    return SavedTurn(conversation_id, thread, events, cell, cell_id, settings, summary)


def _records_of_cell(cell: dict[str, Any], widget_states: Mapping[str, Any]) -> Iterator[Any]:
    metadata = cell.get("metadata")
    ours = metadata.get(META_KEY) if isinstance(metadata, dict) else None
    if ours is not None and not (isinstance(ours, dict) and set(ours) == {"provenance"}):
        yield ours  # a record (or its pointer); not a cell the model changed, stamped only
    outputs = cell.get("outputs")
    datas = (
        [o.get("data") for o in outputs if isinstance(o, dict)] if isinstance(outputs, list) else []
    )
    records = [d.get(RECORD_MIME) for d in datas if isinstance(d, dict) and RECORD_MIME in d]
    for record in joined_records(records):
        if record is not None and not (isinstance(record, dict) and record.get("superseded")):
            yield record
    for data in datas:
        if not isinstance(data, dict):
            continue
        view = data.get(_WIDGET_VIEW)
        if isinstance(view, dict):
            state = widget_states.get(str(view.get("model_id")))
            if isinstance(state, dict) and isinstance(state.get("events"), list):
                settings = state.get("settings")
                thread = settings.get("thread") if isinstance(settings, dict) else None
                yield _WidgetCopy(_thread_name({"thread": thread}), state["events"])


def _with_displaced(record: Any) -> Iterator[tuple[Any, bool]]:
    """A record and the earlier runs of its cell that it carries (marked True)."""
    yield record, False
    displaced = record.get("displaced") if isinstance(record, dict) else None
    if isinstance(displaced, list):
        yield from ((earlier, True) for earlier in displaced)


def _widget_states(notebook: Any) -> dict[str, Any]:
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


def _thread_name(record: Any) -> str:
    name = record.get("thread") if isinstance(record, dict) else None
    return name if isinstance(name, str) and valid_thread_name(name) else "main"


def valid_thread_name(name: str) -> bool:
    return 0 < len(name) <= 100 and not any(c.isspace() for c in name)


def first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0][:300] if text else type(exc).__name__
