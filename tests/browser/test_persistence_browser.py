"""Saving a chat into the notebook in JupyterLab: the file on disk, a restarted kernel that
continues the thread by itself, and the transcript a reader sees without a kernel."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from playwright.sync_api import Locator, expect

from jupyter_turns.record.notebook import load
from tests.support.notebook_code import SLOW_TOOL

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
    # one output: the widget while the turn ran, replaced in place by the record bundle
    assert [sorted(o.get("data", {})) for o in cell.outputs] == [
        sorted([RECORD_MIME, "text/html", "text/plain"])
    ]
    record = final_record(cell)
    assert record["version"] == 2 and record["thread"] == "main"
    assert _kinds(record["events"]) == ["chat_request", "reasoning", "message"]
    assert record["events"][2]["content"] == "Paris is the capital."
    # the cell's metadata points at it (the record is not stored twice in the file)
    meta = cell.metadata["jupyter_turns"]
    assert meta == {
        "version": 2,
        "conversation_id": record["conversation_id"],
        "thread": "main",
        "in_output": RECORD_MIME,
    }
    threads = saved.metadata["jupyter_turns"]
    assert threads["current"] == "main"
    assert threads["threads"]["main"]["conversation_id"] == meta["conversation_id"]

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
    continued = final_record(later.cells[5])
    assert continued["conversation_id"] == meta["conversation_id"]  # the same thread
    assert _kinds(continued["events"]) == ["chat_request", "message"]

    # Clear All Outputs: each record moves into its cell's metadata, and the file still
    # restores the whole thread
    lab.command("notebook:clear-all-cell-outputs")
    expect(lab.cell_output(3).locator(".jt-root")).to_have_count(0)
    lab.save()
    cleared = lab.read_notebook("persist.ipynb")
    assert _kinds(cleared.cells[3].metadata["jupyter_turns"]["events"]) == _kinds(record["events"])
    assert not any(cell.get("outputs") for cell in cleared.cells)
    restored = load(lab.path("persist.ipynb"))["main"]
    assert _kinds([e.model_dump() for e in restored.events]) == [
        "chat_request",
        "reasoning",
        "message",
        "chat_request",
        "message",
    ]


SHOWN = (
    "script = [cycle(reasoning('Two small numbers.'), message('Let me **add** them.'),"
    " tool_call('add', {'a': 2, 'b': 3})), cycle(message('The sum is **5**.'))]"
)


def test_without_a_kernel_the_reopened_notebook_shows_the_conversation_as_it_was(
    lab: Lab,
) -> None:
    lab.write_notebook("read.ipynb", [LOAD, SETUP, SHOWN, chat_cell("Add 2 and 3")])
    lab.open("read.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    root.get_by_role("button", name="Approve", exact=True).click()
    lab.wait_cell_idle(3)
    expect(root.locator(".jt-message").last).to_have_text("The sum is 5.")
    lab.save()

    for kernel in (False, True):
        lab.close_and_reopen("read.ipynb", kernel=kernel)
        if not kernel:
            assert lab.kernel_status() is None
        output = lab.cell_output(3)
        saved = output.locator(".jt-root.jt-saved")
        # the answer shows at once, without a click, drawn by the record renderer
        expect(saved.locator(".jt-message").last).to_have_text("The sum is 5.")
        expect(saved.locator(".jt-message strong", has_text="5")).to_be_visible()
        expect(saved.locator(".jt-request")).to_contain_text("Add 2 and 3")
        card = saved.locator(".jt-tool")
        expect(card.locator(".jt-tool-name")).to_have_text("add")
        expect(card.locator(".jt-tool-result")).to_contain_text("5")
        expect(card.locator(".jt-chip-approved")).to_be_visible()
        # the reasoning is folded and opens on click
        reasoning = saved.locator(".jt-reasoning details")
        expect(reasoning).not_to_have_attribute("open", "")
        expect(saved.get_by_text("Two small numbers.")).to_have_count(0)
        reasoning.locator("summary").click()
        expect(saved.get_by_text("Two small numbers.", exact=True)).to_be_visible()
        expect(lab.page.get_by_text("Error displaying widget")).to_have_count(0)
        expect(output.locator(".jp-OutputArea-output")).to_have_count(1)
    lab.cell(3).scroll_into_view_if_needed()
    lab.screenshot("reopened-without-kernel.png")

    # the same file in Notebook 7
    lab.open_in_notebook7("read.ipynb")
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message").last).to_have_text("The sum is 5.")
    expect(saved.locator(".jt-tool .jt-tool-name")).to_have_text("add")
    reasoning = saved.locator(".jt-reasoning details")
    expect(reasoning).not_to_have_attribute("open", "")
    reasoning.locator("summary").click()
    expect(saved.get_by_text("Two small numbers.", exact=True)).to_be_visible()
    expect(lab.page.get_by_text("Error displaying widget")).to_have_count(0)
    lab.screenshot("reopened-in-notebook7.png")
    assert lab.unexpected_page_errors() == []


KILLED = SLOW_TOOL + "import os\nprint(os.getpid())"


def _chat_then_kill_ready(lab: Lab, name: str, code: str, body: str) -> tuple[int, Locator]:
    """Open a notebook of LOAD, SETUP, `code` (printing the kernel's pid) and a chat cell with
    `body`; start the chat: the kernel's pid and the widget's root."""
    lab.write_notebook(name, [LOAD, SETUP, code, chat_cell(body)])
    lab.open(name)
    run_setup(lab, 2)
    pid = int(print_cell(lab, 2))
    return pid, start_chat(lab, 3)


def test_a_kernel_killed_mid_turn_leaves_the_finished_cycle_shown_and_saved(lab: Lab) -> None:
    pid, root = _chat_then_kill_ready(lab, "killed.ipynb", KILLED, "Look x up.")
    # the first cycle is over and its tool runs (forever): the turn so far is in the metadata
    expect(root.locator(".jt-tool[data-status='running']")).to_have_count(1)
    expect(root.locator(".jt-message")).to_have_text("Looking it up.")
    lab.page.wait_for_function(
        "() => window.__jt.panel.content.widgets[3].model.getMetadata('jupyter_turns')"
        "?.events?.length === 4"
    )
    os.kill(pid, signal.SIGKILL)

    # the page puts the saved turn where the widget was, and says it did not finish
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_have_text("Looking it up.")
    expect(saved.locator(".jt-tool-name")).to_have_text("slow_lookup")
    expect(saved.locator(".jt-notice")).to_contain_text("did not finish")
    dialog = lab.page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("appears to have died")  # the server restarts it
    dialog.get_by_role("button", name="Ok").click()
    expect(dialog).to_have_count(0)
    lab.wait_kernel_idle()
    lab.save()
    cell = lab.read_notebook("killed.ipynb").cells[3]
    assert [sorted(o["data"]) for o in cell.outputs] == [sorted([RECORD_MIME, "text/plain"])]
    record = cell.outputs[0]["data"][RECORD_MIME]
    assert record["live"] is True
    assert _kinds(record["events"]) == ["chat_request", "reasoning", "message", "tool_call_request"]

    for reopen in (lab.close_and_reopen, lab.open_in_notebook7):
        reopen("killed.ipynb")
        saved = lab.cell_output(3).locator(".jt-root.jt-saved")
        expect(saved.locator(".jt-message")).to_have_text("Looking it up.")
        expect(saved.locator(".jt-notice")).to_contain_text("did not finish")
        expect(lab.page.get_by_text("Error displaying widget")).to_have_count(0)
    assert lab.unexpected_page_errors() == []


STREAMING = (
    "import os\n"
    "script = [slow(cycle(message('The first half of an answer' + ' and more' * 400)), 0.05)]\n"
    "print(os.getpid())"
)


def test_a_kernel_killed_mid_stream_keeps_the_text_the_page_showed(lab: Lab) -> None:
    pid, root = _chat_then_kill_ready(lab, "cut.ipynb", STREAMING, "Explain x.")
    expect(root.locator(".jt-draft .jt-message")).to_contain_text("The first half of an answer")
    os.kill(pid, signal.SIGKILL)

    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_contain_text("The first half of an answer")
    expect(saved.locator(".jt-message .jt-partial")).to_have_count(1)
    expect(saved.locator(".jt-notice")).to_contain_text("did not finish")
    dialog = lab.page.locator(".jp-Dialog")
    dialog.get_by_role("button", name="Ok").click()
    expect(dialog).to_have_count(0)
    lab.save()
    record = lab.read_notebook("cut.ipynb").cells[3].outputs[0]["data"][RECORD_MIME]
    message = record["events"][-1]
    assert message["kind"] == "message" and message["metadata"] == {"partial": True}
    assert message["content"].startswith("The first half of an answer")
