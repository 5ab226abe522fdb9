"""The footer of a turn names where it went when that is not the default endpoint: in the live
widget while it streams, and in the saved record after it (the key went there too).

The endpoint is a local ``AnthropicTestServer`` chosen in the kernel's environment, as a user's
``ANTHROPIC_BASE_URL`` would; the real SDK streams from it.
"""

from __future__ import annotations

import threading

import pytest
from playwright.sync_api import expect

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response

from .chat import LOAD, run_setup, start_chat
from .lab import Lab

pytestmark = pytest.mark.browser


def test_the_footer_names_a_non_default_endpoint_live_and_saved(lab: Lab) -> None:
    release = threading.Event()
    with AnthropicTestServer() as server:
        server.enqueue(Reply.hang_after(sse_text_response(["Hello ", "there."]), 4, release))
        env = (
            "import os\n"
            f"os.environ['ANTHROPIC_BASE_URL'] = {server.url!r}\n"
            "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-api03-browser-test-key-000000'"
        )
        chat = "%%chat --provider anthropic --model claude-haiku-4-5\nSay hello."
        lab.write_notebook("endpoint.ipynb", [LOAD, env, chat])
        lab.open("endpoint.ipynb")
        run_setup(lab, 2)
        live = start_chat(lab, 2)
        expect(live.locator(".jt-footer")).to_contain_text(f"via {server.url}")
        release.set()
        lab.wait_cell_idle(2)
        saved = lab.cell_output(2).locator(".jt-root.jt-saved")
        expect(saved.locator(".jt-message").last).to_have_text("Hello there.")
        expect(saved.locator(".jt-footer")).to_contain_text(
            f"claude-haiku-4-5  ·  via {server.url}"
        )
