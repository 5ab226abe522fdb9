"""A cold start (issue 43): ``%load_ext jupyter_turns`` imports none of the heavy libraries, and
the first chat cell imports only what it uses.

In a fresh real kernel, each check reads which of tests/bench/b13_cold_start.py's HEAVY
libraries (provider SDKs, MCP, pydantic, markdown-it, nh3, nbformat, httpx, the widgets) were
imported since just before ``%load_ext``. What registers at load still works before any chat
cell: a page opening the notebook is answered (and the path it names reaches the session made
later), and a card's Undo is answered.
"""

from __future__ import annotations

import importlib.util
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_turns.editing.control import CONTROL_TARGET
from tests.bench.b13_cold_start import HEAVY
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response
from tests.support.kernels import execute_notebook

from .kernel import KernelDriver, Widget

pytestmark = pytest.mark.kernel

SDKS = {"anthropic", "openai", "mcp"}


_SNAPSHOT = "import sys as _ct_sys\n_ct_before = set(_ct_sys.modules)"
# prints the HEAVY libraries imported since _SNAPSHOT
_HEAVY = (
    "print(sorted({m.split('.')[0] for m in set(_ct_sys.modules) - _ct_before}"
    f" & set({sorted(HEAVY)!r})))"
)


def _load(kernel: KernelDriver) -> None:
    kernel.run(_SNAPSHOT)
    load = kernel.run("%load_ext jupyter_turns")
    assert load.reply is not None and load.reply["status"] == "ok", load.outputs


def _stdout(cell: NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o["output_type"] == "stream")


_PRESENT = f"import sys as _ct_sys\nprint(sorted(set(_ct_sys.modules) & set({sorted(HEAVY)!r})))"


def _present(kernel: KernelDriver) -> set[str]:
    """The HEAVY libraries in the kernel's ``sys.modules`` now, however they came."""
    shown = kernel.run(_PRESENT)
    assert shown.reply is not None and shown.reply["status"] == "ok", shown.outputs
    return set(json.loads(shown.stdout().strip().replace("'", '"')))


def _heavy(kernel: KernelDriver) -> set[str]:
    """The HEAVY libraries imported since just before ``%load_ext``."""
    shown = kernel.run(_HEAVY)
    assert shown.reply is not None and shown.reply["status"] == "ok", shown.outputs
    return set(json.loads(shown.stdout().strip().replace("'", '"')))


def _control(kernel: KernelDriver, request: dict[str, Any]) -> dict[str, Any]:
    """Send the page's ``request`` on a new control comm; the kernel's answer."""
    request_id = uuid.uuid4().hex
    content = {
        "comm_id": uuid.uuid4().hex,
        "target_name": CONTROL_TARGET,
        "data": {**request, "request_id": request_id},
    }
    kernel.widgets[content["comm_id"]] = Widget(content["comm_id"], {})  # hear its answer
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_open", content))

    def answer() -> list[dict[str, Any]]:
        return [m for m in kernel.comm_data if m.get("request_id") == request_id]

    [got] = kernel.wait(answer, 60, f"the kernel's answer to {request['request']!r}")
    return got


def test_load_ext_and_a_page_opening_import_no_heavy_library(tmp_path: Path) -> None:
    """The page's control comm answers at once after ``%load_ext`` (a page opening: no turn
    runs), with nothing heavy imported; the path it named reaches the session the first
    ``%chat`` command makes (the server's root bounds the instruction files)."""
    root = tmp_path / "root"
    project = root / "project"
    project.mkdir(parents=True)
    (root / "AGENTS.md").write_text("root-rule\n")
    notebook = project / "analysis.ipynb"
    kernel = KernelDriver(
        env={"JPY_SESSION_NAME": str(notebook), "HOME": str(tmp_path)}, cwd=str(project)
    )
    try:
        _load(kernel)
        page = _control(kernel, {"request": "page", "path": "project/analysis.ipynb"})
        loaded = _heavy(kernel)
        present = _present(kernel)
        said = kernel.run("%chat instructions").stdout()
    finally:
        kernel.close()
    assert page == {"request_id": page["request_id"], "ok": True, "running": []}
    assert loaded == set()
    assert present == set()  # nor had the kernel's own start imported one
    assert f"in {project} and its parents up to {root} (the server's root)" in said


def test_an_undo_before_any_chat_is_answered() -> None:
    """A saved card's Undo clicked before this kernel ran a chat cell: the session is made for
    it, and the answer says why nothing was undone."""
    kernel = KernelDriver()
    try:
        _load(kernel)
        answer = _control(kernel, {"request": "undo", "call_id": "toolu_01"})
    finally:
        kernel.close()
    assert answer["ok"] is False and answer["reason"], answer


def test_a_scripted_chat_and_chat_key_import_no_provider_sdk(tmp_path: Path) -> None:
    """``%chat key`` (its hidden prompt answered) and a first ``%%chat`` that plays a script
    import neither provider SDK nor MCP."""
    kernel = KernelDriver(env={"HOME": str(tmp_path)}, cwd=str(tmp_path))
    try:
        _load(kernel)
        asked = kernel.execute("%chat key")
        request = kernel.kc.get_stdin_msg(timeout=60)
        assert request["content"]["password"] is True
        kernel.kc.input("sk-ant-api03-typed-000")
        kernel.wait(lambda: asked.done, 60, "%chat key to finish")
        after_key = _heavy(kernel)
        chat = kernel.run("%%chat --provider scripted\nHello", timeout=120)
        after_chat = _heavy(kernel)
    finally:
        kernel.close()
    assert asked.reply is not None and asked.reply["status"] == "ok", asked.outputs
    assert chat.reply is not None and chat.reply["status"] == "ok", chat.outputs
    assert after_key & SDKS == set()
    assert after_chat & SDKS == set()
    assert "pydantic" in after_chat  # the first chat pays for what it uses


def test_ask_chat_with_anthropic_imports_its_sdk_alone(tmp_path: Path) -> None:
    """The page's Ask chat on a traceback (``%%chat --fix N``), the first chat cell of the
    kernel, with the Anthropic provider: the anthropic SDK is imported, openai and mcp are not
    (run by nbclient: the kernel's own history is what ``--fix`` reads there)."""
    cells = [
        _SNAPSHOT,
        "%load_ext jupyter_turns",
        "1 / 0",  # In[3]
        "%%chat --fix 3 --model claude-haiku-4-5\nWhy does cell [3] fail, and how do I fix it?",
        _HEAVY,
    ]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    notebook.cells[2].metadata["tags"] = ["raises-exception"]
    with AnthropicTestServer() as server:
        server.enqueue(Reply.sse(sse_text_response(["Divide by something else."])))
        env = {**os.environ, "HOME": str(tmp_path), "ANTHROPIC_API_KEY": "sk-ant-api03-test-000"}
        env.pop("JPY_SESSION_NAME", None)
        execute_notebook(
            notebook, cwd=tmp_path, env={**env, "ANTHROPIC_BASE_URL": server.url}, timeout=120
        )
    assert [r.path.split("?")[0] for r in server.requests] == ["/v1/messages"]
    loaded = set(json.loads(_stdout(notebook.cells[4]).replace("'", '"')))
    assert "anthropic" in loaded
    assert loaded & {"openai", "mcp"} == set()


def test_the_heavy_list_names_libraries_that_exist() -> None:
    """Each HEAVY name is a library the test environment has: a misspelt one could never be
    caught imported."""
    assert sorted(name for name in HEAVY if importlib.util.find_spec(name) is None) == []
