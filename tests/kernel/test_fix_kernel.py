"""``%chat fix``: asking about an error, in a real kernel run by nbclient against the local API
server (the real anthropic SDK; no page, no notebook file: the kernel's own history is read).

With no error yet it says so and sends nothing; a cell without an error, or one that does not
exist, is a clear message; a failing cell's source, traceback and the summary of the variables
its failing line names reach the API as labeled notebook data, with the request text a person
reads in the cell (``%%chat --fix`` with a request of its own sends that instead).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response
from tests.support.kernels import execute_notebook

from .kernel import RECORD_MIME

pytestmark = pytest.mark.kernel

CELLS = [
    "%load_ext jupyter_turns\n%config ChatMagics.model = 'claude-haiku-4-5'",  # In[1]
    "%chat fix",  # In[2]: nothing has failed yet
    "import pandas as pd\n"  # In[3]
    "rain = pd.DataFrame({'city': ['Oslo', 'Pune'], 'rain_mm': [76.0, 722.5]})\nunused = 41",
    "scale = 10\ntotal = rain['rain'].sum() * scale",  # In[4]: fails
    "%chat fix 3",  # In[5]: ran without an error
    "%chat fix 99",  # In[6]: no such cell
    "%chat fix",  # In[7]: the last error, In[4]
    "%%chat --fix 4\nWhat is wrong with the column name?",  # In[8]: its own words
]
FAILS = {1, 3, 4, 5}  # the cells whose run ends in an error (a UsageError is one)


def _run(tmp_path: Path, server: AnthropicTestServer) -> nbformat.NotebookNode:
    notebook = new_notebook(cells=[new_code_cell(source) for source in CELLS])
    for index in FAILS:
        notebook.cells[index].metadata["tags"] = ["raises-exception"]
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": server.url}
    env.pop("JPY_SESSION_NAME", None)
    return execute_notebook(notebook, cwd=tmp_path, env=env, timeout=90)


def _said(cell: nbformat.NotebookNode) -> str:
    """What a cell showed: its streams and errors, as text."""
    return "".join(
        o.get("text", "") + o.get("evalue", "") + "".join(o.get("traceback", []))
        for o in cell.outputs
    )


def _answer(cell: nbformat.NotebookNode) -> str:
    """The assistant's message in the cell's saved turn record."""
    records = [o["data"][RECORD_MIME] for o in cell.outputs if RECORD_MIME in o.get("data", {})]
    assert records, cell.outputs
    return "".join(e["content"] for e in records[-1]["events"] if e["kind"] == "message")


def _blocks(body: dict[str, Any]) -> list[str]:
    """The text blocks of the request's last (user) message: the request being asked."""
    last = body["messages"][-1]
    assert last["role"] == "user"
    content = last["content"]
    return [content] if isinstance(content, str) else [b["text"] for b in content]


def _block(blocks: list[str], source: str) -> str:
    found = [b for b in blocks if b.startswith(f'<notebook_data source="{source}">')]
    assert len(found) == 1, (source, blocks)
    return found[0]


def test_chat_fix_sends_the_failing_cell_its_traceback_and_variables(tmp_path: Path) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(sse_text_response(["The column is ", "`rain_mm`."])),
            Reply.sse(sse_text_response(["Use `rain_mm`."])),
        )
        notebook = _run(tmp_path, server)
        requests = [r.body for r in server.requests]
    cells = notebook.cells

    nothing = _said(cells[1])
    assert "%chat fix: no cell has an error in the kernel's own history" in nothing
    assert "Run the cell that fails first, or name it by the number Jupyter shows" in nothing
    assert "%chat fix 19 for [19]." in nothing
    assert "%chat fix: cell In[3] has no error output" in _said(cells[4])
    assert "Cells with an error: In[4]." in _said(cells[4])
    assert "%chat fix: there is no cell In[99]" in _said(cells[5])
    assert len(requests) == 2  # the refusals sent nothing

    blocks = _blocks(requests[0])
    assert blocks[0] == "Why does cell In[4] fail, and how do I fix it?"
    source = _block(blocks, "cell In[4] source")
    assert "total = rain['rain'].sum() * scale" in source
    traceback = _block(blocks, "cell In[4] traceback")
    assert "KeyError: 'rain'" in traceback and "In[4], line 2" in traceback
    variables = _block(blocks, "cell In[4] variables")
    assert "The variables line 2 names, as they are now (after the error):" in variables
    assert re.search(r"rain:\ntype: pandas\.(core\.frame\.)?DataFrame\n", variables), variables
    assert "rain_mm: float64" in variables and "shape: (2, 2)" in variables
    assert "scale:\ntype: builtins.int" in variables  # line 2 names it too
    assert "unused" not in variables and "pd:" not in variables  # not on the line; a module
    assert "edit_cell" in {tool["name"] for tool in requests[0]["tools"]}
    assert _answer(cells[6]) == "The column is `rain_mm`."  # the answer, in the cell's record

    own = _blocks(requests[1])
    assert own[0] == "What is wrong with the column name?"
    assert "KeyError: 'rain'" in _block(own, "cell In[4] traceback")
