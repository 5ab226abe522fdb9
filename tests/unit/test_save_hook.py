"""The server's pre-save hook (jupyter_turns/server_extension/): a finished record the kernel sent
without its HTML transcript gets it as the notebook is saved, the same transcript the kernel would
have sent; nothing else in the notebook changes, and a record that does not read is saved as
it is."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbconvert import HTMLExporter

from jupyter_turns.record.format import CONTINUES, RECORD_MIME, record_bundle, record_html
from jupyter_turns.server_extension import add_transcripts

FIXTURE = Path(__file__).parent.parent / "fixtures" / "record_all_kinds.json"
ANSWER = "Paris has about <strong>2.1 million</strong> people."


def _output(data: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": {}}


def _model(*outputs: dict[str, Any]) -> dict[str, Any]:
    """A notebook model as the contents manager gets it from a page: one code cell, its JSON as
    the page sends it (each object's keys in the order the kernel sent them)."""
    cell = nbformat.v4.new_code_cell("%%chat\nFind the population of Paris", execution_count=1)
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    return {"type": "notebook", "format": "json", "content": json.loads(json.dumps(notebook))}


def _record() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(FIXTURE.read_text())
    return record


def test_a_record_saved_without_its_transcript_gets_the_one_the_kernel_would_have_sent() -> None:
    full = record_bundle(_record())
    model = _model(_output(record_bundle(_record(), html=False)))
    assert add_transcripts(model) == 1
    data = model["content"]["cells"][0]["outputs"][0]["data"]
    assert data == full  # the record, its summary, and the same transcript
    assert add_transcripts(model) == 0  # saved again: nothing to add

    page, _ = HTMLExporter().from_notebook_node(nbformat.from_dict(model["content"]))
    assert ANSWER in page  # nbconvert (and GitHub, VS Code) read it at once


def test_only_a_finished_record_without_a_transcript_gets_one() -> None:
    record = _record()
    live = {**record, "live": True}
    part = {**record, CONTINUES: record["events"][0]["id"], "live": True}
    end = {**record, CONTINUES: record["events"][0]["id"]}  # a turn's last part
    kept = _output({**record_bundle(record), "text/html": "<p>as it was</p>"})
    outputs = [
        _output({RECORD_MIME: live, "text/plain": "running"}),
        _output({RECORD_MIME: part, "text/plain": ""}),
        _output({RECORD_MIME: end, "text/plain": ""}),
        kept,
        _output({"text/plain": "42"}),
        {"output_type": "stream", "name": "stdout", "text": "hello\n"},
    ]
    model = _model(*outputs)
    before = copy.deepcopy(model)
    assert add_transcripts(model) == 0
    assert model == before
    assert add_transcripts({"type": "file", "content": "a text file"}) == 0
    assert add_transcripts({"type": "notebook", "content": None}) == 0  # saved without content


def test_a_record_that_does_not_read_is_saved_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    crafted = {"version": 2, "conversation_id": "c", "events": [{"kind": "no such kind"}]}
    model = _model(_output({RECORD_MIME: crafted, "text/plain": "?"}))
    before = copy.deepcopy(model)
    with caplog.at_level(logging.WARNING):
        assert add_transcripts(model) == 0
    assert model == before
    assert "no HTML transcript for a saved record" in caplog.text


def test_the_transcript_is_the_same_whatever_order_the_records_keys_arrive_in() -> None:
    """A shared document (real-time collaboration) hands the server the record with its keys
    in an order of its own; nbformat saves them sorted. The transcript shows a call's
    arguments as the saved record holds them, so the server's is the kernel's."""
    record = _record()
    calls = [e for e in record["events"] if len(e.get("arguments") or {}) > 1]
    assert calls, "the fixture has a call with two arguments or more"
    shuffled = copy.deepcopy(record)
    for event in shuffled["events"]:
        if "arguments" in event:
            event["arguments"] = dict(reversed(list(event["arguments"].items())))
    assert record_html(shuffled) == record_html(record)
    assert record_html(json.loads(json.dumps(record, sort_keys=True))) == record_html(record)
