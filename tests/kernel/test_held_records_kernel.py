"""A turn that ends while no page is open reaches the notebook the next time a page opens it
(kernel/front.page_opened) or on ``%chat restore``, which hands the open pages every finished
turn's record the kernel holds (issue 32, point 2): the lab extension writes those its cells do
not hold yet (tests/browser/test_reload_browser.py draws it in a page)."""

from __future__ import annotations

from tests.support.notebook_code import SETUP

from .kernel import KernelDriver, ready_chat

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
