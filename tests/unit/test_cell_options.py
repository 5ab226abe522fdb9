"""A ``%%chat`` cell whose options fail changes nothing: every option is checked first."""

from __future__ import annotations

import asyncio

import pytest
from IPython.core.error import UsageError

from jupyter_turns.kernel.magic import ChatMagics
from jupyter_turns.providers.catalog import ProviderChoice


def run(magics: ChatMagics, line: str, body: str = "hello") -> None:
    asyncio.run(magics.chat(line, body))


def state(magics: ChatMagics) -> tuple[str, dict[str, int]]:
    threads = magics.session.threads
    return threads.current, {n: len(t.chat.conversation) for n, t in threads.by_name.items()}


@pytest.mark.parametrize(
    "line,message",
    [
        ("--new --thread main --script nosuch", "no variable named 'nosuch'"),
        ("--thread other --thinking bad", "--thinking must be off, adaptive or a token budget"),
        ("--thread other --max-cycles 0", "--max-cycles must be 1 or more, not 0"),
        ("--max-cycles -1", "--max-cycles must be 1 or more, not -1"),
        ("--thread other --reasoning loud", "--reasoning must be"),
        ("--new --builtins python,rm", "--builtins: unknown rm"),
        (
            "--thread x --provider scripted --use nosuch_tool",
            "--use: no @tool named nosuch_tool",
        ),
        ("--thread other --provider gemini", "invalid choice"),
        ("--thread other --budget lots", "--budget must be an amount in USD"),
        ("--budget -1", "--budget must be an amount in USD"),
        ("--modle claude-haiku-4-5", r"no option `--modle`: did you mean `--model`\?"),
        ("--t main", r"no option `--t`: did you mean `--tools`\?"),
        ("--tool unattended", r"no option `--tool`: did you mean `--tools`\?"),
        ("--thread other --mod claude-x", r"no option `--mod`: did you mean `--model`\?"),
        ("--fix cell3", r"--fix takes the number Jupyter shows beside the cell \(19 for \[19\]\)"),
        ("please be brief", "'please' is not an option: the request goes in the cell below"),
    ],
)
def test_a_failed_option_changes_nothing(magics: ChatMagics, line: str, message: str) -> None:
    run(magics, "--provider scripted")
    run(magics, "")
    before = state(magics)
    assert before == ("main", {"main": 4})
    settings = magics.session.threads.by_name["main"].settings()
    with pytest.raises(UsageError, match=message):
        run(magics, line)
    assert state(magics) == before
    assert magics.session.threads.by_name["main"].settings() == settings


def test_valid_options_apply_and_stick(magics: ChatMagics) -> None:
    run(magics, "--provider scripted --max-cycles 3 --thinking 2048 --reasoning hidden")
    thread = magics.session.threads.by_name["main"]
    assert (thread.chat.config.max_cycles, thread.chat.config.thinking, thread.reasoning) == (
        3,
        2048,
        "hidden",
    )
    run(magics, "")
    assert thread.chat.config.max_cycles == 3 and len(thread.chat.conversation) == 4


def test_budget_sticks_to_the_thread_and_the_session_settings_reach_every_cell(
    magics: ChatMagics,
) -> None:
    magics.budget_usd, magics.compact_at = 5.0, 40_000
    run(magics, "--provider scripted --budget $0.50")
    chat = magics.session.threads.by_name["main"].chat
    config = chat.config
    assert (config.budget_usd, config.session_budget_usd, config.compact_at) == (0.5, 5.0, 40_000)
    assert chat.ledger is magics.session.ledger and chat.name == "main"
    run(magics, "")
    assert chat.config.budget_usd == 0.5
    run(magics, "--budget off")
    assert chat.config.budget_usd is None
    assert magics.session.ledger.threads["main"].turns == 3


def test_the_first_new_thread_is_main_and_numbering_follows(magics: ChatMagics) -> None:
    run(magics, "--new --provider scripted")
    run(magics, "--new --provider scripted")
    run(magics, "--new --provider scripted")
    assert list(magics.session.threads.by_name) == ["main", "thread-2", "thread-3"]


def test_assigning_the_script_variable_again_plays_the_new_script(magics: ChatMagics) -> None:
    from jupyter_turns.providers.scripted import cycle, message

    namespace = magics.session.namespace
    namespace["script_v"] = [cycle(message("first script"))]
    run(magics, "--script script_v")
    namespace["script_v"] = [cycle(message("second script"))]
    run(magics, "--script script_v")  # the same options: the thread's provider is rebuilt
    answers = [e.content for e in magics.session.threads.by_name["main"].chat.conversation.events]
    assert answers[1::2] == ["first script", "second script"]


def test_a_script_list_plays_on_and_the_variable_keeps_the_list(magics: ChatMagics) -> None:
    """The variable is never rebound (a restored setting could name any variable): later
    cells, in any thread, go on where the list's provider stopped."""
    from jupyter_turns.providers.scripted import cycle, message

    namespace = magics.session.namespace
    script = namespace["script_v"] = [cycle(message("one")), cycle(message("two"))]
    run(magics, "--script script_v")
    assert namespace["script_v"] is script and len(script) == 2
    run(magics, "--new --thread other --script script_v")
    answers = [e.content for e in magics.session.threads.by_name["other"].chat.conversation.events]
    assert answers == ["hello", "two"] and namespace["script_v"] is script


def _builtins(magics: ChatMagics, thread: str = "main") -> set[str]:
    return set(magics.session.threads.by_name[thread].chat.tools)


def test_the_notebook_tools_are_offered_by_default_and_builtins_changes_them(
    magics: ChatMagics,
) -> None:
    default = {"notebook_cells", "cell_output", "variables", "inspect", "insert_cell", "edit_cell",
               "run_cell", "delete_cell", "move_cell"}  # fmt: skip
    run(magics, "--provider scripted")
    assert _builtins(magics) == default
    run(magics, "--builtins python")  # added to the thread's set
    assert _builtins(magics) == default | {"python"}
    run(magics, "")  # and it sticks
    assert "python" in _builtins(magics)
    run(magics, "--builtins none")
    assert _builtins(magics) == set()
    run(magics, "--builtins none,variables")
    assert _builtins(magics) == {"variables"}
    run(magics, "--builtins default")
    assert _builtins(magics) == default


def test_chatmagics_builtins_sets_the_defaults_of_new_threads(magics: ChatMagics) -> None:
    magics.builtins = "none"
    run(magics, "--new --provider scripted")
    assert _builtins(magics) == set()
    magics.builtins = "variables, python"
    run(magics, "--new --provider scripted --thread other")
    assert _builtins(magics, "other") == {"variables", "python"}
    magics.builtins = "variables,rm"
    with pytest.raises(UsageError, match=r"ChatMagics.builtins: unknown rm"):
        run(magics, "--new --provider scripted --thread third")


def test_stream_off_makes_plain_requests_and_sticks(magics: ChatMagics) -> None:
    from jupyter_turns.providers.anthropic import AnthropicProvider

    thread = magics.session.threads.get("main")
    provider = AnthropicProvider(
        "claude-haiku-4-5", api_key="test-key", base_url="http://127.0.0.1:9"
    )
    magics._apply(thread, magics._options("--stream off"), ProviderChoice("anthropic"), set())
    magics.session.threads.use_provider(thread, provider)
    assert provider.streaming is False and thread.settings()["stream"] is False
    magics._apply(thread, magics._options(""), ProviderChoice("anthropic"), set())
    magics.session.threads.use_provider(thread, provider)
    assert provider.streaming is False  # it sticks to the thread
    magics._apply(thread, magics._options("--stream on"), ProviderChoice("anthropic"), set())
    magics.session.threads.use_provider(thread, provider)
    assert provider.streaming is True
