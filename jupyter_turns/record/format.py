"""The saved record's format: its mime type, its metadata key, a turn's record and its final
output bundle (docs/architecture.md, "The saved schema" and "Where a conversation is saved").

Pure data, no Jupyter: the kernel writes it (:mod:`jupyter_turns.kernel.persist`), and the
readers of a saved notebook, the page's cells and undo read or rewrite it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

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
    "end_part",
    "is_final",
    "join_live_parts",
    "joined_records",
    "live_part",
    "record_bundle",
    "record_html",
    "summary",
    "turn_record",
]

META_KEY = "jupyter_turns"
REPLAYED = " · replayed"  # the end of a replayed turn's one-line summary
CONTINUES = "continues"  # a live part's key: the first event id of the turn it continues
EXTENDS = "extends"  # a live part's key: finished event id -> the streaming text it ends
ORDER = "order"  # the last part's key: the finished record's event ids, in order


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


def record_bundle(record: dict[str, Any], *, html: bool = True) -> dict[str, Any]:
    """The final output: the record, an expanded sanitized HTML transcript for readers without
    the extension's renderer, and a one-line summary. ``html=False`` leaves the transcript out
    where the Jupyter server adds it as it saves the notebook
    (:mod:`jupyter_turns.server_extension`): the same :func:`record_html`, not sent by the
    kernel."""
    events = parse_events(record)
    # a replay says so; its notice saying so is not counted (nbval compares it: testing.py)
    replayed = [e for e in events if is_replay_notice(e) and e.parent is None]
    plain = summary(record, len(events) - len(replayed)) + REPLAYED * bool(replayed)
    if not html:
        return {RECORD_MIME: record, "text/plain": plain}
    return {RECORD_MIME: record, "text/html": to_html(events), "text/plain": plain}


def record_html(record: dict[str, Any]) -> str:
    """A finished record's HTML transcript: its final bundle's ``text/html``."""
    return to_html(parse_events(record))


def is_final(record: Any) -> TypeGuard[dict[str, Any]]:
    """Whether ``record`` (an output's record data) is a finished turn's: not the live record
    of a running or killed turn, nor a live part of one."""
    return isinstance(record, dict) and record.get("live") is not True and CONTINUES not in record


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
    new, extends = _new_since(events, held, ended=False)
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


def end_part(record: dict[str, Any], held: dict[str, str | None]) -> dict[str, Any]:
    """The last part of a turn saved as live parts: what its finished ``record`` adds to them
    (as :func:`live_part`; a text cut short by a stop ends its streaming text too), with the
    record's own keys (``turn``, ``settings``), not ``live``, and the record's event ids in
    order (``order``: what the parts held and no longer belongs, a streaming text no event
    took over, is left out). Joined after the parts it makes the finished record, and the text
    the parts hold is not sent again."""
    events: list[Any] = record.get("events") or []
    new, extends = _new_since(events, held, ended=True)
    own = {k: v for k, v in record.items() if k not in ("events", "live", "displaced")}
    first = {CONTINUES: str(events[0].get("id"))} if events else {}
    order = [str(e.get("id")) for e in events]
    return {**own, **first, **({EXTENDS: extends} if extends else {}), ORDER: order, "events": new}


def _new_since(
    events: list[Any], held: dict[str, str | None], *, ended: bool
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The events (and pieces of text) ``held`` lacks, and which streaming text each finished
    one ends (``held`` updated). ``ended``: the turn is over, no text streams any more."""
    new: list[dict[str, Any]] = []
    extends: dict[str, str] = {}
    present: set[str] | None = None  # the record's event ids, once a finished text needs them
    for event in events:
        key = str(event.get("id"))
        if key in held and held[key] is None:
            continue
        text = event.get("content")
        if not isinstance(text, str):  # a tool call, a result...: saved once, whole
            new.append(event)
            held[key] = None
            continue
        if _partial(event) and not ended:
            saved = held.get(key) or ""
            if len(text) > len(saved):
                new.append({**event, "content": text[len(saved) :]})
                held[key] = text
            continue
        if present is None:
            present = {str(e.get("id")) for e in events}
        draft = _ended_draft(event, present, held)
        if draft is not None:
            extends[key] = draft
            text = text[len(held.pop(draft) or "") :]
        new.append({**event, "content": text})
        held[key] = None
    return new, extends


def _ended_draft(
    event: dict[str, Any], present: set[str], held: dict[str, str | None]
) -> str | None:
    """The id of the saved streaming text that ``event`` (finished, of the same kind) ends:
    one no longer in the record (whose ids are ``present``) whose text begins ``event``'s."""
    content = str(event.get("content"))
    for key, saved in held.items():
        if saved and key not in present and content.startswith(saved):
            return key
    return None


def join_live_parts(head: dict[str, Any], part: dict[str, Any]) -> dict[str, Any] | None:
    """``head`` (a live record) with ``part`` (:func:`live_part`, :func:`end_part`) joined to
    it, or ``None`` when the part does not continue that turn. A streaming text's later pieces
    extend it; a finished event that ends one takes its place with its text back; a streaming
    text followed by a finished event was replaced by it (the turn so far is its finished
    events, then what is still streaming). A turn's last part (not ``live``) makes it the
    finished record: its events as the part's ``order`` lists them, with its ``turn`` and
    ``settings``."""
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
        ends = where.pop(str(extends[key]), None) if key in extends else None
        at = where.get(key) if ends is None else ends
        if at is not None and (ends is not None or _partial(event)):
            event = {
                **event,
                "content": f"{joined[at].get('content', '')}{event.get('content', '')}",
            }
        if at is None:
            at = len(joined)
            joined.append(event)
        else:
            joined[at] = event
        where[key] = at
    if part.get("live") is True:
        finished = [i for i, e in enumerate(joined) if not _partial(e)]
        last = finished[-1] if finished else -1
        kept = [e for i, e in enumerate(joined) if i > last or not _partial(e)]
        return {**head, "events": kept}
    order = part.get(ORDER)
    by_id = {str(e.get("id")): e for e in joined if isinstance(e, dict)}
    ended = [by_id[str(i)] for i in order if str(i) in by_id] if isinstance(order, list) else []
    own = {k: v for k, v in part.items() if k not in (CONTINUES, EXTENDS, ORDER, "events")}
    return {**{k: v for k, v in head.items() if k != "live"}, **own, "events": ended}


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
