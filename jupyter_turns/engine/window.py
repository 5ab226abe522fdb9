"""What of a thread is sent to the model, and how full its context window is.

A thread keeps every event (the notebook shows them all), but a request need not send them all:

- a rewind (``%chat rewind``, a saved card's "Rewind to before this turn") leaves a ``rewind``
  event naming the requests of the turns it took back: each of those turns (from its request
  up to the next one) and the undo events of its calls are never sent again (:func:`rewound`);
- a chat cell run again takes its own earlier turn's place (:func:`replacement`): that turn
  leaves the thread, and the turns sent after it are rewound (``rewind`` with ``by="rerun"``),
  so the cell continues the thread from before it, as a notebook re-runs a cell;
  ``%chat fork`` starts a thread from what is sent before a turn (:func:`fork_history`), and
  its first turn says where it came from (:func:`fork_notice`), so a restore can graft it;
- ``%chat forget N`` leaves a marker (a notice whose ``data.forget.through`` names the last event
  of the N oldest exchanges then sent): nothing up to that event is sent again;
- what the scripted provider wrote (``metadata.scripted``: its answers, reasoning and tool
  calls, and the results of those calls) is sent to no real model: no model wrote it, and a
  model would take it for its own words. Of those turns the user's own requests go along
  (:func:`unscripted`); the scripted provider itself (and a replay) is sent everything;
- a ``compaction`` block with a summary stands for what it summarizes. A block made by a
  summarize request names the last event it covers (``metadata.compaction.covers``) and is sent
  first, in place of those events, followed by what came after them; a block the server made
  inline (the compact edit) covers everything before it. A block whose content is null is a
  no-op and is sent on like any other block.

The gauge is the context in use after the last response (its input, cached or not, and its
output: the next request starts from there) against the model's window (see docs/architecture.md,
"Long threads").
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ..model.events import (
    ChatRequest,
    ConversationEvent,
    Notice,
    Rewind,
    ToolCallRequest,
    Usage,
    compaction_note,
    is_scripted,
)

__all__ = [
    "Replacement",
    "compaction_block",
    "context_tokens",
    "exchanges",
    "forget_marker",
    "fork_history",
    "fork_notice",
    "fork_origin",
    "format_tokens",
    "gauge",
    "gauge_level",
    "own_turns",
    "replacement",
    "rewound",
    "to_send",
    "turn_requests",
    "unscripted",
]


def context_tokens(usage: Usage | None) -> int | None:
    """The context in use after a response with ``usage`` (None: no usage reported)."""
    if usage is None:
        return None
    total = (
        usage.input_tokens
        + usage.cache_read_input_tokens
        + usage.cache_creation_input_tokens
        + usage.output_tokens
    )
    return total or None


def format_tokens(tokens: int) -> str:
    """``41k``, ``1.2M``, ``950``: a short count for the gauge."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"
    if tokens >= 10_000:
        return f"{round(tokens / 1000)}k"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    return str(tokens)


def gauge(used: int | None, window: int | None) -> str:
    """``41k / 200k``; what is not known is said so; empty when nothing is known (a provider
    that reports no usage, with a model the table does not know)."""
    if used is None:
        return "" if window is None else f"not measured yet (window {format_tokens(window)})"
    if window is None:
        return f"{format_tokens(used)} / window unknown for this model"
    return f"{format_tokens(used)} / {format_tokens(window)}"


def gauge_level(used: int | None, window: int | None) -> str:
    """``ok``, ``high`` (≥ 70 % of the window) or ``full`` (≥ 90 %); ``unknown`` without both."""
    if used is None or not window:
        return "unknown"
    share = used / window
    return "full" if share >= 0.9 else "high" if share >= 0.7 else "ok"


def compaction_block(event: ConversationEvent) -> dict[str, Any] | None:
    """The raw block of a top-level compaction event with a summary, else None."""
    if event.kind != "block" or event.parent is not None:
        return None
    raw = event.metadata.get("raw_block")
    if isinstance(raw, dict) and raw.get("type") == "compaction" and raw.get("content"):
        return raw
    return None


def _forgotten(events: Sequence[ConversationEvent]) -> int:
    """How many leading events a forget marker drops (0: none). Every request asks: the walk
    looks at each event's kind only, and indexes positions only when a marker names one."""
    targets: set[str] = set()
    for event in events:
        if event.kind == "notice" and isinstance(event.data, dict):
            forget = event.data.get("forget")
            through = forget.get("through") if isinstance(forget, dict) else None
            if isinstance(through, str):
                targets.add(through)
    if not targets:
        return 0
    return max((i + 1 for i, e in enumerate(events) if e.id in targets), default=0)


def turn_requests(events: Sequence[ConversationEvent]) -> list[ChatRequest]:
    """The thread's turns by their requests, oldest first: turn ``n`` is ``[n - 1]`` (rewound
    turns keep their numbers: the notebook still shows them)."""
    return [e for e in events if isinstance(e, ChatRequest) and e.parent is None]


def rewound(events: Sequence[ConversationEvent]) -> set[str]:
    """The ids of the events a rewind took back: every event of a rewound turn (a ``rewind``
    event itself is kept: it says what happened), and the undo and review events of their
    calls."""
    taken = {request for e in events if e.kind == "rewind" for request in e.requests}
    if not taken:
        return set()
    dropped: set[str] = set()
    inside = False
    for event in events:
        if event.kind == "chat_request" and event.parent is None:
            inside = event.id in taken
        if inside and event.kind != "rewind":
            dropped.add(event.id)
    calls = {e.call_id for e in events if e.kind == "tool_call_request" and e.id in dropped}
    dropped.update(e.id for e in events if e.kind == "undo" and e.call_id in calls)
    dropped.update(e.id for e in events if e.kind == "review" and set(e.kept) <= calls)
    return dropped


def own_turns(
    events: Sequence[ConversationEvent], requests: Collection[str], calls: Collection[str] = ()
) -> list[str]:
    """The requests of the thread's turns that a chat cell ran before, oldest first: those
    opened by one of ``requests`` (the request ids of the cell's saved records), or holding a
    tool call of ``calls`` (a replay of the cell's recording has new event ids and the recorded
    call ids, a sub-agent's nested call too)."""
    found: list[str] = []
    opened: str | None = None  # the newest top-level request so far
    for event in events:
        if isinstance(event, ChatRequest) and event.parent is None:
            opened = event.id
        if opened is None or (found and found[-1] == opened):
            continue
        if event.id in requests or (isinstance(event, ToolCallRequest) and event.call_id in calls):
            found.append(opened)
    return found


@dataclass(frozen=True)
class Replacement:
    """What a chat cell run again does to its thread before its new turn: its own earlier
    turns (``own``) leave the thread (``removed``: their events, the undo and review events of
    their calls, and a rewind that named only them); if one of them was still sent, every turn
    sent after it is rewound (``rewind``: a ``rewind`` event by ``"rerun"``) — those stay in
    their cells, marked, and are never sent again."""

    own: tuple[str, ...]
    removed: frozenset[str]
    rewind: Rewind | None = None

    def events(self, events: Sequence[ConversationEvent]) -> list[ConversationEvent]:
        """``events`` as the thread holds them after it."""
        kept = [e for e in events if e.id not in self.removed]
        return [*kept, self.rewind] if self.rewind is not None else kept

    def sends_nothing(self, events: Sequence[ConversationEvent]) -> bool:
        """Whether the thread of ``events`` sends no turn after it (every turn it keeps was
        rewound): it starts over."""
        after = self.events(events)
        dropped = rewound(after)
        return all(r.id in dropped for r in turn_requests(after))


def replacement(events: Sequence[ConversationEvent], own: Collection[str]) -> Replacement:
    """How the thread's ``events`` make room for a cell run again whose earlier turns open
    with the requests ``own`` (:func:`own_turns`); see :class:`Replacement`."""
    dropped = rewound(events)
    removed: set[str] = set()
    calls: set[str] = set()
    first_sent: int | None = None  # the index of the first of the cell's turns still sent
    inside = False
    for index, event in enumerate(events):
        if event.kind == "chat_request" and event.parent is None:
            inside = event.id in own
            if inside and first_sent is None and event.id not in dropped:
                first_sent = index
        if not inside or event.kind in ("rewind", "undo", "review"):
            continue  # what the thread did since is judged below, by the calls it names
        removed.add(event.id)
        if isinstance(event, ToolCallRequest):
            calls.add(event.call_id)
    staying = [r.id for r in turn_requests(events) if r.id not in own]
    removed.update(_marks_of(events, calls, set(staying)))
    later = [
        r.id
        for r in turn_requests(events[first_sent + 1 :] if first_sent is not None else ())
        if r.id not in dropped and r.id not in own
    ]
    if not later:
        return Replacement(tuple(own), frozenset(removed))
    rewind = Rewind(requests=later, turn=staying.index(later[0]) + 1, by="rerun")
    return Replacement(tuple(own), frozenset(removed), rewind)


def _marks_of(events: Sequence[ConversationEvent], calls: set[str], staying: set[str]) -> set[str]:
    """The undo and review events of ``calls``, and the rewind events that name no turn of
    ``staying`` (the requests the thread keeps): what marks nothing once the others are gone."""
    return {event.id for event in events if _marks_only(event, calls, staying)}


def _marks_only(event: ConversationEvent, calls: set[str], staying: set[str]) -> bool:
    match event.kind:
        case "undo":
            return event.call_id in calls
        case "review":
            return bool(event.kept) and set(event.kept) <= calls
        case "rewind":
            return not staying.intersection(event.requests)
        case _:
            return False


def fork_history(
    events: Sequence[ConversationEvent], before: str | None
) -> list[ConversationEvent]:
    """What a thread forked before the request ``before`` (None: after its last turn) starts
    with: the events before it, without what was rewound (nor the rewind events: the new
    thread never had those turns)."""
    dropped = rewound(events)
    cut = next((i for i, e in enumerate(events) if e.id == before), len(events))
    return [e for e in events[:cut] if e.id not in dropped and e.kind != "rewind"]


def fork_notice(thread: str, conversation_id: str, before: str | None, turn: int) -> Notice:
    """The notice a forked thread's first turn carries: where its history came from (a restore
    rebuilds it from there: :func:`fork_origin`)."""
    where = f"before turn {turn}" if before is not None else f"after its turn {turn - 1}"
    return Notice(
        text=f"Forked from thread {thread!r} {where}: this thread starts with its history.",
        data={"fork": {"conversation_id": conversation_id, "before": before, "thread": thread}},
    )


def fork_origin(events: Sequence[ConversationEvent]) -> tuple[str, str | None] | None:
    """The conversation id and the request a thread was forked before (its first turn's fork
    notice), or None for a thread that is not a fork."""
    for event in events:
        if event.kind != "notice" or event.parent is not None or not isinstance(event.data, dict):
            continue
        fork = event.data.get("fork")
        if isinstance(fork, dict) and isinstance(fork.get("conversation_id"), str):
            before = fork.get("before")
            return fork["conversation_id"], before if isinstance(before, str) else None
    return None


def to_send(events: Sequence[ConversationEvent]) -> list[ConversationEvent]:
    """The events a request sends, in the order it sends them (see the module docstring)."""
    dropped = rewound(events)
    if dropped:
        events = [e for e in events if e.id not in dropped]
    cut = _forgotten(events)
    last: int | None = None
    for i in range(len(events) - 1, cut - 1, -1):
        if events[i].kind == "block" and compaction_block(events[i]) is not None:
            last = i
            break
    if last is None:
        return list(events[cut:])
    block = events[last]
    covers = compaction_note(block).get("covers")
    covered = next((i for i, e in enumerate(events) if e.id == covers), None)
    if covered is None or covered >= last:
        return list(events[last:])
    start = max(covered + 1, cut)
    return [block, *(e for i, e in enumerate(events) if i >= start and i != last)]


def unscripted(events: Sequence[ConversationEvent]) -> list[ConversationEvent]:
    """``events`` without what the scripted provider wrote and the results of its tool calls
    (a result without its call is an error for every API): what a real model is sent."""
    calls = {e.call_id for e in events if e.kind == "tool_call_request" and is_scripted(e)}
    return [
        event
        for event in events
        if not is_scripted(event)
        and not (event.kind == "tool_call_response" and event.call_id in calls)
    ]


def exchanges(events: Sequence[ConversationEvent]) -> list[list[ConversationEvent]]:
    """What is sent, cut into exchanges: each starts at a user request (what precedes the first
    one, a summary sent first, belongs to the first)."""
    groups: list[list[ConversationEvent]] = []
    for event in to_send(events):
        starts = event.kind == "chat_request" and event.parent is None
        if starts and groups and any(e.kind == "chat_request" for e in groups[-1]):
            groups.append([])
        if not groups:
            groups.append([])
        groups[-1].append(event)
    return [g for g in groups if g]


def forget_marker(events: Sequence[ConversationEvent], count: int) -> Notice:
    """The notice that stops the oldest ``count`` exchanges now sent from being sent again.

    Raises ValueError when there are not that many."""
    groups = exchanges(events)
    if count < 1 or count > len(groups):
        have = len(groups)
        raise ValueError(
            f"the thread sends {have} exchange{'s' if have != 1 else ''}; forget 1 to {have}"
            if have
            else "the thread sends nothing yet"
        )
    through = groups[count - 1][-1]
    kept = len(groups) - count
    text = (
        f"Forgotten: the oldest {count} exchange{'s' if count != 1 else ''} of this thread "
        f"{'are' if count != 1 else 'is'} no longer sent to the model ({kept} still sent); "
        "they stay in the notebook."
    )
    return Notice(text=text, data={"forget": {"through": through.id, "exchanges": count}})
