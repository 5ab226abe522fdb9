"""The footer of an answer names the model even when the thread chose none (issue 31, point 8):
the provider's default, in the live widget while it streams and in the saved record after it.

The endpoint is a local ``AnthropicTestServer`` (as in test_endpoint_browser.py); the cell
gives no ``--model``.
"""

from __future__ import annotations

import threading

import pytest
from playwright.sync_api import expect

from jupyter_turns.providers.anthropic import DEFAULT_MODEL
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response

from .chat import LOAD, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser


def test_the_footer_names_the_default_model_live_and_saved(lab: Lab) -> None:
    release = threading.Event()
    with AnthropicTestServer() as server:
        answer = sse_text_response(["Hello ", "there."], model=DEFAULT_MODEL)
        server.enqueue(Reply.hang_after(answer, 4, release))
        env = (
            "import os\n"
            f"os.environ['ANTHROPIC_BASE_URL'] = {server.url!r}\n"
            "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-api03-browser-test-key-000000'"
        )
        lab.write_notebook("default_model.ipynb", [LOAD, env, "%%chat\nSay hello."])
        lab.open("default_model.ipynb")
        run_setup(lab, 2)
        live = start_chat(lab, 2)
        expect(live.locator(".jt-footer")).to_contain_text(f"{DEFAULT_MODEL}  ·  via")
        release.set()
        lab.wait_cell_idle(2)
        saved = lab.cell_output(2).locator(".jt-root.jt-saved")
        expect(saved.locator(".jt-message").last).to_have_text("Hello there.")
        expect(saved.locator(".jt-footer")).to_contain_text(f"{DEFAULT_MODEL}  ·  via")
