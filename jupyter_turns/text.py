"""Words for the reader: counts with the right plural, places as ordinals."""

from __future__ import annotations

__all__ = ["ordinal", "plural"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 event``, ``2 events``, ``1,200 events``; ``many`` for irregular plurals."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def ordinal(number: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``12th``, ``13th``, ``21st``, ``112th``."""
    tens = number % 100
    suffix = "th" if 11 <= tens <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"
