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
from .mime import RECORD_MIME
from .transcript import to_html

__all__ = [
    "CONTINUES",
    "META_KEY",
    "RECORD_MIME",
    "REPLAYED",
    "join_live_parts",
    "joined_records",
    "live_part",
    "record_bundle",
    "summary",
    "turn_record",
]

META_KEY = "jupyter_turns"
REPLAYED = " · replayed"  # the end of a replayed turn's one-line summary
CONTINUES = "continues"  # a live part's key: the first event id of the turn it continues
EXTENDS = "extends"  # a live part's key: finished event id -> the streaming text it ends


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


def live_part(record: dict[str, Any], held: dict[str, str | None]) -> dict[str, Any] | None:
    """What the live ``record`` adds to what earlier writes of it hold; ``None`` when nothing
    is new. Headless, the live record is saved as such parts, each its own output, and nothing
    is sent twice while text grows (:func:`join_live_parts` puts them back together): of each
    text still streaming (a ``partial`` message or reasoning, one id while it grows) only the
    text after what was saved; a finished event that ends such a text holds only the rest of
    it, and the part's ``extends`` names the text it ends. ``held`` (event id -> the text saved
    of a streaming text, ``None`` for a finished event) is updated."""
    events: list[Any] = record.get("events") or []
    new: list[dict[str, Any]] = []
    extends: dict[str, str] = {}
    for event in events:
        key = str(event.get("id"))
        if key in held and held[key] is None:
            continue
        text = event.get("content")
        if not isinstance(text, str):  # a tool call, a result...: saved once, whole
            new.append(event)
            held[key] = None
            continue
        if _partial(event):
            saved = held.get(key) or ""
            if len(text) > len(saved):
                new.append({**event, "content": text[len(saved) :]})
                held[key] = text
            continue
        draft = _ended_draft(event, events, held)
        if draft is not None:
            extends[key] = draft
            text = text[len(held.pop(draft) or "") :]
        new.append({**event, "content": text})
        held[key] = None
    if not new:
        return None
    part = conversation_record(
        str(record["conversation_id"]),
        (),
        thread=record.get("thread", "main"),
        live=True,
        **{CONTINUES: str(events[0].get("id"))},
        **({EXTENDS: extends} if extends else {}),
    )
    return {**part, "events": new}


def _ended_draft(
    event: dict[str, Any], events: list[Any], held: dict[str, str | None]
) -> str | None:
    """The id of the saved streaming text that ``event`` (finished, of the same kind) ends:
    one no longer in the record whose text begins ``event``'s."""
    present = {str(e.get("id")) for e in events}
    content = str(event.get("content"))
    for key, saved in held.items():
        if saved and key not in present and content.startswith(saved):
            return key
    return None


def join_live_parts(head: dict[str, Any], part: dict[str, Any]) -> dict[str, Any] | None:
    """``head`` (a live record) with ``part`` (:func:`live_part`) joined to it, or ``None``
    when the part does not continue that turn. A streaming text's later pieces extend it; a
    finished event that ends one gets its text back; a streaming text followed by a finished
    event was replaced by it (the turn so far is its finished events, then what is still
    streaming)."""
    events = head.get("events")
    if (
        not isinstance(events, list)
        or not events
        or not isinstance(events[0], dict)
        or part.get("conversation_id") != head.get("conversation_id")
        or part.get(CONTINUES) != events[0].get("id")
    ):
        return None
    extends = part.get(EXTENDS)
    extends = extends if isinstance(extends, dict) else {}
    joined: list[Any] = list(events)
    where = {str(e.get("id")): i for i, e in enumerate(joined) if isinstance(e, dict)}
    for event in part.get("events") or []:
        if not isinstance(event, dict):
            continue
        key = str(event.get("id"))
        at = where.get(key, where.get(str(extends.get(key))))
        if at is not None and (key in extends or _partial(event)):
            text = f"{joined[at].get('content', '')}{event.get('content', '')}"
            event = {**event, "content": text}
        if key in where:
            joined[where[key]] = event
        else:
            where[key] = len(joined)
            joined.append(event)
    finished = [i for i, e in enumerate(joined) if not _partial(e)]
    last = finished[-1] if finished else -1
    return {**head, "events": [e for i, e in enumerate(joined) if i > last or not _partial(e)]}


def joined_records(records: Sequence[Any]) -> list[Any]:
    """A cell's output records with each live part (a headless turn saved as it grew, its
    kernel gone before the end) joined to the live record it continues; a part whose record
    is not there is dropped (it holds only the end of a turn)."""
    out: list[Any] = []
    for record in records:
        if not (isinstance(record, dict) and CONTINUES in record):
            out.append(record)
            continue
        for at in range(len(out) - 1, -1, -1):
            head = out[at]
            joined = join_live_parts(head, record) if isinstance(head, dict) else None
            if joined is not None:
                out[at] = joined
                break
    return out


def _partial(event: Any) -> bool:
    metadata = event.get("metadata") if isinstance(event, dict) else None
    return isinstance(metadata, dict) and bool(metadata.get("partial"))
