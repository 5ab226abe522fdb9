"""The saved-event contract both renderers follow: the schema generated from events.py, the
shared fixture record (every kind, every block kind the API sends, redacted reasoning, tool
errors, notices), and the HTML transcript drawn from it. The page's side is
js/test/contract.test.js, against the same two files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from jupyter_turns.model.conversation import parse_events
from jupyter_turns.model.events import ConversationEvent
from jupyter_turns.model.record_schema import record_schema
from jupyter_turns.record.transcript import to_html

ROOT = Path(__file__).parent.parent.parent
SCHEMA = ROOT / "docs" / "event-schema.json"
FIXTURE = ROOT / "tests" / "fixtures" / "record_all_kinds.json"


def _fixture() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(FIXTURE.read_text())
    return record


def test_the_schema_file_is_the_one_events_py_generates() -> None:
    assert json.loads(SCHEMA.read_text()) == record_schema(), (
        "docs/event-schema.json is stale: python -m jupyter_turns.model.record_schema "
        "> docs/event-schema.json"
    )


def test_the_fixture_is_a_valid_record_with_every_event_kind() -> None:
    record = _fixture()
    jsonschema.validate(record, record_schema())
    events = parse_events(record)
    kinds = {
        model.model_fields["kind"].default for model in get_args(get_args(ConversationEvent)[0])
    }
    assert {event.kind for event in events} == kinds
    blocks = {e["metadata"]["raw_block"]["type"] for e in record["events"] if e["kind"] == "block"}
    assert blocks == {
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "compaction",
    }


def test_the_schema_refuses_what_the_views_could_not_read() -> None:
    record = _fixture()
    block = next(e for e in record["events"] if e["kind"] == "block")
    block["metadata"] = {"raw_block": {"data": "no type"}}  # the shape the views once guessed
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(record, record_schema())


def test_the_html_transcript_shows_every_event_of_the_fixture() -> None:
    page = to_html(parse_events(_fixture()))
    text = re.sub(r"<[^>]+>", "", page)
    for shown in [
        "Find the population of Paris and check it.",
        "The user wants a number; search first.",
        "(redacted reasoning block)",
        "(server_tool_use block)",
        "(web_search_tool_result block)",
        "Earlier conversation summarized: 182,000 tokens → a summary of ≈ 30 tokens",
        "Summary: the user asked for the population of Paris",
        "Paris has about 2.1 million people.",
        "lookup",
        "Tool asks: Use the 2024 census? (yes, no)",
        "Answer (user): yes",
        "2,102,650",
        "Answer (policy): no answer (nobody could answer)",
        "ConnectionError: refused",
        "Not run: denied by policy.",
        "stopped here",
        "Stopped by the user.",
        "approved by Ada Lovelace",  # who clicked, as their page said
        "Undone by Ada Lovelace: restored the edited cell",
        "this version does not know: ping_v2",
        "Error (overloaded): overloaded_error: the API is busy",
    ]:
        assert shown in text, shown
    assert '<div class="jt-tool" style=' in page and 'class="jt-chip jt-chip-denied"' in page
    # the answers are open; only reasoning and long tool text fold
    assert "<details" not in page.split('<div class="jt-message">')[1].split("</div>")[0]


def test_a_result_answered_from_a_recording_says_so_on_its_chip() -> None:
    """``--replay-tools saved``: the chip reads "recorded, not run", not "skipped by policy"."""
    from jupyter_turns.model.events import Decision, ToolCallRequest, ToolCallResponse

    events = [
        ToolCallRequest(call_id="c1", name="lookup", arguments={}),
        ToolCallResponse(
            call_id="c1",
            content="2,102,650",
            decisions=[Decision(action="skipped", by="policy", detail="recorded, not run")],
        ),
    ]
    page = to_html(events)
    assert 'class="jt-chip jt-chip-skipped">recorded, not run</span>' in page
    assert "skipped by policy" not in page
