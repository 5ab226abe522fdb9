"""Replay: a ``%%chat`` cell plays its saved turn again — offline, deterministic, self-checking.

The notebook already holds every event of every turn. With replay on, a chat cell finds its
saved turn (by cell id where the frontend gives one, else by its request text, in cell order,
in the notebook file this kernel belongs to or the ``.ipynb`` files of its working directory:
nbval, nbclient and papermill start the kernel there) and a :class:`ReplayProvider` plays the
saved cycles — text, reasoning with signatures, opaque blocks, tool calls, stop reasons —
through the same pipeline, so the widget, record and metadata come out as in a live run.

The tools run again for real (so the kernel ends in the same state and later cells work),
under the same run modes and approvals; each new result is compared with the saved one and a
difference is saved on the response (``replay``), shown in its card and reported — a warning,
or with ``ChatMagics.replay_check = "strict"`` a failed cell. ``--replay-tools saved`` answers
with the saved results instead. Modes (``ChatMagics.replay``, or ``JUPYTER_TURNS_REPLAY``,
which wins): ``auto`` replays Anthropic cells when no API key is set and a saved turn matches;
``on`` replays every chat cell and fails clearly when there is none or the request changed;
``off`` never replays. A saved turn that was interrupted live is replayed up to where it was
interrupted, with a notice. No network is touched.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .events import (
    ConversationEvent,
    Finished,
    Flush,
    MessageDelta,
    Part,
    ReasoningDelta,
    ToolCall,
    ToolCallResponse,
    parent_of,
)
from .notebook import find_notebook
from .providers.base import Request
from .providers.scripted import Delay, ScriptedProvider
from .saved_turns import SavedTurn, saved_turns

if TYPE_CHECKING:
    from .chat import Chat

__all__ = [
    "ENV",
    "REPLAY_MODES",
    "ReplayPlan",
    "ReplayProvider",
    "find_saved",
    "replay_mode",
    "replaying",
]

ENV = "JUPYTER_TURNS_REPLAY"
REPLAY_MODES = ("auto", "on", "off")
MAX_FILES = 50
MAX_BYTES = 100_000_000
_WORDS = re.compile(r"\S+\s*|\s+")


def replay_mode(configured: str) -> str:
    """The mode in force: the environment variable wins (so CI runs a notebook unchanged)."""
    value = os.environ.get(ENV, "").strip().lower()
    return value if value in REPLAY_MODES else configured


@dataclass
class ReplayPlan:
    """What one cell replays: its saved turn, as a provider and the saved tool results."""

    turn: SavedTurn
    source: str  # the notebook file it came from, for notes
    provider: ReplayProvider
    responses: dict[str, ToolCallResponse]  # saved tool results by call id
    note: str | None = None  # the saved turn was interrupted live: where the replay stops
    saved_tools: bool = False  # --replay-tools saved: the saved results, tools not run
    strict: bool = False  # ChatMagics.replay_check = "strict": a difference fails the cell


@contextlib.contextmanager
def replaying(chat: Chat, replay: ReplayPlan | None, front: Any) -> Iterator[list[str]]:
    """Play ``replay`` on ``chat`` for one turn (the notes to show with it); afterwards the
    chat's own provider is back. Strict: raise UsageError naming the tools whose results
    differ from the recording."""
    if replay is None:
        yield []
        return
    previous, start = chat.provider, len(chat.conversation)
    chat.provider = replay.provider
    chat.execution.replay, chat.execution.replay_saved = replay.responses, replay.saved_tools
    if front is not None:
        front.replayed_from = replay.source  # saved with the turn (not shown: nbval compares)
    try:
        yield [replay.note] if replay.note else []
    finally:
        chat.provider = previous
        chat.execution.replay, chat.execution.replay_saved = None, False
    differing = [e for e in chat.conversation.events[start:] if _differs(e)]
    if replay.strict and differing:
        from IPython.core.error import UsageError

        calls = ", ".join(getattr(e, "call_id", "?") for e in differing)
        raise UsageError(
            f"%%chat: replay check failed: {len(differing)} tool result(s) differ from the "
            f"recording in {replay.source} ({calls}); see the tool cards"
        )


class ReplayProvider(ScriptedProvider):
    """Plays a saved turn's cycles; reports tool results that differ from the saved ones."""

    name = "replay"

    def __init__(self, cycles: list[list[Any]], responses: dict[str, ToolCallResponse]) -> None:
        super().__init__(cycles)
        self._saved = responses

    def stream(self, request: Request) -> Any:
        notices = _differences(request.events, self._saved)
        if not self.remaining:  # the recording ends here (it was interrupted live)
            self.requests.append(request)
            notices.append("The recording ends here.")
            return _with_notices(self._play([Finished("end_turn")]), notices)
        inner = super().stream(request)
        if not notices:
            return inner
        return _with_notices(inner, notices)

    def cost(self, usage: Any, model: str | None) -> float | None:
        return None  # nothing was spent


async def _with_notices(stream: Any, notices: list[str]) -> Any:
    async for item in stream:
        if isinstance(item, Finished):
            details = {**item.details, "notices": notices}
            item = Finished(item.reason, item.usage, details, item.model)
        yield item


def _differences(
    events: Sequence[ConversationEvent], saved: dict[str, ToolCallResponse]
) -> list[str]:
    """Notices for the tool results of the last response that differ from the recording."""
    notes = []
    for event in reversed(events):
        if event.kind != "tool_call_response":
            if event.kind in ("chat_request", "tool_call_request") and parent_of(event) is None:
                break
            continue
        check = getattr(event, "replay", None)
        if isinstance(check, dict) and check.get("same") is False:
            notes.append(f"Replay: the tool call {event.call_id} returned something else than "
                         "when this cell was recorded (see its card).")  # fmt: skip
    return list(reversed(notes))


def _differs(event: ConversationEvent) -> bool:
    check = getattr(event, "replay", None)
    return isinstance(check, dict) and check.get("same") is False


def choose(
    session: Any, configured: str, kind: str, request: str, *, pace: float, strict: bool
) -> ReplayPlan | None:
    """The replay of the running cell under the mode in force, or None (run it live).
    Raises UsageError in ``on`` mode when the cell has no saved turn or its request changed."""
    from IPython.core.error import UsageError

    from .keys import api_key

    mode = replay_mode(configured)
    if mode == "off" or (mode == "auto" and (kind != "anthropic" or api_key())):
        return None
    turn, source, change = find_saved(session.saved, session.namespace, session.cell_id, request)
    if turn is not None:
        chosen = plan(turn, source, pace)
        chosen.strict = strict
        return chosen
    why = f"its request changed:\n{change}" if change else "no saved turn matches it"
    if mode == "on":
        raise UsageError(f"%%chat: replay is on, but this cell cannot be replayed: {why}")
    if change and kind == "anthropic" and not api_key():  # auto: it cannot run live either
        from .providers.anthropic import MISSING_KEY

        raise UsageError(f"{MISSING_KEY}\nNor can this cell be replayed from the notebook: {why}")
    return None


# --------------------------------------------------------------------------- saved turn -> cycles


def cycles_of(
    events: Sequence[ConversationEvent], pace: float = 0.0
) -> tuple[list[list[Any]], str | None]:
    """The saved turn's responses as scripted cycles, and a note if it was interrupted live
    (the replay stops there: a Stop, Abort or Reply cannot be replayed as a model answer)."""
    cycles: list[list[Any]] = []
    current: list[Any] | None = None
    index, calls = 0, False
    note = None
    for event in events[1:]:
        if parent_of(event) is not None:
            continue  # a sub-agent's events: its tool runs again and makes them anew
        if event.kind in ("reasoning", "message", "block", "tool_call_request"):
            if current is None:
                current, index, calls = [], 0, False
            if event.kind in ("reasoning", "message") and event.metadata.get("partial"):
                note = "This turn was interrupted when it was recorded; the replay stops there."
                break
            current.extend(_block(index, event, pace))
            calls = calls or event.kind == "tool_call_request"
            index += 1
        elif event.kind in ("tool_call_response", "chat_request"):
            if event.kind == "chat_request":
                note = "The user replied mid-turn when this was recorded; the replay stops there."
                break
            if current is not None:
                cycles.append([*current, Finished("tool_use" if calls else "end_turn")])
                current = None
    if current is not None and note is None:
        cycles.append([*current, Finished("tool_use" if calls else "end_turn")])
    return cycles, note


def _block(index: int, event: ConversationEvent, pace: float) -> list[Any]:
    match event.kind:
        case "reasoning":
            flush = {"signature": event.metadata.get("signature", "")}
            return [*_text(index, event.content, ReasoningDelta, pace), Flush(index, flush)]
        case "message":
            citations = event.metadata.get("citations")
            flush = {"citations": citations} if citations else {}
            return [*_text(index, event.content, MessageDelta, pace), Flush(index, flush)]
        case "tool_call_request":
            raw = event.metadata.get("raw_block") or {}
            call = ToolCall(event.call_id, event.name, dict(event.arguments))
            return [Part(index, call), Flush(index, {"raw_block": raw})]
        case _:  # an opaque block (redacted reasoning, a server tool's)
            raw = getattr(event, "metadata", {}).get("raw_block") or {}
            return [Flush(index, {"raw_block": raw})]


def _text(index: int, text: str, kind: Any, pace: float) -> list[Any]:
    if not text:
        return [Part(index, kind(""))] if kind is ReasoningDelta else []
    if pace <= 0:
        return [Part(index, kind(text))]
    items: list[Any] = []
    for word in _WORDS.findall(text):
        items += [Part(index, kind(word)), Delay(pace)]
    return items


# --------------------------------------------------------------------------- finding the turn


@dataclass
class _Notebook:
    path: Path
    turns: list[SavedTurn]
    cursor: int = 0  # the next turn, in cell order, a cell without an id is matched from


@dataclass
class SavedIndex:
    """The saved chat turns this kernel can replay, read once per session."""

    notebooks: list[_Notebook] = field(default_factory=list)
    read: bool = False

    def load(self, namespace: dict[str, Any]) -> None:
        if self.read:
            return
        self.read = True
        own = find_notebook(namespace)
        paths = [own] if own else sorted(Path.cwd().glob("*.ipynb"))[:MAX_FILES]
        for path in paths:
            turns = _chat_turns(path)
            if turns:
                self.notebooks.append(_Notebook(path, turns))


def _chat_turns(path: Path) -> list[SavedTurn]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        notebook = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(notebook, dict):
        return []
    turns = [t for t in saved_turns(notebook, []) if t.events[0].kind == "chat_request"]
    return sorted(turns, key=lambda t: (t.cell, t.started))


def find_saved(
    index: SavedIndex, namespace: dict[str, Any], cell_id: str | None, request: str
) -> tuple[SavedTurn | None, str, str | None]:
    """``(turn, source, change)``: the saved turn of the running cell and its file, or what
    changed in the request of the turn this cell should have replayed."""
    index.load(namespace)
    change = None
    for notebook in index.notebooks:
        if cell_id:
            mine = [t for t in notebook.turns if t.cell_id == cell_id]
            if mine:
                turn = mine[-1]
                if _request(turn) == request:
                    return turn, notebook.path.name, None
                change = _diff(_request(turn), request)
                continue
        for position in range(notebook.cursor, len(notebook.turns)):
            turn = notebook.turns[position]
            if _request(turn) == request:
                notebook.cursor = position + 1
                return turn, notebook.path.name, None
        if change is None and notebook.cursor < len(notebook.turns):
            change = _diff(_request(notebook.turns[notebook.cursor]), request)
    return None, "", change


def _request(turn: SavedTurn) -> str:
    first = turn.events[0]
    return first.content.strip() if first.kind == "chat_request" else ""


def _diff(saved: str, now: str) -> str:
    lines = difflib.unified_diff(
        saved.splitlines(), now.splitlines(), "saved request", "this cell", lineterm="", n=1
    )
    return "\n".join(lines)


def plan(turn: SavedTurn, source: str, pace: float) -> ReplayPlan:
    top = [e for e in turn.events if parent_of(e) is None]
    responses = {e.call_id: e for e in top if isinstance(e, ToolCallResponse)}
    cycles, note = cycles_of(turn.events, pace)
    return ReplayPlan(turn, source, ReplayProvider(cycles, responses), responses, note)
