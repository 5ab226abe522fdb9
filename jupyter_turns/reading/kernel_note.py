"""Telling the model that the kernel changed under it, so it does not reason from stale state.

A thread restored from the notebook after a kernel restart remembers tool results about
variables that the new kernel does not have. The first request after the restore says so
(the kernel restarted at …), and any request says which names that earlier tool calls created
or read are gone now (``inspect(name)``, names a ``python`` call assigned — only calls that
ran and succeeded: a skipped, denied or failed call bound nothing). Each name is reported
once. It also says what the user undid since the model's last answer, and that the user
rewound the conversation (the rewound turns are not sent: the model hears only that later
turns were taken back, and what of theirs could not be undone). The note goes with the request
as a labeled attachment, "note about the kernel" from jupyter_turns.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from ..engine.window import rewound
from ..model.content import Attachment
from ..model.events import ConversationEvent

__all__ = ["NOTE_LABEL", "kernel_note", "names_from_tool_calls"]

MAX_NAMES = 40
NOTE_LABEL = "note about the kernel"


def names_from_tool_calls(events: Iterable[ConversationEvent]) -> list[str]:
    """Top-level names that earlier tool calls read (``inspect``) or bound (``python``): calls
    whose response says they ran and succeeded (a skipped, denied, cancelled or failed call
    bound nothing, and a name it would have made was never in the kernel)."""
    events = list(events)
    ran = {e.call_id for e in events if e.kind == "tool_call_response" and e.status == "done"}
    names: dict[str, None] = {}
    for event in events:
        if event.kind != "tool_call_request" or event.call_id not in ran:
            continue
        arguments = event.arguments
        if event.name == "inspect" and isinstance(arguments.get("name"), str):
            names.setdefault(arguments["name"].split(".")[0], None)
        elif event.name == "python" and isinstance(arguments.get("code"), str):
            for name in _bound(arguments["code"]):
                names.setdefault(name, None)
    return [n for n in names if n.isidentifier() and not n.startswith("_")]


@functools.lru_cache(maxsize=4096)
def _bound(code: str) -> tuple[str, ...]:
    """The names ``code`` binds at top level. Every request asks again about every earlier
    ``python`` call of the thread: each code is parsed once (a long thread has hundreds)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return ()
    bound: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                bound.extend(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.append(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.extend((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
    return tuple(bound)


def _undone_since_last_request(events: list[ConversationEvent]) -> list[str]:
    """The user's undos since the model last answered (``%chat undo``, a card's Undo, ``%chat
    rewind``). A chat cell run again rewinds the turns after its earlier one and undoes nothing
    (``by="rerun"``): the model is not told, as a notebook cell run again is not."""
    last = max((i for i, e in enumerate(events) if e.kind == "chat_request"), default=-1)
    lines = []
    for event in events[last + 1 :]:
        if event.kind == "rewind" and event.by == "user":
            line = (
                "The user rewound this conversation: later turns you no longer see were taken "
                "back and their changes to the notebook and kernel undone"
            )
            if event.not_undone:
                line += "; not undone: " + "; ".join(event.not_undone)
            lines.append(line + ".")
        elif event.kind == "undo":
            line = f"The user undid your {event.tool} call {event.call_id}: " + (
                ", ".join(event.done) or "nothing could be reverted"
            )
            if event.not_undone:
                line += "; not undone: " + "; ".join(event.not_undone)
            lines.append(line + ".")
    return lines


def kernel_note(
    events: Iterable[ConversationEvent],
    namespace: Mapping[str, Any],
    *,
    restarted_at: str | None,
    reported: set[str],
) -> Attachment | None:
    """The note for the next request, or ``None``; ``reported`` (the thread's) is updated."""
    lines = []
    if restarted_at:
        lines.append(
            f"The kernel restarted since the earlier turns of this conversation (this kernel "
            f"started at {restarted_at}). Variables from before exist only if cells were run "
            "again; check before relying on earlier tool results."
        )
    events = list(events)
    dropped = rewound(events)
    events = [e for e in events if e.id not in dropped]  # what the model sees of the thread
    lines.extend(_undone_since_last_request(events))
    gone = [n for n in names_from_tool_calls(events) if n not in namespace and n not in reported]
    if gone:
        shown = ", ".join(gone[:MAX_NAMES]) + (" …" if len(gone) > MAX_NAMES else "")
        lines.append(f"These names from earlier tool calls no longer exist in the kernel: {shown}")
        reported.update(gone)
    if not lines:
        return None
    # the label names what it is, the source who wrote it: the card reads "note about the
    # kernel · jupyter_turns" (a user's @name reads "@df · variable")
    return Attachment(label=NOTE_LABEL, source="jupyter_turns", text="\n".join(lines))
