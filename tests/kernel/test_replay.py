"""Replay: a notebook recorded against the API re-runs offline, checks itself under nbval, and
reports a tool that now answers differently.

The notebook is recorded through the real SDK against the local API server (a tool turn with
reasoning, and a later cell that uses the variable the tool created), then run again with no
key and a server that must see no request at all.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_turns.testing import REPLAY_PATTERNS
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import ToolUse, sse_text_response, sse_thinking_response
from tests.support.kernels import cell_record, execute_notebook

from .kernel import RECORD_MIME, KernelDriver

pytestmark = pytest.mark.kernel

TOOL = '''\
from pathlib import Path
from jupyter_turns import tool

@tool(run="unattended")
def make_table(rows: int) -> str:
    """Make the table."""
    global table
    table = list(range(rows))
    with Path("ran.txt").open("a") as log:
        log.write("ran\\n")
    return f"made {rows} rows"
'''
CHAT = "%%chat --provider anthropic --model claude-haiku-4-5\nMake a table of 3 rows"
CELLS = ["%load_ext jupyter_turns", TOOL, CHAT, "print(len(table), sum(table))"]


def _run(notebook: nbformat.NotebookNode, cwd: Path, env: dict[str, str]) -> nbformat.NotebookNode:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    return execute_notebook(notebook, cwd=cwd, env={**base, **env})


def _run_saved(
    notebook: nbformat.NotebookNode, path: Path, env: dict[str, str]
) -> nbformat.NotebookNode:
    """Save ``notebook`` at ``path`` (an edit is saved, as a user saves it), then run it there:
    a kernel with no frontend replays only from the notebook holding the cells it ran."""
    nbformat.write(notebook, path)
    return _run(notebook, path.parent, env)


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """The notebook, run once against the local API server and saved."""
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(
                sse_thinking_response(
                    ["The user wants a table; ", "call the tool."],
                    tool=ToolUse("make_table", {"rows": 3}, id="toolu_table"),
                    stop_reason="tool_use",
                )
            ),
            Reply.sse(sse_text_response(["The table has ", "**3 rows**."])),
        )
        notebook = new_notebook(cells=[new_code_cell(source) for source in CELLS])
        env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": server.url}
        _run(notebook, tmp_path, env)
        server.assert_all_served()
    path = tmp_path / "recorded.ipynb"
    nbformat.write(notebook, path)
    (tmp_path / "ran.txt").unlink()
    return path


def _offline(server: AnthropicTestServer, mode: str = "on") -> dict[str, str]:
    """No key; the base URL points at a server that must get no request."""
    return {"JUPYTER_TURNS_REPLAY": mode, "ANTHROPIC_BASE_URL": server.url}


def _chat_output(notebook: Any) -> dict[str, Any]:
    return notebook.cells[2].outputs[0]["data"]


NOTICE = "Replayed from the recording saved in recorded.ipynb on "


def _unmarked(text: str) -> str:
    """``text`` without what says it is a replay (what nbval_for_chat_cells leaves out)."""
    for pattern, replacement in REPLAY_PATTERNS.items():
        text = re.sub(pattern, replacement, text)
    return text


def test_a_recorded_notebook_replays_offline_and_its_tool_runs_again(
    recorded: Path, tmp_path: Path
) -> None:
    saved = nbformat.read(recorded, as_version=4)
    with AnthropicTestServer() as server:
        for mode in ("on", "auto"):  # auto: no key is set, and the saved turn matches
            again = _run(copy.deepcopy(saved), tmp_path, _offline(server, mode))
            assert server.requests == []  # no network
            for mime in ("text/html", "text/plain"):  # as recorded, and saying it is a replay
                assert _chat_output(again)[mime] != _chat_output(saved)[mime]
                assert _unmarked(_chat_output(again)[mime]) == _chat_output(saved)[mime]
            assert NOTICE in _chat_output(again)["text/html"]
            assert (
                again.cells[3].outputs
                == saved.cells[3].outputs
                == [{"output_type": "stream", "name": "stdout", "text": "3 3\n"}]
            )
            record = _chat_output(again)[RECORD_MIME]
            kinds = [e["kind"] for e in record["events"]]
            assert kinds.pop(1) == "notice"  # that this is a replay, after the request
            assert kinds == [e["kind"] for e in _chat_output(saved)[RECORD_MIME]["events"]]
            response = next(e for e in record["events"] if e["kind"] == "tool_call_response")
            assert response["replay"] == {"same": True}
            assert record["turn"]["replayed_from"] == "recorded.ipynb"
            live = _chat_output(saved)[RECORD_MIME]["turn"]
            assert record["turn"]["usage"] == live["usage"] and live["usage"]["output_tokens"]
            assert [(c["stop_reason"], c["output_tokens"]) for c in record["turn"]["cycles"]] == [
                (c["stop_reason"], c["output_tokens"]) for c in live["cycles"]
            ]
            assert [c["stop_reason"] for c in live["cycles"]] == ["tool_use", "end_turn"]
            thinking = next(e for e in record["events"] if e["kind"] == "reasoning")
            assert thinking["metadata"]["signature"] == "EqQBCkYIBxgCKkDtestsignature"
    assert (tmp_path / "ran.txt").read_text() == "ran\nran\n"  # the tool really ran, twice


def test_nbval_checks_the_recorded_notebook_offline(recorded: Path, tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from jupyter_turns.testing import nbval_for_chat_cells as pytest_collection_modifyitems\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["JUPYTER_TURNS_REPLAY"] = "on"
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # nothing listens: no network
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2]), env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "-p", "no:cacheprovider", "-q", recorded.name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "4 passed" in run.stdout


def test_a_tool_that_answers_differently_is_reported(recorded: Path, tmp_path: Path) -> None:
    changed = nbformat.read(recorded, as_version=4)
    changed.cells[1].source = changed.cells[1].source.replace('f"made {rows} rows"', '"made it"')
    with AnthropicTestServer() as server:
        again = _run_saved(copy.deepcopy(changed), recorded, _offline(server))
        record = _chat_output(again)[RECORD_MIME]
        response = next(e for e in record["events"] if e["kind"] == "tool_call_response")
        assert response["replay"] == {"same": False, "saved": "made 3 rows"}
        notices = [e["text"] for e in record["events"] if e["kind"] == "notice"]
        assert any("returned something else" in text for text in notices)
        saved_results = copy.deepcopy(changed)  # --replay-tools saved: the tool does not run
        saved_results.cells[2].source = CHAT.replace("4-5\n", "4-5 --replay-tools saved\n")
        del saved_results.cells[3]  # it uses the variable the tool (not run now) would make
        (tmp_path / "ran.txt").unlink(missing_ok=True)
        quiet = _run_saved(saved_results, recorded, _offline(server))
        record = _chat_output(quiet)[RECORD_MIME]
        response = next(e for e in record["events"] if e["kind"] == "tool_call_response")
        assert response["content"] == "made 3 rows" and response["replay"] == {"same": True}
        assert not (tmp_path / "ran.txt").exists()
        strict = copy.deepcopy(changed)
        strict.cells[0].source += '\n%config ChatMagics.replay_check = "strict"'
        with pytest.raises(CellExecutionError, match="replay check failed: 1 tool result"):
            _run_saved(strict, recorded, _offline(server))
        assert server.requests == []


def test_auto_without_a_key_says_the_key_and_why_a_recorded_cell_cannot_replay(
    recorded: Path, tmp_path: Path
) -> None:
    """A recorded cell whose request changed says both; a cell written after the recording
    was never recorded: only the missing key is said (issue 31)."""
    edited = nbformat.read(recorded, as_version=4)
    edited.cells[2].source = CHAT.replace("3 rows", "5 rows")
    added = nbformat.read(recorded, as_version=4)  # a cell written after the recording
    added.cells.append(new_code_cell(CHAT.replace("Make a table of 3 rows", "Now plot it")))
    why = (
        "its request changed:\n--- saved request\n+++ this cell\n@@ -1 +1 @@\n"
        "-Make a table of 3 rows\n+Make a table of 5 rows"
    )
    for case, notebook in (("edited", edited), ("added", added)):
        with AnthropicTestServer() as server, pytest.raises(CellExecutionError) as failed:
            _run_saved(notebook, recorded, _offline(server, "auto"))
        message = str(failed.value)
        assert "No Anthropic API key found" in message, case
        if case == "edited":
            assert f"Nor can this cell be replayed from the notebook: {why}" in message
        else:
            assert "replayed" not in message and "Make a table" not in message, message
        assert server.requests == []


def test_a_second_notebook_holding_the_request_stops_the_replay(
    recorded: Path, tmp_path: Path
) -> None:
    shutil.copy(recorded, tmp_path / "copy.ipynb")  # nbclient names no notebook: which is it?
    with AnthropicTestServer() as server, pytest.raises(CellExecutionError) as failed:
        _run(nbformat.read(recorded, as_version=4), tmp_path, _offline(server))
    assert "2 notebooks in" in str(failed.value)
    assert "hold every cell this kernel ran (copy.ipynb, recorded.ipynb)" in str(failed.value)
    assert not (tmp_path / "ran.txt").exists()  # neither notebook's tool call ran
    assert server.requests == []


def test_replay_on_fails_a_cell_whose_request_changed(recorded: Path, tmp_path: Path) -> None:
    edited = nbformat.read(recorded, as_version=4)
    edited.cells[2].source = CHAT.replace("3 rows", "4 rows")
    with AnthropicTestServer() as server, pytest.raises(CellExecutionError) as failed:
        _run_saved(edited, recorded, _offline(server))
    message = str(failed.value)
    assert "replay is on, but this cell cannot be replayed: its request changed" in message
    assert "-Make a table of 3 rows" in message and "+Make a table of 4 rows" in message
    assert json.dumps(server.requests) == "[]"


def test_a_papermill_style_parameters_cell_does_not_stop_the_replay(
    recorded: Path, tmp_path: Path
) -> None:
    notebook = nbformat.read(recorded, as_version=4)
    injected = new_code_cell("# Parameters\nrows = 3")
    injected.metadata["tags"] = ["injected-parameters"]  # what papermill inserts
    notebook.cells.insert(1, injected)
    with AnthropicTestServer() as server:
        again = _run(notebook, tmp_path, _offline(server))
        assert server.requests == []
    record = cell_record(again.cells[3])
    assert record["turn"]["replayed_from"] == "recorded.ipynb"
    assert again.cells[4].outputs[0]["text"] == "3 3\n"


def test_a_notebook_whose_file_the_kernel_knows_replays_its_tool_call_once(
    recorded: Path, tmp_path: Path
) -> None:
    """JupyterLab names the notebook (JPY_SESSION_NAME): the first chat cell restores the
    thread saved there, then replays its own saved turn, which that history already holds: the
    replay takes that turn's place, the thread starts over from it, and the restore has
    nothing to say (the history it brought is the cell's own, issue 45)."""
    saved = nbformat.read(recorded, as_version=4)
    with AnthropicTestServer() as server:
        env = {**_offline(server, "auto"), "JPY_SESSION_NAME": str(recorded)}
        again = _run(copy.deepcopy(saved), tmp_path, env)
        assert server.requests == []
    [shown] = again.cells[2].outputs  # the turn, and no word of the restore
    record = shown["data"][RECORD_MIME]
    assert record["turn"]["replayed_from"] == "recorded.ipynb"
    kinds = [e["kind"] for e in record["events"]]
    assert kinds.pop(1) == "notice"  # that this is a replay
    assert kinds == [e["kind"] for e in _chat_output(saved)[RECORD_MIME]["events"]]
    assert again.cells[3].outputs[0]["text"] == "3 3\n"
    assert (tmp_path / "ran.txt").read_text() == "ran\n"  # the recorded call ran once


def test_a_replayed_cell_run_again_replays_from_the_history_it_was_recorded_on(
    recorded: Path, tmp_path: Path
) -> None:
    """The same cell run twice in one kernel: the second replay starts from before the first
    (the thread held the recorded call ids once already), so both replay whole."""
    cell_id = nbformat.read(recorded, as_version=4).cells[2].id  # as JupyterLab sends it
    with AnthropicTestServer() as server:
        env = {
            **_offline(server, "auto"),
            "ANTHROPIC_API_KEY": "",
            "JPY_SESSION_NAME": str(recorded),
        }
        kernel = KernelDriver(env=env, cwd=str(tmp_path))
        try:
            kernel.run(CELLS[0])
            kernel.run(TOOL)
            runs = [kernel.run(CHAT, cell_id=cell_id) for _ in range(2)]
            threads = kernel.run("%chat threads").stdout()
        finally:
            kernel.close()
        assert server.requests == []
    for cell in runs:
        [record] = cell.records()
        kinds = [e["kind"] for e in record["events"]]
        assert "error" not in kinds, record["events"]
        assert kinds.count("tool_call_response") == 1
    assert (tmp_path / "ran.txt").read_text() == "ran\nran\n"
    assert threads.startswith("* main: 1 turn,"), threads
