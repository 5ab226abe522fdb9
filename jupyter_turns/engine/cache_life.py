"""How long the prompt cache should keep a thread's prefix: 5 minutes, or 1 hour.

The Messages API keeps a cached prefix 5 minutes from its last use by default; a breakpoint
marked ``ttl: "1h"`` keeps it an hour, at a higher write price (2x the input price against
1.25x; a read costs 0.1x either way). A notebook user often pauses longer than 5 minutes between
turns (reading the answer, running cells): then the 5-minute entry is gone and the whole thread
is written again at the next turn. ``ChatMagics.cache_ttl`` (``ThreadConfig.cache_ttl``) says
which lifetime a thread's requests ask for:

- ``"5m"`` or ``"1h"``: always that one;
- ``"auto"`` (the default): ``"1h"`` once the thread has shown a pause: a turn that began more
  than :data:`PAUSE` seconds after the previous turn's last event (from that turn on, the
  thread's pauses are the person's habit), else ``"5m"``.

The pauses are read from the events' own timestamps, so a thread restored from the notebook
carries its history (the first turn after reopening it is usually such a pause). Providers
without such a control (OpenAI's) send nothing for it; a Claude platform that does not offer the
1-hour lifetime for a model sends its default (:meth:`MessagesProvider.long_cache`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:  # light at import: ChatMagics.cache_ttl reads CACHE_TTLS at %load_ext
    from ..model.events import ConversationEvent

__all__ = ["CACHE_TTLS", "PAUSE", "CacheLife", "CacheTtl", "cache_life"]

CacheTtl: TypeAlias = Literal["auto", "5m", "1h"]  # the setting
CacheLife: TypeAlias = Literal["5m", "1h"]  # what a request asks for
CACHE_TTLS: tuple[CacheTtl, ...] = ("auto", "5m", "1h")
PAUSE = 240.0  # seconds between turns that make "auto" keep the cache an hour


def cache_life(setting: CacheTtl, events: Sequence[ConversationEvent]) -> CacheLife:
    """The lifetime a request of a thread with these ``events`` asks for (see the module)."""
    if setting != "auto":
        return setting
    return "1h" if _paused(events) else "5m"


def _paused(events: Sequence[ConversationEvent]) -> bool:
    """Whether a turn of the thread began more than PAUSE seconds after the event before it."""
    before: datetime | None = None
    for event in events:
        if event.parent is not None:  # a sub-agent's turn is not the person's
            continue
        when = _when(event.timestamp)
        if (
            event.kind == "chat_request"
            and before is not None
            and when is not None
            and (when - before).total_seconds() > PAUSE
        ):
            return True
        before = when or before
    return False


def _when(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp)
    except (TypeError, ValueError):  # a record written by hand, or by a newer version
        return None
