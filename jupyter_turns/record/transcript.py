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
from dataclasses import dataclass
from typing import Any, TypeAlias, assert_never

import nh3
from markdown_it import MarkdownIt

from ..engine.compaction import summary_title
from ..model.content import Attachment, ImageData, unframed
from ..model.events import (
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
    Review,
    Rewind,
    ToolCallRequest,
    ToolCallResponse,
    Undo,
    is_replay_notice,
    is_scripted,
)
from ..tools.policy import ALWAYS_ALLOWED

__all__ = [
    "CODE_ARGUMENTS",
    "kept_line",
    "markdown_html",
    "rewound_line",
    "to_html",
    "to_markdown",
]

# Argument names that hold code, and the language each is: the widget's CODE_ARGUMENTS
# (js/src/render/codeargs.js; tests/unit/test_transcript_words.py keeps the two equal). A
# transcript shows a code argument as the code it is, never as a JSON string of it.
CODE_ARGUMENTS = {"code": "python", "source": "python", "sql": "sql"}

_BACKTICKS = re.compile(r"`+")
_BETWEEN_TAGS = re.compile(r">\n+<")
_SHORT = 800  # characters (and under 12 lines): tool text this short is shown open, as live
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
    """The events as markdown: requests quoted, answers as written, tools as fenced blocks; a
    sub-agent's events quoted under its call."""
    top, nested = _by_parent(events)
    return _markdown(top, nested, reasoning) + "\n"


# One renderer per event kind and format. Both formats take their words from the same helpers
# (`_attached`, `_arguments`, `_question`, `_answer`, `_result_notes`, `_undone`...); the markup
# differs on purpose (markdown reads as a document, the HTML as the widget), so each kind has a
# markdown and an HTML function rather than one over a neutral tree that would change either.


def _markdown(
    events: Iterable[ConversationEvent],
    nested: dict[str, list[ConversationEvent]],
    reasoning: bool,
) -> str:
    return "\n\n".join(part for event in events for part in _md_event(event, nested, reasoning))


def _md_event(
    event: ConversationEvent, nested: dict[str, list[ConversationEvent]], reasoning: bool
) -> list[str]:
    match event:
        case ChatRequest():
            attached = [f"*{_attached(a)}*\n\n{_fenced(a.text)}" for a in event.attachments]
            return [f"**You**\n\n{_quote(event.content)}", *attached]
        case Reasoning():
            shown = reasoning and event.content.strip()
            return [f"*Reasoning*\n\n{_quote(event.content)}"] if shown else []
        case Message():
            note = " *(stopped here)*" if event.metadata.get("partial") else ""
            who = "Scripted answer" if is_scripted(event) else "Assistant"  # no model wrote it
            return [f"**{who}**\n\n{event.content}{note}"]
        case Block():
            return [_md_block(event)]
        case ToolCallRequest():
            return _md_call(event, nested, reasoning)
        case ToolCallResponse():
            return _md_result(event)
        case InquiryRequest():
            return [f"**Tool asks:** {_question(event)}"]
        case InquiryResponse():
            return [f"**Answer** ({event.by}): {_answer(event)}"]
        case Notice():
            return [f"*{event.text}*"]
        case Undo():
            return [f"*{_undone(event)}*"]
        case Rewind():
            return [f"*{rewound_line(event)}*"]
        case Review():
            return [f"*{kept_line(event)}*"]
        case ErrorEvent():
            return [f"**Error** ({event.error_type}): {event.message}"]
        case _:
            assert_never(event)


def _md_block(event: Block) -> str:
    if (summary := summary_title(event)) is not None:
        return f"*{summary[0]}*" + (f"\n\n{_quote(summary[1])}" if summary[1] else "")
    return f"*({_block_type(event, 'block')})*"


def _md_call(
    event: ToolCallRequest, nested: dict[str, list[ConversationEvent]], reasoning: bool
) -> list[str]:
    name = event.name.replace("`", "'")
    code, rest = _code_arguments(event)
    shown = [f"*{arg}*\n\n{_fenced(text, lang)}" for arg, text, lang in code]
    if rest or not code:
        shown.append(_fenced(_json(rest), "json"))
    asker = (_asker(event) or "").replace("`", "'")
    head = f"**Tool call** `{name}`" + (f" (from {asker})" if asker else "")
    parts = ["\n\n".join([head, *shown])]
    inner = nested.pop(event.call_id, None)  # popped: a crafted loop ends
    if inner:
        parts.append(f"*Sub-agent {name}:*\n\n{_quote(_markdown(inner, nested, reasoning))}")
    return parts


def _md_result(event: ToolCallResponse) -> list[str]:
    decisions = ", ".join(f"{d.action} by {d.who.name if d.who else d.by}" for d in event.decisions)
    head = f"**Tool result** ({event.status}{'; ' + decisions if decisions else ''})"
    notes = _result_notes(event)
    return [
        f"{head}\n\n{_fenced(unframed(event.content))}",
        *(f"*{note}*" for note in notes.images),
        *(f"*{_DIFFERS}:*\n\n{_fenced(saved)}" for saved in notes.differs),
        *(f"*{line}*" for line in notes.state),
        *(f"*Proposed change:*\n\n{_fenced(diff, 'diff')}" for diff in notes.diff),
    ]


def to_html(events: Iterable[ConversationEvent]) -> str:
    """The transcript as sanitized HTML shaped like the widget (its class names), expanded:
    answers open; reasoning, and long tool arguments and results, in ``<details>``; a
    sub-agent's events inside its call's card."""
    top, nested = _by_parent(events)
    body = _html_body(top, nested)
    # one line between tags: a notebook stores a multi-line string as a list of lines, each
    # with its own quotes and indentation (code keeps its newlines: its text is escaped)
    return _BETWEEN_TAGS.sub("><", f'<div class="jt-root jt-saved">{body}</div>')


def _by_parent(
    events: Iterable[ConversationEvent],
) -> tuple[list[ConversationEvent], dict[str, list[ConversationEvent]]]:
    """The top-level events, and each sub-agent call's events by its call id."""
    top: list[ConversationEvent] = []
    nested: dict[str, list[ConversationEvent]] = {}
    for event in events:
        parent = event.parent
        (top if parent is None else nested.setdefault(parent, [])).append(event)
    return top, nested


_CardEvent: TypeAlias = ToolCallRequest | ToolCallResponse | Undo | InquiryRequest | InquiryResponse
_ItemEvent: TypeAlias = (
    ChatRequest | Reasoning | Message | Block | Notice | Rewind | Review | ErrorEvent
)


def _html_body(
    events: Iterable[ConversationEvent],
    nested: dict[str, list[ConversationEvent]],
    who: str = "You",  # a sub-agent's request is its caller's task
) -> str:
    """Items in order; a tool call's events all go into its card, placed at its first event."""
    items: list[tuple[str, list[str]]] = []  # (class, inner HTML parts), in order
    cards: dict[str, list[str]] = {}
    for event in events:
        if isinstance(event, _CardEvent):
            if event.call_id not in cards:
                cards[event.call_id] = []
                items.append(("jt-tool", cards[event.call_id]))
            cards[event.call_id].extend(_html_card(event, nested))
        elif (item := _html_item(event, who)) is not None:
            items.append(item)
    return "".join(_div(cls, "".join(inner)) for cls, inner in items)


def _html_item(event: _ItemEvent, who: str) -> tuple[str, list[str]] | None:
    """An event shown on its own: its class and inner HTML (None: nothing to show)."""
    match event:
        case ChatRequest():
            return "jt-request", [
                _div("jt-who", _esc(who)),
                markdown_html(event.content),
                *_html_attached(event),
            ]
        case Reasoning():
            shown = event.content.strip()  # else a signature only
            return (
                ("jt-reasoning", [_fold("Reasoned", markdown_html(event.content))])
                if shown
                else None
            )
        case Message():
            partial = event.metadata.get("partial")
            return "jt-message", [
                markdown_html(event.content),
                _div("jt-partial", "stopped here") if partial else "",
            ]
        case Block():
            return _html_block(event)
        case Notice():
            replayed = " jt-replayed" if is_replay_notice(event) else ""  # for testing.py
            return f"jt-notice jt-notice-{_esc(event.level)}{replayed}", [_esc(event.text)]
        case Rewind():
            return "jt-rewind jt-muted", [_esc(rewound_line(event))]
        case Review():
            return "jt-review-kept jt-muted", [_esc(kept_line(event))]
        case ErrorEvent():
            return "jt-error", [_esc(f"Error ({event.error_type}): {event.message}")]
        case _:
            assert_never(event)


def _html_attached(event: ChatRequest) -> list[str]:
    return [
        _fold(_attached(a), f"<pre>{_esc(a.text)}</pre>")
        + "".join(_div("jt-image-note jt-muted", _esc(_image_note(i))) for i in a.images)
        for a in event.attachments
    ]


def _html_block(event: Block) -> tuple[str, list[str]]:
    if (summary := summary_title(event)) is not None:
        body = f"<pre>{_esc(summary[1])}</pre>" if summary[1] else ""
        return "jt-compaction jt-muted", [_fold(summary[0], body)]
    kind = _block_type(event, "provider")
    label = "redacted reasoning" if kind == "redacted_thinking" else kind
    return "jt-opaque jt-muted", [_esc(f"({label} block)")]


def _html_card(event: _CardEvent, nested: dict[str, list[ConversationEvent]]) -> list[str]:
    """What an event adds to its tool call's card."""
    match event:
        case ToolCallRequest():
            return _html_call(event, nested)
        case ToolCallResponse():
            return _html_result(event)
        case Undo():
            return [_div("jt-undo jt-muted", _esc(_undone(event)))]
        case InquiryRequest():
            return [_div("jt-inquiry-q", _esc(f"Tool asks: {_question(event)}"))]
        case InquiryResponse():
            return [_div("jt-inquiry-a", _esc(f"Answer ({event.by}): {_answer(event)}"))]
        case _:
            assert_never(event)


def _html_call(event: ToolCallRequest, nested: dict[str, list[ConversationEvent]]) -> list[str]:
    name = f'<b class="jt-tool-name">{_esc(event.name)}</b>'
    asker = _asker(event)
    if asker:
        name += f' <span class="jt-tool-asker">{_esc(asker)}</span>'
    code, rest = _code_arguments(event)
    parts = [_div("jt-tool-head", name), *(_pre(arg, text) for arg, text, _ in code)]
    if rest or not code:
        parts.append(_pre("Arguments", _json(rest)))
    inner = nested.pop(event.call_id, None)  # popped: a crafted loop ends
    if inner:
        transcript = _div("jt-nested", _html_body(inner, nested, "Task"))
        parts.append(_fold("Sub-agent", transcript, open_=True))
    return parts


def _html_result(event: ToolCallResponse) -> list[str]:
    chips = " ".join(
        f'<span class="jt-chip jt-chip-{_esc(d.action)}">{_esc(_chip(d))}</span>'
        for d in event.decisions
    )
    notes = _result_notes(event)
    return [
        _div("jt-decisions", chips),
        _pre("Error" if event.is_error else "Result", unframed(event.content)),
        *(_div("jt-image-note jt-muted", _esc(note)) for note in notes.images),
        *(_fold(_DIFFERS, f"<pre>{_esc(saved)}</pre>") for saved in notes.differs),
        *(_div("jt-state jt-muted", _esc(line)) for line in notes.state),
        *(_fold("Proposed change", f"<pre>{_esc(diff)}</pre>") for diff in notes.diff),
    ]


# ------------------------------------------------------------ the words, shared by both formats


def _asker(event: ToolCallRequest) -> str | None:
    """Who asked for a terminal agent's call (``%chat serve``): "Claude Code · call 7", as its
    card's head says it; None for a model's call. One line (the client named itself)."""
    client, call = event.metadata.get("client"), event.metadata.get("call")
    if not isinstance(client, str) or not client.strip():
        return None
    named = " ".join(client.split())
    return f"{named} · call {call}" if isinstance(call, int) else named


def _attached(attachment: Attachment) -> str:
    return f"Attached {attachment.label}"


def _code_arguments(
    event: ToolCallRequest,
) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    """The call's code arguments as ``(name, code, language)`` (language ``""``: an
    ``insert_cell`` markdown cell's source, shown plain), and its other arguments; by name, as
    the saved record holds them (nbformat writes keys sorted), whatever order a reader of the
    record got them in (the kernel's, or a shared document's, from which the server makes the
    transcript: jupyter_turns/server_extension/)."""
    args = event.arguments if isinstance(event.arguments, dict) else {}
    code: list[tuple[str, str, str]] = []
    rest: dict[str, Any] = {}
    for name, value in sorted(args.items()):
        if not isinstance(value, str) or name not in CODE_ARGUMENTS:
            rest[name] = value
            continue
        markdown = event.name == "insert_cell" and name == "source"
        markdown = markdown and args.get("cell_type") == "markdown"
        code.append((name, value, "" if markdown else CODE_ARGUMENTS[name]))
    return code, rest


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)


def _block_type(event: Block, unknown: str) -> str:
    return str((event.metadata.get("raw_block") or {}).get("type", unknown))


def _question(event: InquiryRequest) -> str:
    choices = f" ({', '.join(event.choices)})" if event.choices else ""
    return f"{event.question}{choices}"


def _answer(event: InquiryResponse) -> str:
    return "no answer (nobody could answer)" if event.answer is None else event.answer


@dataclass(frozen=True)
class _ResultNotes:
    """What a tool result carries besides its text, each as lines of plain text."""

    images: list[str]
    differs: list[str]
    state: list[str]
    diff: list[str]


def _result_notes(event: ToolCallResponse) -> _ResultNotes:
    return _ResultNotes(
        images=[_image_note(image) for image in event.images],
        differs=_differs(event),
        state=_state(event),
        diff=_diff(event),
    )


_DIFFERS = "Replay: this result differs from the recording"


def _differs(event: ConversationEvent) -> list[str]:
    """A replayed call's recorded result, when the new one differs (see replay.py)."""
    check = event.replay if isinstance(event, ToolCallResponse) else None
    if check is not None and check.get("same") is False:
        return [str(check.get("saved", ""))]
    return []


def _state(event: ConversationEvent) -> list[str]:
    """A python run's namespace changes, in one line (see tools/state_diff.py)."""
    state = event.state if isinstance(event, ToolCallResponse) else None
    if state is None:
        return []
    parts = []
    for label in ("created", "rebound", "deleted", "changed"):
        items = state.get(label) or []
        names = [i.get("name", "?") if isinstance(i, dict) else str(i) for i in items]
        if names:
            parts.append(
                f"{'changed in place' if label == 'changed' else label} {', '.join(names)}"
            )
    return [f"Kernel: {'; '.join(parts)}"] if parts else []


def _diff(event: ConversationEvent) -> list[str]:
    """An edit_cell proposal's line diff (see editing/cell_tools.py)."""
    preview = event.preview if isinstance(event, ToolCallResponse) else None
    if preview is not None and preview.get("kind") == "edit":
        return [str(preview.get("diff", ""))]
    return []


def _undone(event: Undo) -> str:
    """What an undo reverted, and plainly what it could not."""
    who = event.who.name if event.who is not None else "the user"
    text = f"Undone by {who}: " + (", ".join(event.done) or "nothing")
    if event.not_undone:
        text += "; not undone: " + "; ".join(event.not_undone)
    return text


def rewound_line(event: Rewind) -> str:
    """What a rewind took back, undid and, plainly, could not undo (the card, the transcript
    and ``%chat rewind`` say it alike)."""
    last = event.turn + len(event.requests) - 1
    turns = f"turn {event.turn}" if last == event.turn else f"turns {event.turn}–{last}"
    if event.by == "rerun":
        return (
            f"Rewound: {turns} of this thread, no longer sent to the model (a chat cell that "
            "ran before them ran again)"
        )
    who = event.who.name if event.who is not None else "the user"
    text = f"Rewound by {who}: {turns} of this thread, no longer sent to the model"
    text += "; undone: " + ("; ".join(event.done) or "nothing")
    if event.not_undone:
        text += "; not undone: " + "; ".join(event.not_undone)
    return text


def kept_line(event: Review) -> str:
    """What the review panel's Keep (or Keep all) kept, and who clicked it."""
    who = event.who.name if event.who is not None else "the user"
    count = len(event.kept)
    changes = "the change" if count == 1 else f"{count} changes"
    return f"Kept by {who}: {changes} of this turn ({', '.join(event.kept)})"


def _image_note(image: ImageData) -> str:
    """Where an image cannot be drawn (markdown, the HTML fallback: the record holds it once)."""
    label = f" {image.label}" if image.label else ""
    return f"[image{label}: {image.describe()}, shown by the jupyter_turns renderer]"


# Decision details that are the chip's own words (a replay answered from its recording), as in
# the widget (js/src/render/toolcard.js).
_DETAIL_LABELS = frozenset({"recorded, not run", ALWAYS_ALLOWED})


def _chip(decision: Decision) -> str:
    """The chip's words, as the widget's (``decisionChips``): a click names who made it."""
    who = decision.who.name if decision.who is not None and decision.by == "user" else None
    if decision.detail in _DETAIL_LABELS and who is None:
        return decision.detail or ""
    return decision.action + (
        " by policy" if decision.by == "policy" else f" by {who}" if who else ""
    )


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _div(cls: str, inner: str) -> str:
    style = _STYLES.get(cls.split()[0])
    styled = f' style="{style}"' if style else ""
    return f'<div class="{cls}"{styled}>{inner}</div>'


# Inline, so the fallback reads like the widget where no stylesheet comes with it (nbconvert,
# VS Code); colors that work on light and dark backgrounds. Sanitizers that drop styles (GitHub)
# leave the same structure.
_STYLES = {
    "jt-request": "border-left:3px solid #8888;padding:2px 10px;margin:6px 0",
    "jt-who": "font-size:85%;opacity:.7",
    "jt-tool": "border:1px solid #8886;border-radius:6px;padding:4px 10px;margin:6px 0",
    "jt-tool-head": "font-family:monospace",
    "jt-notice": "opacity:.75;font-style:italic;margin:4px 0",
    "jt-error": "color:#c33;margin:4px 0",
    "jt-opaque": "opacity:.6;font-size:90%",
    "jt-partial": "opacity:.6;font-style:italic",
}


def markdown_html(text: str) -> str:
    """Model, tool or user markdown as HTML: rendered without raw HTML, then cleaned (an
    exported transcript is shown this way too)."""
    rendered = _MARKDOWN.render(text)
    return nh3.clean(rendered, tags=_ALLOWED_TAGS, url_schemes={"http", "https", "mailto"})


def _fold(summary: str, inner: str, *, open_: bool = False) -> str:
    flag = " open" if open_ else ""
    return f"<details{flag}><summary>{_esc(summary)}</summary>{inner}</details>"


def _pre(label: str, text: str) -> str:
    """Tool arguments or a result: open when short, like the widget's cards."""
    short = len(text) <= _SHORT and text.count("\n") < 12
    return _fold(f"{label} · {len(text):,} chars", f"<pre>{_esc(text)}</pre>", open_=short)
