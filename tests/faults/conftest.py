"""Shared pieces of the fault suite: a sink that keeps what the user saw, and its record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jupyter_turns.engine.turn import TurnCoordinator
from jupyter_turns.model.events import MessageDelta, Part, ReasoningDelta
from jupyter_turns.model.sink import Appended, Discarded, Update
from jupyter_turns.record.format import turn_record


@dataclass
class ShownSink:
    """Mirrors what the widget shows: the event list (minus aborts) and every streamed piece."""

    events: list[dict[str, Any]] = field(default_factory=list)
    streamed: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)
    records: list[dict[str, Any]] = field(default_factory=list)

    def part(self, part: Part) -> None:
        if isinstance(part.content, MessageDelta | ReasoningDelta):
            self.streamed.append((part.content.kind, part.content.text))

    def update(self, update: Update) -> None:
        if isinstance(update, Appended):
            self.events += [e.model_dump(mode="json") for e in update.events]
        elif isinstance(update, Discarded):
            gone = set(update.event_ids)
            self.events = [e for e in self.events if e["id"] not in gone]

    def boundary(self, turn: TurnCoordinator) -> None:
        """The persistence hook: keep the record the notebook would hold."""
        self.records.append(turn_record(turn.conversation.conversation_id, "main", turn.events))

    def text(self, kind: str = "message") -> str:
        return "".join(text for k, text in self.streamed if k == kind)
