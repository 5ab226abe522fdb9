"""Words for the reader: counts with the right plural."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 event``, ``2 events``, ``1,200 events``; ``many`` for irregular plurals."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"
