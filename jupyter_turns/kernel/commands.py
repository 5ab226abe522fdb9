"""``%chat`` line commands: threads, history, settings, tool permissions, restore and export,
where replay reads from (``%chat replay --from FILE``: :func:`.replay.replay_command`), and
``%chat mcp`` (:mod:`jupyter_turns.mcp.commands`)."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import display

from ..editing.page import NotebookEditor
from ..editing.undo import UndoRefused
from ..editing.undoing import undo
from ..mcp.commands import mcp_command
from ..record.mcp_spec import ServerSpec
from ..record.notebook import find_notebook, read_notebook
from ..record.thread_settings import describe_guarded
from ..record.transcript import to_html, to_markdown
from ..text import plural
from . import keys, long_threads
from .endpoint_command import endpoint_command
from .replay import replay_command
from .threads import Thread, apply_settings

if TYPE_CHECKING:
    from .session import CellSettings, Session

__all__ = ["restore", "run", "trust"]


def run(session: Session, settings: CellSettings, line: str, *, help_text: str | None) -> Any:
    """One ``%chat`` command; ``help_text`` is what ``%chat help`` prints."""
    words = shlex.split(line)
    command, args = (words[0], words[1:]) if words else ("help", [])
    threads = session.threads
    if command in ("help", "?"):
        print(help_text)
        return None
    if command == "key":
        return keys.key_command(args)
    if command == "endpoint":
        return endpoint_command(args)
    if command in long_threads.COMMANDS:
        long_threads.run(session, settings, command, args)
        return None
    if command == "threads":
        if not threads.by_name:
            print("No threads yet: run a %%chat cell.")
        for name, thread in threads.by_name.items():
            mark = "*" if name == threads.current else " "
            events = plural(len(thread.chat.conversation), "event")
            model = thread.model or ""
            line = f"{mark} {name}: {events}, {thread.provider} {model}".rstrip()
            context = long_threads.context_line(thread)
            print(f"{line}, {context}" if context else line)
        return None
    if command == "new":
        thread = threads.get(args[0] if args else None, new=True)
        print(f"New thread {thread.name!r} is current.")
        return None
    if command == "use":
        _need(args, "%chat use NAME")
        threads.get(args[0])
        print(f"Thread {args[0]!r} is current.")
        return None
    if command == "history":
        shown = threads.by_name.get(args[0] if args else threads.current)
        if shown is None:
            raise UsageError("no such thread; see %chat threads")
        history = shown.chat.conversation.events
        display({"text/html": to_html(history), "text/plain": to_markdown(history)}, raw=True)
        return None
    if command == "settings":
        for name, value in sorted(vars(settings).items()):
            print(f"ChatMagics.{name} = {value!r}")
        if threads.current in threads.by_name:
            print(f"thread {threads.current!r}: {threads.by_name[threads.current].settings()}")
        return None
    if command in ("allow", "revoke"):
        _need(args, f"%chat {command} TOOL")
        allowed = threads.get().chat.allowed_tools
        if command == "allow":
            allowed.add(args[0])
        else:
            allowed.discard(args[0])
        print(f"Always allowed in {threads.current!r}: {sorted(allowed) or 'nothing'}")
        return None
    if command == "undo":
        count = args[0] if args else "1"
        if not count.isdigit():
            raise UsageError(
                "usage: %chat undo [N] (the newest N steps: python runs, inserted or edited cells)"
            )
        return _undo(session, int(count))  # awaited: the cell_hooks transformer
    if command == "trust":
        trust(session, args)
        return None
    if command == "mcp":  # awaited: the cell_hooks transformer
        return mcp_command(session.mcp, settings.mcp_servers, threads.current_first(), args)
    if command == "replay":
        print(replay_command(session, settings.replay, args))
        return None
    if command == "restore":
        restore(session, settings, args[0] if args else None, verbose=True)
        return None
    if command == "export":
        name = args[0] if args else threads.current
        exported = threads.by_name.get(name)
        if exported is None:
            raise UsageError(f"no thread {name!r}")
        text = to_markdown(exported.chat.conversation.events)
        if len(args) > 1:
            Path(args[1]).write_text(text, encoding="utf-8")
            print(f"Wrote {args[1]}")
            return None
        return text
    raise UsageError(f"unknown %chat command {command!r}; see %chat?")


async def _undo(session: Session, count: int) -> None:
    editor = NotebookEditor(session.reader.page) if session.reader is not None else None
    try:
        lines = await undo(session, editor, count=count)
    except UndoRefused as exc:
        raise UsageError(str(exc)) from None
    print("\n".join(lines))


def _need(args: list[str], usage: str) -> None:
    if not args:
        raise UsageError(f"usage: {usage}")


def restore(session: Session, settings: CellSettings, path: str | None, *, verbose: bool) -> int:
    """Rebuild the threads saved in the notebook; how many were restored.

    Conversations always restore, and so do the settings this user's own jupyter_turns saved
    (signed with their key, :mod:`jupyter_turns.kernel.trust`). Of settings it did not save, those
    that grant a permission wait for ``%chat trust --apply``. A restored MCP server is never
    started until the user runs ``%chat mcp start NAME``.
    """
    notebook = Path(path) if path else find_notebook(session.namespace)
    if notebook is None:
        if verbose:
            print("No notebook file known to this kernel; give one: %chat restore PATH")
        return 0
    key = session.settings_key()
    try:
        saved = read_notebook(notebook, key.verifies if key is not None else None)
    except OSError as exc:
        raise UsageError(f"cannot read {notebook}: {exc.strerror or exc}") from None
    withheld: dict[str, str] = {}
    defaults = settings.defaults()
    for name, thread in saved.threads.items():
        adopted = session.threads.adopt(thread, defaults)
        count = plural(len(thread.conversation), "event")
        print(f"Restored thread {name!r}: {count} from {notebook.name}")
        for problem in [*thread.problems, *thread.settings.problems]:
            print(f"  skipped: {problem}")
        if adopted.withheld:
            withheld[name] = describe_guarded(adopted.withheld)
        _servers_not_started(session, settings, adopted)
    for problem in saved.problems:
        print(f"Skipped in {notebook.name}: {problem}")
    if withheld:
        asks = "; ".join(f"thread {name!r}: {text}" for name, text in withheld.items())
        unchecked = f" ({session.key_problem})" if session.key_problem else ""
        print(
            f"This notebook asks for {asks} — not applied: these settings were not saved by "
            f"your own jupyter_turns (they carry no signature made with your key){unchecked}. "
            "`%chat trust` shows exactly what it asks for; `%chat trust --apply` applies it."
        )
    session.cell_records.update(saved.cell_records)
    if saved.current in session.threads.by_name:
        session.threads.current = saved.current
    elif saved.threads:
        session.threads.current = next(iter(saved.threads))
    return len(saved.threads)


def _servers_not_started(session: Session, settings: CellSettings, thread: Thread) -> None:
    """Name the restored thread's MCP servers that this kernel would have to start."""
    for name, saved in thread.mcp_servers.items():
        if name in session.mcp.specs or name in settings.mcp_servers:
            continue  # the user's own configuration of that name is used
        described = ServerSpec.model_validate(saved).describe()
        print(
            f"Thread {thread.name!r} uses the MCP server '{name}' ({described}): not started. "
            f"`%chat mcp start {name}` starts it, once you have read what it runs."
        )


def trust(session: Session, args: list[str]) -> None:
    """``%chat trust``: what restored threads asked for and did not get; ``--apply`` grants it."""
    apply = "--apply" in args
    waiting = {n: t for n, t in session.threads.by_name.items() if t.withheld}
    if not waiting:
        print("Nothing waits for trust: no restored thread asked for a permission.")
        return
    for name, thread in waiting.items():
        asked = thread.withheld
        if apply:
            apply_settings(thread, asked)
            thread.withheld = {}
            print(f"Applied to thread {name!r}: {describe_guarded(asked)}.")
            for server in asked.get("mcp_servers", {}):
                print(f"  MCP server '{server}' starts only with `%chat mcp start {server}`.")
            continue
        print(f"Thread {name!r} asks for: {describe_guarded(asked)}.")
        for key, value in asked.items():
            if key == "system":
                print("  system prompt:\n" + textwrap.indent(str(value), "    | "))
            else:
                print(f"  {key}: {value!r}")
    if not apply:
        print("Run `%chat trust --apply` to apply all of this, or leave it: nothing is applied.")
