"""The notebook's tools are its own (issue 39, point 9): a ``@tool`` named like a built-in
(``run_cell``) is the one the model gets and the one that runs; the built-in steps aside with
a notice naming both, in the card once per thread and in ``%chat settings``. The page is told
which tool is a built-in (the approval prompt's ``builtin``, the saved response's), never
guessed from the name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.support.kernels import cell_record, execute_notebook

from .kernel import KernelDriver, ready_chat

pytestmark = pytest.mark.kernel

MINE = '''\
from jupyter_turns import tool
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call

ran = []

@tool(run="{run}")
def run_cell(code: str, timeout: int = 30) -> str:
    """Run a snippet in my sandbox."""
    ran.append(code)
    return f"sandbox ran {{code!r}}"
'''
SCRIPT = (
    "script = ScriptedProvider([cycle(tool_call('run_cell', {'code': 'print(6 * 7)'}),"
    " tool_call('variables', {})), cycle(message('Done.')),"
    " cycle(message('Again.'))])"
)
CHAT = "%%chat --provider scripted --script script --builtins run_cell,variables\n{}"
SPEC = (
    "import json; print(json.dumps([[t.name, t.description, sorted(t.input_schema['properties'])]"
    " for t in {}.tools]))"
)


def _notices(record: dict) -> list[str]:  # type: ignore[type-arg]
    return [e["text"] for e in record["events"] if e["kind"] == "notice"]


def test_a_notebook_tool_named_run_cell_is_offered_and_run_and_the_built_in_steps_aside(
    kernel: KernelDriver,
) -> None:
    kernel.run(MINE.format(run="unattended"))
    kernel.run(SCRIPT)
    settings_before = kernel.run("%chat settings").outputs
    first = kernel.run(CHAT.format("Run it in my sandbox."))
    offered = kernel.run(SPEC.format("script.requests[0]")).stdout()
    second = kernel.run(CHAT.format("And again."))
    ran = kernel.run("print(ran)").stdout().strip()
    settings = kernel.run("%chat settings").outputs

    # the request offers the notebook's run_cell, its description and schema, once
    specs = json.loads(offered)
    tools = {name: (text, props) for name, text, props in specs}
    assert tools["run_cell"] == ("Run a snippet in my sandbox.", ["code", "timeout"])
    assert "variables" in tools  # the other built-in is still offered
    assert [name for name, _, _ in specs].count("run_cell") == 1
    # the call runs the user's function with its code, and its result goes back
    assert ran == "['print(6 * 7)']"
    [record] = first.records()
    responses = [e for e in record["events"] if e["kind"] == "tool_call_response"]
    assert responses[0]["content"] == "sandbox ran 'print(6 * 7)'"
    # saved: which call went to a built-in, which did not (the card is drawn by it)
    assert [r["builtin"] for r in responses] == [False, True]
    # the card names both, once in the thread
    [notice] = [n for n in _notices(record) if "steps aside" in n]
    assert "your @tool run_cell" in notice and "the built-in tool run_cell" in notice
    assert '@tool(name="my_run_cell")' in notice
    [again] = second.records()
    assert not [n for n in _notices(again) if "steps aside" in n]
    # %chat settings says it too, before the first turn and after
    for outputs in (settings_before, settings):
        text = outputs[0]["data"]["text/plain"]
        assert "run_cell: your @tool of that name, the built-in steps aside" in text, text


def test_the_approval_prompt_says_which_tool_is_the_built_in(lab_kernel: KernelDriver) -> None:
    """The prompt of the notebook's ``run_cell`` carries no ``builtin`` (the page then shows
    every argument); the built-in ``python``'s does."""
    kernel = lab_kernel
    kernel.run(MINE.format(run="ask"))
    kernel.run(
        "script = ScriptedProvider([cycle(tool_call('run_cell', {'code': 'x = 1'})),"
        " cycle(tool_call('python', {'code': 'y = 2'})), cycle(message('Done.'))])"
    )
    cell = kernel.execute(
        "%%chat --provider scripted --script script --builtins run_cell,python\nGo"
    )
    widget = ready_chat(kernel)
    prompts = []
    for name in ("run_cell", "python"):
        prompt = kernel.wait(
            lambda n=name: next(  # type: ignore[misc]
                (p for p in widget.state.get("prompts", []) if p.get("name") == n), None
            ),
            30,
            f"the approval of {name}",
        )
        prompts.append(prompt)
        kernel.send_custom(
            widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
        )
    kernel.wait(lambda: cell.done, 30, "the turn to end")
    mine, builtin = prompts
    assert mine["arguments"] == {"code": "x = 1"} and "builtin" not in mine
    assert mine["schema"]["required"] == ["code"]
    assert builtin["builtin"] is True
    assert kernel.run("print(ran, y)").stdout().strip() == "['x = 1'] 2"
    responses = [e for e in cell.records()[-1]["events"] if e["kind"] == "tool_call_response"]
    assert json.dumps([r["builtin"] for r in responses]) == "[false, true]"


def test_a_replay_runs_the_notebook_tool_again_and_saves_which_it_was(tmp_path: Path) -> None:
    """Recorded, then replayed offline: the replayed call goes to the notebook's ``run_cell``
    again (its result the recorded one), and the replayed card says it is not the built-in,
    so it is drawn as the recording was."""
    cells = [
        "%load_ext jupyter_turns",
        MINE.format(run="unattended")
        + "\nscript = [cycle(tool_call('run_cell', {'code': 'print(6 * 7)'})),"
        " cycle(message('Done.'))]",
        "%%chat --provider scripted --script script\nRun it in my sandbox.",
        "print(ran)",
    ]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    execute_notebook(notebook, cwd=tmp_path)
    path = tmp_path / "sandbox.ipynb"
    nbformat.write(notebook, path)
    again = execute_notebook(
        nbformat.read(path, as_version=4),
        cwd=tmp_path,
        env={**os.environ, "JUPYTER_TURNS_REPLAY": "on"},
    )
    for run in (notebook, again):
        record = cell_record(run.cells[2])
        [response] = [e for e in record["events"] if e["kind"] == "tool_call_response"]
        assert response["content"] == "sandbox ran 'print(6 * 7)'"
        assert response["builtin"] is False
        assert run.cells[3].outputs[0]["text"] == "['print(6 * 7)']\n"
    assert record["turn"]["replayed_from"] == "sandbox.ipynb"
    assert response["replay"] == {"same": True}
