"""A person's pause between turns, for tests and benchmarks that cannot wait minutes.

The prompt cache's ``auto`` lifetime (:mod:`jupyter_turns.engine.cache_life`) reads the pauses
from the events' timestamps; :func:`age` makes a thread's events that much older, as if the
person had waited before the next turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from jupyter_turns.model.conversation import Conversation

__all__ = ["age"]


def age(conversation: Conversation, seconds: float) -> None:
    """Every event of ``conversation`` happened ``seconds`` earlier (the same events, ids and
    all, with earlier timestamps)."""
    shift = timedelta(seconds=seconds)

    def earlier(stamp: str) -> str:
        return (datetime.fromisoformat(stamp) - shift).isoformat(timespec="milliseconds")

    events = conversation.truncate(0)
    conversation.extend(e.model_copy(update={"timestamp": earlier(e.timestamp)}) for e in events)
