"""Headless runs keep every promise: ``python`` (and any ``always_ask`` tool) only runs on a
person's approval, results that need review are withheld, and a question gets "no answer"."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_turns import Chat, PolicyPrompter, ToolContext, tool
from jupyter_turns.kernel_tools.builtin import python_tool
from jupyter_turns.model.conversation import Conversation
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.model.prompter import HEADLESS_WITHHOLD_REASON, Approval, ApprovalRequest
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call


def _one_call(name: str, args: dict[str, Any]) -> ScriptedProvider:
    return ScriptedProvider([cycle(tool_call(name, args)), cycle(message("ok"))])


def _response(turn: Any) -> ToolCallResponse:
    [response] = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    return response


@pytest.mark.parametrize("run_mode", ["ask", "unattended"])
async def test_python_is_never_approved_by_a_policy(run_mode: Any) -> None:
    namespace: dict[str, Any] = {}
    chat = Chat(
        provider=_one_call("python", {"code": "ran = True"}),
        tools=[python_tool(lambda: namespace)],
        prompter=PolicyPrompter("allow"),  # what a headless run with --tools unattended uses
        run_mode=run_mode,
    )
    response = _response(await chat.send("go"))
    assert "ran" not in namespace
    assert response.status == "skipped" and response.is_error
    assert response.content == "Not run: python runs only when a person approves the call."
    assert [(d.action, d.by) for d in response.decisions] == [
        ("denied", "policy"),
    ]


async def test_a_custom_policy_cannot_approve_an_always_ask_tool_either() -> None:
    ran: list[int] = []

    @tool(always_ask=True)
    def wipe(x: int) -> str:
        """Dangerous."""
        ran.append(x)
        return "done"

    def approve(request: ApprovalRequest) -> Approval:
        assert request.always_ask
        return Approval("edited", arguments={"x": 2}, by="policy")

    chat = Chat(
        provider=_one_call("wipe", {"x": 1}), tools=[wipe], prompter=PolicyPrompter(approve)
    )
    assert _response(await chat.send("go")).status == "skipped" and ran == []


async def test_the_users_own_approval_and_always_allow_still_run_python() -> None:
    namespace: dict[str, Any] = {}
    clicks = PolicyPrompter(lambda request: Approval("approved", by="user"))
    chat = Chat(
        provider=_one_call("python", {"code": "ran = 1"}),
        tools=[python_tool(lambda: namespace)],
        prompter=clicks,
    )
    assert _response(await chat.send("go")).status == "done" and namespace["ran"] == 1
    chat = Chat(
        provider=_one_call("python", {"code": "ran = 2"}),
        tools=[python_tool(lambda: namespace)],
        prompter=PolicyPrompter("deny"),
    )
    chat.allowed_tools.add("python")  # the user's "Always allow" (or %chat allow python)
    assert _response(await chat.send("go")).status == "done" and namespace["ran"] == 2


async def test_a_result_that_needs_review_is_withheld_with_a_note_for_the_model() -> None:
    @tool(run="unattended", result="ask")
    def secret_lookup(key: str) -> str:
        """Reads a secret store."""
        return "s3cr3t"

    headless = PolicyPrompter("deny", results="withhold", withhold_reason=HEADLESS_WITHHOLD_REASON)
    provider = _one_call("secret_lookup", {"key": "db"})
    response = _response(
        await Chat(provider=provider, tools=[secret_lookup], prompter=headless).send("go")
    )
    assert "s3cr3t" not in response.content
    assert response.content == f"The result was not shared: {HEADLESS_WITHHOLD_REASON}."
    assert [(d.action, d.by) for d in response.decisions][-1] == ("withheld", "policy")
    assert "s3cr3t" not in str(provider.requests[1].events[-1])


async def test_a_question_nobody_can_answer_returns_none() -> None:
    seen: list[str | None] = []

    @tool(run="unattended")
    async def deploy(target: str, ctx: ToolContext) -> str:
        """Deploys."""
        answer = await ctx.ask(f"Deploy to {target}?", ["yes", "no"])
        seen.append(answer)
        if answer is None:
            return "Not deployed: nobody confirmed."
        return f"answer was {answer}"

    turn = await Chat(provider=_one_call("deploy", {"target": "prod"}), tools=[deploy]).send("go")
    assert seen == [None]
    assert _response(turn).content == "Not deployed: nobody confirmed."
    [answer] = [e for e in turn.events if e.kind == "inquiry_response"]
    assert answer.answer is None and answer.by == "policy"  # type: ignore[union-attr]
    # "no answer" survives the record and reads back
    record = Conversation(turn.events).to_record()
    assert Conversation.from_record(record).events[3].answer is None  # type: ignore[union-attr]
