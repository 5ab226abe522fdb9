"""Saving into the notebook: records per cycle, nbclient runs, loading back, no secrets."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_turns.record.notebook import export_markdown, load, load_threads
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import ToolUse, sse_message, sse_text_response
from tests.support.kernels import cell_record, execute_notebook
from tests.support.notebook_code import SETUP, SLOW_TOOL

from .kernel import KernelDriver, notebook_from

pytestmark = pytest.mark.kernel

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-ant-api03-TESTSECRET-do-not-save-0123456789"
SECRET_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_-]{8,}"),
    re.compile(r"x-api-key", re.I),
    re.compile(r"authorization\W+bearer", re.I),
    re.compile(re.escape(SECRET)),
]


def test_a_kernel_killed_between_cycles_leaves_cycle_one_saved(tmp_path: Path) -> None:
    kernel = KernelDriver()
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(SETUP)
        kernel.run(SLOW_TOOL)
        source = "%%chat --provider scripted --script script\nFind x"
        cell = kernel.execute(source)

        def saved_kinds() -> list[str]:
            records = cell.records()
            return [e["kind"] for e in records[-1]["events"]] if records else []

        kernel.wait(lambda: "tool_call_request" in saved_kinds(), 30, "cycle 1 in the record")
        kernel.km.shutdown_kernel(now=True)  # SIGKILL while the tool of cycle 1 runs
        assert saved_kinds() == ["chat_request", "reasoning", "message", "tool_call_request"]
        path = tmp_path / "crashed.ipynb"
        nbformat.write(notebook_from([(source, cell.outputs)]), path)
    finally:
        kernel.kc.stop_channels()
    conversation = load(path)["main"]
    kinds = [e.kind for e in conversation.events]
    assert kinds[:4] == ["chat_request", "reasoning", "message", "tool_call_request"]
    assert kinds[4] == "tool_call_response" and conversation.events[4].is_error  # type: ignore[union-attr]
    conversation.check_sendable()


FIRST_CYCLE_SCRIPTS = {
    "before any text": "[[Delay(3600)]]",
    "while text streams": (
        "[[Part(0, ReasoningDelta('Thinking it over. ')),"
        " Part(1, MessageDelta('The first half')), Part(1, MessageDelta(' of an answer')),"
        " Delay(3600)]]"
    ),
}


@pytest.mark.parametrize("moment", list(FIRST_CYCLE_SCRIPTS))
def test_a_kernel_killed_in_the_first_cycle_leaves_the_request_saved(
    tmp_path: Path, moment: str
) -> None:
    kernel = KernelDriver()
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(
            "from jupyter_turns.model.events import MessageDelta, Part, ReasoningDelta\n"
            "from jupyter_turns.providers.scripted import Delay\n"
            f"script = {FIRST_CYCLE_SCRIPTS[moment]}"
        )
        source = "%%chat --provider scripted --script script\nExplain x"
        cell = kernel.execute(source)

        def saved() -> list[tuple[str, str]]:
            records = cell.records()
            events = records[-1]["events"] if records else []
            return [(e["kind"], e.get("content", "")) for e in events]

        expected = [("chat_request", "Explain x")]
        if moment == "while text streams":
            expected += [
                ("reasoning", "Thinking it over. "),
                ("message", "The first half of an answer"),
            ]
        kernel.wait(lambda: saved() == expected, 30, f"the record to hold {expected}")
        kernel.km.shutdown_kernel(now=True)  # SIGKILL in the middle of the first cycle
        path = tmp_path / "crashed.ipynb"
        nbformat.write(notebook_from([(source, cell.outputs)]), path)
    finally:
        kernel.kc.stop_channels()
    conversation = load(path)["main"]
    assert [(e.kind, e.content) for e in conversation.events] == expected  # type: ignore[union-attr]
    assert all(e.metadata.get("partial") for e in conversation.events[1:])  # type: ignore[union-attr]
    conversation.check_sendable()


NOTEBOOK_CELLS = [
    "%load_ext jupyter_turns",
    textwrap.dedent(
        """
        from jupyter_turns import tool
        from jupyter_turns.providers.scripted import cycle, message, reasoning, tool_call

        @tool
        def square(x: int) -> int:
            '''x squared'''
            return x * x

        script = [
            cycle(reasoning("Square it."), tool_call("square", {"x": 7})),
            cycle(message("7 squared is **49**.")),
            cycle(message("You asked about 7.")),
        ]
        """
    ),
    "%%chat --provider scripted --script script --tools unattended\nWhat is 7 squared?",
    "%%chat --script script\nWhat number did I ask about?",
]


def _execute(tmp_path: Path, cells: list[str], env: dict[str, str] | None = None) -> Path:
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    execute_notebook(notebook, cwd=tmp_path, env={**os.environ, **env} if env else None)
    path = tmp_path / "executed.ipynb"
    nbformat.write(notebook, path)
    return path


def test_nbclient_run_saves_records_that_load_back(tmp_path: Path) -> None:
    path = _execute(tmp_path, NOTEBOOK_CELLS)
    notebook = nbformat.read(path, as_version=4)
    chat_cells = [cell for cell in notebook.cells if cell.source.startswith("%%chat")]
    # one output per chat cell: the live record, replaced in place by the final record
    assert [len(cell.outputs) for cell in chat_cells] == [1, 1]
    records = [cell_record(cell) for cell in chat_cells]
    assert not any("live" in record for record in records)
    assert [[e["kind"] for e in r["events"]] for r in records] == [
        ["chat_request", "reasoning", "tool_call_request", "tool_call_response", "message"],
        ["chat_request", "message"],
    ]
    saved_events = [e for r in records for e in r["events"]]
    conversation = load(path)["main"]
    assert [e.model_dump(mode="json") for e in conversation.events] == saved_events
    # nothing drew the widgets: none of their state was sent, so nbclient saved none of it
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    assert not [m for m in state.values() if m["state"].get("events")]
    # without a renderer, the transcript is readable at once: the answer is not folded
    transcripts = [cell.outputs[0]["data"]["text/html"] for cell in chat_cells]
    answer = '<div class="jt-message"><p>7 squared is <strong>49</strong>.</p>'
    assert answer in transcripts[0]
    assert transcripts[0].startswith('<div class="jt-root jt-saved">')
    assert "You asked about 7." in export_markdown(path)


def test_restore_rebuilds_the_thread_and_the_next_turn_sends_it(tmp_path: Path) -> None:
    path = _execute(tmp_path, NOTEBOOK_CELLS)
    threads, current = load_threads(path)
    assert current == "main" and threads["main"].settings.values["provider"] == "scripted"
    kernel = KernelDriver()
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(
            "from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message\n"
            "script = ScriptedProvider([cycle(message('Still 7.'))])"
        )
        restored = kernel.run(f"%chat restore {path}")
        assert "Restored thread 'main': 7 events" in restored.stdout()
        kernel.run("%%chat --script script\nAnd now?")
        sent = kernel.run("print([e.kind for e in script.requests[0].events])").stdout()
        # the restored thread's first request tells the model that the kernel restarted
        note = kernel.run(
            "print(*[(a.label, a.text) for a in script.requests[0].events[-1].attachments])"
        ).stdout()
    finally:
        kernel.close()
    assert note.startswith(
        "('note about the kernel', 'The kernel restarted since the earlier turns"
    )
    assert sent.strip() == str(
        [
            "chat_request",
            "reasoning",
            "tool_call_request",
            "tool_call_response",
            "message",
            "chat_request",
            "message",
            "chat_request",
        ]
    )


def _scan(text: str) -> list[str]:
    return [pattern.pattern for pattern in SECRET_PATTERNS if pattern.search(text)]


def test_no_secret_reaches_a_saved_notebook(tmp_path: Path) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(
                sse_message([ToolUse("square", {"x": 3}, id="toolu_1")], stop_reason="tool_use")
            ),
            Reply.sse(sse_text_response(["Nine."])),
        )
        cells = [
            "%load_ext jupyter_turns",
            "from jupyter_turns import tool\n\n@tool\ndef square(x: int) -> int:\n"
            "    '''x squared'''\n    return x * x",
            "%%chat --provider anthropic --model claude-haiku-4-5 --tools unattended\nSquare 3",
            "%chat settings",
        ]
        env = {"ANTHROPIC_API_KEY": SECRET, "ANTHROPIC_BASE_URL": server.url}
        path = _execute(tmp_path, cells, env=env)
        assert server.requests and SECRET in json.dumps(server.requests[0].headers)  # it was used
    text = path.read_text()
    assert "Nine." in text
    assert _scan(text) == []


@pytest.mark.parametrize(
    "notebook", sorted((ROOT / "examples").glob("*.ipynb")), ids=lambda p: p.name
)
def test_no_secret_in_the_committed_examples(notebook: Path) -> None:
    assert _scan(notebook.read_text()) == []
