"""Transcripts of conversation events: markdown (export) and safe HTML (the notebook's view).

Model and tool text is untrusted. A frontend renders outputs of the running session as trusted
(raw HTML and scripts included), so the HTML transcript is rendered here with CommonMark and
raw HTML disabled (markdown-it-py: tags become text, ``javascript:`` links are refused) and then
cleaned with nh3 as a second line of defence; no images are kept (no remote loads).
Deterministic by design: no ids, timestamps or timings (nbval compares it).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable

import nh3
from markdown_it import MarkdownIt

from .events import ConversationEvent

__all__ = ["to_html", "to_markdown"]

_BACKTICKS = re.compile(r"`+")
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
_ALLOWED_TAGS = {
    "a",
    "p",
    "br",
    "hr",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "details",
    "summary",
    "del",
}


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines()) or ">"


def _fenced(text: str, lang: str = "") -> str:
    """A code fence longer than any backtick run inside, so the text cannot close it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(4, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


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
                name = event.name.replace("`", "'")
                parts.append(f"**Tool call** `{name}`\n\n{_fenced(arguments, 'json')}")
            case "tool_call_response":
                decisions = ", ".join(f"{d.action} by {d.by}" for d in event.decisions)
                head = f"**Tool result** ({event.status}{'; ' + decisions if decisions else ''})"
                parts.append(f"{head}\n\n{_fenced(event.content)}")
            case "inquiry_request":
                choices = f" ({', '.join(event.choices)})" if event.choices else ""
                parts.append(f"**Tool asks:** {event.question}{choices}")
            case "inquiry_response":
                answer = "no answer (nobody could answer)" if event.answer is None else event.answer
                parts.append(f"**Answer** ({event.by}): {answer}")
            case "notice":
                parts.append(f"*{event.text}*")
            case "error":
                parts.append(f"**Error** ({event.error_type}): {event.message}")
    return "\n\n".join(parts) + "\n"


def to_html(events: Iterable[ConversationEvent], *, summary: str | None = None) -> str:
    """The transcript as sanitized HTML, folded in ``<details>`` when ``summary`` is given."""
    body = nh3.clean(
        _MARKDOWN.render(to_markdown(events)),
        tags=_ALLOWED_TAGS,
        url_schemes={"http", "https", "mailto"},
    )
    if summary is None:
        return body
    return f"<details><summary>{html.escape(summary)}</summary>\n{body}</details>\n"
