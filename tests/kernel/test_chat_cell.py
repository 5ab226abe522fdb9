"""%%chat in a real kernel: streaming, clicks while busy, queued cells, kernel interrupts."""

from __future__ import annotations

import pytest

from tests.support.notebook_code import SETUP

from .kernel import KernelDriver, Widget, ready_chat

pytestmark = pytest.mark.kernel


def _kinds(widget: Widget) -> list[str]:
    return [event["kind"] for event in widget.state.get("events", [])]


def _shown_text(widget: Widget) -> str:
    """The draft text a view shows: the draft it got on ``ready``, then the deltas."""
    shown = ""
    for m in widget.custom:
        if m["type"] == "draft":
            shown = "".join(text for _, _, text in m["blocks"])
        elif m["type"] == "delta":
            shown += "".join(text for _, _, text in m["parts"])
    return shown


def test_a_chat_turn_streams_into_the_widget(kernel: KernelDriver) -> None:
    kernel.run(SETUP)
    kernel.run(
        "script = [[Delay(1.0), *slow(cycle(message('The answer streams in word by word.')),"
        " 0.01)]]"
    )
    cell = kernel.execute("%%chat --provider scripted --script script\nTell me something")
    widget = ready_chat(kernel)  # a view renders while the model thinks
    kernel.wait(lambda: cell.done and cell.reply is not None, 30, "the turn to end")
    assert cell.reply is not None and cell.reply["status"] == "ok"
    deltas = [m for m in widget.custom if m["type"] == "delta"]
    assert len(deltas) >= 2  # it arrived in pieces, not at once
    streamed = "".join(text for m in deltas for _, _, text in m["parts"])
    assert streamed == "The answer streams in word by word."
    assert _kinds(widget) == ["chat_request", "message"]
    assert widget.state["status"]["state"] == "complete"
    # no page here: the cell's one output is the record, its text/plain stable
    (output,) = cell.outputs
    assert output["data"]["text/plain"] == "Conversation · thread main · 2 events"
    final = cell.records()[-1]
    assert [e["kind"] for e in final["events"]] == ["chat_request", "message"]


def test_a_headless_turn_sends_the_widget_nothing(kernel: KernelDriver) -> None:
    """nbclient, papermill, nbval: nothing draws the widget, so nothing is sent to it; the
    record output holds the turn."""
    kernel.run(SETUP)
    kernel.run("script = [slow(cycle(message('The answer streams in word by word.')), 0.01)]")
    cell = kernel.run("%%chat --provider scripted --script script\nTell me something")
    widget = kernel.chat_widget()
    to_widget = [
        m
        for m in cell.messages
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == widget.comm_id
    ]
    assert to_widget == [] and widget.custom == []
    assert widget.state["events"] == []  # as it opened: no update followed
    (output,) = cell.outputs
    assert output["data"]["text/plain"] == "Conversation · thread main · 2 events"
    assert "The answer streams in word by word." in output["data"]["text/html"]


def test_approve_click_while_busy_runs_the_tool(lab_kernel: KernelDriver) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run(
        "script = [cycle(message('Adding.'), tool_call('add', {'a': 2, 'b': 3})),"
        " cycle(message('It is 5.'))]"
    )
    cell = kernel.execute("%%chat --provider scripted --script script\nAdd 2 and 3")
    widget = ready_chat(kernel)
    prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 30, "an approval prompt")
    assert prompt["name"] == "add" and prompt["arguments"] == {"a": 2, "b": 3}
    assert cell.busy and not cell.done  # the cell holds the kernel while it waits
    kernel.send_custom(
        widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
    )
    kernel.wait(lambda: cell.done, 30, "the turn to end")
    # the record that replaced the widget in the cell's one output
    assert len(cell.outputs) == 1
    events = cell.records()[-1]["events"]
    assert [e["kind"] for e in events][-3:] == [
        "tool_call_request",
        "tool_call_response",
        "message",
    ]
    response = events[-2]
    assert response["content"] == "5" and response["decisions"][0] == {
        "action": "approved",
        "by": "user",
        "detail": None,
    }
    check = kernel.run("print(ran)")
    assert check.stdout().strip() == "[(2, 3)]"


def test_skip_and_edit_clicks(lab_kernel: KernelDriver) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run(
        "script = [cycle(tool_call('add', {'a': 1, 'b': 1}, call_id='c1'),"
        " tool_call('add', {'a': 2, 'b': 2}, call_id='c2')), cycle(message('ok'))]"
    )
    cell = kernel.execute("%%chat --provider scripted --script script\ngo")
    widget = ready_chat(kernel)
    kernel.wait(lambda: len(widget.state.get("prompts", [])) == 2, 30, "two approval prompts")
    first, second = widget.state["prompts"]
    kernel.send_custom(widget, {"type": "approval", "prompt_id": first["id"], "action": "skipped"})
    kernel.send_custom(
        widget,
        {
            "type": "approval",
            "prompt_id": second["id"],
            "action": "edited",
            "arguments": {"a": 20, "b": 22},
        },
    )
    kernel.wait(lambda: cell.done, 30, "the turn to end")
    responses = [e for e in widget.state["events"] if e["kind"] == "tool_call_response"]
    assert responses[0]["status"] == "skipped" and responses[0]["is_error"]
    assert responses[1]["content"].endswith("42")
    assert [d["action"] for d in responses[1]["decisions"]] == ["edited"]
    assert kernel.run("print(ran)").stdout().strip() == "[(20, 22)]"


def test_a_stale_or_repeated_click_is_ignored(lab_kernel: KernelDriver) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run("script = [cycle(tool_call('add', {'a': 1, 'b': 2})), cycle(message('ok'))]")
    cell = kernel.execute("%%chat --provider scripted --script script\ngo")
    widget = ready_chat(kernel)
    prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 30, "an approval prompt")
    kernel.send_custom(
        widget, {"type": "approval", "prompt_id": "p999-stale", "action": "approved"}
    )
    for _ in range(2):  # a double click
        kernel.send_custom(
            widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
        )
    kernel.wait(lambda: cell.done, 30, "the turn to end")
    assert kernel.run("print(ran)").stdout().strip() == "[(1, 2)]"


def test_a_queued_cell_runs_only_after_the_turn(lab_kernel: KernelDriver) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run("script = [cycle(tool_call('add', {'a': 1, 'b': 1})), cycle(message('ok'))]")
    chat = kernel.execute("%%chat --provider scripted --script script\ngo")
    queued = kernel.execute("after = len(ran)")
    widget = ready_chat(kernel)
    prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 30, "an approval prompt")
    assert not queued.busy and not queued.done
    kernel.send_custom(
        widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
    )
    kernel.wait(lambda: queued.done, 30, "the queued cell")
    order = [
        (msg_id, state) for msg_id, state in kernel.order if msg_id in (chat.msg_id, queued.msg_id)
    ]
    assert order.index((chat.msg_id, "idle")) < order.index((queued.msg_id, "busy"))
    assert kernel.run("print(after)").stdout().strip() == "1"


def test_kernel_interrupt_opens_the_menu_and_stop_keeps_the_partial_text(
    lab_kernel: KernelDriver,
) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run(
        "script = [slow(cycle(message('one two three four five six seven eight nine ten')), 0.3)]"
    )
    cell = kernel.execute("%%chat --provider scripted --script script\ncount")
    widget = ready_chat(kernel)
    kernel.wait(lambda: any(m["type"] == "delta" for m in widget.custom), 30, "the first words")
    kernel.km.interrupt_kernel()
    menu = kernel.wait(lambda: kernel.prompt(widget, "interrupt"), 30, "the interrupt menu")
    assert menu["context"] == "streaming"
    kernel.send_custom(widget, {"type": "interrupt", "prompt_id": menu["id"], "action": "stop"})
    kernel.wait(lambda: cell.done and cell.reply is not None, 30, "the turn to end")
    assert cell.reply is not None and cell.reply["status"] == "ok"
    events = cell.records()[-1]["events"]  # the record that replaced the widget
    message = next(e for e in events if e["kind"] == "message")
    assert message["content"] == _shown_text(widget) and message["metadata"] == {"partial": True}
    assert 0 < len(message["content"]) < len("one two three four five six seven eight nine ten")
    assert events[-1]["kind"] == "notice"


def test_second_interrupt_aborts_the_cell(lab_kernel: KernelDriver) -> None:
    kernel = lab_kernel
    kernel.run(SETUP)
    kernel.run("script = [slow(cycle(message('a b c d e f g h i j k l m n o p')), 0.3)]")
    cell = kernel.execute("%%chat --provider scripted --script script\ncount")
    queued = kernel.execute("never_ran = True")
    widget = ready_chat(kernel)
    kernel.wait(lambda: any(m["type"] == "delta" for m in widget.custom), 30, "the first words")
    kernel.km.interrupt_kernel()
    kernel.wait(lambda: kernel.prompt(widget, "interrupt"), 30, "the interrupt menu")
    kernel.km.interrupt_kernel()
    kernel.wait(lambda: cell.done and cell.reply is not None, 30, "the cell to end")
    assert cell.reply["status"] == "error"
    assert cell.reply["ename"] in ("KeyboardInterrupt", "CancelledError")
    kernel.wait(lambda: queued.reply is not None, 30, "the queued cell's reply")
    assert queued.reply["status"] == "aborted"  # Run All stops here
    assert widget.state["status"]["state"] == "aborted"


def test_headless_runs_deny_ask_tools_with_an_explanation(kernel: KernelDriver) -> None:
    kernel.run(SETUP)
    kernel.run("script = [cycle(tool_call('add', {'a': 1, 'b': 1})), cycle(message('ok'))]")
    cell = kernel.run("%%chat --provider scripted --script script\ngo", timeout=30)
    assert cell.reply["status"] == "ok"
    response = next(e for e in cell.records()[-1]["events"] if e["kind"] == "tool_call_response")
    assert response["status"] == "skipped" and "headless" in response["content"]
    assert response["decisions"][0]["by"] == "policy"
    assert kernel.run("print(ran)").stdout().strip() == "[]"


def test_headless_unattended_runs_tools(kernel: KernelDriver) -> None:
    kernel.run(SETUP)
    kernel.run("script = [cycle(tool_call('add', {'a': 4, 'b': 5})), cycle(message('ok'))]")
    cell = kernel.run("%%chat --provider scripted --script script --tools unattended\ngo")
    response = next(e for e in cell.records()[-1]["events"] if e["kind"] == "tool_call_response")
    assert response["content"] == "9"
    assert kernel.run("print(ran)").stdout().strip() == "[(4, 5)]"


def test_threads_continue_across_cells_and_new_starts_fresh(kernel: KernelDriver) -> None:
    kernel.run('%config ChatMagics.provider = "scripted"')
    kernel.run("%%chat\nfirst")
    second = kernel.run("%%chat\nsecond")
    assert "this request: 2 turns, 1 answer." in second.records()[-1]["events"][-1]["content"]
    fresh = kernel.run("%%chat --new\nthird")
    assert "this request: 1 turn, 0 answers." in fresh.records()[-1]["events"][-1]["content"]
    listing = kernel.run("%chat threads").stdout()
    assert "main: 2 turns, 2 answers" in listing and "* thread-2: 1 turn, 1 answer" in listing


def test_builtin_python_tool_runs_in_the_user_namespace(kernel: KernelDriver) -> None:
    kernel.run(SETUP)
    kernel.run(
        "script = [cycle(tool_call('python', {'code': 'x = 21\\nprint(\"hi\")\\nx * 2'})),"
        " cycle(message('done'))]"
    )
    # python is never approved by a policy (--tools unattended, headless): only by the user
    cell = kernel.run(
        "%%chat --provider scripted --script script --builtins python --tools unattended\ngo"
    )
    response = next(e for e in cell.records()[-1]["events"] if e["kind"] == "tool_call_response")
    assert (
        response["status"] == "skipped" and kernel.run("print('x' in dir())").stdout() == "False\n"
    )
    kernel.run(
        "script = [cycle(tool_call('python', {'code': 'x = 21\\nprint(\"hi\")\\nx * 2'})),"
        " cycle(message('done'))]"
    )
    kernel.run("%chat allow python")  # the user's own "always allow"; a new script plays anew
    cell = kernel.run("%%chat --script script\ngo")
    response = next(e for e in cell.records()[-1]["events"] if e["kind"] == "tool_call_response")
    assert "stdout:\nhi" in response["content"] and "result:\n42" in response["content"]
    assert kernel.run("print(x)").stdout().strip() == "21"
    assert "hi" not in cell.stdout()  # captured into the tool, not the cell


def test_an_empty_chat_cell_says_what_to_do(kernel: KernelDriver) -> None:
    cell = kernel.run("%%chat --provider scripted\n   \n")
    assert cell.reply is not None and cell.reply["status"] == "error"
    assert "write your request" in "".join(o.get("text", "") for o in cell.outputs)


def test_missing_key_is_one_clear_message(kernel: KernelDriver) -> None:
    kernel.run("import os; os.environ.pop('ANTHROPIC_API_KEY', None)")
    cell = kernel.run("%%chat --provider anthropic\nhello")
    assert cell.reply["status"] == "error"
    text = "".join(
        o.get("text", "") + o.get("evalue", "") + "".join(o.get("traceback", []))
        for o in cell.outputs
    )
    assert "ANTHROPIC_API_KEY" in text and "--provider scripted" in text


def test_the_python_tool_returns_the_figures_its_code_drew(kernel: KernelDriver) -> None:
    kernel.run(SETUP)
    kernel.run("%matplotlib inline")
    code = (
        "import matplotlib.pyplot as plt\\n"
        "from IPython.display import display\\n"
        "from PIL import Image\\n"
        'display(Image.new("RGB", (30, 20)))\\n'
        "fig, ax = plt.subplots(figsize=(2, 2), dpi=40)\\n"
        "_ = ax.plot([1, 2])"
    )
    kernel.run(f"script = [cycle(tool_call('python', {{'code': '{code}'}})), cycle(message('ok'))]")
    kernel.run("%chat allow python")
    cell = kernel.run("%%chat --provider scripted --script script --builtins python\ndraw")
    response = next(e for e in cell.records()[-1]["events"] if e["kind"] == "tool_call_response")
    labels = [(i["label"], i["media_type"]) for i in response["images"]]
    assert labels == [("displayed 1", "image/png"), ("figure 1", "image/png")]
    assert response["images"][0]["width"] == 30
    # the figure went to the model and the tool card, not again below the chat cell
    assert not [o for o in cell.outputs if "image/png" in o.get("data", {})]
    assert kernel.run("print(plt.get_fignums())").stdout().strip() == "[]"
