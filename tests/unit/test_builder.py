from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_turns.engine.builder import EventBuilder
from jupyter_turns.errors import ProtocolError
from jupyter_turns.model.events import (
    Flush,
    MessageDelta,
    Part,
    ReasoningDelta,
    ToolCall,
    ToolInputDelta,
)


def test_text_parts_accumulate_until_flush_with_metadata() -> None:
    builder = EventBuilder()
    builder.add(Part(0, ReasoningDelta("a")))
    builder.add(Part(0, ReasoningDelta("b")))
    [(index, event)] = builder.flush(Flush(0, {"signature": "s"}))
    assert index == 0
    assert event.kind == "reasoning"
    assert event.content == "ab" and event.metadata == {"signature": "s"}


def test_later_block_waits_for_an_open_lower_block() -> None:
    builder = EventBuilder()
    builder.add(Part(0, MessageDelta("first")))
    builder.add(Part(1, ToolCall("c1", "f", {"x": 1})))
    assert builder.flush(Flush(1)) == []
    released = builder.flush(Flush(0))
    assert [(i, e.kind) for i, e in released] == [(0, "message"), (1, "tool_call_request")]


def test_unflushed_text_is_readable_and_drains_as_partial() -> None:
    builder = EventBuilder()
    builder.add(Part(0, MessageDelta("Hel")))
    builder.add(Part(0, MessageDelta("lo")))
    builder.add(Part(1, ToolCall("c1", "f", {})))
    assert [(d.index, d.kind, d.text) for d in builder.drafts()] == [
        (0, "message", "Hello"),
        (1, "tool_call", ""),  # the page may be drawing its arguments: released with the rest
    ]
    [event] = builder.drain()
    assert event.kind == "message"
    assert event.content == "Hello" and event.metadata == {"partial": True}
    assert builder.empty


def test_argument_pieces_open_the_call_block_and_only_the_complete_call_is_an_event() -> None:
    builder = EventBuilder()
    builder.add(Part(0, MessageDelta("Let me add.")))
    for piece in ('{"a": ', "2, ", '"b": 3}'):
        builder.add(Part(1, ToolInputDelta(piece, "c1", "add")))
    assert [(d.index, d.kind, d.text) for d in builder.drafts()] == [
        (0, "message", "Let me add."),
        (1, "tool_call", ""),  # the pieces are the page's: the builder keeps no text of them
    ]
    assert builder.flush(Flush(0)) != []
    builder.add(Part(1, ToolCall("c1", "add", {"a": 2, "b": 3})))
    [(index, event)] = builder.flush(Flush(1, {"raw_block": {"type": "tool_use"}}))
    assert index == 1 and event.kind == "tool_call_request"
    assert (event.call_id, event.name, event.arguments) == ("c1", "add", {"a": 2, "b": 3})
    assert event.metadata == {"raw_block": {"type": "tool_use"}}
    assert builder.empty


def test_a_stop_mid_arguments_drops_the_call_it_never_completed() -> None:
    builder = EventBuilder()
    builder.add(Part(0, MessageDelta("Let me add.")))
    builder.add(Part(1, ToolInputDelta("", "c1", "add")))
    builder.add(Part(1, ToolInputDelta('{"a": 2, ', "c1", "add")))
    assert [d.index for d in builder.drafts()] == [0, 1]  # both are released: both go
    [event] = builder.drain()
    assert event.kind == "message" and event.metadata == {"partial": True}
    assert builder.empty


def test_flush_of_a_block_without_parts_keeps_it_as_an_opaque_block() -> None:
    builder = EventBuilder()
    [(index, event)] = builder.flush(Flush(0, {"raw_block": {"type": "redacted_thinking"}}))
    assert (index, event.kind) == (0, "block")
    assert builder.flush(Flush(1)) == []


def test_a_block_after_a_gap_is_held_until_the_end() -> None:
    builder = EventBuilder()
    builder.add(Part(2, MessageDelta("late")))
    assert builder.flush(Flush(2, {"k": 1})) == []
    [event] = builder.drain()
    assert event.kind == "message"
    assert event.content == "late" and event.metadata == {"k": 1}


@pytest.mark.parametrize(
    ("parts", "flush", "message"),
    [
        (
            [Part(0, MessageDelta("a")), Part(0, ToolInputDelta("{", "c1", "f"))],
            None,
            "block 0 is message, got a tool_call part",
        ),
        (
            [Part(0, ToolInputDelta("{", "c1", "f")), Part(0, MessageDelta("a"))],
            None,
            "block 0 is tool_call, got a message part",
        ),
        (
            [Part(0, ToolCall("c1", "f", {})), Part(0, ToolInputDelta("}", "c1", "f"))],
            None,
            "block 0 got arguments after its tool call",
        ),
        (
            [Part(0, ToolInputDelta("{}", "c1", "f"))],
            Flush(0),
            "block 0 flushed without its complete tool call",
        ),
    ],
)
def test_argument_pieces_out_of_place_are_protocol_errors(
    parts: list[Part], flush: Flush | None, message: str
) -> None:
    builder = EventBuilder()
    with pytest.raises(ProtocolError, match=message):
        for part in parts:
            builder.add(part)
        if flush is not None:
            builder.flush(flush)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([Part(0, MessageDelta("a")), Flush(0), Part(0, MessageDelta("b"))], "after it was"),
        ([Part(0, MessageDelta("a")), Part(0, ReasoningDelta("b"))], "is message"),
        ([Part(0, MessageDelta("a")), Flush(0), Flush(0)], "flushed twice"),
        ([Part(0, ToolCall("a", "f", {})), Part(0, ToolCall("b", "f", {}))], "second tool call"),
    ],
)
def test_malformed_streams_raise_protocol_errors(steps: list[object], message: str) -> None:
    builder = EventBuilder()
    with pytest.raises(ProtocolError, match=message):
        for step in steps:
            if isinstance(step, Part):
                builder.add(step)
            else:
                assert isinstance(step, Flush)
                builder.flush(step)


class _NoConcat(str):
    """A str that refuses ``+``: building text with repeated concatenation would fail."""

    def __add__(self, other: str) -> str:
        raise AssertionError("quadratic concatenation")

    def __radd__(self, other: str) -> str:
        raise AssertionError("quadratic concatenation")


def test_appending_parts_never_concatenates_pairwise() -> None:
    builder = EventBuilder()
    for _ in range(5000):
        builder.add(Part(0, MessageDelta(_NoConcat("x"))))
    [(_, event)] = builder.flush(Flush(0))
    assert event.content == "x" * 5000


def test_reading_drafts_repeatedly_stays_linear() -> None:
    """Each drafts() call collapses the chunks, so the next one joins only what is new."""
    builder = EventBuilder()
    for i in range(200):
        builder.add(Part(0, MessageDelta("ab")))
        if i % 50 == 0:
            builder.drafts()
    buffer = builder._buffers[0]
    assert len(buffer.chunks) <= 50
    assert builder.drafts()[0].text == "ab" * 200


@st.composite
def _streams(draw: st.DrawFn) -> tuple[list[Part | Flush], dict[int, str]]:
    """Blocks with text chunks, interleaved arbitrarily, each block flushed after its parts."""
    count = draw(st.integers(1, 6))
    texts = {i: draw(st.lists(st.text(max_size=5), min_size=1, max_size=6)) for i in range(count)}
    queues = {
        i: [Part(i, MessageDelta(t)) for t in chunks] + [Flush(i)] for i, chunks in texts.items()
    }
    order: list[Part | Flush] = []
    while queues:
        i = draw(st.sampled_from(sorted(queues)))
        order.append(queues[i].pop(0))
        if not queues[i]:
            del queues[i]
    return order, {i: "".join(chunks) for i, chunks in texts.items()}


@given(_streams())
def test_events_come_out_in_index_order_with_all_their_text(
    stream: tuple[list[Part | Flush], dict[int, str]],
) -> None:
    steps, expected = stream
    builder = EventBuilder()
    released: list[tuple[int, str]] = []
    for step in steps:
        if isinstance(step, Part):
            builder.add(step)
        else:
            released += [(i, e.content) for i, e in builder.flush(step)]  # type: ignore[union-attr]
    assert released == sorted(expected.items())
    assert builder.empty


def test_a_seeded_block_counts_from_its_index() -> None:
    builder = EventBuilder()
    builder.seed(2, "partial ")
    builder.add(Part(2, MessageDelta("rest")))
    builder.add(Part(3, ReasoningDelta("r")))
    builder.flush(Flush(3))
    released = builder.flush(Flush(2))
    assert [(i, e.kind) for i, e in released] == [(2, "message"), (3, "reasoning")]
    assert released[0][1].content == "partial rest"  # type: ignore[union-attr]
