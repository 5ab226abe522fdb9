"""Before a turn: the admin's limits on providers and models, and what a change of provider
tells the user.

``ChatMagics.allowed_providers`` / ``ChatMagics.allowed_models`` are the user's (or the
administrator's) own configuration. They are checked on every cell against the provider and
model the cell would use, wherever those came from (an option, the thread, a notebook's saved
settings, even signed ones), so nothing read from a file widens them.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ..providers.catalog import KINDS, ProviderChoice, not_carried
from ..text import plural

if TYPE_CHECKING:
    from .threads import Thread

__all__ = ["check_allowed", "switch_notes"]


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
    """What a thread whose conversation began with another provider is told when ``choice``
    takes over: the history goes along, converted; another API's reasoning stays behind."""
    if thread is None or not thread.configured or thread.provider == choice.kind:
        return []
    events = thread.chat.conversation.events
    if choice.kind == "scripted" or not events:
        return []
    before, after = KINDS[thread.provider].label, KINDS[choice.kind].label
    note = (
        f"This thread now uses {after} (it was {before}): the conversation goes along as "
        "text, tool calls and results, and images."
    )
    dropped = not_carried(events, choice.kind)
    if dropped:
        note += (
            f" Reasoning from another provider ({plural(dropped, 'block')}) is kept in the "
            "notebook but not sent: a provider cannot read another's reasoning. Switching "
            "back sends it again."
        )
    return [note]
