"""Restore is exact: what a kernel held is what a restarted kernel gets back from the saved
notebook — cells re-run, a name reused by ``%chat new``, with and without the lab extension.
Each kernel knows its notebook, as under JupyterLab: the threads' settings (the scripted
provider) are then the user's own grant there, and come back with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from .kernel import Cell, KernelDriver

pytestmark = pytest.mark.kernel

DUMP = (
    "import json\n"
    "_m = get_ipython().magics_manager.registry['ChatMagics']\n"
    "print(json.dumps({n: [e.model_dump(mode='json') for e in t.chat.conversation.events]"
    " for n, t in _m.session.threads.by_name.items()}))"
)


def threads_of(kernel: KernelDriver) -> dict[str, list[dict[str, Any]]]:
    return json.loads(kernel.run(DUMP).stdout())  # type: ignore[no-any-return]


def save(
    path: Path,
    sources: dict[str, str],
    last_run: dict[str, Cell],
    kernel: KernelDriver,
    *,
    extension: bool,
) -> Path:
    """What JupyterLab saves: each cell's outputs from its last run and, with the extension,
    the metadata the kernel sent over the ``jupyter_turns.metadata`` comm."""
    notebook = new_notebook()
    cell_meta: dict[str, Any] = {}
    for message in kernel.comm_data:
        if "value" not in message:
            continue  # not a metadata write (a widget shown live, a record handed over)
        if message.get("scope") == "notebook":
            notebook.metadata[message["key"]] = message["value"]
        elif message.get("cell_id"):
            cell_meta[message["cell_id"]] = message["value"]
    if not extension:
        notebook.metadata.pop("jupyter_turns", None)
    for cell_id, source in sources.items():
        cell = new_code_cell(source)
        cell["id"] = cell_id
        if extension and cell_id in cell_meta:
            cell.metadata["jupyter_turns"] = cell_meta[cell_id]
        cell.outputs = [
            new_output("display_data", data=o["data"])
            for o in last_run[cell_id].outputs
            if o["output_type"] == "display_data"
        ]
        notebook.cells.append(cell)
    nbformat.write(notebook, path)
    return path


def _kernel_of(notebook: Path) -> KernelDriver:
    """A kernel whose notebook is ``notebook`` (JupyterLab names it; the file exists)."""
    nbformat.write(new_notebook(), notebook)
    return KernelDriver(env={"JPY_SESSION_NAME": str(notebook)})


@pytest.mark.parametrize("extension", [True, False], ids=["with-extension", "outputs-only"])
def test_a_restarted_kernel_gets_back_exactly_what_it_had(tmp_path: Path, extension: bool) -> None:
    sources = {
        "a": "%%chat --provider scripted\nFirst question",
        "b": "%%chat\nSecond question",
        "c": "%chat new main",
        "d": "%%chat --provider scripted\nA fresh start",
    }
    runs = ["a", "b", "a", "c", "d"]  # cell a is run again before the new thread starts
    kernel = _kernel_of(tmp_path / "n.ipynb")
    last_run: dict[str, Cell] = {}
    try:
        kernel.run("%load_ext jupyter_turns")
        for cell_id in runs:
            if cell_id == "c":
                left = threads_of(kernel)["main"]  # the history `%chat new main` leaves
            last_run[cell_id] = kernel.run(sources[cell_id], cell_id=cell_id)
        before = {"main": threads_of(kernel)["main"], "main-earlier": left}
        path = save(tmp_path / "n.ipynb", sources, last_run, kernel, extension=extension)
    finally:
        kernel.close()
    assert [e["content"] for e in left if e["kind"] == "chat_request"] == [
        "First question",
        "Second question",
        "First question",
    ]

    kernel = _kernel_of(tmp_path / "n2.ipynb")
    try:
        kernel.run("%load_ext jupyter_turns")
        restored = kernel.run(f"%chat restore {path}").stdout()
        assert "not applied" not in restored and "written elsewhere" not in restored
        assert "Restored thread 'main': 2 events" in restored
        assert "Restored thread 'main-earlier': 6 events" in restored
        assert threads_of(kernel) == before
        # re-running cell a now keeps everything cell a showed before
        last_run["a"] = kernel.run("%%chat\nFirst question", cell_id="a")
        after = threads_of(kernel)
        path = save(tmp_path / "n2.ipynb", sources, last_run, kernel, extension=extension)
    finally:
        kernel.close()
    kernel = KernelDriver()
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(f"%chat restore {path}")
        assert threads_of(kernel) == after
    finally:
        kernel.close()
