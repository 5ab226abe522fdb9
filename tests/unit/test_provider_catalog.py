"""Providers by name: the catalog, its admin limits, a thread that changes provider, and the
saved settings that name a provider's endpoint (guarded: they move requests)."""

from __future__ import annotations

import asyncio
import sys
import typing

import pytest
from IPython.core.error import UsageError

from jupyter_turns.errors import ProviderConfigError
from jupyter_turns.kernel.magic import ChatMagics
from jupyter_turns.kernel.provider_limits import check_allowed, switch_notes
from jupyter_turns.model.events import Block, Message, Reasoning
from jupyter_turns.providers import catalog
from jupyter_turns.providers.catalog import KINDS, ProviderChoice, not_carried
from jupyter_turns.record.thread_settings import (
    ProviderName,
    UserDefaults,
    describe_guarded,
    parse_settings,
    split_settings,
)


def run(magics: ChatMagics, line: str, body: str = "hello") -> None:
    asyncio.run(magics.chat(line, body))


def test_the_saved_schema_knows_every_provider_of_the_catalog() -> None:
    assert set(typing.get_args(ProviderName)) == set(KINDS)
    assert parse_settings({"provider": "gemini"}).problems  # an unknown one is dropped, noted


def test_an_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ProviderConfigError, match="use one of anthropic, openai, openai-chat"):
        catalog.build(ProviderChoice("gemini"), {})


# ---------------------------------------------------------------- admin limits


def test_allowed_providers_and_models_refuse_with_the_setting_named() -> None:
    check_allowed(ProviderChoice("anthropic", "claude-x"), [], [])  # no limits: anything
    with pytest.raises(UsageError, match=r"'openai' is not allowed here: .*anthropic, bedrock"):
        check_allowed(ProviderChoice("openai"), ["anthropic", "bedrock"], [])
    models = ["claude-sonnet-*", "gpt-5.5"]
    check_allowed(ProviderChoice("anthropic", "claude-sonnet-5-5"), [], models)
    check_allowed(ProviderChoice("openai", "gpt-5.5"), [], models)
    with pytest.raises(UsageError, match=r"'claude-opus-5' is not allowed here"):
        check_allowed(ProviderChoice("anthropic", "claude-opus-5"), [], models)
    check_allowed(ProviderChoice("scripted", "anything"), [], models)  # offline: not limited


def test_a_cell_outside_the_limits_fails_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-sent-0000000000")  # nothing is sent

    shell = InteractiveShell.instance()
    magics = ChatMagics(shell)
    magics.session.restore_tried = True
    try:
        magics.allowed_providers = ["scripted"]
        run(magics, "--provider scripted")
        with pytest.raises(UsageError, match="'anthropic' is not allowed here"):
            run(magics, "--provider anthropic --thread other")
        assert set(magics.session.threads.by_name) == {"main"}
        magics.allowed_providers = ["scripted", "anthropic"]
        magics.allowed_models = ["claude-haiku-*"]
        with pytest.raises(UsageError, match="'claude-opus-4-1' is not allowed here"):
            run(magics, "--provider anthropic --model claude-opus-4-1 --thread other")
        # the provider's own default model is held to the limit too
        with pytest.raises(UsageError, match=r"'claude-sonnet-.*' is not allowed here"):
            run(magics, "--provider anthropic --thread other")
        assert set(magics.session.threads.by_name) == {"main"}
    finally:
        shell.events.unregister("pre_run_cell", magics._pre_run_cell)


# ---------------------------------------------------------------- switching provider


def _claude_turn() -> list[typing.Any]:
    return [
        Reasoning(content="thinking", metadata={"signature": "sig"}),
        Block(metadata={"raw_block": {"type": "redacted_thinking", "data": "x"}}),
        Message(content="Hello."),
    ]


def test_whose_reasoning_each_provider_cannot_take() -> None:
    openai = Reasoning(content="", metadata={"api": "openai-responses", "raw_item": {}})
    shown_only = Reasoning(content="a local model's thoughts")
    events = [*_claude_turn(), openai, shown_only]
    assert not_carried(events, "anthropic") == 1  # OpenAI's item
    assert not_carried(events, "bedrock") == 1  # Claude's signature is valid on Bedrock
    assert not_carried(events, "openai") == 2  # Claude's thinking and its opaque block
    assert not_carried(events, "openai-chat") == 3  # nothing goes back to a Chat server


def test_a_thread_that_changes_provider_is_told_what_stays_behind(magics: ChatMagics) -> None:
    run(magics, "--provider scripted")
    thread = magics.session.threads.get("main")
    assert switch_notes(thread, ProviderChoice("scripted")) == []
    thread.provider = "anthropic"
    thread.chat.conversation.events.extend(_claude_turn())
    (note,) = switch_notes(thread, ProviderChoice("openai"))
    assert "now uses OpenAI (Responses API) (it was Claude (Anthropic API))" in note
    assert "Reasoning from another provider (2 blocks) is kept in the notebook but not sent" in (
        note
    )
    assert switch_notes(thread, ProviderChoice("anthropic")) == []  # the same provider
    assert "Reasoning" not in switch_notes(thread, ProviderChoice("vertex"))[0]


def test_another_provider_starts_from_its_own_model_and_endpoint(magics: ChatMagics) -> None:
    magics.base_url = "http://127.0.0.1:9/v1"
    run(magics, "--provider scripted --model claude-haiku-4-5")
    key = magics._provider_key(
        magics.session.threads.get("main"), magics._options("--provider openai-chat")
    )
    assert key == ProviderChoice("openai-chat", None, None, "http://127.0.0.1:9/v1")
    key = magics._provider_key(
        magics.session.threads.get("main"),
        magics._options("--provider bedrock --region eu-west-1 --model m"),
    )
    assert (key.kind, key.model, key.region) == ("bedrock", "m", "eu-west-1")
    with pytest.raises(UsageError, match="--base-url must be an http"):
        magics._options("--base-url file:///etc/passwd")


# ---------------------------------------------------------------- saved endpoints


def test_a_saved_endpoint_region_or_project_waits_for_the_user() -> None:
    asks = {"base_url": "https://collector.example/v1", "region": "us-east-1", "project": "p"}
    harmless, guarded = split_settings(asks, UserDefaults(max_cycles=25))
    assert harmless == {} and guarded == asks
    assert describe_guarded(guarded) == (
        "requests sent to https://collector.example/v1, the region `us-east-1`, the project `p`"
    )
    bad = parse_settings({"base_url": "javascript:alert(1)", "region": "a b"})
    assert bad.values == {} and len(bad.problems) == 2


@pytest.mark.parametrize(
    "choice,extra,module",
    [
        (ProviderChoice("bedrock", region="us-east-1"), "bedrock", "boto3"),
        (ProviderChoice("vertex", region="us-east5", project="p"), "vertex", "google"),
        (ProviderChoice("openai"), "openai", "openai"),
        (ProviderChoice("openai-chat", "m", base_url="http://127.0.0.1:9/v1"), "openai", "openai"),
        (ProviderChoice("ollama", "llama3.2"), "openai", "openai"),
    ],
)
def test_a_provider_without_its_sdk_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, choice: ProviderChoice, extra: str, module: str
) -> None:
    for name in ("boto3", "botocore", "google", "google.auth", "openai"):
        monkeypatch.setitem(sys.modules, name, None)  # as if the extra were not installed
    for name in list(sys.modules):  # and the providers that need one not imported yet
        if name.startswith(
            ("jupyter_turns.providers.openai", "jupyter_turns.providers.anthropic_c")
        ):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret")
    with pytest.raises(ProviderConfigError) as info:
        catalog.build(choice, {})
    message = str(info.value)
    assert f"--provider {choice.kind} needs the '{extra}' extra ({module}" in message
    assert f"pip install 'jupyter_turns[{extra}]'" in message
