"""Sub-agents in a real kernel: the nested turn streams into the calling card, its approval is
answered by a click, Stop on the caller ends both, and the nested events are saved and come
back after a restore without ever being sent to the calling model."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_turns.record.notebook import load
from tests.support.kernels import cell_record, execute_notebook
from tests.support.notebook_code import SETUP

from .kernel import KernelDriver, ready_chat

pytestmark = pytest.mark.kernel

AGENT = textwrap.dedent(
    """\
    from jupyter_turns import subagent

    helper = ScriptedProvider([
        slow(cycle(message('Let me add them up, one by one.'),
                   tool_call('add', {'a': 2, 'b': 3}, call_id='toolu_inner')), 0.02),
        cycle(message('The sum is **5**.')),
    ])
    researcher = subagent('researcher', 'Does sums.', tools=[add], provider=helper,
                          run='unattended')
    script = ScriptedProvider([
        cycle(tool_call('researcher', {'request': 'Add 2 and 3'}, call_id='toolu_sub')),
        cycle(message('The researcher says 5.')),
    ])
    """
)


def test_a_nested_turn_streams_into_its_card_and_its_approval_is_clicked(
    lab_kernel: KernelDriver,
) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run(AGENT)
    cell = kernel.execute("%%chat --script script\nWhat is 2 + 3?")
    widget = ready_chat(kernel)
    prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 30, "the nested approval")
    assert prompt["name"] == "add" and prompt["call_id"] == "toolu_inner"
    # the nested text streamed in pieces, marked as the researcher card's draft: what streamed
    # before the view said ready comes whole in the draft that answers it, the rest as deltas
    nested = [
        m
        for m in widget.custom
        if m.get("parent") == "toolu_sub" and m["type"] in ("draft", "delta")
    ]
    pieces = [m for m in nested if m["type"] == "delta"]
    assert pieces
    shown = [m["parts"] if m["type"] == "delta" else m["blocks"] for m in nested]
    text = "".join(part[2] for parts in shown for part in parts if part[1] != "tool_input")
    assert text == "Let me add them up, one by one."
    assert not [m for m in widget.custom if m["type"] == "delta" and "parent" not in m]
    assert widget.state["tools"]["toolu_sub"]["subagent"]["cycles"] == 1
    kernel.send_custom(
        widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
    )
    kernel.wait(lambda: cell.done, 30, "the turn to end")
    events = cell.records()[-1]["events"]
    assert [(e["kind"], e.get("parent")) for e in events] == [
        ("chat_request", None),
        ("tool_call_request", None),
        ("chat_request", "toolu_sub"),
        ("message", "toolu_sub"),
        ("tool_call_request", "toolu_sub"),
        ("tool_call_response", "toolu_sub"),
        ("message", "toolu_sub"),
        ("tool_call_response", None),
        ("message", None),
    ]
    inner = events[5]
    assert inner["content"] == "5" and inner["decisions"][0] == {
        "action": "approved",
        "by": "user",
        "detail": None,
    }
    outer = events[7]
    assert outer["content"] == "The sum is **5**." and outer["subagent"]["cycles"] == 2
    assert kernel.run("print(ran)").stdout().strip() == "[(2, 3)]"
    sent = kernel.run("print(script.requests[1].events[-1].content)").stdout()
    assert sent.strip() == "The sum is **5**."


def test_stop_on_the_caller_ends_the_nested_turn_too(lab_kernel: KernelDriver) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run(
        AGENT.replace("run='unattended')", "run='unattended')\n")
        + textwrap.dedent(
            """\
            @tool(run='unattended')
            async def wait_forever() -> str:
                '''Waits.'''
                await asyncio.sleep(3600)
                return 'never'

            helper2 = ScriptedProvider([cycle(message('Waiting.'),
                                              tool_call('wait_forever', {}, call_id='toolu_wait'))])
            researcher = subagent('researcher', 'Waits.', tools=[wait_forever], provider=helper2,
                                  run='unattended')
            """
        )
    )
    cell = kernel.execute("%%chat --script script\nGo")
    widget = ready_chat(kernel)
    kernel.wait(
        lambda: widget.state.get("tools", {}).get("toolu_wait", {}).get("status") == "running",
        30,
        "the nested tool to run",
    )
    kernel.km.interrupt_kernel()
    menu = kernel.wait(lambda: kernel.prompt(widget, "interrupt"), 30, "the interrupt menu")
    kernel.send_custom(widget, {"type": "interrupt", "prompt_id": menu["id"], "action": "stop"})
    kernel.wait(lambda: cell.done and cell.reply is not None, 30, "the turn to end")
    assert cell.reply is not None and cell.reply["status"] == "ok"
    events = cell.records()[-1]["events"]
    nested = [e for e in events if e.get("parent") == "toolu_sub"]
    assert [e["kind"] for e in nested] == [
        "chat_request",
        "message",
        "tool_call_request",
        "tool_call_response",
        "notice",
    ]
    assert nested[3]["status"] == "cancelled"
    outer = next(e for e in events if e["kind"] == "tool_call_response" and "parent" not in e)
    assert outer["status"] == "cancelled"
    assert (outer["subagent"]["outcome"], outer["subagent"]["cycles"]) == ("stopped", 1)


def test_nested_events_are_saved_and_restored_but_never_sent(tmp_path: Path) -> None:
    cells = [
        "%load_ext jupyter_turns",
        SETUP,
        AGENT.replace("tools=[add]", "tools=[tool(run='unattended')(add.fn)]"),
        "%%chat --script script\nWhat is 2 + 3?",
    ]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    execute_notebook(notebook)
    path = tmp_path / "agents.ipynb"
    nbformat.write(notebook, path)
    saved = cell_record(notebook.cells[-1])["events"]
    assert [e.get("parent") for e in saved].count("toolu_sub") == 5
    html = notebook.cells[-1].outputs[0]["data"]["text/html"]
    assert '<summary>Sub-agent</summary><div class="jt-nested">' in html
    conversation = load(path)["main"]
    assert [e.model_dump(mode="json") for e in conversation.events] == saved
    kernel = KernelDriver()
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(
            "from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message\n"
            "again = ScriptedProvider([cycle(message('Still 5.'))])"
        )
        assert "Restored thread 'main'" in kernel.run(f"%chat restore {path}").stdout()
        kernel.run("%%chat --script again\nAnd now?")
        restored = kernel.run(
            "import json\n"
            "events = again.requests[0].events\n"
            "print(json.dumps([e.model_dump(mode='json') for e in events\n"
            "                  if getattr(e, 'parent', None) == 'toolu_sub']))"
        ).stdout()
        sent = kernel.run(
            "from jupyter_turns.providers.anthropic_wire import anthropic_messages\n"
            "print(json.dumps(anthropic_messages(events)))"
        ).stdout()
    finally:
        kernel.close()
    # the restored thread keeps the sub-agent's events exactly as saved...
    assert json.loads(restored) == [e for e in saved if e.get("parent") == "toolu_sub"]
    assert "toolu_inner" not in sent and "Let me add" not in sent  # ...and never sends them
    assert "The sum is **5**." in sent and "And now?" in sent
