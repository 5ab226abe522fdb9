"""The cells above as context (issue 29, point 3) in a real kernel against the local API server.

``--context above`` attaches the cells above the chat cell to the request as labeled notebook
data (sources, output summaries, an error's traceback, figures as images), the nearest last;
the next turn of the thread sends only the cells that are new or changed and names the others;
budgets cut with notes; ``above:N`` sends the N nearest; ``%config ChatMagics.context`` sends
them for a thread whose cell does not say, ``--context none`` keeps them back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response

from .kernel import KernelDriver

pytestmark = pytest.mark.kernel

KEY = {"ANTHROPIC_API_KEY": "sk-ant-api03-test-000"}


def _bodies(server: AnthropicTestServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.split("?")[0] == "/v1/messages"]


def _above(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The newest request's cells-above data (its text) and the image blocks sent with it."""
    content = body["messages"][-1]["content"]
    texts = [b["text"] for b in content if b["type"] == "text"]
    [framed] = [t for t in texts if t.startswith('<notebook_data source="notebook cells above">')]
    return framed, [b for b in content if b["type"] == "image"]


def _kernel(server: AnthropicTestServer, tmp_path: Path) -> KernelDriver:
    kernel = KernelDriver(env={**KEY, "ANTHROPIC_BASE_URL": server.url}, cwd=str(tmp_path))
    kernel.run("%load_ext jupyter_turns")
    return kernel


def test_the_cells_above_go_with_the_request_and_later_turns_send_what_is_new(
    tmp_path: Path,
) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(*(Reply.sse(sse_text_response([f"Answer {n}."])) for n in range(5)))
        kernel = _kernel(server, tmp_path)
        try:
            kernel.run("MARK = 'first-4711'\nprint(MARK)")
            kernel.run("def load():\n    return 1 / 0\n\nload()")
            kernel.run(
                "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                "fig, ax = plt.subplots(figsize=(2, 2), dpi=40)\n_ = ax.plot([1, 3, 2])"
            )
            kernel.run("%%chat --builtins none\nNothing above is sent by default.")
            kernel.run("%%chat --context above\nWhat did I just do?")
            kernel.run("print('second-0815')")
            kernel.run("%%chat\nAnd now?")  # --context sticks to the thread
            kernel.run('%config ChatMagics.context = "above"')  # the user's own default
            kernel.run("%%chat --new\nFrom the setting?")
            kernel.run("%%chat --new --context none\nNot this time.")  # a cell says otherwise
        finally:
            kernel.close()
        default, first, second, configured, off = _bodies(server)

    assert "cells above" not in json.dumps(default["messages"])

    text, images = _above(first)
    assert "first-4711" in text and "→ stdout: first-4711" in text  # source and its output
    assert "ZeroDivisionError: division by zero" in text
    assert "return 1 / 0" in text  # the traceback reaches into the user's code
    assert text.index("first-4711") < text.index("plt.subplots")  # oldest first, nearest last
    assert "%%chat --builtins none" in text  # the earlier chat cell is above too
    assert "What did I just do?" not in text  # the asking cell itself is not
    assert len(images) == 1 and images[0]["source"]["media_type"] == "image/png"
    assert "notebook_data" in str(first.get("system"))  # framed as data, with the rule

    text, images = _above(second)
    assert "second-0815" in text and "%%chat --context above" in text  # new since
    assert "first-4711" not in text and "plt.subplots" not in text and not images  # seen
    unchanged = re.search(r"Unchanged since you last saw them, not repeated: ([^.]*)\.", text)
    assert unchanged is not None and len(unchanged.group(1).split(", ")) == 5, text

    # ChatMagics.context sends them with a new thread's first request, all of them again;
    # --context none in the cell keeps them back
    text, images = _above(configured)
    assert "first-4711" in text and "second-0815" in text and "And now?" in text
    assert "Unchanged since" not in text and len(images) == 1
    assert "cells above" not in json.dumps(off["messages"])


def _notebook(path: Path, cells: list[tuple[str, str]]) -> None:
    notebook = new_notebook()
    for cell_id, source in cells:
        cell = new_code_cell(source)
        cell.id = cell_id
        notebook.cells.append(cell)
    nbformat.write(notebook, path)


def test_a_cell_changed_since_the_model_saw_it_is_sent_again_and_named(tmp_path: Path) -> None:
    """The saved notebook (VS Code names it; no page answers): cells have ids."""
    path = tmp_path / "work.ipynb"
    first_chat = "%%chat --context above\nLook."
    _notebook(path, [("a", "A = 'kept-1'"), ("b", "B = 'before-2'"), ("chat-1", first_chat)])
    with AnthropicTestServer() as server:
        server.enqueue(*(Reply.sse(sse_text_response([f"Answer {n}."])) for n in range(2)))
        kernel = _kernel(server, tmp_path)
        try:
            kernel.run(f"__vsc_ipynb_file__ = {str(path)!r}")
            kernel.run("%config ChatMagics.view_timeout = 0.2")
            kernel.run(first_chat, cell_id="chat-1")
            _notebook(
                path,
                [
                    ("a", "A = 'kept-1'"),
                    ("b", "B = 'after-3'"),
                    ("c", "C = 'added-4'"),
                    ("chat-1", first_chat),
                    ("chat-2", "%%chat\nAnd now?"),
                ],
            )
            kernel.run("%%chat\nAnd now?", cell_id="chat-2")
        finally:
            kernel.close()
        first, second = _bodies(server)

    text, _ = _above(first)
    assert "kept-1" in text and "before-2" in text and "the saved file work.ipynb" in text
    text, _ = _above(second)
    assert "Changed since you last saw them: index 1." in text
    assert "Unchanged since you last saw them, not repeated: index 0." in text
    assert "after-3" in text and "added-4" in text and "kept-1" not in text


def test_budgets_cut_with_notes_and_above_n_sends_the_nearest(tmp_path: Path) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(*(Reply.sse(sse_text_response([f"Answer {n}."])) for n in range(2)))
        kernel = _kernel(server, tmp_path)
        try:
            for n in range(8):  # 8 cells of ~3,500 characters: not all fit in 24,000
                kernel.run(f"# cell-{n}-start\n" + "x = 1  # " + "y" * 3_500)
            kernel.run("# long-cell\n" + "z = 2  # " + "w" * 6_000 + "\n# LONG-END")
            kernel.run("%%chat --context above\nBudget?")
            kernel.run("%%chat --new --context above:1\nOnly the nearest?")
        finally:
            kernel.close()
        first, nearest = _bodies(server)

    text, _ = _above(first)
    assert "# long-cell" in text and "LONG-END" not in text  # one cell's source is cut
    assert re.search(r"… \[[\d,]+ more characters", text)
    note = re.search(
        r"Not sent \(the cells above are sent up to 24,000 characters, the "
        r"nearest first\): ([^;]*); notebook_cells reads them\.",
        text,
    )
    assert note is not None, text
    assert "cell-0-start" not in text and "cell-7-start" in text  # the nearest kept
    assert len(text) < 26_000

    text, _ = _above(nearest)
    assert "The 1 entry of this kernel's history above this chat cell" in text
    assert "%%chat --context above" in text and "long-cell" not in text
