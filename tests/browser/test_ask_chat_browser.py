"""Ask chat, in JupyterLab and Notebook 7, as a person sees it: a cell that raises shows an
**Ask chat** button under its traceback; the click adds a readable chat cell below it and runs
it; the request that reaches the API (a local ``AnthropicTestServer``, the real SDK streaming
from it) carries the cell's source, its traceback and its variables as labeled notebook data;
the answer streams below. The button lives in the page only: the saved file has no trace of it.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response

from .chat import LOAD, run_setup, wait_turn_end, wait_widget
from .lab import Lab

pytestmark = pytest.mark.browser

FAILING = "total = rain['rain'].sum()"
DATA = (
    "import pandas as pd\nrain = pd.DataFrame({'city': ['Oslo', 'Pune'], 'rain_mm': [76.0, 722.5]})"
)


def _env(server: AnthropicTestServer) -> str:
    return (
        "import os\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {server.url!r}\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-api03-browser-test-key-000000'\n"
        "%config ChatMagics.model = 'claude-haiku-4-5'"
    )


def _request_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(b["text"] for b in content)


@pytest.mark.parametrize("page", ["lab", "notebook7"])
def test_ask_chat_on_a_traceback_asks_with_the_source_and_the_traceback(
    lab: Lab, page: str
) -> None:
    release = threading.Event()
    with AnthropicTestServer() as server:
        answer = sse_text_response(["The column is ", "called `rain_mm`."])
        server.enqueue(Reply.hang_after(answer, 4, release))
        lab.write_notebook("ask.ipynb", [LOAD, _env(server), DATA, FAILING])
        if page == "lab":
            lab.open("ask.ipynb")
        else:
            lab.open_in_notebook7("ask.ipynb")
        run_setup(lab, 3)
        expect(lab.cell(2).get_by_role("button", name="Ask chat")).to_have_count(0)
        lab.run_cell(3, timeout=60)
        expect(lab.cell_output(3)).to_contain_text("KeyError")
        ask = lab.cell(3).get_by_role("button", name="Ask chat")
        expect(ask).to_be_visible()

        # the cell is named as Jupyter shows it, [4] (its execution count), never by its
        # 0-based index 3 in the same brackets (issue 45)
        expect(lab.prompt(3)).to_have_text("[4]:")
        ask.click()
        expect(lab.cells()).to_have_count(5)
        asking = lab.cell(4).locator(".jp-InputArea")
        expect(asking).to_contain_text("%%chat --fix 4")
        expect(asking).to_contain_text("Why does cell [4] fail, and how do I fix it?")
        live = wait_widget(lab, 4, timeout=60)  # the click ran it
        expect(live.locator(".jt-message")).to_contain_text("The column is", timeout=30_000)
        expect(live.locator(".jt-attached")).to_have_text("Attached: source, traceback, variables")
        release.set()
        lab.wait_cell_idle(4, timeout=60)
        saved = lab.cell_output(4).locator(".jt-root.jt-saved")
        expect(saved.locator(".jt-message").last).to_have_text("The column is called rain_mm.")
        wait_turn_end(saved)
        server.assert_all_served()
        sent = _request_text(server.requests[0].body)

    assert sent.startswith("Why does cell [4] fail, and how do I fix it?")
    assert f'<notebook_data source="cell [4] source">\n{FAILING}\n' in sent
    assert '<notebook_data source="cell [4] traceback">\nKeyError: ' in sent
    assert "Cell In[4], line 1" in sent  # the traceback as the page holds it, colours removed
    assert "\x1b[" not in sent
    assert "rain_mm: float64" in sent  # the variable the failing line names, summarized

    lab.save()
    text = lab.path("ask.ipynb").read_text()
    assert "Ask chat" not in text and "jt-ask-chat" not in text
    error = lab.read_notebook("ask.ipynb").cells[3].outputs
    assert [o["output_type"] for o in error] == ["error"]
    assert set(error[0]) == {"output_type", "ename", "evalue", "traceback"}, json.dumps(error)
    assert lab.unexpected_page_errors() == []


def test_ask_chat_answers_in_a_kernel_that_never_loaded_jupyter_turns(lab: Lab) -> None:
    """No ``%load_ext`` in the notebook: the button still asks (the click loads jupyter_turns
    first), instead of failing with "Cell magic `%%chat` not found"."""
    with AnthropicTestServer() as server:
        server.enqueue(Reply.sse(sse_text_response(["Divide by ", "something else."])))
        env = _env(server).rsplit("\n", 1)[0]  # no %config ChatMagics: nothing is loaded
        lab.write_notebook("plain.ipynb", [env, "ratio = 1 / 0"])
        lab.open("plain.ipynb")
        run_setup(lab, 1)
        lab.run_cell(1, timeout=60)
        expect(lab.cell_output(1)).to_contain_text("ZeroDivisionError")

        lab.cell(1).get_by_role("button", name="Ask chat").click()
        expect(lab.cells()).to_have_count(3)
        expect(lab.prompt(1)).to_have_text("[2]:")
        expect(lab.cell(2).locator(".jp-InputArea")).to_contain_text("%%chat --fix 2")
        lab.wait_cell_idle(2, timeout=60)
        expect(lab.cell_output(2)).not_to_contain_text("not found")
        saved = lab.cell_output(2).locator(".jt-root.jt-saved")
        expect(saved.locator(".jt-message").last).to_have_text("Divide by something else.")
        server.assert_all_served()
        sent = _request_text(server.requests[0].body)

    assert sent.startswith("Why does cell [2] fail, and how do I fix it?")
    assert '<notebook_data source="cell [2] traceback">\nZeroDivisionError' in sent
    assert lab.unexpected_page_errors() == []
