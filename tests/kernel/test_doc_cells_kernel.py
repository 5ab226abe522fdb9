"""The README's Quickstart and docs/getting-started.md, followed literally (issue 45): their code
blocks typed into cells in order, in a kernel that a test plays the page for (it approves what
asks), give what the text says. Nothing is added: the README's quickstart once used a `df` that
no block defined, and its tool card showed a NameError under "done" beside an answer of 42.

With a key given as the Keys section says (the environment before Jupyter starts; here the local
Anthropic server behind ``ANTHROPIC_BASE_URL``), the page's plain ``%%chat`` goes to Claude.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response
from tests.support.doc_cells import GETTING_STARTED, README, cells, section

from .kernel import Cell, KernelDriver, ready_chat

pytestmark = pytest.mark.kernel

KEY = "sk-ant-api03-doc-cells-test-key-000000000000"


def _turn(kernel: KernelDriver, source: str) -> Cell:
    """Run a chat cell as the page would: its view renders, a person approves each call."""
    cell = kernel.execute(source)
    widget = ready_chat(kernel)
    answered: set[str] = set()
    while not cell.done:
        prompt = kernel.prompt(widget, "approval")
        if prompt is not None and prompt["id"] not in answered:
            answered.add(prompt["id"])
            reply = {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
            kernel.send_custom(widget, reply)
        kernel.pump()
    kernel.wait(lambda: cell.reply is not None, 10, "the chat cell's reply")
    return cell


def _run(kernel: KernelDriver, sources: list[str]) -> list[Cell]:
    ran = []
    for source in sources:
        if source.lstrip().startswith("%%chat"):
            ran.append(_turn(kernel, source))
        else:
            ran.append(kernel.run(source))
        assert ran[-1].reply is not None and ran[-1].reply["status"] == "ok", (source, ran[-1])
    return ran


def _events(cell: Cell) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = cell.records()[-1]["events"]
    return events


def _scripted_turn_as_the_text_says(cell: Cell) -> None:
    events = _events(cell)
    [call] = [e for e in events if e["kind"] == "tool_call_request"]
    [result] = [e for e in events if e["kind"] == "tool_call_response"]
    assert call["name"] == "python" and call["arguments"] == {"code": "sum(x)"}
    assert (result["status"], result["is_error"]) == ("done", False), result
    assert "result:\n42" in result["content"]
    assert [d["action"] for d in result["decisions"]] == ["approved"]
    assert [e["kind"] for e in events][:2] == ["chat_request", "reasoning"]
    assert events[-1]["kind"] == "message" and events[-1]["content"] == "The total is **42**."


def test_the_readme_quickstart_runs_as_typed(lab_kernel: KernelDriver) -> None:
    blocks = cells(section(README, "Quickstart"))
    assert len(blocks) == 3 and blocks[0].startswith("%load_ext jupyter_turns")
    ran = _run(lab_kernel, blocks)
    _scripted_turn_as_the_text_says(ran[-1])


def test_getting_started_followed_literally(tmp_path: Path) -> None:
    blocks = cells(GETTING_STARTED.read_text(encoding="utf-8").split("## Keys", 1)[0])
    assert [b.splitlines()[0] for b in blocks[-2:]] == [
        "%%chat --script story --builtins python",
        "%%chat",
    ]
    with AnthropicTestServer() as server:
        server.enqueue(Reply.sse(sse_text_response(["Its mean, ", "21."])))
        env = {
            "JPY_SESSION_NAME": str(tmp_path / "getting-started.ipynb"),
            "ANTHROPIC_API_KEY": KEY,  # set before Jupyter starts, as the Keys section says
            "ANTHROPIC_BASE_URL": server.url,
        }
        kernel = KernelDriver(env=env, cwd=str(tmp_path))
        try:
            ran = _run(kernel, blocks)
        finally:
            kernel.close()
        server.assert_all_served()
        [request] = server.requests
    _scripted_turn_as_the_text_says(ran[-2])
    claude = _events(ran[-1])
    notes = [e["text"] for e in claude if e["kind"] == "notice"]
    assert any(n.startswith("A script played this thread's last turn") for n in notes), notes
    assert claude[-1]["kind"] == "message" and claude[-1]["content"] == "Its mean, 21."
    asked = request.body["messages"][-1]["content"]
    assert "What else could I compute from x?" in str(asked)
    assert "The total is" not in str(request.body)  # what the script wrote is not sent
