"""Markdown transcripts of conversation events, for reading without a kernel and for export.

Deterministic by design: no ids, timestamps or timings, so a transcript of the same scripted
conversation is the same text on every run (nbval compares it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from .events import ConversationEvent

__all__ = ["to_markdown"]

_FENCE = "````"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines()) or ">"


def _fenced(text: str, lang: str = "") -> str:
    return f"{_FENCE}{lang}\n{text}\n{_FENCE}"


def to_markdown(events: Iterable[ConversationEvent], *, reasoning: bool = True) -> str:
    """The events as markdown: requests quoted, answers as written, tools as fenced blocks."""
    parts: list[str] = []
    for event in events:
        match event.kind:
            case "chat_request":
                parts.append(f"**You**\n\n{_quote(event.content)}")
            case "reasoning":
                if reasoning and event.content.strip():
                    parts.append(f"*Reasoning*\n\n{_quote(event.content)}")
            case "message":
                note = " *(stopped here)*" if event.metadata.get("partial") else ""
                parts.append(f"**Claude**\n\n{event.content}{note}")
            case "block":
                kind = (event.metadata.get("raw_block") or {}).get("type", "block")
                parts.append(f"*({kind})*")
            case "tool_call_request":
                arguments = json.dumps(event.arguments, ensure_ascii=False, indent=1)
                parts.append(f"**Tool call** `{event.name}`\n\n{_fenced(arguments, 'json')}")
            case "tool_call_response":
                decisions = ", ".join(f"{d.action} by {d.by}" for d in event.decisions)
                head = f"**Tool result** ({event.status}{'; ' + decisions if decisions else ''})"
                parts.append(f"{head}\n\n{_fenced(event.content)}")
            case "inquiry_request":
                choices = f" ({', '.join(event.choices)})" if event.choices else ""
                parts.append(f"**Tool asks:** {event.question}{choices}")
            case "inquiry_response":
                parts.append(f"**Answer** ({event.by}): {event.answer}")
            case "notice":
                parts.append(f"*{event.text}*")
            case "error":
                parts.append(f"**Error** ({event.error_type}): {event.message}")
    return "\n\n".join(parts) + "\n"
