"""What the extension hooks into the kernel for ``%%chat`` cells.

* :func:`await_chat_cells`: an input transformer that makes a chat cell's
  ``run_cell_magic('chat', ...)`` awaited, so the turn runs on the kernel's own loop and the cell
  stays busy until it ends (ipykernel >= 7.4 then still delivers widget clicks);
* :func:`chat_help_as_output`: ``%chat?`` prints its help as an output (nbclient drops the pager);
* :func:`sigint_menu`: during a turn, the first kernel interrupt opens the interrupt menu and a
  second one (while the menu is open) aborts the cell;
* :func:`check_ipykernel`: refuse kernels that cannot deliver clicks while a cell runs;
* :func:`keep_cell_parents`: a comm message handled while a cell runs no longer hands the next
  cell the previous cell's parent (ipykernel 7.4), which left that cell ``[*]`` for good;
* :func:`comms_outlive_subshells`: a comm message addressed to a subshell that is gone is
  handled on the main shell instead of being dropped;
* :func:`quiet_subshell_teardown`: the asyncio noise of a subshell deleted with messages still
  queued (JupyterLab deletes a comm target's subshell when its last comm closes) no longer lands
  in the running cell's output.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import sys
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..loops import call_soon_on

if TYPE_CHECKING:
    from ..engine.chat import Chat

__all__ = [
    "await_chat_cells",
    "chat_help_as_output",
    "check_ipykernel",
    "comms_outlive_subshells",
    "keep_cell_parents",
    "quiet_subshell_teardown",
    "sigint_menu",
]


@contextlib.contextmanager
def sigint_menu(chat: Chat, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """First interrupt opens the menu; a second one while it is open aborts the cell."""
    from ..engine.turn import TurnState  # a turn runs: the engine is loaded

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


def keep_cell_parents(kernel: Any) -> None:
    """Stop ipykernel 7.4 from giving a running cell the parent of the cell before it.

    Why. While a cell holds the main shell, ipykernel 7.4 handles a comm message concurrently
    (``Kernel.shell_main``): it reads the shell's parent (the running cell's request), awaits
    the comm's own task, then sets that parent back. All main-shell messages share one context,
    so when the running cell ends during that await and the next queued cell (Run All) starts
    and awaits something, the restore sets the *finished* cell's request as the new cell's
    parent: its outputs and its final ``idle`` go out under the old request, and JupyterLab
    shows the new cell ``[*]`` for good while the kernel is idle (seen with the page's replies
    to a ``%%chat`` turn's last metadata writes, then ``await chat.send(...)``).

    How. ``set_parent`` is wrapped on the kernel instance: a call from ``shell_main`` (only
    that restore) sets the parent the shell holds *now*, which is the restore's intent when
    nothing started meanwhile and the running cell's own parent when something did. Every
    other call passes through. Installed once; a kernel without these methods is left alone.
    """
    original = getattr(kernel, "set_parent", None)
    shell_main = getattr(type(kernel), "shell_main", None)
    code = getattr(shell_main, "__code__", None)
    if not callable(original) or code is None or getattr(original, "_keeps_parents", False):
        return

    def set_parent(ident: Any, parent: Any, channel: str = "shell") -> None:
        if channel == "shell" and sys._getframe(1).f_code is code:
            ident, parent = kernel._parent_ident["shell"], kernel.get_parent("shell")
        original(ident, parent, channel)

    set_parent._keeps_parents = True  # type: ignore[attr-defined]
    kernel.set_parent = set_parent


# ipykernel's task for each incoming shell message (utils._async_in_context) and the coroutine
# it runs (Kernel.shell_main): what a deleted subshell's loop drops
_SHELL_TASKS = ("_async_in_context.<locals>.run_in_context", "Kernel.shell_main")


class _SubshellTeardown(logging.Filter):
    """Drops asyncio's reports about shell messages a deleted subshell never handled."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith("Task was destroyed but it is pending!"):
            return not any(f"coro=<{task}()" in message for task in _SHELL_TASKS)
        if message.startswith("Task exception was never retrieved") and record.exc_info:
            return record.exc_info[0] is None or record.exc_info[0].__name__ != (
                "UnknownSubshellError"
            )
        return True


def quiet_subshell_teardown() -> None:
    """Keep ipykernel's subshell teardown out of the user's cells.

    Why. JupyterLab and Notebook 7 run comms over a kernel subshell per comm target and delete
    that subshell when the target's last comm closes — here, each time a chat cell's record
    replaces its widget. A message still queued for the subshell (mostly the page's last word
    to the closed widget) is dropped with its loop, and asyncio reports it on stderr: "Task was
    destroyed but it is pending!", "coroutine '_async_in_context.<locals>.run_in_context' (or
    'Kernel.shell_main') was never awaited", or an ``UnknownSubshellError`` never retrieved.
    That text landed in the chat cell running at the time (seen on Run All after Restart
    Kernel in Notebook 7). A message sent after the deletion is handled on the main shell
    (:func:`comms_outlive_subshells`). Only these reports, about ipykernel's own shell tasks,
    are dropped; every other asyncio report still shows. Installed once.
    """
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _SubshellTeardown) for f in logger.filters):
        logger.addFilter(_SubshellTeardown())
    for task in _SHELL_TASKS:
        warnings.filterwarnings(
            "ignore",
            message=re.escape(f"coroutine '{task}' was never awaited"),
            category=RuntimeWarning,
        )


_COMM_MESSAGES = frozenset({"comm_msg", "comm_close"})


def comms_outlive_subshells(kernel: Any) -> None:
    """Hand a comm message for a subshell that no longer exists to the main shell.

    Why. JupyterLab and Notebook 7 send a comm's messages over a subshell shared by the comms
    of its target, and delete the subshell when the target's count of comms drops to zero —
    also when a comm of that target opened meanwhile and already sends on it (a page joining
    or reloading, comms opened and closed in a burst). ipykernel answers every message for an
    unknown subshell with an error and drops it, so a click, a cell the page read for the
    kernel, or an edit's answer was lost ("Unknown subshell_id" in the kernel's log), and the
    turn or the agent's call behind it waited in vain.

    How. ``_send_unknown_subshell_reply`` is wrapped on the kernel instance: a ``comm_msg`` or
    ``comm_close`` goes to the main shell, which handles comm messages while an awaited cell
    runs (ipykernel >= 7.4) and accepts them whatever subshell their header names; every other
    request still gets ipykernel's error reply. The message is signed again with the kernel's
    own session. Installed once; a kernel without these parts is left alone.
    """
    original = getattr(kernel, "_send_unknown_subshell_reply", None)
    channel = getattr(kernel, "shell_channel_thread", None)
    session = getattr(kernel, "session", None)
    if not callable(original) or channel is None or session is None:
        return
    if getattr(original, "_reroutes_comms", False):
        return

    def reroute(idents: Any, msg: dict[str, Any], err: Exception) -> None:
        if msg.get("header", {}).get("msg_type") not in _COMM_MESSAGES:
            original(idents, msg, err)
            return
        content = msg["content"]
        relayed = {**msg, "content": getattr(content, "bytes", content)}
        frames = session.serialize(relayed, ident=idents)
        frames += [getattr(b, "bytes", b) for b in msg.get("buffers") or []]
        channel.manager.get_shell_channel_to_subshell_socket(None).send_multipart(frames)

    reroute._reroutes_comms = True  # type: ignore[attr-defined]
    kernel._send_unknown_subshell_reply = reroute
