"""``%chat`` line commands: threads, history, settings, tool permissions, restore and export,
where replay reads from (``%chat replay --from FILE``: :func:`.replay.replay_command`), and
``%chat mcp`` (:mod:`jupyter_turns.mcp.mcp_command`)."""

from __future__ import annotations

import difflib
import functools
import os
import shlex
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import display

from ..editing.page import NotebookEditor
from ..editing.rewinding import plan_rewind, rewind
from ..editing.undo import UndoRefused
from ..editing.undoing import undo
from ..engine.window import exchanges, fork_history, fork_notice, rewound, turn_requests
from ..mcp.mcp_command import mcp_command
from ..model.events import tally
from ..providers.catalog import KINDS
from ..providers.endpoints import Service, shown
from ..record.mcp_spec import ServerSpec
from ..record.notebook import find_notebook, read_notebook
from ..record.thread_settings import describe_guarded
from ..record.transcript import markdown_html, to_html, to_markdown
from ..text import plural
from . import keys, long_threads
from .cell_context import show_instructions
from .endpoint_command import endpoint_command
from .grants import judge
from .replay import replay_command
from .serve_command import serve_command
from .settings_view import settings_bundle
from .threads import ALLOWED, RestoreNote, Thread, apply_settings, user_tools

if TYPE_CHECKING:
    from .session import CellSettings, Session

__all__ = ["COMMANDS", "restore", "restore_once", "run", "say_restored", "trust"]


@dataclass(frozen=True)
class _Call:
    """What every ``%chat`` command is given: the session, the cell's settings, its words."""

    session: Session
    settings: CellSettings
    args: list[str]
    help_text: str | None


def run(session: Session, settings: CellSettings, line: str, *, help_text: str | None) -> Any:
    """One ``%chat`` command; ``help_text`` is what ``%chat help`` prints. What it returns is
    None or a coroutine the cell_hooks transformer awaits (``%chat undo``, ``%chat rewind``,
    ``%chat mcp``)."""
    words = shlex.split(line)
    command, args = (words[0], words[1:]) if words else ("help", [])
    handler = COMMANDS.get(command)
    if handler is None:
        close = difflib.get_close_matches(command, COMMANDS, n=1, cutoff=0.6)
        guess = f": did you mean `%chat {close[0]}`?" if close else "."
        raise UsageError(f"unknown %chat command {command!r}{guess} See %chat?")
    return handler(_Call(session, settings, args, help_text))


def _endpoint_for(call: _Call, service: Service) -> str:
    """Where a key given now for ``service`` goes: the endpoint of the ``%%chat`` cell that just
    failed for want of one (the cell's error says to run ``%chat key``; it made no thread),
    else the current thread's endpoint when its provider sends that service's key (its
    ``--base-url``, say), else the service's own."""
    unbuilt = call.session.unbuilt
    kind = KINDS.get(unbuilt.kind) if unbuilt is not None else None
    chosen = unbuilt is not None and kind is not None and kind.service is service
    if chosen and unbuilt is not None and kind is not None and (unbuilt.base_url or kind.keyed):
        return unbuilt.base_url or service.current()
    thread = call.session.threads.by_name.get(call.session.threads.current)
    kind = KINDS.get(thread.provider) if thread is not None else None
    if thread is not None and kind is not None and kind.service is service:
        endpoint = getattr(thread.chat.provider, "endpoint", None)
        if isinstance(endpoint, str):
            return endpoint
    return service.current()


def _help(call: _Call) -> None:
    print(call.help_text)


def _long_thread(call: _Call, command: str) -> None:
    long_threads.run(call.session, call.settings, command, call.args)


def _threads(call: _Call) -> None:
    threads = call.session.threads
    if not threads.by_name:
        print("No threads yet: run a %%chat cell.")
    for name, thread in threads.by_name.items():
        mark = "*" if name == threads.current else " "
        events = thread.chat.conversation.events
        dropped = rewound(events)  # rewound turns stay in their cells, not in the thread's count
        held = tally(e for e in events if e.id not in dropped)
        model = thread.model or getattr(thread.chat.provider, "model", None) or ""
        line = f"{mark} {name}: {held}; {thread.provider} {model}".rstrip()
        if thread.base_url:
            line += f" at {shown(thread.base_url)}"
        context = long_threads.context_line(thread)
        print(f"{line}, {context}" if context else line)


def _new(call: _Call) -> None:
    thread = call.session.threads.get(call.args[0] if call.args else None, new=True)
    print(f"New thread {thread.name!r} is current.")


def _use(call: _Call) -> None:
    """Switch to an existing thread; an unknown name is an error (creating is ``%chat new``)."""
    _need(call.args, "%chat use NAME")
    name, threads = call.args[0], call.session.threads
    restore_once(call.session, call.settings)  # a restarted kernel's saved threads count
    if name not in threads.by_name:
        known = ", ".join(repr(n) for n in threads.by_name) or "none yet"
        raise UsageError(
            f"no thread {name!r}; the threads are: {known}. "
            f"`%chat new {name}` creates it, `%chat threads` lists them."
        )
    thread = threads.get(name)
    say_restored(call.session, call.settings, thread)  # a quiet restore's word on it, once
    print(f"Thread {name!r} is current.")


def _history(call: _Call) -> None:
    threads = call.session.threads
    shown = threads.by_name.get(call.args[0] if call.args else threads.current)
    if shown is None:
        raise UsageError("no such thread; see %chat threads")
    history = shown.chat.conversation.events
    display({"text/html": to_html(history), "text/plain": to_markdown(history)}, raw=True)


def _settings(call: _Call) -> None:
    threads = call.session.threads
    thread = threads.by_name.get(call.args[0] if call.args else threads.current)
    if call.args and thread is None:
        raise UsageError(f"no thread {call.args[0]!r}; see %chat threads")
    mine = user_tools(call.session.namespace).values()
    display(settings_bundle(thread, call.settings, mine), raw=True)


def _permission(call: _Call, command: str) -> None:
    _need(call.args, f"%chat {command} TOOL")
    threads = call.session.threads
    thread = threads.get()
    allowed = thread.chat.allowed_tools
    if command == "allow":
        allowed.add(call.args[0])
        thread.sources["always_allow"] = ALLOWED
    else:
        allowed.discard(call.args[0])
    call.session.remember(thread)  # at once: an older copy of the notebook gets this state
    print(f"Always allowed in {threads.current!r}: {sorted(allowed) or 'nothing'}")


def _undo_command(call: _Call) -> Any:
    count = call.args[0] if call.args else "1"
    if not count.isdigit():
        raise UsageError(
            "usage: %chat undo [N] (the newest N steps: python runs, inserted or edited cells)"
        )
    return _undo(call.session, int(count))  # awaited: the cell_hooks transformer


def _rewind_command(call: _Call) -> Any:
    """``%chat rewind [N]``: the current thread, to before turn N (default: its last turn)."""
    if len(call.args) > 1 or (call.args and not call.args[0].isdigit()):
        raise UsageError(
            "usage: %chat rewind [N] (N: the turn to rewind to before; default: the last)"
        )
    restore_once(call.session, call.settings)
    thread = call.session.threads.by_name.get(call.session.threads.current)
    if thread is None:
        raise UsageError("no thread yet: run a %%chat cell first")
    turn = int(call.args[0]) if call.args else None
    return _rewind(call.session, thread, turn)  # awaited: the cell_hooks transformer


async def _rewind(session: Session, thread: Thread, turn: int | None) -> None:
    editor = NotebookEditor(session.reader.page) if session.reader is not None else None
    try:
        plan = plan_rewind(session, thread.chat.conversation, turn=turn)
        lines = await rewind(session, editor, plan)
    except UndoRefused as exc:
        raise UsageError(f"%chat rewind: {exc}") from None
    print("\n".join(lines))


def _fork(call: _Call) -> None:
    """``%chat fork NAME [--at N]``: a new thread with the current one's history before turn
    N; it becomes current, the original is untouched."""
    args = list(call.args)
    at: int | None = None
    if "--at" in args:
        where = args.index("--at")
        value = args[where + 1] if where + 1 < len(args) else ""
        if not value.isdigit():
            raise UsageError("usage: %chat fork NAME [--at N] (N: a turn number)")
        at = int(value)
        del args[where : where + 2]
    if len(args) != 1 or args[0].startswith("-"):
        raise UsageError("usage: %chat fork NAME [--at N]")
    restore_once(call.session, call.settings)
    threads = call.session.threads
    source = threads.by_name.get(threads.current)
    if source is None:
        raise UsageError("no thread yet: run a %%chat cell first")
    if args[0] in threads.by_name:
        raise UsageError(f"thread {args[0]!r} exists already; fork to a new name")
    events = source.chat.conversation.events
    requests = turn_requests(events)
    if at is not None and not 1 <= at <= len(requests):
        have = plural(len(requests), "turn")
        raise UsageError(
            f"%chat fork: thread {source.name!r} has {have}: --at 1 to {len(requests)}"
        )
    before = requests[at - 1].id if at is not None else None
    history = fork_history(events, before)
    turn = at if at is not None else len(requests) + 1
    notice = fork_notice(source.name, source.chat.conversation.conversation_id, before, turn)
    forked = threads.fork(source, args[0], history, notice)
    print(
        f"New thread {forked.name!r} is current: {notice.text.split(':')[0]} "
        f"({tally(forked.chat.conversation.events)}). Thread {source.name!r} is untouched."
    )


def _mcp(call: _Call) -> Any:  # awaited: the cell_hooks transformer
    threads = call.session.threads.current_first()
    return mcp_command(call.session.mcp, call.settings.mcp_servers, threads, call.args)


def _restore(call: _Call) -> None:
    """Rebuild the saved threads, and hand the open pages the finished turns this kernel holds
    that the notebook may miss (a turn that ended while no page was open)."""
    restore(call.session, call.settings, call.args[0] if call.args else None, verbose=True)
    if call.session.shown_records:
        from .front import send_held_records  # the widget's imports wait until a page needs them

        sent = send_held_records(call.session)
        print(f"Sent {plural(sent, 'finished turn')} this kernel holds to the open notebook pages.")


def _export(call: _Call) -> None:
    """With a path, write the thread's markdown transcript there; without, show it rendered
    (its HTML made from that markdown, tags as text) and say how to write it."""
    threads, args = call.session.threads, call.args
    name = args[0] if args else threads.current
    exported = threads.by_name.get(name)
    if exported is None:
        raise UsageError(f"no thread {name!r}; see %chat threads")
    text = to_markdown(exported.chat.conversation.events)
    if len(args) > 1:
        path = Path(args[1])
        path.write_text(text, encoding="utf-8")
        print(
            f"Wrote thread {name!r} to {path.resolve()} "
            f"(markdown, {plural(len(text), 'character')})."
        )
        return
    print(f"Thread {name!r} as markdown; `%chat export {name} {name}.md` writes it to a file.")
    display({"text/html": markdown_html(text), "text/plain": text}, raw=True)


# Each %chat command and what runs it (the help text in magic.py lists them for the user).
COMMANDS: dict[str, Callable[[_Call], Any]] = {
    "help": _help,
    "?": _help,
    "key": lambda call: keys.key_command(call.args, functools.partial(_endpoint_for, call)),
    "endpoint": lambda call: endpoint_command(call.args),
    **{name: functools.partial(_long_thread, command=name) for name in long_threads.COMMANDS},
    "threads": _threads,
    "new": _new,
    "use": _use,
    "history": _history,
    "settings": _settings,
    "instructions": lambda call: show_instructions(call.session, call.settings, call.args),
    "allow": functools.partial(_permission, command="allow"),
    "revoke": functools.partial(_permission, command="revoke"),
    "undo": _undo_command,
    "rewind": _rewind_command,
    "fork": _fork,
    "trust": lambda call: trust(call.session, call.args),
    "mcp": _mcp,
    "serve": lambda call: serve_command(call.session, call.settings, call.args),  # awaited
    "replay": lambda call: print(replay_command(call.session, call.settings.replay, call.args)),
    "restore": _restore,
    "export": _export,
}


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


def restore_once(session: Session, settings: CellSettings) -> None:
    """The first time a session needs its threads (a chat cell, ``%chat use``), a restarted
    kernel with none picks up those saved in its notebook, quietly: what a restore says of a
    thread waits for the first chat cell that runs in it (:func:`say_restored`), after that
    cell took its own earlier turn's place (:mod:`.rerun`), so it speaks only of the history
    the thread keeps."""
    if session.restore_tried:
        return
    session.restore_tried = True
    if not session.threads.by_name:
        restore(session, settings, None, verbose=False)


def restore(session: Session, settings: CellSettings, path: str | None, *, verbose: bool) -> int:
    """Rebuild the threads saved in the notebook; how many were restored. ``verbose`` (``%chat
    restore``): say what each thread brought at once; else each thread's first chat cell says
    it (:func:`say_restored`).

    Conversations always restore; their turns that this user's kernel did not write go to the
    model quoted, as someone else's. Settings come from the user's own store of what they
    granted each thread in this notebook (:mod:`jupyter_turns.kernel.grants`); the file's are a
    proposal: its harmless fields apply where no grant does, and what would grant a permission
    waits for ``%chat trust --apply``. A restored MCP server is never started until the user
    runs ``%chat mcp start NAME``.
    """
    notebook = Path(path) if path else find_notebook(session.namespace)
    if notebook is None:
        if verbose:
            print("No notebook file known to this kernel; give one: %chat restore PATH")
        return 0
    try:
        saved = read_notebook(notebook)
    except OSError as exc:
        raise UsageError(f"cannot read {notebook}: {exc.strerror or exc}") from None
    origin = os.path.realpath(notebook)
    store, defaults = session.user_store(), settings.defaults()
    signed = any(t.settings.signature for t in saved.threads.values())
    for thread in saved.threads.values():
        conversation = thread.conversation
        verdict = judge(store, origin, conversation.conversation_id, conversation.events)
        adopted = session.threads.adopt(thread, defaults, verdict, origin)
        problems = (*thread.problems, *thread.settings.problems)
        adopted.unsaid = RestoreNote(notebook.name, problems, signed)
        if verbose:
            say_restored(session, settings, adopted)
    for problem in saved.problems:
        print(f"Skipped in {notebook.name}: {problem}")
    session.cell_records.update(saved.cell_records)
    if saved.current in session.threads.by_name:
        session.threads.current = saved.current
    elif saved.threads:
        session.threads.current = next(iter(saved.threads))
    return len(saved.threads)


def say_restored(session: Session, settings: CellSettings, thread: Thread) -> None:
    """What the restore of ``thread`` has not said yet (once): the history it keeps, what of
    it someone else wrote (sent quoted), the permissions it asked for and did not get, its MCP
    servers not started. Of turns rewound since (a chat cell took their place) it says
    nothing: they are not sent."""
    note, thread.unsaid = thread.unsaid, None
    if note is None:
        return
    events = thread.chat.conversation.events
    dropped = rewound(events)
    kept = [e for e in events if e.id not in dropped]
    print(f"Restored thread {thread.name!r}: {plural(len(kept), 'event')} from {note.file}")
    for problem in note.problems:
        print(f"  skipped: {problem}")
    quoted = thread.chat.quoted.ids if thread.chat.quoted is not None else frozenset()
    requests = sum(1 for r in turn_requests(kept) if r.id in quoted)
    if requests:
        print(_quoted_note(thread, requests, note.file))
    if thread.withheld:
        print(_withheld_note([thread], note.signed, session.store_problem))
    _servers_not_started(session, settings, thread)


def _quoted_note(thread: Thread, requests: int, file: str) -> str:
    """What the restore says of a thread holding turns someone else wrote."""
    through = _exchanges_through_quoted(thread)
    return (
        f"  {plural(requests, 'request')} in thread {thread.name!r} "
        f"{'were' if requests != 1 else 'was'} written elsewhere, not by your own "
        f"jupyter_turns: sent to the model only as quoted context (a conversation restored from "
        f"{file}), never as your requests. `%chat forget {through}` stops sending "
        f"{'them' if requests != 1 else 'it'}; `%%chat --new` starts a thread without "
        f"{'them' if requests != 1 else 'it'}."
    )


def _exchanges_through_quoted(thread: Thread) -> int:
    """How many of the oldest exchanges ``%chat forget`` must drop to stop sending every
    quoted one."""
    quoted = thread.chat.quoted.ids if thread.chat.quoted is not None else frozenset()
    groups = exchanges(thread.chat.conversation.events)
    return max((n for n, g in enumerate(groups, 1) if any(e.id in quoted for e in g)), default=0)


def _withheld_note(threads: list[Thread], signed: bool, problem: str | None) -> str:
    """What the restore says of the permissions it did not apply, and how to apply them: those
    the file asks for, and those the user granted the thread in a notebook at another path."""
    lines = []
    for moved in (False, True):
        group = [t for t in threads if bool(t.proposed_by) is moved]
        if not group:
            continue
        asks = "; ".join(f"thread {t.name!r}: {describe_guarded(t.withheld)}" for t in group)
        if moved:
            paths = ", ".join(sorted({str(t.proposed_by) for t in group}))
            why = f"you granted them to this thread in the notebook at {paths}, not here "
            why += "(moved, renamed or copied?)"
        else:
            why = "permissions come only from your own record of what you granted this thread "
            why += "in this notebook; a notebook's settings are a proposal"
            if signed:
                why += " (the signature in its settings, from an earlier jupyter_turns, is ignored)"
        unchecked = f" (your record cannot be read: {problem})" if problem else ""
        lines.append(
            f"This notebook asks for {asks} — not applied: {why}{unchecked}. `%chat trust` "
            "shows exactly what it asks for; `%chat trust --apply` applies it."
        )
    return "\n".join(lines)


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
    """``%chat trust``: what restored threads asked for and did not get; ``--apply`` grants it
    (and records the grant for the notebook they were restored from)."""
    apply = "--apply" in args
    waiting = {n: t for n, t in session.threads.by_name.items() if t.withheld}
    if not waiting:
        print("Nothing waits for trust: no restored thread asked for a permission.")
        return
    for name, thread in waiting.items():
        asked = thread.withheld
        if apply:
            apply_settings(thread, asked)
            thread.withheld, thread.proposed_by = {}, None
            _grant_here(session, thread)
            print(f"Applied to thread {name!r}: {describe_guarded(asked)}.")
            for server in asked.get("mcp_servers", {}):
                print(f"  MCP server '{server}' starts only with `%chat mcp start {server}`.")
            continue
        described = describe_guarded(asked)
        if thread.proposed_by:
            print(
                f"Thread {name!r}: you granted it {described} in the notebook at "
                f"{thread.proposed_by}."
            )
        else:
            print(f"Thread {name!r}: the notebook asks for {described}.")
        for key, value in asked.items():
            if key == "system":
                print("  system prompt:\n" + textwrap.indent(str(value), "    | "))
            else:
                print(f"  {key}: {value!r}")
    if not apply:
        print(
            "Run `%chat trust --apply` to apply all of this (and keep it for this notebook), or "
            "leave it: nothing is applied."
        )


def _grant_here(session: Session, thread: Thread) -> None:
    """Record what the user just applied as granted in the notebook the thread came from, and
    in this kernel's own notebook (also recorded at its next save)."""
    if thread.origin is not None:
        session.remember(thread, path=thread.origin)
    session.remember(thread)
