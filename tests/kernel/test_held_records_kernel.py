"""A turn that ends while no page is open reaches the notebook the next time a page opens it
(kernel/front.page_opened) or on ``%chat restore``, which hands the open pages every finished
turn's record the kernel holds (issue 32, point 2): the lab extension writes those its cells do
not hold yet (tests/browser/test_reload_browser.py draws it in a page)."""

from __future__ import annotations

import uuid

from jupyter_turns.editing.control import CONTROL_TARGET
from tests.support.notebook_code import SETUP

from .kernel import KernelDriver, Widget, ready_chat

CHAT = "%%chat --provider scripted --script script\nSay it."


def test_chat_restore_sends_the_pages_each_finished_turn_the_kernel_holds(
    lab_kernel: KernelDriver,
) -> None:
    lab_kernel.run(SETUP)
    lab_kernel.run("script = [cycle(message('Held in the kernel.'))]")
    cell = lab_kernel.execute(CHAT, cell_id="cell-a")
    ready_chat(lab_kernel)
    lab_kernel.wait(lambda: cell.done, 30, "the turn to end")
    lab_kernel.comm_data.clear()  # what the turn itself sent: no page got it

    out = lab_kernel.run("%chat restore").stdout()
    assert "Sent 1 finished turn this kernel holds to the open notebook pages." in out

    def shown() -> list[dict]:  # type: ignore[type-arg]
        return [m for m in lab_kernel.comm_data if m.get("request") == "show_record"]

    sent = lab_kernel.wait(shown, 10, "a show_record request")
    assert [m["cell_id"] for m in sent] == ["cell-a"]
    record = sent[0]["bundle"]["application/vnd.jupyter-turns+json"]
    assert record["events"][-1]["content"] == "Held in the kernel."


# about 40 s of streaming unless stopped
STREAMING = "script = [slow(cycle(message('Streaming' + ' on' * 400)), 0.1)]"


def test_pages_are_told_a_chat_cell_runs_and_when_it_ended_with_its_count(
    lab_kernel: KernelDriver,
) -> None:
    """A page that did not run the cell (reloaded, a second tab, joining a shared notebook)
    hears of the run from the kernel alone: ``cell_run`` says the cell runs (at the turn's
    start, and to a page that opens meanwhile, whose answer names the running cell) and that
    it ended, with the execution count the run's reply has and the kernel client of the page
    that ran it."""
    lab_kernel.run(SETUP)
    lab_kernel.run(STREAMING)
    cell = lab_kernel.execute(CHAT, cell_id="cell-b")
    widget = ready_chat(lab_kernel)
    runner = lab_kernel.kc.session.session

    def runs(running: bool) -> list[dict]:  # type: ignore[type-arg]
        return [
            m
            for m in lab_kernel.comm_data
            if m.get("request") == "cell_run" and m.get("running") is running
        ]

    started = lab_kernel.wait(lambda: runs(True), 30, "a cell_run saying the cell runs")
    assert [(m["cell_id"], m["runner"]) for m in started] == [("cell-b", runner)]
    count = started[0]["execution_count"]
    assert isinstance(count, int) and count > 0

    lab_kernel.comm_data.clear()
    page = {"request": "page", "request_id": "p1", "path": "chat.ipynb"}  # a page opens
    content = {"comm_id": uuid.uuid4().hex, "target_name": CONTROL_TARGET, "data": page}
    lab_kernel.widgets[content["comm_id"]] = Widget(content["comm_id"], {})  # hear its answer
    lab_kernel.kc.shell_channel.send(lab_kernel.kc.session.msg("comm_open", content))
    told = lab_kernel.wait(lambda: runs(True), 30, "the opened page told the cell runs")
    assert [(m["cell_id"], m["execution_count"]) for m in told] == [("cell-b", count)]
    shown = [m for m in lab_kernel.comm_data if m.get("request") == "show_live"]
    assert [m["model_id"] for m in shown] == [widget.comm_id]

    def answer() -> list[dict]:  # type: ignore[type-arg]
        return [m for m in lab_kernel.comm_data if m.get("request_id") == "p1"]

    # the answer names the running turn's cell: its widget is live, no dead turn's to replace
    assert lab_kernel.wait(answer, 30, "the answer to the page") == [
        {"request_id": "p1", "ok": True, "running": ["cell-b"]}
    ]

    lab_kernel.comm_data.clear()
    lab_kernel.send_custom(widget, {"type": "interrupt_request", "action": "stop"})
    ended = lab_kernel.wait(lambda: runs(False), 30, "a cell_run saying the cell ended")
    assert [(m["cell_id"], m["execution_count"], m["runner"]) for m in ended] == [
        ("cell-b", count, runner)
    ]
    lab_kernel.wait(lambda: cell.reply is not None, 30, "the run's reply")
    assert cell.reply is not None and cell.reply["execution_count"] == count
    assert runs(True) == []  # nothing says it runs after it ended
