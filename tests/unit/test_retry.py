from __future__ import annotations

from jupyter_turns import Chat, ProviderError, RecordingSink
from jupyter_turns.engine.retry import ResilientCycle, RetryPolicy
from jupyter_turns.model.events import ErrorEvent, Message
from jupyter_turns.model.sink import Retrying
from jupyter_turns.providers.scripted import Fail, ScriptedProvider, cycle, message

from .conftest import FakeClock
from .helpers import kinds


def _rate_limited(after: float | None = 2.0) -> Fail:
    return Fail(
        ProviderError(
            "rate limited", kind="rate_limit", retryable=True, retry_after=after, status=429
        )
    )


def _chat(provider: ScriptedProvider, clock: FakeClock, **kw: object) -> Chat:
    return Chat(provider=provider, sleep=clock.sleep, clock=clock, rand=lambda: 0.5, **kw)  # type: ignore[arg-type]


async def test_429_with_retry_after_waits_exactly_that_long_once(clock: FakeClock) -> None:
    sink = RecordingSink()
    provider = ScriptedProvider([_rate_limited(2.0), cycle(message("made it"))])
    turn = await _chat(provider, clock, sink=sink).send("hi")
    assert clock.sleeps == [2.0]
    assert turn.outcome == "complete" and kinds(turn) == ["chat_request", "message"]
    [retrying] = [u for u in sink.updates if isinstance(u, Retrying)]
    assert (retrying.attempt, retrying.delay, retrying.reason) == (1, 2.0, "rate limited (429)")
    assert retrying.until == 1_000_000.0 + 2.0
    provider.assert_complete()


async def test_backoff_grows_exponentially_and_jitters(clock: FakeClock) -> None:
    overloaded = Fail(ProviderError("overloaded", kind="overloaded", retryable=True, status=529))
    provider = ScriptedProvider([overloaded, overloaded, overloaded, cycle(message("ok"))])
    await _chat(provider, clock).send("hi")
    assert clock.sleeps == [1.0, 2.0, 4.0]  # rand 0.5 is the middle of the jitter band
    policy = RetryPolicy(base_delay=1, jitter=0.25)
    error = ProviderError("x", retryable=True)
    assert policy.delay(3, error, 0.0) == 3.0 and policy.delay(3, error, 0.999) > 4.99


async def test_retry_after_is_capped(clock: FakeClock) -> None:
    provider = ScriptedProvider([_rate_limited(3600), cycle(message("ok"))])
    await _chat(provider, clock, retry=RetryPolicy(max_retry_after=60)).send("hi")
    assert clock.sleeps == [60]


async def test_auth_error_is_not_retried_and_earlier_events_stay(clock: FakeClock) -> None:
    auth = Fail(ProviderError("invalid x-api-key", kind="auth", status=401))
    provider = ScriptedProvider([cycle(message("first answer")), auth])
    chat = _chat(provider, clock)
    await chat.send("one")
    turn = await chat.send("two")
    assert clock.sleeps == []
    assert turn.outcome == "error"
    assert kinds(turn) == ["chat_request", "error"]
    assert "invalid x-api-key" in turn.events[-1].message  # type: ignore[union-attr]
    assert [e.kind for e in chat.conversation.events] == [
        "chat_request",
        "message",
        "chat_request",
        "error",
    ]
    chat.conversation.check_sendable()


async def test_failure_after_the_first_part_is_not_retried_and_keeps_the_partial_text(
    clock: FakeClock,
) -> None:
    items = cycle(message("Half an ans", chunks=1), message("wer"))
    broken = [*items[:1], Fail(ProviderError("reset", kind="connection", retryable=True))]
    provider = ScriptedProvider([broken, cycle(message("never requested"))])
    turn = await _chat(provider, clock).send("hi")
    assert clock.sleeps == [] and len(provider.requests) == 1
    messages = [e for e in turn if isinstance(e, Message)]
    assert [(m.content, m.metadata) for m in messages] == [("Half an ans", {"partial": True})]
    assert any(e.kind == "error" and "reset" in e.message for e in turn)  # type: ignore[union-attr]
    assert turn.outcome == "stopped"


async def test_attempts_run_out_with_a_clear_error(clock: FakeClock) -> None:
    provider = ScriptedProvider([_rate_limited(1)] * 3)
    turn = await _chat(provider, clock, retry=RetryPolicy(max_attempts=3)).send("hi")
    assert clock.sleeps == [1, 1]
    assert turn.outcome == "error" and turn.events[-1].kind == "error"


async def test_a_stream_without_its_end_is_retried(clock: FakeClock) -> None:
    provider = ScriptedProvider([[], cycle(message("whole"))])  # the first body ends at once
    turn = await _chat(provider, clock).send("hi")
    assert len(clock.sleeps) == 1 and turn.text == "whole"


async def test_a_stream_without_its_end_is_reported_by_resilient_cycle_alone(
    clock: FakeClock,
) -> None:
    """Whether or not text arrived first, the turn sees ResilientCycle's error for a body that
    ends without Finished: the turn itself never has to check for that end."""
    started = cycle(message("Half"))[:1]  # a Part, then the body ends
    for script, outcome in (([started], "stopped"), ([[], [], []], "error")):
        provider = ScriptedProvider(script)
        turn = await _chat(provider, clock, retry=RetryPolicy(max_attempts=3)).send("hi")
        [error] = [e for e in turn if isinstance(e, ErrorEvent)]
        assert (turn.outcome, error.error_type) == (outcome, "incomplete_stream")
        assert error.message.startswith("the response ended before it was complete")


async def test_resilient_cycle_passes_events_through_untouched(clock: FakeClock) -> None:
    items = cycle(message("a b c"))
    provider = ScriptedProvider([items])
    from jupyter_turns.providers.base import Request

    resilient = ResilientCycle(provider.classify, sleep=clock.sleep)
    seen = [e async for e in resilient.stream(lambda: provider.stream(Request(events=())))]
    direct = [e async for e in ScriptedProvider([items]).stream(Request(events=()))]
    assert seen == direct and len(seen) == len(items)
