"""Conversation events (what is persisted, schema v2), and the stream events re-exported.

The EventBuilder turns the flushed blocks of a provider's stream (:mod:`.stream_events`, whose
names this module re-exports) into conversation events: frozen pydantic models with a ``kind``
literal; their JSON form is the persisted schema (see docs/architecture.md, "The saved schema").

Version 2 added the ``undo``, ``rewind`` and ``review`` events and, on tool responses, ``preview``,
``cell`` and ``outputs``, all optional: a version 1 record is a valid version 2 record, so the
migration from 1 is the identity and reading accepts both (:data:`READABLE_VERSIONS`).
"""

from __future__ import annotations

import unicodedata
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from ..text import plural
from . import schema_parts as _schema
from .content import MAX_IMAGES, Attachment, ImageData
from .schema_parts import COMPACTION as _COMPACTION
from .schema_parts import PARTIAL as _PARTIAL
from .schema_parts import RAW_BLOCK as _RAW_BLOCK
from .schema_parts import SCRIPTED as _SCRIPTED
from .schema_parts import metadata_field as _metadata
from .schema_parts import optional_field as _optional
from .stream_events import (
    Finished,
    FinishReason,
    Flush,
    MessageDelta,
    Part,
    ReasoningDelta,
    StreamEvent,
    ToolCall,
    ToolInputDelta,
    Usage,
)

__all__ = [
    "API_KINDS",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "SCRIPTED",
    "Block",
    "ChatRequest",
    "ConversationEvent",
    "Decision",
    "ErrorEvent",
    "FinishReason",
    "Finished",
    "Flush",
    "InquiryRequest",
    "InquiryResponse",
    "Message",
    "MessageDelta",
    "Notice",
    "Part",
    "Reasoning",
    "ReasoningDelta",
    "Review",
    "Rewind",
    "StreamEvent",
    "ToolCall",
    "ToolCallRequest",
    "ToolCallResponse",
    "ToolInputDelta",
    "Undo",
    "Usage",
    "Who",
    "compaction_note",
    "conversation_record",
    "event_adapter",
    "is_replay_notice",
    "is_scripted",
    "new_id",
    "now_iso",
    "tally",
]

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # every version ever written


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# --------------------------------------------------------------------------- conversation events


class _Event(BaseModel):
    """What every event has, and ``parent`` where a sub-agent's nested turn made it.

    Every field this package writes is declared; the optional ones (``parent`` here, a tool
    response's ``preview``, ``subagent``...) are None when they do not apply and then not
    saved. ``extra="allow"`` is only for keys this version does not know (a record from a
    newer version): they are kept as they are and saved again, so reading and re-saving a
    notebook loses nothing, and nothing here reads them (``model_extra``)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str = Field(default_factory=new_id)
    timestamp: str = Field(default_factory=now_iso)
    parent: str | None = _optional(_schema.PARENT)


class ChatRequest(_Event):
    kind: Literal["chat_request"] = "chat_request"
    content: str
    attachments: list[Attachment] = Field(default_factory=list)  # sent as labeled data


class Reasoning(_Event):
    kind: Literal["reasoning"] = "reasoning"
    content: str  # empty when the provider sent none to show (the signature still counts)
    metadata: dict[str, Any] = _metadata(
        signature={"type": "string", "description": "sent back byte for byte"},
        partial=_PARTIAL,
        scripted=_SCRIPTED,
    )


class Message(_Event):
    kind: Literal["message"] = "message"
    content: str
    metadata: dict[str, Any] = _metadata(
        partial=_PARTIAL,
        citations={"type": "array", "items": {"type": "object"}},
        scripted=_SCRIPTED,
    )


class Block(_Event):
    """An opaque provider block (redacted reasoning, server tool use, a compaction summary...)
    kept to send back."""

    kind: Literal["block"] = "block"
    metadata: dict[str, Any] = _metadata(
        raw_block=_RAW_BLOCK, compaction=_COMPACTION, scripted=_SCRIPTED
    )


class ToolCallRequest(_Event):
    kind: Literal["tool_call_request"] = "tool_call_request"
    call_id: str
    name: str
    arguments: dict[str, Any]
    metadata: dict[str, Any] = _metadata(
        raw_block=_RAW_BLOCK,
        raw_arguments={"type": "string", "description": "arguments that were not valid JSON"},
        scripted=_SCRIPTED,
        client={
            "type": "string",
            "description": "the MCP client that made the call (%chat serve), as it named itself",
        },
        call={"type": "integer", "description": "the call's number in its %chat serve session"},
    )


WHO_MAX_CHARS = 80  # a name longer than this is cut: it is a label in a chip


def _label(value: object) -> str:
    """Plain one-line text of at most :data:`WHO_MAX_CHARS` characters: control and format
    characters (newlines, bidi overrides, zero-width joiners) dropped, runs of spaces joined."""
    if not isinstance(value, str):
        return ""
    spaced = (" " if c.isspace() else c for c in value)
    kept = "".join(c for c in spaced if unicodedata.category(c)[0] != "C")
    return " ".join(kept.split())[:WHO_MAX_CHARS].strip()


class Who(BaseModel):
    """Who clicked, as the page reported it (JupyterLab's current user): a label shown in the
    card and saved, never a permission (any page can claim any name)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    username: str = ""

    @classmethod
    def from_page(cls, value: object) -> Who | None:
        """The identity a page sent, sanitized (text only, length-capped); None when it sent
        none usable (the page then names nobody: "you")."""
        if not isinstance(value, dict):
            return None
        name, username = _label(value.get("name")), _label(value.get("username"))
        if not (name or username):
            return None
        return cls(name=name or username, username=username)


class Decision(BaseModel):
    """One decision about a tool call: what happened and who decided (the user or a policy)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    action: Literal[
        "approved",
        "skipped",
        "edited",
        "always_allowed",
        "denied",
        "delivered",
        "withheld",
        "result_edited",
        "cancelled",
        "restarted",
        "timed_out",
    ]
    by: Literal["user", "policy"]
    detail: str | None = None
    who: Who | None = _optional(_schema.WHO)  # the person whose click it was, as their page said


ToolStatus: TypeAlias = Literal["done", "error", "cancelled", "skipped", "timeout"]


class ToolCallResponse(_Event):
    kind: Literal["tool_call_response"] = "tool_call_response"
    call_id: str
    content: str
    is_error: bool = False
    status: ToolStatus = "done"
    decisions: list[Decision] = Field(default_factory=list)
    elapsed: float | None = None
    images: list[ImageData] = Field(default_factory=list, max_length=MAX_IMAGES)
    # saved only when they apply
    preview: dict[str, Any] | None = _optional(_schema.PREVIEW)
    subagent: dict[str, Any] | None = _optional(_schema.SUBAGENT)
    cell: dict[str, Any] | None = _optional(_schema.CELL)
    outputs: list[dict[str, Any]] | None = _optional(_schema.OUTPUTS)
    state: dict[str, Any] | None = _optional(_schema.STATE)
    replay: dict[str, Any] | None = _optional(_schema.REPLAY)
    builtin: bool | None = _optional(_schema.BUILTIN)  # None: no tool of that name was offered

    @model_validator(mode="before")
    @classmethod
    def _an_error_is_never_done(cls, data: Any) -> Any:
        """An error result (``is_error``) is never ``done``: its status says ``error`` (a
        record an older version wrote, or one crafted; the page's twin is responseStatus in
        js/src/protocol/fields.js). Skipped, cancelled and timed-out calls keep theirs."""
        error = isinstance(data, dict) and data.get("is_error") is True
        if error and data.get("status", "done") == "done":
            return {**data, "status": "error"}
        return data


class InquiryRequest(_Event):
    kind: Literal["inquiry_request"] = "inquiry_request"
    inquiry_id: str
    call_id: str
    question: str
    choices: list[str] | None = None


class InquiryResponse(_Event):
    kind: Literal["inquiry_response"] = "inquiry_response"
    inquiry_id: str
    call_id: str
    answer: str | None  # None: nobody could answer (a headless run)
    by: Literal["user", "policy"] = "user"


class Notice(_Event):
    """A line for the reader (stopped by the user, denied by policy...); never sent to the model."""

    kind: Literal["notice"] = "notice"
    level: Literal["info", "warning"] = "info"
    text: str
    data: Any = None  # what the notice is about, kept verbatim (e.g. unknown API events)


class Undo(_Event):
    """A step the model took was undone (``%chat undo`` or the card's Undo button): what was
    reverted and, plainly, what could not be (in-place changes, files, other side effects).
    For the reader; the model hears of it in its next request."""

    kind: Literal["undo"] = "undo"
    call_id: str
    tool: str
    done: list[str] = Field(default_factory=list)
    not_undone: list[str] = Field(default_factory=list)
    by: Literal["user"] = "user"
    who: Who | None = _optional(_schema.WHO)  # whose Undo click it was, as their page said


class Rewind(_Event):
    """Turns of the thread were taken back (``%chat rewind`` or a saved card's "Rewind to
    before this turn"): each turn of ``requests`` (from its request up to the next one) stays
    for readers, marked rewound, and is never sent again
    (:func:`jupyter_turns.engine.window.rewound`). Their steps were undone newest first:
    ``done`` and, plainly, ``not_undone`` say how that went. ``by="rerun"``: a chat cell whose
    earlier turn came before them ran again and took that turn's place
    (:func:`jupyter_turns.engine.window.replacement`); nothing was undone."""

    kind: Literal["rewind"] = "rewind"
    requests: list[str]  # the top-level chat_request ids of the turns taken back
    turn: int  # the number of the first of them in the thread (1: its first turn)
    done: list[str] = Field(default_factory=list)
    not_undone: list[str] = Field(default_factory=list)
    by: Literal["user", "rerun"] = "user"
    who: Who | None = _optional(_schema.WHO)  # whose click it was, as their page said


class Review(_Event):
    """The user kept changes of a turn made under ``--edits review`` (the review panel's Keep,
    Keep all): the calls in ``kept`` stand as they are. A change undone there is an ``undo``
    event of its call, as from a card's Undo; a change named by neither is still unreviewed."""

    kind: Literal["review"] = "review"
    kept: list[str]  # the call ids of the changes kept by this click
    by: Literal["user"] = "user"
    who: Who | None = _optional(_schema.WHO)  # whose click it was, as their page said


class ErrorEvent(_Event):
    """A failure the user must see (auth error, bad request...); not sent to the model."""

    kind: Literal["error"] = "error"
    message: str
    error_type: str = "error"


ConversationEvent: TypeAlias = Annotated[
    ChatRequest
    | Reasoning
    | Message
    | Block
    | ToolCallRequest
    | ToolCallResponse
    | InquiryRequest
    | InquiryResponse
    | Notice
    | Undo
    | Rewind
    | Review
    | ErrorEvent,
    Field(discriminator="kind"),
]

# The kinds that become part of the model's messages; the rest are for readers only.
API_KINDS = frozenset(
    {"chat_request", "reasoning", "message", "block", "tool_call_request", "tool_call_response"}
)

event_adapter: TypeAdapter[ConversationEvent] = TypeAdapter(ConversationEvent)


def compaction_note(event: ConversationEvent) -> dict[str, Any]:
    """A compaction block's ``metadata.compaction`` (how it came about, sizes); else ``{}``."""
    note = event.metadata.get("compaction") if isinstance(event, Block) else None
    return note if isinstance(note, dict) else {}


def tally(events: Iterable[ConversationEvent]) -> str:
    """``2 turns, 2 answers, 1 tool call``: what a thread holds, in the words a person uses
    (the thread's own events; a sub-agent's nested ones are inside its call). Tool calls are
    named only when there are any."""
    counts = {"chat_request": 0, "message": 0, "tool_call_request": 0}
    for event in events:
        if event.parent is None and event.kind in counts:
            counts[event.kind] += 1
    words = [plural(counts["chat_request"], "turn"), plural(counts["message"], "answer")]
    if counts["tool_call_request"]:
        words.append(plural(counts["tool_call_request"], "tool call"))
    return ", ".join(words)


SCRIPTED = "scripted"  # the scripted provider's name, and the metadata key of what it wrote


def is_scripted(event: ConversationEvent) -> bool:
    """Whether the scripted provider, not a model, wrote ``event`` (``metadata.scripted``)."""
    metadata = getattr(event, "metadata", None)
    return isinstance(metadata, dict) and metadata.get(SCRIPTED) is True


def is_replay_notice(event: ConversationEvent) -> bool:
    """Whether ``event`` is the notice that opens a replayed turn (``replay.replay_notice``)."""
    return (
        isinstance(event, Notice) and isinstance(event.data, dict) and "replayed_from" in event.data
    )


def conversation_record(
    conversation_id: str, events: Iterable[ConversationEvent], **fields: Any
) -> dict[str, Any]:
    """The persisted form of ``events``: ``{"version": SCHEMA_VERSION, "conversation_id",
    "events", **fields}`` — every record and stub this package writes is made here."""
    return {
        "version": SCHEMA_VERSION,
        "conversation_id": conversation_id,
        "events": [event.model_dump(mode="json") for event in events],
        **fields,
    }
