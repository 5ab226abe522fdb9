"""``%chat`` line commands: threads, history, settings, tool permissions, restore and export."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import HTML, display

from . import keys
from .notebook import find_notebook, load_threads
from .transcript import to_html, to_markdown

if TYPE_CHECKING:
    from .magic import ChatMagics

__all__ = ["restore", "run"]


def run(magics: ChatMagics, line: str) -> Any:
    words = shlex.split(line)
    command, args = (words[0], words[1:]) if words else ("help", [])
    threads = magics.threads
    if command in ("help", "?"):
        print(type(magics).chat.__doc__)
        return None
    if command == "key":
        return keys.key_command(args)
    if command == "threads":
        if not threads.by_name:
            print("No threads yet: run a %%chat cell.")
        for name, thread in threads.by_name.items():
            mark = "*" if name == threads.current else " "
            events = len(thread.chat.conversation)
            model = thread.model or ""
            print(f"{mark} {name}: {events} events, {thread.provider} {model}".rstrip())
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
        display(HTML(to_html(shown.chat.conversation.events)))
        return None
    if command == "settings":
        for name in sorted(magics.trait_names(config=True)):
            print(f"ChatMagics.{name} = {getattr(magics, name)!r}")
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
    if command == "restore":
        restore(magics, args[0] if args else None, verbose=True)
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


def _need(args: list[str], usage: str) -> None:
    if not args:
        raise UsageError(f"usage: {usage}")


def restore(magics: ChatMagics, path: str | None, *, verbose: bool) -> int:
    """Rebuild the threads saved in the notebook; how many were restored."""
    notebook = Path(path) if path else find_notebook(magics.namespace)
    if notebook is None:
        if verbose:
            print("No notebook file known to this kernel; give one: %chat restore PATH")
        return 0
    if not notebook.exists():
        raise UsageError(f"{notebook} does not exist")
    saved, current = load_threads(notebook)
    for name, thread in saved.items():
        magics.threads.adopt(name, thread.conversation, thread.settings)
        note = f" (skipped: {'; '.join(thread.problems)})" if thread.problems else ""
        count = len(thread.conversation)
        print(f"Restored thread {name!r}: {count} events from {notebook.name}{note}")
    if current in magics.threads.by_name:
        magics.threads.current = current
    elif saved:
        magics.threads.current = next(iter(saved))
    return len(saved)
