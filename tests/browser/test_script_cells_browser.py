"""After the README's quickstart, a plain ``%%chat`` talks to Claude once a key is given (issue
45, point 4), in JupyterLab and Notebook 7, as a newcomer does it: the quickstart's cells as
the README prints them (its python call approved), the key typed into ``%chat key``'s password
box, then a plain ``%%chat``. It used to answer "this thread plays the script `story`, which has
no cycle left": a script was the thread's, not the cell's. Claude here is the local Anthropic
server behind ``ANTHROPIC_BASE_URL``, streaming to the real SDK.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response
from tests.support.doc_cells import README, cells, section

from .chat import PAGES, open_page, run_setup, start_chat, wait_turn_end
from .lab import Lab

pytestmark = pytest.mark.browser

KEY = "sk-ant-api03-browser-test-key-for-the-local-server-0000"


@pytest.mark.parametrize("page", PAGES)
def test_a_plain_chat_after_the_quickstart_talks_to_claude(lab: Lab, page: str) -> None:
    quickstart = cells(section(README, "Quickstart"))
    assert quickstart[-1].startswith("%%chat --script story")
    with AnthropicTestServer() as server:
        server.enqueue(Reply.sse(sse_text_response(["Hello, ", "I am Claude."])))
        endpoint = f"import os\nos.environ['ANTHROPIC_BASE_URL'] = {server.url!r}"
        chats = [*quickstart, endpoint, "%chat key", "%%chat\nThanks! Who are you?"]
        lab.write_notebook("quickstart.ipynb", chats)
        open_page(lab, page, "quickstart.ipynb")
        run_setup(lab, 2)
        scripted = start_chat(lab, 2)
        prompt = scripted.locator(".jt-tool .jt-prompt-approval")
        expect(prompt).to_contain_text("Run python?")
        prompt.get_by_role("button", name="Approve", exact=True).click()
        lab.wait_cell_idle(2, timeout=60)
        expect(scripted.locator(".jt-message").last).to_have_text("The total is 42.")
        lab.run_cell(3)  # the endpoint: the local server
        assert lab.errors(3) == []

        lab.run_cell(4, wait=False)  # %chat key asks in a password box
        box = lab.cell(4).locator("input.jp-Stdin-input")
        expect(box).to_be_visible()
        box.fill(KEY)
        box.press("Enter")
        lab.wait_cell_idle(4, timeout=60)
        expect(lab.cell_output(4)).not_to_contain_text(KEY)

        root = start_chat(lab, 5)
        lab.wait_cell_idle(5, timeout=60)
        wait_turn_end(root)
        server.assert_all_served()
        sent = server.requests[0]
    expect(root.locator(".jt-message").last).to_have_text("Hello, I am Claude.")
    note = root.locator(".jt-notice").filter(has_text="A script played this thread's last turn")
    expect(note).to_have_count(1)
    expect(lab.cell_output(5)).not_to_contain_text("no cycle left")
    given = {k.lower(): v for k, v in sent.headers.items()}
    assert KEY in (
        given.get("x-api-key", ""),
        given.get("authorization", "").removeprefix("Bearer "),
    )
    assert "Thanks! Who are you?" in str(sent.body["messages"][-1]["content"])
    assert lab.errors(5) == [] and lab.unexpected_page_errors() == []
