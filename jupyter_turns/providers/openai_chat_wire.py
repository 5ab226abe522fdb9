"""The Chat Completions wire format: a conversation's events as ``messages``, and the request.

The one place that maps conversation events to the roles every OpenAI-compatible server
(Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, LiteLLM) reads: ``system``, ``user`` (text,
attachments framed as notebook data, images as ``image_url`` data URLs), ``assistant`` (its text
and its ``tool_calls``, one message per response) and ``tool`` (a result, by ``tool_call_id``).

What is not sent: reasoning (these servers neither need nor accept it back), opaque blocks
(Anthropic's own), a sub-agent's events. Tool messages are text-only on most servers, so the
images of a tool result follow in a user message that says whose output they are. The request
carries ``max_tokens`` only when the thread sets one (a local server refuses a value above its
own limit), and asks for usage in the stream's last chunk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..model.content import ImageData, labeled
from ..model.events import API_KINDS, ConversationEvent
from .base import Continuation, Request, ToolSpec, continue_request

__all__ = ["build_params", "chat_messages", "chat_tools"]

_TOOL_CHOICE = {"auto": "auto", "any": "required", "none": "none"}


def build_params(request: Request, model: str, *, stream: bool = True) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for one cycle."""
    messages = chat_messages(request.events, request.system)
    if request.continuation is not None and request.continuation.partial_text:
        _continue(messages, request.continuation)
    params: dict[str, Any] = {"model": model, "messages": messages, "stream": stream}
    if stream:
        params["stream_options"] = {"include_usage": True}
    if request.max_tokens is not None:
        params["max_tokens"] = request.max_tokens
    if request.tools:
        params["tools"] = chat_tools(request.tools)
        params["tool_choice"] = _TOOL_CHOICE[request.tool_choice]
    return params


def chat_tools(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as Chat Completions ``function`` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def chat_messages(
    events: Iterable[ConversationEvent], system: str | None = None
) -> list[dict[str, Any]]:
    """The ``messages`` of a conversation: the system prompt first, then one message per
    request, one assistant message per response (its text and tool calls), one ``tool``
    message per result, and the results' images after the last of them."""
    messages = _Messages([{"role": "system", "content": system}] if system else [])
    for event in events:
        if event.kind in API_KINDS and event.parent is None:
            messages.add(event)
    return messages.done()


class _Messages:
    """The messages so far, the response being gathered and the tool images waiting for the
    end of the results (a user message between two ``tool`` messages would be refused)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.assistant: dict[str, Any] | None = None
        self.images: list[dict[str, Any]] = []

    def add(self, event: ConversationEvent) -> None:
        if event.kind == "message":
            if event.content:
                assistant = self._assistant()
                before = assistant.get("content")
                assistant["content"] = f"{before}{event.content}" if before else event.content
        elif event.kind == "tool_call_request":
            self._assistant().setdefault("tool_calls", []).append(_tool_call(event))
        elif event.kind == "tool_call_response":
            self.assistant = None
            self.messages.append(_tool_message(event))
            if event.images:
                self.images.append(_text_part(_images_label(event, self._call_name(event))))
                self.images.extend(_image_part(image) for image in event.images)
        elif event.kind == "chat_request":
            self._close()
            self.messages.append({"role": "user", "content": _request_content(event)})

    def done(self) -> list[dict[str, Any]]:
        self._close()
        return self.messages

    def _assistant(self) -> dict[str, Any]:
        if self.assistant is None:
            self._close()
            self.assistant = {"role": "assistant"}
            self.messages.append(self.assistant)
        return self.assistant

    def _close(self) -> None:
        """The response or the results before are complete: the images wait no longer."""
        self.assistant = None
        if self.images:
            self.messages.append({"role": "user", "content": self.images})
            self.images = []

    def _call_name(self, event: ConversationEvent) -> str | None:
        call_id = getattr(event, "call_id", None)
        for message in reversed(self.messages):
            for call in message.get("tool_calls", ()):
                if call["id"] == call_id:
                    return str(call["function"]["name"])
        return None


def _tool_call(event: ConversationEvent) -> dict[str, Any]:
    assert event.kind == "tool_call_request"
    arguments = event.metadata.get("raw_arguments")
    if not isinstance(arguments, str):  # arguments that were not JSON go back as they came
        arguments = json.dumps(event.arguments, ensure_ascii=False)
    return {
        "id": event.call_id,
        "type": "function",
        "function": {"name": event.name, "arguments": arguments},
    }


def _tool_message(event: ConversationEvent) -> dict[str, Any]:
    assert event.kind == "tool_call_response"
    return {"role": "tool", "tool_call_id": event.call_id, "content": event.content}


def _images_label(event: ConversationEvent, name: str | None) -> str:
    assert event.kind == "tool_call_response"
    whose = f"the {name} tool" if name else "a tool"
    many = len(event.images) > 1
    return (
        f"The image{'s' if many else ''} below {'are' if many else 'is'} the output of "
        f"{whose} (call {event.call_id})."
    )


def _request_content(event: ConversationEvent) -> str | list[dict[str, Any]]:
    """A request's text, or its parts when it has attachments: the text first, then each
    attachment framed as notebook data with its images."""
    assert event.kind == "chat_request"
    if not event.attachments:
        return event.content
    parts = [_text_part(event.content)] if event.content else []
    for attachment in event.attachments:
        text = labeled(attachment.text, f"{attachment.source} {attachment.label}")
        parts.append(_text_part(text))
        parts.extend(_image_part(image) for image in attachment.images)
    return parts


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image_part(image: ImageData) -> dict[str, Any]:
    url = f"data:{image.media_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _continue(messages: list[dict[str, Any]], continuation: Continuation) -> None:
    """Ask the model to go on from the partial answer: that answer as the assistant's, then a
    user message quoting where it stopped (no server here is assumed to take prefill)."""
    partial = continuation.partial_text
    last = messages[-1] if messages else None
    if last is not None and last["role"] == "assistant" and "tool_calls" not in last:
        last["content"] = f"{last.get('content') or ''}{partial}"
    else:
        messages.append({"role": "assistant", "content": partial})
    messages.append({"role": "user", "content": continue_request(partial)})
