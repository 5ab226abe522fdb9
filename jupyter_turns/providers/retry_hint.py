"""How long a server asks to wait before the next attempt, from its response's headers.

Every provider's ``classify`` reads it the same way (their SDKs share ``httpx2`` responses):
``retry-after-ms`` (OpenAI, Anthropic) first, then ``retry-after`` in seconds. An HTTP date
is not read: the retry policy's own backoff applies (and caps whatever a server asks).
"""

from __future__ import annotations

from typing import Any

__all__ = ["retry_after"]


def retry_after(response: Any) -> float | None:
    """Seconds the server asked to wait, or None."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None
