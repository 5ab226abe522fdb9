"""The ``%chat`` commands answer in words a person reads (issue 31, points 5 and 8): a settings
table naming the model and where each setting came from, an export shown rendered, costs with
their units, threads counted in turns, answers and tool calls, a help text flush left.

Each test asserts what the cell shows: its streams and its display's ``text/plain`` and
``text/html``, never the session's internals.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_notebook

from jupyter_turns.providers.anthropic import DEFAULT_MODEL
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response

from .kernel import Cell, KernelDriver, notebook_from


def _display(cell: Cell) -> dict[str, str]:
    [shown] = [o["data"] for o in cell.outputs if o["output_type"] == "display_data"]
    return shown


def _row(plain: str, setting: str) -> list[str]:
    """A row of the settings table's text: its value and where it came from."""
    [line] = [line for line in plain.splitlines() if line.startswith(f"  {setting}  ")]
    return re.split(r"\s{2,}", line.strip())[1:]


def test_settings_is_a_table_with_stream_the_model_and_where_each_came_from(
    kernel: KernelDriver,
) -> None:
    before = _display(kernel.run("%chat settings"))
    assert before["text/plain"].startswith("No thread yet")
    assert _row(before["text/plain"], "model") == [
        f"{DEFAULT_MODEL} (the provider's default)",
        "default",
    ]
    kernel.run("%config ChatMagics.max_cycles = 7")
    kernel.run("%%chat --provider scripted --stream off --thinking off\nhello")
    cell = kernel.run("%chat settings")
    assert not [o for o in cell.outputs if o["output_type"] == "execute_result"]
    shown = _display(cell)
    plain = shown["text/plain"]
    assert plain.startswith("Settings of thread 'main':")
    assert "ChatMagics.provider = " not in plain and "{'" not in plain  # no dump, no repr
    assert _row(plain, "provider") == ["scripted — Scripted (offline)", "cell option"]
    # --provider alone: the model is the provider's default, not an option of the cell
    assert _row(plain, "model") == ["none: the scripted provider calls no model", "default"]
    assert _row(plain, "stream") == ["off (plain requests)", "cell option"]
    assert _row(plain, "thinking") == ["off", "cell option"]
    assert _row(plain, "max cycles (answers per turn)") == ["7", "%config"]
    assert _row(plain, "tools run mode") == ["ask", "default"]
    kernel.run("%chat allow python")
    plain = _display(kernel.run("%chat settings"))["text/plain"]
    assert _row(plain, "always allowed") == ["python", "%chat allow"]
    assert "<th>from</th>" in shown["text/html"] and "<td>cell option</td>" in shown["text/html"]
    note = shown["text/html"].rsplit("<p>", 1)[1]  # what the page shows, code as code
    assert "<code>%%chat --model NAME</code>" in note and "`" not in note


def test_settings_name_the_default_model_and_what_a_restore_set(tmp_path: Path) -> None:
    path = tmp_path / "saved.ipynb"
    nbformat.write(new_notebook(), path)  # the kernel's notebook: its grants are recorded
    with AnthropicTestServer() as server:
        server.enqueue(Reply.sse(sse_text_response(["Hi."], model=DEFAULT_MODEL)))
        env = {"ANTHROPIC_API_KEY": "sk-ant-api03-test-000", "ANTHROPIC_BASE_URL": server.url}
        kernel = KernelDriver(env={**env, "JPY_SESSION_NAME": str(path)}, cwd=str(tmp_path))
        try:
            kernel.run("%load_ext jupyter_turns")
            chat = kernel.run("%%chat --tools unattended\nHello")
            plain = _display(kernel.run("%chat settings"))["text/plain"]
        finally:
            kernel.close()
    # the finished answer's record names the model that answered (its footer shows it)
    assert chat.records()[-1]["turn"]["cycles"][0]["model"] == DEFAULT_MODEL
    assert _row(plain, "provider") == ["anthropic — Claude (Anthropic API)", "default"]
    assert _row(plain, "model") == [f"{DEFAULT_MODEL} (the provider's default)", "default"]
    assert _row(plain, "tools run mode") == ["unattended", "cell option"]
    nbformat.write(notebook_from([("%load_ext jupyter_turns", []), ("%%chat", chat.outputs)]), path)
    fresh = KernelDriver(env=env, cwd=str(tmp_path))
    try:
        fresh.run("%load_ext jupyter_turns")
        fresh.run(f"%chat restore {path}")
        restored = _display(fresh.run("%chat settings"))["text/plain"]
    finally:
        fresh.close()
    assert _row(restored, "tools run mode") == ["unattended", "restored"]


def test_export_without_a_path_shows_the_transcript_rendered(
    kernel: KernelDriver, tmp_path: Path
) -> None:
    kernel.run("%%chat --provider scripted\nPlot **sales** <b>now</b>")
    cell = kernel.run("%chat export")
    assert not [o for o in cell.outputs if o["output_type"] == "execute_result"]  # no repr
    assert "`%chat export main main.md` writes it to a file" in cell.stdout()
    shown = _display(cell)
    assert "<strong>sales</strong>" in shown["text/html"]
    assert "&lt;b&gt;now&lt;/b&gt;" in shown["text/html"]  # a tag in the text stays text
    assert "\\n" not in shown["text/plain"] and "> Plot **sales**" in shown["text/plain"]
    target = tmp_path / "out.md"
    written = kernel.run(f"%chat export main {target}").stdout()
    assert f"Wrote thread 'main' to {target} (markdown, " in written
    assert target.read_text(encoding="utf-8").startswith("**You**\n\n> Plot **sales**")


def test_cost_says_its_units(kernel: KernelDriver) -> None:
    kernel.run("%%chat --provider scripted\nhello")
    cost = kernel.run("%chat cost").stdout()
    assert "main: $0.00 (USD) in 1 turn — tokens: 0 in · 0 out" in cost
    assert "session: $0.00 (USD) — estimates" in cost


def test_threads_and_the_echo_count_turns_answers_and_tool_calls(kernel: KernelDriver) -> None:
    kernel.run(
        "from jupyter_turns.providers.scripted import cycle, message, tool_call\n"
        "script = [cycle(tool_call('variables', {})), cycle(message('Done.'))]"
    )
    kernel.run("%%chat --provider scripted --script script --tools unattended\nLook")
    listing = kernel.run("%chat threads").stdout()
    assert listing.startswith("* main: 1 turn, 1 answer, 1 tool call; scripted"), listing
    echo = kernel.run("%%chat --new --provider scripted\nhello").records()[-1]["events"][-1]
    assert "Sent with this request: 1 turn, 0 answers." in echo["content"]
    assert "cycle" not in echo["content"] and "event" not in echo["content"]


def test_help_is_flush_left(kernel: KernelDriver) -> None:
    lines = kernel.run("%chat?").stdout().splitlines()
    assert lines[0].startswith("Chat with Claude")
    assert any(line.startswith("%%chat [options]      the cell body") for line in lines)
    assert "  --new               start a new thread" in "\n".join(lines)
    assert any(line.startswith("%chat threads | new") for line in lines)
