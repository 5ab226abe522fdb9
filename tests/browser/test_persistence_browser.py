"""Saving a chat into the notebook in JupyterLab: the file on disk, a restarted kernel that
continues the thread by itself, and the transcript a reader sees without a kernel."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from .chat import (
    LOAD,
    RECORD_MIME,
    SETUP,
    chat_cell,
    final_record,
    print_cell,
    run_setup,
    start_chat,
)
from .lab import Lab

pytestmark = pytest.mark.browser

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

FIRST = "script = [cycle(reasoning('A capital question.'), message('Paris is the capital.'))]"
# Defined after the restart: nothing of the first kernel's namespace is left.
SECOND = (
    "from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message\n"
    "script2 = ScriptedProvider([cycle(message('About 2.1 million people.'))])"
)
SEEN = (
    "request = script2.requests[0]\n"
    "print([e.kind for e in request.events])\n"
    "print(request.events[0].content, '|', request.events[2].content)"
)


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    return [event["kind"] for event in events]


def test_the_saved_file_holds_the_turn_and_a_restarted_kernel_continues_it(lab: Lab) -> None:
    lab.write_notebook(
        "persist.ipynb",
        [
            LOAD,
            SETUP,
            FIRST,
            chat_cell("What is the capital of France?"),
            SECOND,
            chat_cell("How many people live there?", script="script2"),
            SEEN,
        ],
    )
    lab.open("persist.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    lab.wait_cell_idle(3)
    expect(root.locator(".jt-message")).to_have_text("Paris is the capital.")
    lab.save()

    saved = lab.read_notebook("persist.ipynb")
    cell = saved.cells[3]
    meta = cell.metadata["jupyter_turns"]
    assert meta["version"] == 1 and meta["thread"] == "main"
    assert _kinds(meta["events"]) == ["chat_request", "reasoning", "message"]
    assert meta["events"][2]["content"] == "Paris is the capital."
    threads = saved.metadata["jupyter_turns"]
    assert threads["current"] == "main"
    assert threads["threads"]["main"]["conversation_id"] == meta["conversation_id"]
    mimes = [list(o.get("data", {})) for o in cell.outputs]
    assert any(WIDGET_MIME in m for m in mimes) and any(RECORD_MIME in m for m in mimes)
    record = final_record(cell)
    assert record["conversation_id"] == meta["conversation_id"]
    assert [e["id"] for e in record["events"]] == [e["id"] for e in meta["events"]]

    lab.restart_kernel()
    lab.run_cell(0)
    lab.run_cell(4)
    follow = start_chat(lab, 5)
    lab.wait_cell_idle(5)
    expect(follow.locator(".jt-message")).to_have_text("About 2.1 million people.")
    assert print_cell(lab, 6).splitlines() == [
        "['chat_request', 'reasoning', 'message', 'chat_request']",
        "What is the capital of France? | Paris is the capital.",
    ]
    lab.save()
    later = lab.read_notebook("persist.ipynb")
    continued = later.cells[5].metadata["jupyter_turns"]
    assert continued["conversation_id"] == meta["conversation_id"]  # the same thread
    assert _kinds(continued["events"]) == ["chat_request", "message"]


SHOWN = (
    "script = [cycle(reasoning('Two small numbers.'), message('Let me **add** them.'),"
    " tool_call('add', {'a': 2, 'b': 3})), cycle(message('The sum is **5**.'))]"
)


def test_without_a_kernel_the_reopened_notebook_shows_the_folded_transcript(lab: Lab) -> None:
    lab.write_notebook("read.ipynb", [LOAD, SETUP, SHOWN, chat_cell("Add 2 and 3")])
    lab.open("read.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    root.get_by_role("button", name="Approve", exact=True).click()
    lab.wait_cell_idle(3)
    lab.save()

    lab.close_and_reopen("read.ipynb")
    assert lab.kernel_status() is None
    record = lab.cell_output(3).locator("details").filter(has_text="Conversation record")
    expect(record).to_have_count(1)
    summary = record.locator("summary")
    expect(summary).to_have_text(re.compile(r"^Conversation record · thread main · \d+ events$"))
    assert record.get_attribute("open") is None  # folded until the reader opens it
    expect(record.get_by_text("The sum is")).to_be_hidden()
    summary.click()
    for text in ("Add 2 and 3", "Two small numbers.", "Let me add them.", "The sum is 5."):
        expect(record.get_by_text(text, exact=True)).to_be_visible()
    expect(record.locator("strong", has_text="5")).to_be_visible()  # markdown, not raw text
    expect(record).to_contain_text("Tool call add")
    expect(record).to_contain_text("Tool result (done; approved by user)")
    lab.cell(3).scroll_into_view_if_needed()
    lab.screenshot("reopened-without-kernel.png")
    assert lab.unexpected_page_errors() == []
