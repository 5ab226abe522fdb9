from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import pytest

from jupyter_turns import Chat, PolicyPrompter, RecordingSink, ToolContext, tool
from jupyter_turns.errors import ToolDefinitionError
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.model.prompter import Approval, ApprovalRequest, ResultDecision, ResultReview
from jupyter_turns.model.sink import ToolUpdate
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.tools import ToolArgumentError, format_result

from .helpers import kinds


def _responses(events: object) -> list[ToolCallResponse]:
    return [e for e in events if isinstance(e, ToolCallResponse)]  # type: ignore[attr-defined]


# ---------------------------------------------------------------- schema and validation


def test_schema_from_signature_hints_and_google_docstring() -> None:
    @tool
    def search(query: str, limit: int = 5, mode: Literal["fast", "exact"] = "fast") -> list[str]:
        """Search the notes.

        Args:
            query: What to look for.
            limit: How many hits,
                at most.
        """
        return []

    assert search.description == "Search the notes."
    assert search.schema == {
        "additionalProperties": False,
        "properties": {
            "query": {"description": "What to look for.", "type": "string"},
            "limit": {"default": 5, "description": "How many hits, at most.", "type": "integer"},
            "mode": {"default": "fast", "enum": ["fast", "exact"], "type": "string"},
        },
        "required": ["query"],
        "type": "object",
    }


def test_sphinx_and_numpy_docstrings() -> None:
    @tool
    def a(x: int) -> None:
        """Do a.

        :param x: the x value
        """

    @tool
    def b(x: int, y: str) -> None:
        """Do b.

        Parameters
        ----------
        x : int
            The x.
        y : str
            The y.
        """

    assert a.schema["properties"]["x"]["description"] == "the x value"
    assert b.schema["properties"]["x"]["description"] == "The x."
    assert b.schema["properties"]["y"]["description"] == "The y."


def test_context_parameter_is_not_in_the_schema() -> None:
    @tool(run="unattended", timeout=3, result="ask")
    async def job(n: int, ctx: ToolContext) -> int:
        return n

    assert list(job.schema["properties"]) == ["n"]
    assert (job.run, job.timeout, job.result, job.flavor) == ("unattended", 3, "ask", "async")


def test_validation_coerces_and_reports_every_problem() -> None:
    @dataclass
    class Point:
        x: float
        y: float

    @tool
    def plot(p: Point, label: str) -> str:
        return label

    assert plot.validate({"p": {"x": 1, "y": "2"}, "label": "a"}) == {
        "p": Point(1.0, 2.0),
        "label": "a",
    }
    with pytest.raises(ToolArgumentError) as info:
        plot.validate({"p": {"x": "nope"}, "extra": 1})
    text = str(info.value)
    assert "p.x" in text and "p.y" in text and "label" in text and "extra" in text


@pytest.mark.parametrize(
    "fn",
    [lambda *args: None, lambda **kw: None],
    ids=["varargs", "varkw"],
)
def test_unsupported_signatures_are_refused(fn: object) -> None:
    with pytest.raises(ToolDefinitionError):
        tool(name="bad", run="ask")(fn)  # type: ignore[arg-type]


def test_bad_options_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="run mode"):
        tool(name="ok", run="sometimes")(lambda: None)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="name"):
        tool(name="has space")(lambda: None)


def test_decorated_function_is_still_callable() -> None:
    @tool
    def double(x: int) -> int:
        return 2 * x

    assert double(4) == 8


def test_results_are_serialized_sensibly_and_truncated_with_a_note() -> None:
    @dataclass
    class R:
        a: int

    assert format_result({"k": [1, 2]}, 1000) == '{"k": [1, 2]}'
    assert format_result(R(1), 1000) == '{"a": 1}'
    assert format_result(None, 1000) == "(no output)"
    assert format_result(b"\x00\x01", 1000) == "<2 bytes of binary data>"
    assert format_result({1, 2}, 1000) in ("{1, 2}", "{2, 1}")
    long = format_result("x" * 5000, 1000)
    assert long.startswith("x" * 1000) and "showing 1,000 of 5,000 characters" in long


# ---------------------------------------------------------------- bad input becomes is_error


async def test_bad_calls_become_error_responses_and_the_turn_goes_on() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    @tool
    def explode() -> None:
        raise RuntimeError("kaboom")

    provider = ScriptedProvider(
        [
            cycle(
                tool_call("nope", {}, call_id="unknown"),
                tool_call("add", {"a": "x"}, call_id="invalid"),
                tool_call("add", raw_arguments='{"a": 1, "b":', call_id="unparseable"),
                tool_call("explode", {}, call_id="raises"),
                tool_call("add", {"a": 1, "b": 2}, call_id="fine"),
            ),
            cycle(message("I saw the errors.")),
        ]
    )
    chat = Chat(provider=provider, tools=[add, explode], prompter=PolicyPrompter("allow"))
    turn = await chat.send("go")
    by_id = {r.call_id: r for r in _responses(turn)}
    assert by_id["unknown"].is_error and "Unknown tool 'nope'" in by_id["unknown"].content
    assert by_id["invalid"].is_error and "invalid arguments for add" in by_id["invalid"].content
    assert by_id["unparseable"].is_error and "Could not parse" in by_id["unparseable"].content
    assert by_id["raises"].is_error and "RuntimeError: kaboom" in by_id["raises"].content
    assert not by_id["fine"].is_error and by_id["fine"].content == "3"
    assert turn.events[-1].kind == "message"
    # the model saw every error in the next request
    results = provider.requests[1].events[-5:]
    assert [r.is_error for r in results] == [True, True, True, True, False]  # type: ignore[union-attr]


async def test_timeout_becomes_an_error_response() -> None:
    @tool(timeout=0.01)
    async def slow() -> str:
        await asyncio.sleep(3600)
        return "late"

    provider = ScriptedProvider([cycle(tool_call("slow")), cycle(message("ok"))])
    turn = await Chat(provider=provider, tools=[slow], prompter=PolicyPrompter("allow")).send("go")
    [response] = _responses(turn)
    assert (response.status, response.is_error) == ("timeout", True)
    assert "Timed out after 0.01 s" in response.content


# ---------------------------------------------------------------- run modes and decisions


def _one_call(name: str = "f", args: dict[str, object] | None = None) -> ScriptedProvider:
    arguments = {"x": 1} if args is None else args
    return ScriptedProvider([cycle(tool_call(name, arguments)), cycle(message("ok"))])


@tool
def f(x: int) -> str:
    return f"ran with {x}"


async def test_ask_mode_never_runs_when_headless_policy_denies() -> None:
    ran: list[int] = []

    @tool
    def f(x: int) -> str:
        ran.append(x)
        return "ran"

    turn = await Chat(provider=_one_call(), tools=[f]).send("go")  # default policy: deny
    [response] = _responses(turn)
    assert ran == []
    assert response.status == "skipped" and response.is_error
    assert "headless run" in response.content and "--tools unattended" in response.content
    assert [(d.action, d.by) for d in response.decisions] == [("denied", "policy")]


async def test_user_skip_is_recorded_as_the_users_decision() -> None:
    prompter = PolicyPrompter(lambda req: Approval("skipped"))
    turn = await Chat(provider=_one_call(), tools=[f], prompter=prompter).send("go")
    [response] = _responses(turn)
    assert [(d.action, d.by) for d in response.decisions] == [("skipped", "user")]
    assert response.content == "Not run: the user skipped this tool call."


async def test_edited_arguments_are_validated_then_run_and_the_model_is_told() -> None:
    seen: list[ApprovalRequest] = []

    def edit(request: ApprovalRequest) -> Approval:
        seen.append(request)
        if len(seen) == 1:
            return Approval("edited", arguments={"x": "not a number"})
        return Approval("edited", arguments={"x": 41})

    turn = await Chat(provider=_one_call(), tools=[f], prompter=PolicyPrompter(edit)).send("go")
    [response] = _responses(turn)
    assert seen[1].error is not None and "x" in seen[1].error  # the bad edit was sent back
    assert response.content.endswith("ran with 41")
    assert '"x": 41' in response.content  # the model learns the arguments changed
    assert [(d.action, d.by) for d in response.decisions] == [("edited", "user")]


async def test_always_allow_skips_later_prompts_in_the_thread() -> None:
    asked: list[str] = []

    def allow_always(request: ApprovalRequest) -> Approval:
        asked.append(request.call_id)
        return Approval("always_allowed")

    provider = ScriptedProvider(
        [
            cycle(tool_call("f", {"x": 1}, call_id="c1")),
            cycle(message("one")),
            cycle(tool_call("f", {"x": 2}, call_id="c2")),
            cycle(message("two")),
        ]
    )
    chat = Chat(provider=provider, tools=[f], prompter=PolicyPrompter(allow_always))
    first = await chat.send("a")
    second = await chat.send("b")
    assert asked == ["c1"]
    assert chat.allowed_tools == {"f"}
    assert [d.action for d in _responses(first)[0].decisions] == ["always_allowed"]
    assert [(d.action, d.detail) for d in _responses(second)[0].decisions] == [
        ("approved", "always allowed by you in this thread")
    ]


async def test_modes_unattended_skip_and_deny() -> None:
    @tool(run="skip")
    def never(x: int) -> str:
        raise AssertionError("must not run")

    @tool(run="unattended")
    def always(x: int) -> str:
        return "ok"

    provider = ScriptedProvider(
        [cycle(tool_call("never", {"x": 1}), tool_call("always", {"x": 1})), cycle(message("."))]
    )
    turn = await Chat(provider=provider, tools=[never, always]).send("go")
    skip, run = _responses(turn)
    assert (skip.status, run.status) == ("skipped", "done")
    assert [(d.action, d.by, d.detail) for d in run.decisions] == [
        ("approved", "policy", "unattended")
    ]

    denied = await Chat(provider=_one_call(), tools=[f], run_mode="deny").send("go")
    assert "disabled" in _responses(denied)[0].content


async def test_edit_mode_opens_the_editor_first() -> None:
    @tool(run="edit")
    def g(x: int) -> str:
        return str(x)

    requests: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> Approval:
        requests.append(request)
        return Approval("approved")

    await Chat(provider=_one_call("g"), tools=[g], prompter=PolicyPrompter(approve)).send("go")
    assert requests[0].edit_first


async def test_result_review_deliver_withhold_and_edit() -> None:
    @tool(result="ask")
    def secret(x: int) -> str:
        return "the secret"

    for decision, expected, action in [
        (ResultDecision("delivered"), "the secret", "delivered"),
        (ResultDecision("withheld"), "The user chose not to share this tool's result.", "withheld"),
        (ResultDecision("result_edited", content="redacted"), "redacted", "result_edited"),
    ]:
        reviews: list[ResultReview] = []

        def review(
            r: ResultReview, d: ResultDecision = decision, seen: list[ResultReview] = reviews
        ) -> ResultDecision:
            seen.append(r)
            return d

        chat = Chat(
            provider=_one_call("secret"),
            tools=[secret],
            prompter=PolicyPrompter("allow", results=review),
        )
        [response] = _responses(await chat.send("go"))
        assert reviews[0].content == "the secret"
        assert response.content == expected
        assert [d.action for d in response.decisions] == ["approved", action]


async def test_inquiry_is_asked_recorded_and_answered() -> None:
    @tool(run="unattended")
    async def deploy(target: str, ctx: ToolContext) -> str:
        answer = await ctx.ask(f"Really deploy to {target}?", ["yes", "no"])
        return f"answer was {answer}"

    asked = []

    def answer(inquiry: object) -> str:
        asked.append(inquiry)
        return "yes"

    provider = _one_call("deploy", {"target": "prod"})
    turn = await Chat(
        provider=provider, tools=[deploy], prompter=PolicyPrompter(inquiry=answer)
    ).send("go")
    assert kinds(turn)[2:5] == ["inquiry_request", "inquiry_response", "tool_call_response"]
    assert turn.events[2].question == "Really deploy to prod?"  # type: ignore[union-attr]
    assert turn.events[2].choices == ["yes", "no"]  # type: ignore[union-attr]
    assert _responses(turn)[0].content == "answer was yes"
    assert provider.requests[1].events[-1].kind == "tool_call_response"


async def test_async_generator_streams_progress_and_returns_its_last_value() -> None:
    @tool(run="unattended")
    async def count(n: int):  # type: ignore[no-untyped-def]
        for i in range(n):
            yield f"step {i + 1} of {n}"
            await asyncio.sleep(0)  # the work between steps
        yield {"total": n}

    sink = RecordingSink()
    turn = await Chat(provider=_one_call("count", {"n": 3}), tools=[count], sink=sink).send("go")
    outputs = [u.output for u in sink.updates if isinstance(u, ToolUpdate) and u.output]
    final = outputs[-1]
    assert final.lines() == ["step 1 of 3", "step 2 of 3", "step 3 of 3", '{"total": 3}']
    assert any(0 < o.total < final.total for o in outputs)  # reported while it ran
    assert _responses(turn)[0].content == '{"total": 3}'


async def test_sync_tools_run_off_the_event_loop() -> None:
    import threading

    loop_thread = threading.get_ident()
    seen: list[int] = []

    @tool(run="unattended")
    def where() -> str:
        seen.append(threading.get_ident())
        return "ok"

    await Chat(provider=_one_call("where", {}), tools=[where]).send("go")
    assert seen and seen[0] != loop_thread
