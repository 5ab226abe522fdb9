"""The README's key advice, run for real: nothing of the key reaches the notebook or its outputs.

``%chat key`` is answered through the kernel's stdin channel (what JupyterLab's password box
sends), a ``.env`` file is found by an nbclient run, and a 401 that echoes the key is shown
redacted. Everything the kernel published is scanned, not only the saved file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from jupyter_turns.redaction import REDACTED, masked
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response

from .kernel import Cell, KernelDriver, notebook_from
from .test_persistence import SECRET_PATTERNS, _execute

pytestmark = pytest.mark.kernel

KEY = "sk-ant-api03-KERNELSECRET-typed-into-a-password-box-0123456789"
HAIKU = "claude-haiku-4-5"


def _leaks(text: str) -> list[str]:
    return [pattern.pattern for pattern in SECRET_PATTERNS if pattern.search(text)] + (
        ["the key"] if KEY in text else []
    )


def _without_keys() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def test_chat_key_reads_a_hidden_answer_and_nothing_of_it_is_published(tmp_path: Path) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.error(401, f"invalid key: {KEY}"),  # a server that echoes the key
            Reply.sse(sse_text_response(["Nine."])),
        )
        kernel = KernelDriver(env={"ANTHROPIC_BASE_URL": server.url})
        try:
            kernel.run("import os\nos.environ.pop('ANTHROPIC_API_KEY', None)\npass")
            kernel.run("%load_ext jupyter_turns")
            asked = kernel.execute("%chat key")
            request = kernel.kc.get_stdin_msg(timeout=30)
            assert request["msg_type"] == "input_request"
            assert request["content"]["password"] is True  # the frontend hides what is typed
            kernel.kc.input(KEY)
            kernel.wait(lambda: asked.done, 30, "%chat key to finish")
            assert f"ANTHROPIC_API_KEY set for this kernel: {masked(KEY)}" in asked.stdout()
            source_1 = f"%%chat --provider anthropic --model {HAIKU}\nWhat is 3 squared?"
            failed = kernel.run(source_1)
            source_2 = "%%chat\nTry again"
            answered = kernel.run(source_2)
            widget_states = [w.state for w in kernel.widgets.values()]
            published = json.dumps(
                [m for cell in kernel.cells.values() for m in cell.messages], default=str
            )
        finally:
            kernel.close()
        used = [json.dumps(r.headers) for r in server.requests]
    assert len(used) == 2 and all(KEY in headers for headers in used)  # the typed key was used
    assert f"invalid key: {REDACTED}" in published  # the echo was shown, redacted
    assert "Nine." in published
    assert _leaks(published) == [] and _leaks(json.dumps(widget_states)) == []
    path = tmp_path / "keyed.ipynb"
    cells = [("%chat key", asked.outputs), (source_1, failed.outputs), (source_2, answered.outputs)]
    nbformat.write(notebook_from(cells), path)
    assert _leaks(path.read_text()) == []


def test_chat_key_refuses_a_key_on_its_line_without_repeating_it() -> None:
    kernel = KernelDriver()
    try:
        kernel.run("%load_ext jupyter_turns")
        cell = kernel.run(f"%chat key {KEY}")
        # a frontend that cannot answer input requests (nbclient, nbval) gets a clear error
        msg_id = kernel.kc.execute("%chat key", allow_stdin=False)
        headless = kernel.cells[msg_id] = Cell(msg_id)
        kernel.wait(lambda: headless.done, 30, "%chat key without stdin")
    finally:
        kernel.close()
    # the source echoed on IOPub holds what the user typed; every reply must not repeat it
    replies = [m for m in cell.messages if m["msg_type"] != "execute_input"]
    refused = json.dumps(replies, default=str)
    assert "delete it from the cell" in refused and KEY not in refused
    assert "cannot ask for input" in json.dumps(headless.messages, default=str)


def test_a_dotenv_next_to_the_notebook_is_used_and_not_saved(tmp_path: Path) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(Reply.sse(sse_text_response(["Nine."])))
        (tmp_path / ".env").write_text(f"# local secrets, not in git\nANTHROPIC_API_KEY={KEY}\n")
        cells = [
            "%load_ext jupyter_turns",
            f"%%chat --provider anthropic --model {HAIKU}\nWhat is 3 squared?",
        ]
        path = _execute(tmp_path, cells, env={**_without_keys(), "ANTHROPIC_BASE_URL": server.url})
        headers = json.dumps(server.requests[0].headers)
    assert KEY in headers
    text = path.read_text()
    assert "Nine." in text
    assert f"read ANTHROPIC_API_KEY ({masked(KEY)})" in text and ".env" in text
    assert _leaks(text) == []
