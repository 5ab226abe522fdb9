"""Replay: a ``%%chat`` cell plays its saved turn again — offline, deterministic, self-checking.

The notebook already holds every event of every turn. With replay on, a chat cell finds its
saved turn (:mod:`.replay_match`: by cell id where the frontend gives one, else by its request
text, in cell order) in the kernel's own notebook only — the file the frontend names, else the
one notebook of the working directory holding every cell this kernel ran — or in the file the
user named with ``%chat replay --from FILE``, never in a notebook that merely sits beside it.
A :class:`~.replay_rebuild.ReplayProvider` plays the saved cycles (:mod:`.replay_rebuild`)
— text, reasoning with signatures, opaque blocks, tool calls, stop reasons and usage — through
the same pipeline, so the widget, record and metadata come out as in a live run, after a notice
that says the cell is a replay (what a reader needs to tell replayed tool calls from a model's).

The tools run again for real (so the kernel ends in the same state and later cells work),
under the same run modes and approvals as any call (nothing saved approves anything); each new
result is compared with the saved one and a difference is saved on the response (``replay``),
shown in its card and reported — a warning, or with ``ChatMagics.replay_check = "strict"`` a
failed cell. ``--replay-tools saved`` answers a call of a tool offered this turn with the saved
result instead (nothing runs; the decision says "recorded, not run"); a call of any other tool
is refused as unknown. A sub-agent's nested turn replays its own saved cycles, whatever provider
it names. Modes (``ChatMagics.replay``, or ``JUPYTER_TURNS_REPLAY``, which wins): ``auto``
replays Anthropic cells when no API key is set and a saved turn matches; ``on`` replays every
chat cell and fails clearly when there is none or the request changed; ``off`` never replays.
A saved turn that was interrupted live is replayed up to where it was interrupted, with a
notice. No request goes to a model.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.quoted import Quoted
from ..model.events import ConversationEvent, Notice, ToolCallResponse, is_replay_notice
from ..record.replay_match import Found, SavedIndex, find_saved
from ..record.replay_rebuild import ReplayProvider, SavedCalls, cycles_of, recorded_start
from ..record.saved_turns import SavedTurn
from .grants import sent_digests

if TYPE_CHECKING:
    from ..engine.chat import Chat

__all__ = [
    "ENV",
    "REPLAY_MODES",
    "Found",
    "NotReplayed",
    "ReplayPlan",
    "ReplayProvider",
    "SavedIndex",
    "find_saved",
    "replay_command",
    "replay_mode",
    "replaying",
]

ENV = "JUPYTER_TURNS_REPLAY"
REPLAY_MODES = ("auto", "on", "off")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")


def replay_mode(configured: str) -> str:
    """The mode in force: the environment variable wins (so CI runs a notebook unchanged)."""
    value = os.environ.get(ENV, "").strip().lower()
    return value if value in REPLAY_MODES else configured


@dataclass
class ReplayPlan:
    """What one cell replays: its saved turn, as a provider and the saved tool calls."""

    turn: SavedTurn
    source: str  # the notebook file it came from, for notes
    provider: ReplayProvider
    calls: SavedCalls  # the saved results (and nested turns) the tools are answered from
    note: str | None = None  # the saved turn was interrupted live: where the replay stops
    strict: bool = False  # ChatMagics.replay_check = "strict": a difference fails the cell
    # every event of the recording was written by this user's kernel (kernel.grants): else
    # the replayed turn is someone else's, quoted in later requests like a restored one
    authored: bool = False

    def start(self, chat: Chat) -> None:
        """Give ``chat`` the history the recording started from: a thread that holds this
        turn already (restored from the notebook, or replayed before) is cut back to before
        it (:func:`~jupyter_turns.record.replay_rebuild.recorded_start`); its later turns stay
        in the notebook's cells, and each of those cells replays its own."""
        start = recorded_start(chat.conversation.events, self.turn.events)
        if start is not None:
            chat.conversation.truncate(start)


@contextlib.contextmanager
def replaying(chat: Chat, replay: ReplayPlan | None, front: Any) -> Iterator[list[str | Notice]]:
    """Around the turn that plays ``replay`` on ``chat`` (the caller passes ``replay.provider``
    and ``replay.calls`` to ``Chat.send``): the notices to show with it (that it is a replay, and
    where it stops). Strict: raise UsageError naming the tools whose results differ from the
    recording."""
    if replay is None:
        yield []
        return
    start = len(chat.conversation)
    if front is not None:
        front.replayed_from = replay.source  # saved with the turn
        front.replay_authored = replay.authored
    try:
        yield [replay_notice(replay), *([replay.note] if replay.note else [])]
    finally:
        if not replay.authored:
            played = [e.id for e in chat.conversation.events[start:]]
            quoted = chat.quoted or Quoted(frozenset(), Path(replay.source).name)
            chat.quoted = quoted.adding(played)
    differing = [e for e in chat.conversation.events[start:] if _differs(e)]
    if replay.strict and differing:
        from IPython.core.error import UsageError

        calls = ", ".join(getattr(e, "call_id", "?") for e in differing)
        raise UsageError(
            f"%%chat: replay check failed: {len(differing)} tool result(s) differ from the "
            f"recording in {replay.source} ({calls}); see the tool cards"
        )


def replay_notice(replay: ReplayPlan) -> Notice:
    """The notice that opens a replayed turn: where its recording came from, that no model was
    asked, and what the tools do. Deterministic (nbval compares it): the day the turn was first
    recorded, carried over when a replay is replayed again."""
    recorded = _recorded_on(replay.turn)
    when = f" on {recorded}" if recorded else ""
    text = (
        f"Replayed from the recording saved in {replay.source}{when}: no request was sent to a "
        "model; the answer"
    )
    if any(e.kind == "tool_call_request" for e in replay.turn.events):
        tools = (
            "the tool results are the recorded ones (no tool runs)"
            if replay.calls.saved_only
            else "the tools run again, each result checked against the recorded one"
        )
        text += f" and its tool calls come from that file; {tools}."
    else:
        text += " comes from that file."
    return Notice(level="info", text=text, data={"replayed_from": replay.source, "on": recorded})


def _recorded_on(turn: SavedTurn) -> str:
    for event in turn.events:
        if is_replay_notice(event) and event.parent is None:  # a replay of a replay
            day = event.data.get("on")  # type: ignore[union-attr]
            return day if isinstance(day, str) and _DAY.match(day) else ""
    stamp = turn.events[0].timestamp
    return stamp[:10] if _DAY.match(stamp) else ""


def _differs(event: ConversationEvent) -> bool:
    check = event.replay if isinstance(event, ToolCallResponse) else None
    return check is not None and check.get("same") is False


@dataclass(frozen=True)
class NotReplayed:
    """``auto`` mode, a cell that cannot run live (no key) and that the notebook has something
    to say about (its recording's request changed, or which notebook is the kernel's is not
    known): why it is not replayed either, said after the provider's own missing-key error."""

    why: str

    def after(self, error: str) -> str:
        return f"{error}\nNor can this cell be replayed from the notebook: {self.why}"


def choose(
    session: Any, configured: str, kind: str, request: str, *, pace: float, strict: bool
) -> ReplayPlan | NotReplayed | None:
    """The replay of the running cell under the mode in force, else None (run it live) or, in
    ``auto`` mode when it cannot run live either, why it is not replayed (:class:`NotReplayed`;
    None when the cell has no recording: only the missing key is worth saying). Raises
    UsageError in ``on`` mode when the cell has no saved turn or its request changed."""
    from IPython.core.error import UsageError

    mode = replay_mode(configured)
    if mode == "off" or (mode == "auto" and _can_run_live(kind)):
        return None
    found = find_saved(session.saved, session.namespace, session.cell_id, request, _ran(session))
    if found.turn is not None:
        chosen = plan(found.turn, found.source, pace)
        chosen.strict = strict
        chosen.authored = _authored(session, found.turn)
        return chosen
    if mode == "on":
        raise UsageError(f"%%chat: replay is on, but this cell cannot be replayed: {found.why()}")
    return NotReplayed(found.why()) if _explains(found) else None


def _authored(session: Any, turn: SavedTurn) -> bool:
    """Whether this user's kernel wrote every event of the recording that a model is sent."""
    store = session.user_store()
    if store is None:
        return False
    mine = store.authored(turn.conversation_id)
    return all(digest in mine for _, digest in sent_digests(turn.events))


def _can_run_live(kind: str) -> bool:
    """Whether a cell of ``kind`` can run live: every provider but those that need a key and
    have none (``auto`` replays those from the notebook)."""
    from ..providers.catalog import KINDS
    from .keys import api_key

    found = KINDS.get(kind)
    if found is None or not found.keyed or found.service is None:
        return True
    return api_key(None, found.service) is not None


def _ran(session: Any) -> list[str]:
    """The cells this kernel ran since the extension loaded, the running one last (none known
    without the kernel's log: then no notebook of the folder is taken for the kernel's)."""
    history = getattr(getattr(session, "reader", None), "history", None)
    return history.sources() if history is not None else []


def replay_command(session: Any, configured: str, args: list[str]) -> str:
    """``%chat replay [--from FILE]``: where chat cells replay from; ``--from`` names the file
    (a recording in a file other than the kernel's own notebook is used only when named so)."""
    from IPython.core.error import UsageError

    from ..text import plural

    index: SavedIndex = session.saved
    if not args:
        if index.named is not None:
            return f"Chat cells replay from {index.named.path} (named with %chat replay --from)."
        return (
            "Chat cells replay only from this kernel's own notebook: the one the frontend "
            "names, else the one notebook of the working directory holding every cell this "
            "kernel ran. Another file: %chat replay --from FILE."
        )
    if len(args) != 2 or args[0] != "--from":
        raise UsageError("usage: %chat replay [--from FILE]")
    path = Path(args[1]).expanduser()
    try:
        notebook = index.use(path)
    except OSError as exc:
        raise UsageError(
            f"%chat replay --from: cannot read {path} ({type(exc).__name__})"
        ) from None
    lines = [
        f"Chat cells replay from {path} from now on: {plural(len(notebook.turns), 'saved turn')}. "
        "A replayed turn's tool calls run your tools here, and ask like any call.",
        *(f"Cannot be read: {problem}" for problem in notebook.problems[:3]),
        *_mode_note(replay_mode(configured)),
    ]
    return "\n".join(lines)


def _mode_note(mode: str) -> list[str]:
    """What the replay mode in force means for the cells to come, where it stops a replay."""
    from .keys import api_key

    if mode == "off":
        return [f"Replay is off ({ENV} or ChatMagics.replay): nothing replays until it is on."]
    if mode == "auto" and api_key():
        return ["An API key is set, so cells run live (replay 'auto'): ChatMagics.replay = 'on'."]
    return []


def _explains(found: Found) -> bool:
    """Whether the notebook has something to say about replaying this cell: its recording's
    request changed, saved turns cannot be read, or the kernel's notebook is not known while
    recordings are there. A cell that was never recorded is not a replay failure."""
    unknown = (found.candidates or found.unknown) and found.recorded
    return bool(found.change or found.problems or unknown)


def plan(turn: SavedTurn, source: str, pace: float) -> ReplayPlan:
    summary = turn.summary
    cycles, note = cycles_of(turn.events, pace, summary.get("cycles") or (), summary.get("usage"))
    calls = SavedCalls(turn.events, pace)
    return ReplayPlan(turn, source, ReplayProvider(cycles), calls, note)
