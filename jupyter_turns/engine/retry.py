"""ResilientCycle: retries one provider request while nothing of it has reached the user.

The provider's ``classify`` decides whether an error is retryable. Waits grow exponentially with
jitter; a server's ``retry-after`` is honoured exactly but capped. Once a Part or Flush of the
cycle has been yielded, a failure is raised as :class:`StreamBroken` instead (the coordinator
keeps what arrived and offers Continue). A stream that ends without ``Finished`` is a retryable
failure too. Sleep, clock and randomness are injected so tests never wait.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from ..errors import ProviderError, StreamBroken
from ..model.events import StreamEvent
from ..model.sink import RetryCleared, Retrying, Update

__all__ = ["ResilientCycle", "RetryPolicy"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts, and how long to wait before each: exponential backoff with jitter,
    or the server's ``retry-after`` up to ``max_retry_after`` seconds."""

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    jitter: float = 0.25  # +/- fraction of the backoff delay

    def delay(self, attempt: int, error: ProviderError, rand: float) -> float:
        """Seconds to wait before attempt ``attempt + 1``; ``rand`` is uniform in [0, 1)."""
        if error.retry_after is not None:
            return max(0.0, min(float(error.retry_after), self.max_retry_after))
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return max(0.0, backoff * (1 + self.jitter * (2 * rand - 1)))


class ResilientCycle:
    """Wraps a provider's stream factory with the retry policy."""

    def __init__(
        self,
        classify: Callable[[BaseException], ProviderError],
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
        on_status: Callable[[Update], None] = lambda update: None,
    ) -> None:
        self._classify = classify
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._clock = clock
        self._rand = rand
        self._on_status = on_status

    async def stream(
        self, open_stream: Callable[[], AsyncIterator[StreamEvent]]
    ) -> AsyncIterator[StreamEvent]:
        attempt = 0
        while True:
            attempt += 1
            delivered = False
            finished = False
            source = open_stream()
            try:
                async for item in source:
                    if item.kind == "finished":
                        finished = True
                    else:
                        delivered = True
                    yield item
                if not finished:
                    raise ProviderError(
                        "the response ended before it was complete (no end-of-message event)",
                        kind="incomplete_stream",
                        retryable=True,
                    )
                return
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except Exception as exc:
                error = self._classify(exc)
                if delivered:
                    raise StreamBroken(error) from exc
                if not error.retryable or attempt >= self.policy.max_attempts:
                    raise error from exc
            finally:
                aclose = getattr(source, "aclose", None)
                if aclose is not None:
                    await aclose()
            delay = self.policy.delay(attempt, error, self._rand())
            self._on_status(
                Retrying(
                    attempt=attempt,
                    max_attempts=self.policy.max_attempts,
                    delay=delay,
                    reason=_reason(error),
                    until=self._clock() + delay,
                )
            )
            try:
                await self._sleep(delay)
            finally:
                self._on_status(RetryCleared())


def _reason(error: ProviderError) -> str:
    labels = {
        "rate_limit": "rate limited",
        "overloaded": "the API is overloaded",
        "server": "server error",
        "connection": "connection failed",
        "timeout": "the request timed out",
        "incomplete_stream": "the response broke off",
        "stream_error": "the stream reported an error",
    }
    label = labels.get(error.kind, error.kind.replace("_", " "))
    status = f" ({error.status})" if error.status else ""
    return f"{label}{status}"
