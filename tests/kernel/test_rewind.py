"""Rewind and fork in a real kernel: ``%chat rewind`` undoes a turn's steps (a variable back),
the next request no longer carries the rewound turns, the rewind survives a restore, ``%chat
fork`` starts a thread with the history before a turn, and a bad turn number says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from tests.support.notebook_code import SETUP

from .kernel import RECORD_MIME, Cell, KernelDriver

pytestmark = pytest.mark.kernel

SCRIPT = (
    "script = ScriptedProvider(["
    "cycle(tool_call('python', {'code': 'x = 2'})), cycle(message('x is 2')),"
    " cycle(tool_call('python', {'code': 'x = 3\\ny = 5'})), cycle(message('x is 3')),"
    " cycle(message('Again from turn 2.'))])\n"
    "other = ScriptedProvider([cycle(message('Forked answer.'))])"
)
MAIN_EVENTS = (
    "_m = get_ipython().magics_manager.registry['ChatMagics']\n"
    "print(len(_m.session.threads.by_name['main'].chat.conversation.events))"
)
# the requests of the thread's last turn, as the script that played it was sent them
SENT = "print([e.content for e in {script}.requests[-1].events if e.kind == 'chat_request'])"


def run_answering_page(kernel: KernelDriver, code: str) -> tuple[Cell, dict[str, Any]]:
    """Run ``code`` playing the page: each ``replace_record`` is applied (kept by cell id) and
    answered, as the extension's edit.js does."""
    cell = kernel.execute(code)
    replaced: dict[str, Any] = {}
    answered: set[str] = set()
    while not (cell.done and cell.reply is not None):
        kernel.pump()
        for message in cell.messages:
            data = message["content"].get("data") or {}
            if message["msg_type"] != "comm_msg" or data.get("request") != "replace_record":
                continue
            if data["request_id"] in answered:
                continue
            answered.add(data["request_id"])
            replaced[data["cell_id"]] = data["bundle"]
            reply = kernel.kc.session.msg(
                "comm_msg",
                {"comm_id": message["content"]["comm_id"],
                 "data": {"request_id": data["request_id"], "ok": True}},
            )  # fmt: skip
            kernel.kc.shell_channel.send(reply)
    return cell, replaced


def error_text(cell: Cell) -> str:
    return "".join(o.get("text", "") or o.get("evalue", "") for o in cell.outputs)


def save(path: Path, cells: list[tuple[str, str, list[dict[str, Any]]]]) -> Path:
    notebook = new_notebook()
    for cell_id, source, outputs in cells:
        cell = new_code_cell(source)
        cell["id"] = cell_id
        cell.outputs = [new_output("display_data", data=o["data"]) for o in outputs]
        notebook.cells.append(cell)
    nbformat.write(notebook, path)
    return path


def test_rewind_undoes_a_turn_and_stops_sending_it_even_after_a_restore(tmp_path: Path) -> None:
    # JupyterLab owns the kernel (as jupyter_server says): the page comm is asked
    kernel = KernelDriver(env={"JPY_SESSION_NAME": str(tmp_path / "rewind.ipynb")})
    try:
        for source in ("%load_ext jupyter_turns", SETUP, "x = 1", SCRIPT, "%chat allow python"):
            kernel.run(source)
        first = kernel.run(
            "%%chat --provider scripted --script script --builtins python\nfirst", cell_id="t1"
        )
        second = kernel.run("%%chat --script script\nsecond", cell_id="t2")
        assert kernel.run("print(x, y)").stdout().split() == ["3", "5"]
        too_far = kernel.run("%chat rewind 5")
        rewound, replaced = run_answering_page(kernel, "%chat rewind 2")
        after = kernel.run("print(x, 'y' in dir())").stdout().split()
        again = kernel.run("%chat rewind 2")
        third = kernel.run("%%chat --script script\nthird", cell_id="t3")
        sent = kernel.run(SENT.format(script="script")).stdout().strip()
        main_before = kernel.run(MAIN_EVENTS).stdout()
        forked = kernel.run("%chat fork alt --at 2")
        fork_cell = kernel.run("%%chat --script other\ntry again", cell_id="t4")
        sent_fork = kernel.run(SENT.format(script="other")).stdout().strip()
        bad_fork = kernel.run("%chat fork alt2 --at 9")
        main_left = kernel.run(MAIN_EVENTS).stdout()
    finally:
        kernel.close()
    assert "thread 'main' has 2 turns: rewind 1 to 2, not 5" in error_text(too_far)
    line = rewound.stdout().strip()
    assert line.startswith("Rewound by the user: turn 2 of this thread, no longer sent")
    assert "python call" in line and "restored x" in line and "removed y" in line
    assert "not undone: python call" in line and "side effects" in line
    assert after == ["2", "False"]  # x back to what turn 1 left, y gone
    assert "turn 2 of thread 'main' is rewound already" in error_text(again)
    # the next request carries turn 1 and the new turn, not the rewound one
    assert sent == "['first', 'third']"
    # the card of turn 2 says it was rewound (the page rewrote its record)
    marked = replaced["t2"][RECORD_MIME]["events"]
    assert any(e["kind"] == "rewind" for e in marked)
    assert "Rewound by the user: turn 2" in replaced["t2"]["text/html"]
    # fork: the new thread's first request carries the history before turn 2, then its own
    assert "New thread 'alt' is current" in forked.stdout()
    assert sent_fork == "['first', 'try again']"
    assert "thread 'alt' has 2 turns: --at 1 to 2" in error_text(bad_fork)
    assert main_left == main_before  # the original thread is untouched

    # saved as the page would have it (turn 2's output rewritten), then a new kernel
    outputs = {
        "t1": first.outputs,
        "t2": [{"data": replaced["t2"]}],
        "t3": third.outputs,
        "t4": fork_cell.outputs,
    }
    path = save(
        tmp_path / "rewind.ipynb",
        [(c, f"%%chat\n{c}", [o for o in outputs[c] if "data" in o]) for c in outputs],
    )
    restarted = KernelDriver()
    try:
        restarted.run("%load_ext jupyter_turns")
        restarted.run(f"%chat restore {path}")
        restarted.run(SETUP)
        restarted.run("later = ScriptedProvider([cycle(message('After the restart.'))])")
        restarted.run("%%chat --thread main --provider scripted --script later\nfourth")
        sent_after = restarted.run(SENT.format(script="later")).stdout().strip()
        # the fork, restored: its history before the fork is grafted back from main's turns
        restarted.run("then = ScriptedProvider([cycle(message('The fork goes on.'))])")
        restarted.run("%%chat --thread alt --provider scripted --script then\nfifth")
        sent_alt = restarted.run(SENT.format(script="then")).stdout().strip()
    finally:
        restarted.close()
    assert sent_after == "['first', 'third', 'fourth']"
    assert sent_alt == "['first', 'try again', 'fifth']"
    assert json.dumps(second.records()[-1]).count('"kind": "rewind"') == 0  # the original


def test_a_fork_of_a_restored_thread_asks_the_model_of_that_thread(tmp_path: Path) -> None:
    """A restarted kernel restores `main` (its provider is built at its first turn); forking
    it before that turn gives the fork the same model, not the placeholder that answers "no
    model was called"."""
    from tests.support.anthropic_server import AnthropicTestServer, Reply
    from tests.support.anthropic_sse import sse_text_response

    chat = "%%chat --provider anthropic --model claude-haiku-4-5\nHello"
    with AnthropicTestServer() as server:
        server.enqueue(
            Reply.sse(sse_text_response(["Hello from the model."])),
            Reply.sse(sse_text_response(["The fork goes on."])),
        )
        env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": server.url}
        path = save(tmp_path / "fork.ipynb", [])  # the kernel knows its notebook: its grant
        first = KernelDriver(env={**env, "JPY_SESSION_NAME": str(path)})
        try:
            first.run("%load_ext jupyter_turns")
            said = first.run(chat, cell_id="c1")
        finally:
            first.close()
        save(path, [("c1", chat, said.outputs)])
        restarted = KernelDriver(env={**env, "JPY_SESSION_NAME": str(path)})
        try:
            restarted.run("%load_ext jupyter_turns")
            forked = restarted.run("%chat fork alt")
            answer = restarted.run("%%chat\nAnd then?", cell_id="c2")
        finally:
            restarted.close()
        server.assert_all_served()
    assert "New thread 'alt' is current" in forked.stdout()
    [record] = answer.records()
    messages = [e["content"] for e in record["events"] if e["kind"] == "message"]
    assert messages == ["The fork goes on."]
    sent = server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert server.requests[-1].body["model"] == "claude-haiku-4-5"
