"""The cell tools in a headless run (nbclient): nothing hangs, nothing is inserted, edited, run,
deleted or moved, each says plainly there is no page, and the proposal is kept in the record."""

from __future__ import annotations

from pathlib import Path

from nbformat.v4 import new_code_cell, new_notebook

from tests.support.kernels import cell_record, execute_notebook
from tests.support.notebook_code import SETUP

SCRIPT = (
    "script = [cycle(tool_call('insert_cell', {'source': 'total = 42', 'run': True}),"
    " tool_call('edit_cell', {'index': 0, 'source': 'x = 2', 'run': True}),"
    " tool_call('run_cell', {'index': 0}), tool_call('delete_cell', {'index': 0}),"
    " tool_call('move_cell', {'index': 0, 'to': 1}),"
    " tool_call('insert_cell', {'source': 'y = 1', 'after': 0})),"
    " cycle(message('Proposed.'))]"
)


def test_a_headless_run_never_inserts_and_keeps_the_proposal(tmp_path: Path) -> None:
    chat = "%%chat --provider scripted --script script\nAdd a cell."
    cells = ["%load_ext jupyter_turns", SETUP, SCRIPT, chat, "print('total' in dir())"]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    execute_notebook(notebook, cwd=tmp_path)
    assert len(notebook.cells) == len(cells)  # nothing was inserted
    assert notebook.cells[-1].outputs[0]["text"] == "False\n"  # nor run
    record = cell_record(notebook.cells[3])
    request = next(e for e in record["events"] if e["kind"] == "tool_call_request")
    assert request["arguments"] == {"source": "total = 42", "run": True}  # the proposal, saved
    responses = [e for e in record["events"] if e["kind"] == "tool_call_response"]
    verbs = ["Not inserted", "Not edited", "Not run", "Not deleted", "Not moved", "Not inserted"]
    for response, verb in zip(responses, verbs, strict=True):
        assert response["status"] == "skipped"
        assert response["content"].startswith(f"{verb}: this kernel has no notebook page")
    assert "total = 42" in notebook.cells[3].outputs[0]["data"]["text/html"]
