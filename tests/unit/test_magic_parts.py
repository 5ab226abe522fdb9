"""Pieces of the magic that need no kernel: the await transformer and the ipykernel check."""

from __future__ import annotations

import types

import pytest

from jupyter_turns.kernel.cell_hooks import await_chat_cells
from jupyter_turns.kernel.cell_hooks import check_ipykernel as _check_ipykernel


def test_chat_cells_become_awaited() -> None:
    lines = ["get_ipython().run_cell_magic('chat', '--new', 'hello\\n')\n"]
    assert await_chat_cells(lines) == [
        "await get_ipython().run_cell_magic('chat', '--new', 'hello\\n')\n"
    ]


@pytest.mark.parametrize(
    "line",
    [
        "get_ipython().run_cell_magic('chatter', '', 'x')\n",
        "get_ipython().run_cell_magic('time', '', 'x')\n",
        "x = 1\n",
    ],
)
def test_other_cells_are_left_alone(line: str) -> None:
    assert await_chat_cells([line]) == [line]


def test_an_old_ipykernel_gets_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        __import__("sys").modules, "ipykernel", types.SimpleNamespace(__version__="7.3.2")
    )
    with pytest.raises(ImportError, match=r"ipykernel >= 7.4 \(this kernel has 7.3.2\)"):
        _check_ipykernel()
    monkeypatch.setitem(
        __import__("sys").modules, "ipykernel", types.SimpleNamespace(__version__="7.4.0")
    )
    _check_ipykernel()


def test_every_chat_command_in_the_help_has_a_handler_and_no_handler_is_undocumented() -> None:
    """``%chat`` dispatches by a table; the help the user reads names exactly its commands."""
    import re

    from jupyter_turns.kernel.commands import COMMANDS
    from jupyter_turns.kernel.magic import ChatMagics

    help_text = ChatMagics.chat.__doc__ or ""
    listed = help_text.split("%chat threads", 1)[1].split("Options stick", 1)[0]
    named: set[str] = set()
    for line in ("%chat threads" + listed).splitlines():
        if "%chat mcp" in line:  # its words are the subcommands of %chat mcp
            named.add("mcp")
        else:
            named.update(re.findall(r"(?:%chat |\| )([a-z]+)", line))
    assert named == set(COMMANDS) - {"help", "?"}


def test_an_unknown_chat_command_says_where_to_look() -> None:
    from IPython.core.error import UsageError

    from jupyter_turns.kernel.commands import run

    with pytest.raises(UsageError, match=r"^unknown %chat command 'frobnicate'\. See %chat\?$"):
        run(None, None, "frobnicate now", help_text=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("typed", "meant"), [("setings", "settings"), ("thread", "threads"), ("exprot", "export")]
)
def test_a_misspelled_chat_command_gets_the_near_one(typed: str, meant: str) -> None:
    """Issue 45: ``%chat setings`` said only "unknown"."""
    from IPython.core.error import UsageError

    from jupyter_turns.kernel.commands import run

    with pytest.raises(UsageError) as failed:
        run(None, None, typed, help_text=None)  # type: ignore[arg-type]
    assert str(failed.value) == (
        f"unknown %chat command {typed!r}: did you mean `%chat {meant}`? See %chat?"
    )
