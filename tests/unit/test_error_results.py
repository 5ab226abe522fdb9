"""A tool whose work failed answers with an error result, never one marked done (issue 45: the
README's quickstart showed a ``NameError`` under a green "done" badge): ``python`` whose code
raised, and any tool that returns ``ToolResult(..., is_error=True)``. What the run printed, its
outputs and what it changed are kept; the provider is sent ``is_error``."""

from __future__ import annotations

from typing import Any

from jupyter_turns import Chat, PolicyPrompter
from jupyter_turns.kernel_tools.builtin import python_tool
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.model.prompter import Approval
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.tools.registry import tool
from jupyter_turns.tools.results import ToolResult

APPROVE = PolicyPrompter(lambda request: Approval("approved", by="user"))


def _python(code: str, namespace: dict[str, Any]) -> tuple[ScriptedProvider, Chat]:
    """A chat whose script asks to run ``code``, and a person who approves it."""
    provider = ScriptedProvider(
        [cycle(tool_call("python", {"code": code})), cycle(message("The total is **42**."))]
    )
    tools = [python_tool(lambda: namespace)]
    return provider, Chat(provider=provider, tools=tools, prompter=APPROVE)


async def test_python_code_that_raises_is_an_error_result_with_what_it_printed() -> None:
    namespace: dict[str, Any] = {}
    provider, chat = _python("y = 1\nprint('before')\ndf.x.sum()", namespace)
    turn = await chat.send("What is the total of x?")
    [response] = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    assert (response.status, response.is_error) == ("error", True)
    assert "NameError: name 'df' is not defined" in response.content
    assert "before" in response.content and namespace["y"] == 1  # it ran, up to the error
    assert [o["output_type"] for o in response.outputs or []] == ["stream", "error"]
    assert response.state is not None and response.state["created"]  # undo knows about y
    sent = provider.requests[1].events[-1]  # the model reads the error as an error
    assert isinstance(sent, ToolCallResponse) and sent.is_error


async def test_python_code_that_runs_is_done() -> None:
    namespace: dict[str, Any] = {"x": [40, 2]}
    _provider, chat = _python("sum(x)", namespace)
    turn = await chat.send("What is the total of x?")
    [response] = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    assert (response.status, response.is_error) == ("done", False)
    assert "result:\n42" in response.content


async def test_any_tool_may_answer_with_an_error_result() -> None:
    @tool(run="unattended")
    def lookup(key: str) -> ToolResult:
        """Look a key up."""
        return ToolResult(f"no entry {key!r}", is_error=True)

    chat = Chat(
        provider=ScriptedProvider(
            [cycle(tool_call("lookup", {"key": "k"})), cycle(message("Not found."))]
        ),
        tools=[lookup],
    )
    turn = await chat.send("find k")
    [response] = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    assert (response.status, response.is_error, response.content) == ("error", True, "no entry 'k'")
