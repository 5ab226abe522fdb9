"""Before a turn: the admin's limits on providers and models, and what a change of provider
tells the user.

``ChatMagics.allowed_providers`` / ``ChatMagics.allowed_models`` are the user's (or the
administrator's) own configuration. They are checked on every cell against the provider and
model the cell would use, wherever those came from (an option, the thread, a notebook's saved
settings, even granted ones), so nothing read from a file widens them.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ..model.events import ConversationEvent, is_scripted
from ..providers.catalog import KINDS, ProviderChoice, default_model, not_carried
from ..text import plural

if TYPE_CHECKING:
    from .threads import Thread

__all__ = ["check_allowed", "switch_notes"]

_WRITTEN = ("reasoning", "message", "block", "tool_call_request")  # what a provider writes


def check_allowed(choice: ProviderChoice, providers: Sequence[str], models: Sequence[str]) -> None:
    """Raise UsageError when ``choice`` is outside the configured limits (empty: no limit)."""
    if providers and choice.kind not in providers:
        raise UsageError(
            f"the provider {choice.kind!r} is not allowed here: ChatMagics.allowed_providers is "
            f"{', '.join(providers)} (set by your configuration; a notebook cannot change it)"
        )
    limited = models and choice.kind != "scripted" and choice.model is not None
    if limited and not any(fnmatchcase(str(choice.model), pattern) for pattern in models):
        raise UsageError(
            f"the model {choice.model!r} is not allowed here: ChatMagics.allowed_models is "
            f"{', '.join(models)} (set by your configuration; choose one with --model)"
        )


def switch_notes(thread: Thread | None, choice: ProviderChoice) -> list[str]:
    """What a thread whose conversation began with another provider, or whose last answer a
    script played, is told when ``choice`` takes over: the history goes along, converted;
    another API's reasoning stays behind. Said once: at the cell where it changes."""
    if thread is None or not thread.configured or choice.kind == "scripted":
        return []
    events = thread.chat.conversation.events
    after = KINDS[choice.kind].label
    if thread.provider != choice.kind and events:
        before = KINDS[thread.provider].label
        note = f"This thread now uses {after} (it was {before}): "
    elif _last_answer_scripted(events):
        model = choice.model or default_model(choice.kind)
        named = f"{after}, {model}" if model else after
        note = f"A script played this thread's last turn; this cell goes to {named}: "
    else:
        return []
    note += _goes_along(events, after)
    dropped = not_carried(events, choice.kind)
    if dropped:
        note += (
            f" Reasoning from another provider ({plural(dropped, 'block')}) is kept in the "
            "notebook but not sent: a provider cannot read another's reasoning. Switching "
            "back sends it again."
        )
    return [note]


def _last_answer_scripted(events: Sequence[ConversationEvent]) -> bool:
    """Whether the last answer of the thread (its reasoning, message or tool call) came from
    the scripted provider."""
    written = [e for e in events if e.parent is None and e.kind in _WRITTEN]
    return bool(written) and is_scripted(written[-1])


def _goes_along(events: Sequence[ConversationEvent], after: str) -> str:
    """What of the conversation the new provider is sent: all of it, as text, tool calls and
    results, and images; but never what the scripted provider wrote (``engine.window.
    unscripted``): of those turns only the user's own requests."""
    top = [event for event in events if event.parent is None]
    scripted = [event for event in top if is_scripted(event)]
    if not scripted:
        return "the conversation goes along as text, tool calls and results, and images."
    answers = sum(1 for event in scripted if event.kind == "message")
    calls = sum(1 for event in scripted if event.kind == "tool_call_request")
    wrote = " and ".join(
        plural(count, word) for count, word in ((answers, "answer"), (calls, "tool call")) if count
    )
    asked = sum(1 for event in top if event.kind == "chat_request")
    requests = f"{plural(asked, 'request')} {'goes' if asked == 1 else 'go'}"
    rest = len(scripted) < sum(1 for event in top if event.kind in _WRITTEN)
    return (
        f"what the scripted provider wrote ({wrote or 'its blocks'}) is not sent to {after}, "
        f"since no model wrote it; your own {requests} along"
        + (", and the rest of the conversation as text, tool calls and results" if rest else "")
        + ". `%%chat --new` starts a thread without them."
    )
