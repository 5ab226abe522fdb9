"""Every example notebook, run headless from a fresh copy, then Restart Kernel and Run All on
the copy that run saved, shows the same each time (issue 45, point 1).

Each example is copied as shipped and run by nbclient, as nbval and ``jupyter execute`` run it,
with no API key and ``JUPYTER_TURNS_REPLAY=auto``: every keyed chat cell replays its recording.
The second run replays what the first saved, in a new kernel of the same user (the same data
directory: the grants and authorship store). Every cell's outputs must be the same, but for one
line that is right to change: persistence-and-restore restores its own file from disk, whose
turn is someone else's as shipped and this user's once they ran and saved it.

Not covered here: Run All again in the same kernel. Headless, the kernel finds its notebook by
the cells it ran, in order, and a second pass breaks that order (tests/browser covers it).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat import NotebookNode

from tests.support.kernels import AsyncIpcKernelManager

from .kernel import RECORD_MIME

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(p.name for p in EXAMPLES.glob("*.ipynb"))
_WIDGET = "application/vnd.jupyter.widget-view+json"  # a new model id each run
# the example MCP server runs on this machine's python (examples/nbval-sanitize.cfg)
_PYTHON = re.compile(r"(?<=stdio: )\S*/python[0-9.]*(?= )")
# persistence-and-restore restores its own file from disk: as shipped, its turn was written by
# someone else (sent quoted, and said so); once this user ran and saved it, the turn is theirs
_QUOTED = re.compile(r"  1 request in thread 'notes' was written elsewhere, [^\n]*\n")


def _client(notebook: NotebookNode, cwd: Path) -> NotebookClient:
    return NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        kernel_manager_class=AsyncIpcKernelManager,
        resources={"metadata": {"path": str(cwd)}},
    )


def _run_all(client: NotebookClient, notebook: NotebookNode) -> list[list[Any]]:
    """Run every cell once, in order, in the client's kernel; what each code cell showed."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            client.execute_cell(cell, index)
    return [_shown(cell) for cell in notebook.cells if cell.cell_type == "code"]


def _shown(cell: NotebookNode) -> list[Any]:
    """A cell's outputs as a reader sees them: not the record (event ids, times), nor a widget's
    model id, nor the path of this machine's python."""
    shown: list[Any] = []
    for output in cell.outputs:
        if output.output_type == "stream":
            shown.append((output.name, _PYTHON.sub("python", output.text)))
        elif output.output_type == "error":
            shown.append((output.ename, output.evalue))
        else:
            data = {k: v for k, v in output.data.items() if k not in (RECORD_MIME, _WIDGET)}
            shown.append({k: _PYTHON.sub("python", str(v)) for k, v in data.items()})
    return shown


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_an_example_runs_alike_after_restart_and_run_all(tmp_path: Path, name: str) -> None:
    shutil.copy(EXAMPLES / name, tmp_path / name)
    for helper in EXAMPLES.glob("*.py"):  # the MCP example's server
        if helper.name != "conftest.py":
            shutil.copy(helper, tmp_path / helper.name)
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env |= {"JUPYTER_TURNS_REPLAY": "auto", "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    notebook = nbformat.read(tmp_path / name, as_version=4)
    runs = []
    for _ in range(2):  # Restart Kernel and Run All, twice: the second on what the first saved
        client = _client(notebook, tmp_path)
        with client.setup_kernel(env=env):
            runs.append(_run_all(client, notebook))
        nbformat.write(notebook, tmp_path / name)
        notebook = nbformat.read(tmp_path / name, as_version=4)
    for index, (first, again) in enumerate(zip(*runs, strict=True)):
        if name == "persistence-and-restore.ipynb" and first != again:
            first = [(s[0], _QUOTED.sub("", s[1])) if isinstance(s, tuple) else s for s in first]
        assert again == first, f"{name}, code cell {index}: the second Run All differs"
