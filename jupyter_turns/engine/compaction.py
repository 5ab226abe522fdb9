"""When a thread is compacted, and how each request asks for it (server-side compaction, a beta).

Two ways, both the Messages API's own summarization (docs/architecture.md, "Long threads"):

- **Near the threshold** (``ChatMagics.compact_at``): once the context in use is half way
  there, every request carries the compact edit
  (``context_management.edits = [{"type": "compact_20260112", "trigger": {"type":
  "input_tokens", "value": N}}]``); the server compacts inline when the input reaches N, and the
  response starts with a ``compaction`` block.
- **On ``%chat compact``**: the thread's next turn first sends a summarize request (top-level
  ``compaction = {"type": "summarize"}``) with the conversation before the new request; the
  response is the ``compaction`` block alone (stop reason ``compaction``), sent from then on in
  place of what it summarizes.

The API does not take a compact edit beside a block a summarize request made, so while the
thread's summary is such a block, the threshold is checked here before each request (from the
last response's usage) and a summarize request goes first when it is reached. Where compaction
is not offered (a model or endpoint without the beta), the provider says so once in a notice and
the thread goes on without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..text import plural

if TYPE_CHECKING:
    from ..model.events import ConversationEvent, Notice

# Light at import: ChatMagics.compact_at reads DEFAULT_COMPACT_AT at %load_ext, which must not
# build the conversation's pydantic models (docs/architecture.md, "Loading the extension"); the
# functions below import them when a turn first calls them.

__all__ = [
    "DEFAULT_COMPACT_AT",
    "Compaction",
    "compact_threshold",
    "compacted_notice",
    "summary_title",
    "unavailable_notice",
]

DEFAULT_COMPACT_AT = 0.75  # of the model's window: 150,000 of 200,000, the API's own default
EDIT = "compact_20260112"

Plan = Literal["edit", "summarize"] | None


def compact_threshold(setting: float | None, window: int | None) -> int | None:
    """Tokens at which to compact: a setting ≤ 1 is a share of ``window``, above 1 a count;
    0 or None turns compaction off, and so does a share of an unknown window."""
    if not setting or setting <= 0:
        return None
    if setting > 1:
        return int(setting)
    return int(setting * window) if window else None


@dataclass
class Compaction:
    """One turn's compaction settings and what it did; the coordinator asks before each cycle."""

    at: int | None = None  # the threshold in tokens (None: off)
    requested: bool = False  # %chat compact: summarize before this turn's first request
    available: bool = True  # False: the provider said compaction is not offered
    done: bool = False  # a summarize request of this turn went out (answered or failed)

    def plan(self, events: Sequence[ConversationEvent], context: int | None) -> Plan:
        """How the next request compacts: summarize first, carry the edit, or neither."""
        if self.requested and not self.done:
            return "summarize"  # asked for: tried even where the edit was refused
        if self.at is None or not self.available:
            return None
        if _summarized(events):
            return "summarize" if context is not None and context >= self.at else None
        # the edit rides along once the context is half way to the threshold: before that a
        # request reaches it only by adding more than half of it at once
        return "edit" if context is not None and context >= self.at // 2 else None

    def extra(
        self, plan: Plan, events: Sequence[ConversationEvent], context: int | None
    ) -> dict[str, Any]:
        """The request's ``extra`` for ``plan`` (the provider turns it into parameters)."""
        if plan == "edit":
            trigger = {"type": "input_tokens", "value": self.at}
            return {
                "context_management": {"edits": [{"type": EDIT, "trigger": trigger}]},
                "compaction_note": {"mode": "edit", "tokens_before": context},
            }
        if plan == "summarize":
            covers = events[-1].id if events else None
            return {
                "compaction": {"type": "summarize"},
                "compaction_note": {
                    "mode": "summarize",
                    "covers": covers,
                    "tokens_before": context,
                },
            }
        return {}


def _summarized(events: Sequence[ConversationEvent]) -> bool:
    """Whether what is sent starts with a block a summarize request made."""
    from ..model.events import compaction_note
    from .window import compaction_block, to_send

    sent = to_send(events)
    if not sent or compaction_block(sent[0]) is None:
        return False
    return compaction_note(sent[0]).get("mode") == "summarize"


def compacted_notice(block: ConversationEvent, trigger: str) -> Notice:
    """ "Earlier conversation summarized", with the sizes before and after (tokens)."""
    from ..model.events import Notice, compaction_note

    note = compaction_note(block)
    before, after = note.get("tokens_before"), note.get("tokens_after")
    sizes = []
    if isinstance(before, int):
        sizes.append(f"{plural(before, 'token')} before")
    if isinstance(after, int):
        sizes.append(f"a summary of ≈ {plural(after, 'token')}")
    why = {"threshold": " (the context reached the threshold)", "command": " (%chat compact)"}
    text = "Earlier conversation summarized" + why.get(trigger, "")
    text += f": {', '.join(sizes)}." if sizes else "."
    data = {"compaction": {"block": block.id, "trigger": trigger, **note}}
    return Notice(text=text, data=data)


def summary_title(event: ConversationEvent) -> tuple[str, str | None] | None:
    """How a transcript shows a compaction block: its title line and the summary (None: the
    compaction returned none); None for any other event."""
    from ..model.events import Block, compaction_note

    raw = event.metadata.get("raw_block") if isinstance(event, Block) else None
    if not isinstance(raw, dict) or raw.get("type") != "compaction":
        return None
    content = raw.get("content")
    if not isinstance(content, str):
        return "A compaction returned no summary: nothing was changed.", None
    note = compaction_note(event)
    before, after = note.get("tokens_before"), note.get("tokens_after")
    sizes = [f"{before:,} tokens"] if isinstance(before, int) else []
    if isinstance(after, int):
        sizes.append(f"a summary of ≈ {after:,} tokens")
    return "Earlier conversation summarized" + (f": {' → '.join(sizes)}" if sizes else ""), content


def unavailable_notice(detail: str) -> Notice:
    """Compaction was asked for and the model or endpoint does not offer it."""
    from ..model.events import Notice

    return Notice(
        level="warning",
        text=f"Compaction is not available here ({detail}). The thread goes on uncompacted; "
        "`%chat forget N` stops sending its oldest N exchanges, `%%chat --new` starts afresh.",
    )
