"""Long threads in a real kernel: the budget pause answered by a click (Continue, Stop), the
headless stop, ``%chat cost`` and the gauge of ``%chat threads``; a compaction block saved in
the notebook, restored by a restarted kernel and sent back unchanged."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.support.notebook_code import SETUP

from .kernel import KernelDriver, ready_chat
from .test_restore_exact import save

pytestmark = pytest.mark.kernel

PRICED = textwrap.dedent(
    '''\
    from jupyter_turns.providers.scripted import ScriptBlock

    class Priced(ScriptedProvider):
        """$1 per 1,000 tokens."""
        def cost(self, usage, model):
            return (usage.input_tokens + usage.output_tokens) / 1000

    @tool(run="unattended")
    def double(x: int) -> int:
        """Double it."""
        return 2 * x

    DOLLAR = Usage(input_tokens=1000)
    '''
)
TOOL_THEN_ANSWER = (
    "script = Priced([cycle(tool_call('double', {'x': 21}), usage=DOLLAR),"
    " cycle(message('It is 42.'))])"
)
CELL = "%%chat --provider scripted --script script --budget 1.5\nDouble 21"
PAUSE = "Spent $1.00 of $1.50 (this turn's budget); next call ≈ $1.00 — estimates from list prices."


def _setup(kernel: KernelDriver) -> None:
    kernel.run(SETUP)
    kernel.run(PRICED)
    kernel.run(TOOL_THEN_ANSWER)


@pytest.mark.parametrize("action", ["continue", "stop"])
def test_a_turn_passing_its_budget_pauses_until_a_click(
    lab_kernel: KernelDriver, action: str
) -> None:
    kernel = lab_kernel
    _setup(kernel)
    cell = kernel.execute(CELL)
    widget = ready_chat(kernel)
    prompt = kernel.wait(lambda: kernel.prompt(widget, "budget"), 30, "the budget prompt")
    assert prompt["text"] == PAUSE and prompt["scope"] == "turn"
    assert widget.state["status"]["state"] == "budget_paused"
    assert widget.state["usage"]["context"] == {"used": 1000, "window": None}  # the gauge
    assert cell.busy and not cell.done
    kernel.send_custom(widget, {"type": "budget", "prompt_id": prompt["id"], "action": action})
    kernel.wait(lambda: cell.done, 30, "the turn to end")
    record = cell.records()[-1]
    kinds = [e["kind"] for e in record["events"]]
    if action == "continue":
        assert kinds[-1] == "message" and record["events"][-1]["content"] == "It is 42."
        assert record["turn"]["outcome"] == "complete"
    else:
        assert kinds[-2:] == ["tool_call_response", "notice"]
        assert record["events"][-1]["text"] == f"Stopped: {PAUSE}"
        assert record["turn"]["outcome"] == "stopped"
    cost = kernel.run("%chat cost").stdout()
    assert "main: $1.00 (USD) in 1 turn — tokens: 1,000 in · 0 out" in cost
    assert "estimates from the model table's list prices" in cost
    threads = kernel.run("%chat threads").stdout()
    assert "context 1k / window unknown for this model" in threads


def test_a_headless_run_stops_at_the_sessions_budget_with_a_notice(kernel: KernelDriver) -> None:
    kernel.run(SETUP)
    kernel.run(PRICED)
    kernel.run("script = Priced([cycle(message('One.'), usage=DOLLAR), cycle(message('Two.'))])")
    kernel.run("%config ChatMagics.budget_usd = 0.5")
    first = kernel.run("%%chat --provider scripted --script script\nFirst")
    assert first.records()[-1]["turn"]["outcome"] == "complete"  # nothing to go by before it
    second = kernel.run("%%chat --script script\nSecond")
    record = second.records()[-1]
    assert record["turn"]["outcome"] == "stopped"
    assert [e["kind"] for e in record["events"]] == ["chat_request", "notice"]
    text = record["events"][-1]["text"]
    assert text.startswith("Stopped: Spent $1.00 of $0.50 (the session's budget)")
    assert "nobody can agree to spend past the budget in this headless run" in text
    cost = kernel.run("%chat cost").stdout()
    assert "session: $1.00 (USD) of the session's budget $0.50" in cost


COMPACTED = {
    "type": "compaction",
    "content": 'Sümmary — asked twice; "first" then "second" ✓\n',
    "encrypted_content": "Eo8CCkYIBxgCKkDencrypted",
    "signature": "EqQBCkYIBxgCKkDcompactsig",
    "tool_changes": [{"type": "tool_removal", "name": "old"}],
}


def test_a_compaction_block_survives_save_restart_and_restore_unchanged(tmp_path: Path) -> None:
    meta = {"raw_block": COMPACTED, "compaction": {"mode": "edit", "tokens_before": 150_000}}
    script = (
        f"script = [cycle(message('first')), cycle(ScriptBlock((), {meta!r}), message('second'))]"
    )
    sources = {
        "a": "%%chat --provider scripted --script script\nOne",
        "b": "%%chat --script script\nTwo",
    }
    kernel = KernelDriver()
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(SETUP)
        kernel.run("from jupyter_turns.providers.scripted import ScriptBlock")
        kernel.run(script)
        runs = {cell_id: kernel.run(source, cell_id=cell_id) for cell_id, source in sources.items()}
        shown = [e["kind"] for e in runs["b"].records()[-1]["events"]]
        assert shown == ["chat_request", "block", "message", "notice"]
        path = save(tmp_path / "long.ipynb", sources, runs, kernel, extension=False)
    finally:
        kernel.close()
    restarted = KernelDriver()
    try:
        restarted.run("%load_ext jupyter_turns")
        restarted.run(SETUP)
        restarted.run(f"%chat restore {path}")
        restarted.run("again = ScriptedProvider([cycle(message('third'))])")
        restarted.run("%%chat --provider scripted --script again\nThree")
        sent = restarted.run(
            "import json\n"
            "from jupyter_turns.providers.anthropic import build_params\n"
            "print(json.dumps(build_params(again.requests[-1], 'claude-haiku-4-5')['messages']))"
        ).stdout()
    finally:
        restarted.close()
    messages = json.loads(sent)
    assert messages[0] == {
        "role": "assistant",
        "content": [COMPACTED, {"type": "text", "text": "second"}],
    }
    assert [m["role"] for m in messages] == ["assistant", "user"]  # "One" is in the summary


def test_chat_forget_and_chat_compact_change_what_the_next_request_sends(
    kernel: KernelDriver,
) -> None:
    kernel.run(SETUP)
    kernel.run("from jupyter_turns.providers.scripted import ScriptBlock")
    block = {"raw_block": {**COMPACTED, "tool_changes": []}, "compaction": {"mode": "summarize"}}
    kernel.run(
        "script = ScriptedProvider([cycle(message('a1')), cycle(message('a2')),"
        " cycle(message('a3')), cycle(ScriptBlock((), "
        f"{block!r}), finish='compaction'), cycle(message('a4'))])"
    )
    kernel.run("%%chat --provider scripted --script script\nq1")
    kernel.run("%%chat --script script\nq2")
    forgot = kernel.run("%chat forget 1").stdout()
    assert "the oldest 1 exchange of this thread is no longer sent" in forgot
    assert "takes effect with its next request" in forgot
    kernel.run("%%chat --script script\nq3")
    sent = kernel.run(
        "print([getattr(e, 'content', e.kind) for e in script.requests[-1].events])"
    ).stdout()
    assert sent.strip() == "['q2', 'a2', 'q3', 'notice']"
    compact = kernel.run("%chat compact").stdout()
    assert "will be summarized by the API (server-side compaction) before its next request" in (
        compact
    )
    assert "compacts before its next request" in kernel.run("%chat threads").stdout()
    last = kernel.run("%%chat --script script\nq4")
    asked = kernel.run(
        "print(script.requests[-2].extra['compaction'],"
        " [getattr(e, 'content', e.kind) for e in script.requests[-1].events][:3])"
    ).stdout()
    assert asked.strip() == "{'type': 'summarize'} ['block', 'q4', 'notice']"
    kinds = [e["kind"] for e in last.records()[-1]["events"]]
    assert kinds == ["chat_request", "block", "notice", "message"]
