"""insert_cell and edit_cell in a headless run (nbclient): nothing hangs, nothing is inserted or
edited, and the proposal is kept in the saved record."""

from __future__ import annotations

from pathlib import Path

from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from tests.support.notebook_code import SETUP

from .kernel import RECORD_MIME

SCRIPT = (
    "script = [cycle(tool_call('insert_cell', {'source': 'total = 42', 'run': True}),"
    " tool_call('edit_cell', {'index': 0, 'source': 'x = 2'})),"
    " cycle(message('Proposed.'))]"
)


def test_a_headless_run_never_inserts_and_keeps_the_proposal(tmp_path: Path) -> None:
    chat = "%%chat --provider scripted --script script\nAdd a cell."
    cells = ["%load_ext jupyter_turns", SETUP, SCRIPT, chat, "print('total' in dir())"]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    client = NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    assert len(notebook.cells) == len(cells)  # nothing was inserted
    assert notebook.cells[-1].outputs[0]["text"] == "False\n"  # nor run
    record = notebook.cells[3].outputs[0]["data"][RECORD_MIME]
    request = next(e for e in record["events"] if e["kind"] == "tool_call_request")
    assert request["arguments"] == {"source": "total = 42", "run": True}  # the proposal, saved
    insert, edit = (e for e in record["events"] if e["kind"] == "tool_call_response")
    assert insert["status"] == "skipped" and insert["content"].startswith("Not inserted: ")
    assert edit["status"] == "skipped" and edit["content"].startswith("Not edited: ")
    assert "total = 42" in notebook.cells[3].outputs[0]["data"]["text/html"]
