"""What the extension hooks into the kernel for ``%%chat`` cells.

* :func:`await_chat_cells`: an input transformer that makes a chat cell's
  ``run_cell_magic('chat', ...)`` awaited, so the turn runs on the kernel's own loop and the cell
  stays busy until it ends (ipykernel >= 7.4 then still delivers widget clicks);
* :func:`chat_help_as_output`: ``%chat?`` prints its help as an output (nbclient drops the pager);
* :func:`sigint_menu`: during a turn, the first kernel interrupt opens the interrupt menu and a
  second one (while the menu is open) aborts the cell;
* :func:`check_ipykernel`: refuse kernels that cannot deliver clicks while a cell runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..engine.turn import TurnState
from ..loops import call_soon_on

if TYPE_CHECKING:
    from ..engine.chat import Chat

__all__ = ["await_chat_cells", "chat_help_as_output", "check_ipykernel", "sigint_menu"]


@contextlib.contextmanager
def sigint_menu(chat: Chat, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """First interrupt opens the menu; a second one while it is open aborts the cell."""
    try:
        previous = signal.getsignal(signal.SIGINT)
        installed = True

        def handler(signum: int, frame: Any) -> None:
            turn = chat.turn
            menu_open = turn is not None and turn.state in (
                TurnState.INTERRUPTED_STREAMING,
                TurnState.INTERRUPTED_TOOL,
            )
            if not menu_open:
                call_soon_on(loop, chat.interrupt)
                return
            try:
                if callable(previous):
                    previous(signum, frame)
            finally:
                call_soon_on(loop, lambda: None)  # wake a sleeping loop

        signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: no signal handling for this turn
        installed = False
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGINT, previous)


_CHAT_CALL = re.compile(r"^(\s*)(get_ipython\(\)\.run_cell_magic\((['\"])chat\3)")


# ``%chat undo`` and ``%chat rewind`` talk to the page (removing an inserted cell),
# ``%chat mcp`` starts and closes servers on the kernel's loop and ``%chat fix`` runs a turn,
# and ``%chat serve`` starts a server that runs calls on that loop, so they are awaited like a turn
_UNDO_CALL = re.compile(
    r"""^(\s*)(get_ipython\(\)\.run_line_magic\((['"])chat\3, """
    r"""(['"])(undo|rewind|mcp|fix|serve)\b.*\4\))\s*$"""
)


def await_chat_cells(lines: list[str]) -> list[str]:
    """Input transformer: ``get_ipython().run_cell_magic('chat', ...)`` becomes awaited, and
    so do ``%chat undo``, ``%chat rewind``, ``%chat mcp`` and ``%chat fix`` lines."""
    if lines and _CHAT_CALL.match(lines[0]):
        return [_CHAT_CALL.sub(r"\1await \2", lines[0], count=1), *lines[1:]]
    return [_UNDO_CALL.sub(r"\1await \2\n", line) for line in lines]


_CHAT_HELP = re.compile(
    r"""^\s*get_ipython\(\)\.run_line_magic\((['"])pinfo2?\1, (['"])%%?chat\2\)\s*$"""
)


def chat_help_as_output(lines: list[str]) -> list[str]:
    """Input transformer: ``%chat?`` and ``%%chat?`` print the help as a cell output.

    IPython sends ``?`` help to the pager, which nbclient and ``jupyter execute`` drop.
    """
    if len(lines) == 1 and _CHAT_HELP.match(lines[0]):
        return ["get_ipython().run_line_magic('chat', 'help')\n"]
    return lines


def check_ipykernel() -> None:
    kernel_module = sys.modules.get("ipykernel")
    if kernel_module is None:
        return
    version = getattr(kernel_module, "__version__", "0")
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    if parts < (7, 4):
        raise ImportError(
            f"jupyter_turns needs ipykernel >= 7.4 (this kernel has {version}): older kernels "
            "cannot deliver button clicks while a cell runs. Run `pip install -U ipykernel` "
            "and restart the kernel."
        )
