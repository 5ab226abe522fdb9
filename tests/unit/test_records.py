"""Every record the package writes carries the schema version from one place."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_turns import conversation, events
from jupyter_turns.conversation import Conversation, parse_events
from jupyter_turns.events import ChatRequest, Message
from jupyter_turns.persist import RECORD_MIME, MetadataWriter, Recorder, turn_record


def _recorder(shown: list[dict[str, Any]]) -> Recorder:
    def display(bundle: dict[str, Any], **_: Any) -> None:
        shown.append(bundle)

    return Recorder(
        thread="main",
        cell_id=None,
        metadata=MetadataWriter(lambda: None),
        notebook_state=dict,
        call_later=lambda delay, callback: None,
        display=display,
        update_display=display,
    )


def test_turn_records_conversation_records_and_stubs_share_the_schema_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(events, "SCHEMA_VERSION", 7)
    monkeypatch.setattr(conversation, "SCHEMA_VERSION", 7)  # the reader: the final output parses
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    shown: list[dict[str, Any]] = []
    recorder = _recorder(shown)
    recorder.save(lambda: turn_record("c1", "main", turn))
    recorder.finish(turn_record("c1", "main", turn))
    live, stub, final = (bundle[RECORD_MIME] for bundle in shown)

    written = [live, stub, final, Conversation(turn).to_record()]
    assert [record["version"] for record in written] == [7, 7, 7, 7]
    assert stub["superseded"] is True and stub["events"] == []


def test_a_turn_record_reads_back_as_its_events() -> None:
    turn = [ChatRequest(content="hi"), Message(content="hello")]
    record = turn_record("c1", "main", turn, settings={"model": "m"})
    assert (record["conversation_id"], record["thread"]) == ("c1", "main")
    assert parse_events(record) == turn
