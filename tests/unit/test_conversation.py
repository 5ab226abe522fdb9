from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jupyter_turns.errors import ConversationError, SchemaError
from jupyter_turns.model.conversation import Conversation
from jupyter_turns.model.events import (
    Block,
    ChatRequest,
    ConversationEvent,
    Decision,
    ErrorEvent,
    InquiryRequest,
    InquiryResponse,
    Message,
    Notice,
    Reasoning,
    ToolCallRequest,
    ToolCallResponse,
)
from jupyter_turns.providers.anthropic_wire import anthropic_messages

FIXTURE = Path(__file__).parent.parent / "fixtures" / "record_v1.json"


def _call(call_id: str, name: str = "f") -> ToolCallRequest:
    return ToolCallRequest(call_id=call_id, name=name, arguments={"x": 1})


def _answer(call_id: str) -> ToolCallResponse:
    return ToolCallResponse(call_id=call_id, content="ok")


def sample() -> Conversation:
    return Conversation(
        [
            ChatRequest(content="hi"),
            Reasoning(content="thinking…", metadata={"signature": "EqQBCkgIARABGAIiQL+/sig=="}),
            Message(content="Let me check."),
            _call("a"),
            _call("b", "g"),
            InquiryRequest(inquiry_id="q1", call_id="b", question="Sure?", choices=["yes", "no"]),
            InquiryResponse(inquiry_id="q1", call_id="b", answer="yes"),
            _answer("a"),
            ToolCallResponse(
                call_id="b",
                content="boom",
                is_error=True,
                status="error",
                decisions=[Decision(action="approved", by="user")],
                elapsed=0.25,
            ),
            Message(content="Done."),
            Block(metadata={"raw_block": {"type": "redacted_thinking", "data": "xyz"}}),
            Notice(text="fine"),
            ErrorEvent(message="bad", error_type="auth"),
        ]
    )


def test_save_then_load_is_identity() -> None:
    conversation = sample()
    record = json.loads(json.dumps(conversation.to_record()))
    loaded = Conversation.from_record(record)
    assert loaded.conversation_id == conversation.conversation_id
    assert list(loaded.events) == list(conversation.events)
    assert loaded.to_record() == conversation.to_record()


def test_signature_survives_byte_for_byte() -> None:
    signature = "Eu8BCkYIBRgCKkD+/=\u00e9\n  trailing "
    conversation = Conversation([ChatRequest(content="q")])
    conversation.append(Reasoning(content=" spaced \n", metadata={"signature": signature}))
    loaded = Conversation.from_record(json.loads(json.dumps(conversation.to_record())))
    thinking = anthropic_messages(loaded.events)[1]["content"][0]
    assert thinking == {"type": "thinking", "thinking": " spaced \n", "signature": signature}


def test_committed_v1_fixture_loads() -> None:
    record = json.loads(FIXTURE.read_text())
    conversation = Conversation.from_record(record)
    kinds = [event.kind for event in conversation.events]
    assert kinds[:3] == ["chat_request", "reasoning", "message"]
    assert "tool_call_response" in kinds
    assert conversation.pending_calls == []


def test_response_to_unknown_call_is_rejected() -> None:
    conversation = Conversation([ChatRequest(content="q")])
    with pytest.raises(ConversationError, match="unknown tool call 'zz'"):
        conversation.append(_answer("zz"))


def test_second_response_is_rejected() -> None:
    conversation = Conversation([ChatRequest(content="q"), _call("a")])
    conversation.append(_answer("a"))
    with pytest.raises(ConversationError, match="already answered"):
        conversation.append(_answer("a"))


def test_duplicate_call_id_is_rejected() -> None:
    conversation = Conversation([ChatRequest(content="q"), _call("a")])
    with pytest.raises(ConversationError, match="duplicate tool call id"):
        conversation.append(_call("a"))


def test_user_request_cannot_follow_unanswered_calls() -> None:
    conversation = Conversation([ChatRequest(content="q"), _call("a")])
    with pytest.raises(ConversationError, match="unanswered tool calls: a"):
        conversation.append(ChatRequest(content="again"))
    with pytest.raises(ConversationError, match="without a response: a"):
        conversation.check_sendable()


def test_assistant_output_cannot_follow_partial_responses() -> None:
    conversation = Conversation([ChatRequest(content="q"), _call("a"), _call("b"), _answer("a")])
    with pytest.raises(ConversationError, match="unanswered: b"):
        conversation.append(Message(content="too early"))


def test_load_names_the_bad_event() -> None:
    record = Conversation([ChatRequest(content="q"), _call("a"), _answer("a")]).to_record()
    record["events"].append(record["events"][-1])
    with pytest.raises(ConversationError, match="saved event #3"):
        Conversation.from_record(record)


def test_load_rejects_unknown_kind_and_newer_version() -> None:
    record = Conversation([ChatRequest(content="q")]).to_record()
    record["events"][0]["kind"] = "telepathy"
    with pytest.raises(SchemaError, match="saved event #0"):
        Conversation.from_record(record)
    with pytest.raises(SchemaError, match="newer than this jupyter_turns"):
        Conversation.from_record({**record, "version": 99})
    with pytest.raises(SchemaError, match="JSON object"):
        Conversation.from_record([])


def test_load_repairs_calls_a_dead_kernel_left_unanswered() -> None:
    record = Conversation([ChatRequest(content="q"), _call("a")]).to_record()
    conversation = Conversation.from_record(record)
    last = conversation.events[-1]
    assert isinstance(last, ToolCallResponse)
    assert last.call_id == "a" and last.is_error
    conversation.check_sendable()


def test_truncate_restores_the_invariant_state() -> None:
    conversation = Conversation([ChatRequest(content="q")])
    conversation.extend([Message(content="x"), _call("a")])
    dropped = conversation.truncate(1)
    assert [event.kind for event in dropped] == ["message", "tool_call_request"]
    conversation.check_sendable()
    conversation.append(_call("a"))  # the id is free again


def test_anthropic_messages_alternate_and_put_tool_results_first() -> None:
    messages = anthropic_messages(sample().events)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assistant = messages[1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use", "tool_use"]
    results = messages[2]["content"]
    assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in results] == [
        ("tool_result", "a", False),
        ("tool_result", "b", True),
    ]
    assert messages[3]["content"][1] == {"type": "redacted_thinking", "data": "xyz"}


def test_reply_after_tools_shares_the_user_message_after_the_results() -> None:
    conversation = Conversation([ChatRequest(content="q"), _call("a"), _answer("a")])
    conversation.append(ChatRequest(content="actually, stop"))
    last = anthropic_messages(conversation.events)[-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]


def test_unsigned_and_empty_blocks_are_not_sent() -> None:
    conversation = Conversation(
        [
            ChatRequest(content="q"),
            Reasoning(content="partial", metadata={"partial": True}),
            Message(content=""),
        ]
    )
    assert anthropic_messages(conversation.events) == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]}
    ]


def test_tool_use_goes_back_with_its_extra_fields() -> None:
    call = ToolCallRequest(
        call_id="toolu_1",
        name="run_me",
        arguments={"bar": "foo"},
        metadata={
            "raw_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "run_me",
                "input": {},
                "caller": {"type": "direct"},
            }
        },
    )
    conversation = Conversation([ChatRequest(content="q"), call])
    block = anthropic_messages(conversation.events)[1]["content"][0]
    assert block == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "run_me",
        "input": {"bar": "foo"},
        "caller": {"type": "direct"},
    }


_ops = st.lists(st.sampled_from(["user", "text", "call", "answer", "notice"]), max_size=40)


@given(_ops)
def test_any_accepted_sequence_is_sendable_once_calls_are_answered(ops: list[str]) -> None:
    """Whatever the append order, what the checks accept converts to alternating messages."""
    conversation = Conversation()

    def make(op: str, n: int) -> ConversationEvent:
        if op == "user":
            return ChatRequest(content=f"u{n}")
        if op == "text":
            return Message(content=f"m{n}")
        if op == "call":
            return _call(f"c{n}")
        if op == "answer" and conversation.pending_calls:
            return _answer(conversation.pending_calls[0])
        return Notice(text="n")

    for n, op in enumerate(ops):
        try:
            conversation.append(make(op, n))
        except ConversationError:
            continue
    conversation.answer_orphans()
    conversation.check_sendable()
    messages = anthropic_messages(conversation.events)
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(roles))
    answered = [
        block["tool_use_id"]
        for m in messages
        for block in m["content"]
        if block["type"] == "tool_result"
    ]
    requested = [
        block["id"] for m in messages for block in m["content"] if block["type"] == "tool_use"
    ]
    assert sorted(answered) == sorted(requested)
    assert len(set(answered)) == len(answered)
