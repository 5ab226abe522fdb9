"""One settings shape (issue 25): a thread's settings are one frozen ThreadConfig; Chat's
keywords are that config's fields, and what a turn needs besides (sink, prompter, provider)
is passed to ``Chat.send`` for that turn, never assigned to the chat in between."""

from __future__ import annotations

import dataclasses
from typing import get_args, get_type_hints

import pytest
from pydantic import ValidationError

from jupyter_turns import Chat, PolicyPrompter, RecordingSink, tool
from jupyter_turns.engine.config import ThreadConfig, ThreadOptions
from jupyter_turns.errors import ToolDefinitionError
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.record.thread_settings import ThreadSettings
from jupyter_turns.tools.registry import RUN_MODES, RunMode


def test_chat_keywords_are_the_config_fields() -> None:
    fields = {f.name for f in dataclasses.fields(ThreadConfig)}
    assert set(get_type_hints(ThreadOptions)) == fields


def test_keywords_apply_on_top_of_a_given_config_which_stays_frozen() -> None:
    base = ThreadConfig(system="base", max_cycles=3)
    chat = Chat(config=base, model="m", run_mode="deny")
    assert chat.config == dataclasses.replace(base, model="m", run_mode="deny")
    assert base.model is None  # the caller's value is not touched
    with pytest.raises(dataclasses.FrozenInstanceError):
        chat.config.max_cycles = 9  # type: ignore[misc]
    with pytest.raises(ValueError, match="max_cycles"):
        Chat(max_cycles=0)


def test_run_mode_is_one_literal_with_deny_in_it() -> None:
    assert RUN_MODES == get_args(RunMode) == ("ask", "unattended", "edit", "skip", "deny")
    with pytest.raises(ToolDefinitionError, match="run mode"):
        tool(name="f", run="never")(lambda: None)  # type: ignore[call-overload]


async def test_a_tool_set_to_deny_never_runs_and_the_model_is_told() -> None:
    ran: list[int] = []

    @tool(run="deny")
    def launch() -> str:
        """Launch."""
        ran.append(1)
        return "launched"

    provider = ScriptedProvider([cycle(tool_call("launch", {})), cycle(message("ok"))])
    chat = Chat(provider, [launch], PolicyPrompter("allow"), run_mode="unattended")
    turn = await chat.send("go")
    (response,) = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    assert ran == [] and "launch is set to deny" in str(response.content)


async def test_send_takes_this_turns_sink_prompter_and_provider() -> None:
    own, sink = ScriptedProvider(), RecordingSink()
    chat = Chat(own, system="be brief")
    this_turn = ScriptedProvider([cycle(message("from the turn's provider"))])
    await chat.send("hi", sink=sink, prompter=PolicyPrompter("allow"), provider=this_turn)
    assert [r.system for r in this_turn.requests] == ["be brief"] and own.requests == []
    assert sink.updates  # the turn's sink saw it
    assert chat.provider is own and chat.sink is not sink  # nothing was swapped on the chat
    chat.config = dataclasses.replace(chat.config, max_cycles=1, system=None)
    later = ScriptedProvider([cycle(message("next"))])
    await chat.send("again", provider=later)
    assert later.requests[0].system is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("base_url", "https://api.example.com/v1\n"),
        ("reasoning", "full\n"),
        ("region", "eu-west-1\n"),
        ("base_url", "https://api.example.com/v1 x"),
    ],
)
def test_a_saved_setting_with_a_trailing_line_is_refused(field: str, value: str) -> None:
    """A notebook's saved settings are checked whole: a value with a newline after it (which a
    `$` in Python's re lets through) is refused, the clean value is kept."""
    with pytest.raises(ValidationError):
        ThreadSettings.model_validate({field: value})
    clean = value.split()[0]
    assert getattr(ThreadSettings.model_validate({field: clean}), field) == clean
