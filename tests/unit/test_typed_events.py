"""Saved events declare every field this package writes (docs/architecture.md, "The saved
schema"): the records saved before (the fixtures, the example notebooks' outputs) read into
declared fields and save again byte for byte; an optional field that does not apply is not
saved; a key this version does not know (a newer file, a crafted one) is kept as it is and
read by nothing; a declared field of the wrong type is refused when the record is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_turns.errors import SchemaError
from jupyter_turns.model.conversation import parse_events
from jupyter_turns.model.events import ToolCallResponse, conversation_record
from jupyter_turns.record.format import RECORD_MIME

ROOT = Path(__file__).parents[2]
FIXTURES = [
    ROOT / "tests" / "fixtures" / name for name in ("record_all_kinds.json", "record_v1.json")
]


def _saved_records() -> list[tuple[str, dict[str, Any]]]:
    """Every record saved before this change: the fixtures and the example notebooks' cells."""
    records = [(path.name, json.loads(path.read_text())) for path in FIXTURES]
    for notebook in sorted((ROOT / "examples").rglob("*.ipynb")):
        for number, cell in enumerate(json.loads(notebook.read_text())["cells"]):
            for output in cell.get("outputs", []):
                record = output.get("data", {}).get(RECORD_MIME)
                if record:
                    records.append((f"{notebook.name} cell {number}", record))
    return records


RECORDS = _saved_records()


def test_the_saved_records_cover_every_optional_field() -> None:
    keys = {key for _, record in RECORDS for event in record["events"] for key in event}
    optional = {"parent", "preview", "subagent", "cell", "outputs", "state", "replay"}
    assert optional <= keys


@pytest.mark.parametrize(("name", "record"), RECORDS, ids=[name for name, _ in RECORDS])
def test_every_key_a_saved_record_holds_is_a_declared_field(
    name: str, record: dict[str, Any]
) -> None:
    for event in parse_events(record):
        assert event.model_extra == {}, (name, event.kind)


WRITTEN = [(name, record) for name, record in RECORDS if not name.endswith(".json")]


@pytest.mark.parametrize(("name", "record"), WRITTEN, ids=[name for name, _ in WRITTEN])
def test_a_notebook_record_read_and_saved_again_is_byte_for_byte_the_same(
    name: str, record: dict[str, Any]
) -> None:
    """Records this package wrote before (the example notebooks' outputs; Jupyter saves them
    with sorted keys) come back byte for byte: no ``null`` added, nothing lost."""
    again = conversation_record(record["conversation_id"], parse_events(record))["events"]
    assert json.dumps(again, sort_keys=True) == json.dumps(record["events"], sort_keys=True)


def test_an_optional_field_is_saved_only_when_it_applies() -> None:
    plain = ToolCallResponse(call_id="c1", content="4").model_dump(mode="json")
    assert not {"parent", "preview", "subagent", "cell", "outputs", "state", "replay"} & set(plain)
    assert "elapsed" in plain  # a declared field that is not optional is saved as null
    nested = ToolCallResponse(call_id="c2", content="4", state={"created": []}, parent="c1")
    saved = nested.model_dump(mode="json")
    assert saved["state"] == {"created": []} and saved["parent"] == "c1"


def test_a_key_from_a_newer_file_is_kept_and_saved_again() -> None:
    record = json.loads(FIXTURES[0].read_text())
    record["events"][0]["from_a_newer_version"] = {"kept": True}
    events = parse_events(record)
    assert events[0].model_extra == {"from_a_newer_version": {"kept": True}}
    again = conversation_record(record["conversation_id"], events)
    assert again["events"][0]["from_a_newer_version"] == {"kept": True}


@pytest.mark.parametrize(
    ("key", "value"),
    [("parent", 7), ("parent", ["toolu_1"]), ("replay", "same"), ("subagent", [1, 2])],
)
def test_a_crafted_optional_field_of_the_wrong_type_is_refused_naming_it(
    key: str, value: Any
) -> None:
    record = json.loads(FIXTURES[0].read_text())
    response = next(e for e in record["events"] if e["kind"] == "tool_call_response")
    response[key] = value
    with pytest.raises(SchemaError, match=key):
        parse_events(record)
