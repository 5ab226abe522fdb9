"""The saved record's format: its mime type, its metadata key, a turn's record and its final
output bundle (docs/architecture.md, "The saved schema" and "Where a conversation is saved").

Pure data, no Jupyter: the kernel writes it (:mod:`jupyter_turns.kernel.persist`), and the
readers of a saved notebook, the page's cells and undo read or rewrite it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model.conversation import parse_events
from ..model.events import ConversationEvent, conversation_record, is_replay_notice
from ..text import plural
from .transcript import to_html

__all__ = ["META_KEY", "RECORD_MIME", "REPLAYED", "record_bundle", "summary", "turn_record"]

RECORD_MIME = "application/vnd.jupyter-turns+json"
META_KEY = "jupyter_turns"
REPLAYED = " · replayed"  # the end of a replayed turn's one-line summary


def turn_record(
    conversation_id: str,
    thread: str,
    events: Sequence[ConversationEvent],
    *,
    turn: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    displaced: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The record of one cell's turn; ``displaced`` are the records of the cell's earlier runs
    (a re-run cell replaces its outputs, and its history must not go with them)."""
    record = conversation_record(conversation_id, events, thread=thread)
    if turn:
        record["turn"] = turn
    if settings:
        record["settings"] = settings  # the thread's, so a restore works without the extension
    if displaced:
        record["displaced"] = list(displaced)
    return record


def record_bundle(record: dict[str, Any]) -> dict[str, Any]:
    """The final output: the record, an expanded sanitized HTML transcript for readers without
    the extension's renderer, and a one-line summary."""
    events = parse_events(record)
    # a replay says so; its notice saying so is not counted (nbval compares it: testing.py)
    replayed = [e for e in events if is_replay_notice(e) and e.parent is None]
    return {
        RECORD_MIME: record,
        "text/html": to_html(events),
        "text/plain": summary(record, len(events) - len(replayed)) + REPLAYED * bool(replayed),
    }


def summary(record: dict[str, Any], count: int | None = None, *, live: bool = False) -> str:
    """The one-line ``text/plain`` of a record's output (``live``: the turn is running)."""
    events = len(record.get("events") or []) if count is None else count
    thread = record.get("thread", "main")
    state = " · running" if live else ""
    return f"Conversation · thread {thread} · {plural(events, 'event')}{state}"
