"""Issue 31, the kernel side of a newcomer's first hour, as a person sees it in a real kernel:
a new cell with no key asks only for the key (no replay diff against another cell), turns
played by the scripted provider never reach a real model, and sticky options say how to leave
them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response

from .kernel import Cell, KernelDriver, notebook_from
from .test_providers_kernel import _shown

pytestmark = pytest.mark.kernel

NO_KEYS = (
    "import os\nfor name in ('ANTHROPIC_API_KEY', 'OPENAI_API_KEY'):\n"
    "    os.environ.pop(name, None)"
)
LOAD = "Load data.csv and show its first rows"
SCRIPT = '''\
from jupyter_turns import tool
from jupyter_turns.providers.scripted import cycle, message, tool_call

@tool(run="unattended")
def load(path: str) -> str:
    """Load a CSV file."""
    return "3 rows"

s3 = [cycle(tool_call("load", {"path": "data.csv"})), cycle(message("Loaded 3 rows."))]
'''


def _said(cell: Cell) -> str:
    """What the cell shows: its outputs' text, its error, and what went to stderr."""
    parts = [o.get("text", "") for o in cell.outputs]
    parts += [f"{o.get('ename')}: {o.get('evalue')}" for o in cell.outputs if "ename" in o]
    return "\n".join(parts) + _shown(cell)


def _kernel(tmp_path: Path, notebook: Path, **env: str) -> KernelDriver:
    """A kernel that JupyterLab owns (it names the notebook), with only the keys in ``env``."""
    kernel = KernelDriver(env={"JPY_SESSION_NAME": str(notebook), **env}, cwd=str(tmp_path))
    if not any(name.endswith("_API_KEY") for name in env):
        kernel.run(NO_KEYS)
    kernel.run("%load_ext jupyter_turns")
    return kernel


def _recorded(tmp_path: Path) -> Path:
    """A notebook with one chat cell (id ``c1``) recorded, as JupyterLab saves it."""
    path = tmp_path / "chat.ipynb"
    kernel = _kernel(tmp_path, path)
    try:
        cell = kernel.run(f"%%chat --provider scripted\n{LOAD}", cell_id="c1")
    finally:
        kernel.close()
    notebook = notebook_from([(f"%%chat --provider scripted\n{LOAD}", cell.outputs)])
    notebook.cells[0].id = "c1"
    nbformat.write(notebook, path)
    return path


@pytest.mark.parametrize(
    "provider,missing,other",
    [
        ("anthropic", "No Anthropic API key found. Run %chat key", "OpenAI"),
        ("openai", "No OpenAI API key found. Run %chat key openai", "Anthropic"),
    ],
)
def test_a_new_cell_after_a_restart_without_a_key_asks_only_for_the_key(
    tmp_path: Path, provider: str, missing: str, other: str
) -> None:
    path = _recorded(tmp_path)
    kernel = _kernel(tmp_path, path)  # the restarted kernel: no key
    try:
        new = _said(
            kernel.run(f"%%chat --provider {provider}\nPlot the first column", cell_id="c9")
        )
        edited = _said(kernel.run(f"%%chat --provider {provider}\nLoad data2.csv", cell_id="c1"))
    finally:
        kernel.close()
    assert missing in new
    assert "replayed" not in new and "request changed" not in new and LOAD not in new
    assert f"No {other}" not in new
    # the recorded cell, edited: its change is what stops the replay, said after the key
    assert missing in edited
    assert "Nor can this cell be replayed from the notebook: its request changed" in edited
    assert f"-{LOAD}" in edited and "+Load data2.csv" in edited


def _anthropic_env(server: AnthropicTestServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": server.url}


def _sent(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The messages a request sent Claude: (role, every text and block type in them)."""
    out = []
    for message in body["messages"]:
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        text = " ".join(b if isinstance(b, str) else b.get("text", b["type"]) for b in blocks)
        out.append((message["role"], text))
    return out


CLAUDE = "%%chat --provider anthropic --model claude-haiku-4-5\nWhat did I ask you?"


def test_scripted_turns_are_not_sent_to_claude_and_the_switch_says_so(tmp_path: Path) -> None:
    path = tmp_path / "chat.ipynb"
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(sse_text_response(["You asked to load data.csv."])),
            Reply.sse(sse_text_response(["Still only your requests."])),
            Reply.sse(sse_text_response(["Restored, and still."])),
        )
        kernel = _kernel(tmp_path, path, **_anthropic_env(server))
        try:
            kernel.run(SCRIPT)
            ran = [
                (source, kernel.run(source).outputs)
                for source in (
                    "%%chat --provider scripted\nHello there",
                    f"%%chat --script s3 --tools unattended\n{LOAD}",
                    CLAUDE,
                    "%%chat\nAnd now?",
                )
            ]
        finally:
            kernel.close()
        nbformat.write(notebook_from([(SCRIPT, []), *ran]), path)
        restarted = _kernel(tmp_path, path, **_anthropic_env(server))  # restores the thread
        try:
            after = restarted.run("%%chat\nOne more?")
        finally:
            restarted.close()
        bodies = [request.body for request in server.requests]
    asked = ("user", f"Hello there {LOAD} What did I ask you?")  # one user turn, merged
    answered = [asked, ("assistant", "You asked to load data.csv."), ("user", "And now?")]
    sent = [_sent(body) for body in bodies]
    assert sent[:2] == [[asked], answered]
    assert sent[2][:-1] == [*answered, ("assistant", "Still only your requests.")]
    assert sent[2][-1][1].startswith("One more? ")  # and the note that the kernel restarted
    for body in bodies:
        text = json.dumps(body)
        assert "Scripted echo" not in text and "Loaded 3 rows" not in text
        assert "tool_use" not in text and "3 rows" not in text
    shown = [_shown(Cell("", outputs=outputs)) for _, outputs in ran]
    notice = "what the scripted provider wrote (2 answers and 1 tool call) is not sent to Claude"
    assert notice in " ".join(shown[2].split()), shown[2]
    assert "your own 2 requests go along" in " ".join(shown[2].split())
    assert "%%chat --new" in shown[2]
    assert "scripted provider wrote" not in shown[3]  # once, when the switch happens
    assert "Restored, and still." in _shown(after)


def test_sticky_options_say_how_to_leave_them(kernel: KernelDriver) -> None:
    kernel.run(SCRIPT)
    kernel.run("%%chat --script s3 --tools unattended\nLoad it")
    again = _said(kernel.run("%%chat --script s3\nLoad it again"))
    assert "%%chat --script s3: the script has no cycle left (each cycle plays once)" in again
    assert "Run the cell that sets `s3` again to play it from the start" in again
    assert "script_exhausted" not in again
    assert "Scripted echo" in _said(kernel.run("%%chat --new --provider scripted\nHello"))
    use = _said(kernel.run("%chat use nosuch"))
    assert "no thread 'nosuch'; the threads are: 'main', 'thread-2'." in use
    assert "`%chat new nosuch` creates it" in use
    listed = kernel.run("%chat threads").stdout()
    assert "nosuch" not in listed and listed.startswith("  main:")
    modle = _said(kernel.run("%%chat --modle claude-haiku-4-5\nHi"))
    assert "no option `--modle`: did you mean `--model`?" in modle
    assert "usage:" not in modle and "bad options" not in modle
    assert "Thread 'main' is current." in kernel.run("%chat use main").stdout()
