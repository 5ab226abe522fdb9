"""``%chat compact``, ``%chat forget N``, ``%chat cost`` and the context gauge of ``%chat threads``.

``compact`` and ``forget`` change what the thread's *next* request sends (the summary request
goes first in that turn, the forget notice joins the thread with it), so what they did is saved
in that turn's record and restored with the thread (docs/architecture.md, "Long threads").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ..engine.window import exchanges, gauge
from ..model.budget import format_usd
from ..model.events import API_KINDS, Usage
from ..text import plural

if TYPE_CHECKING:
    from .session import CellSettings, Session
    from .threads import Thread

__all__ = ["COMMANDS", "context_line", "run"]

COMMANDS = ("compact", "forget", "cost")


def context_line(thread: Thread) -> str:
    """``context 41k / 200k`` for ``%chat threads`` (empty when nothing is known)."""
    chat = thread.chat
    shown = gauge(chat.context_tokens, chat.context_window)
    line = f"context {shown}" if shown else ""
    pending = []
    if chat.compact_next:
        pending.append("compacts before its next request")
    if chat.pending_notes:
        pending.append("forgets exchanges with its next request")
    if pending:
        line = f"{line} ({'; '.join(pending)})" if line else "; ".join(pending)
    return line


def run(session: Session, settings: CellSettings, command: str, args: list[str]) -> None:
    threads = session.threads
    if command == "cost":
        _cost(session, settings)
        return
    name = threads.current
    thread = threads.by_name.get(name)
    if thread is None:
        raise UsageError("no thread yet: run a %%chat cell first")
    chat = thread.chat
    if command == "compact":
        if not any(e.kind in API_KINDS for e in chat.conversation.events):
            print(f"Nothing to compact in thread {name!r} yet.")
            return
        chat.compact()
        print(
            f"Thread {name!r} will be summarized by the API (server-side compaction) before its "
            f"next request; {context_line(thread)}. The summary is then sent in place of the "
            "earlier conversation, which stays in the notebook."
        )
        return
    if len(args) != 1 or not args[0].isdigit():
        raise UsageError("usage: %chat forget N (stop sending the oldest N exchanges)")
    try:
        notice = chat.forget(int(args[0]))
    except ValueError as exc:
        raise UsageError(f"%chat forget: {exc}") from None
    print(f"Thread {name!r}: {notice.text} This takes effect with its next request.")


def _cost(session: Session, settings: CellSettings) -> None:
    ledger = session.ledger
    if not ledger.threads:
        print("Nothing spent in this kernel session yet.")
    for name, spend in ledger.threads.items():
        unpriced = f"; {plural(spend.unpriced, 'turn')} without a price" if spend.unpriced else ""
        print(
            f"{name}: {format_usd(spend.cost_usd)} (USD) in {plural(spend.turns, 'turn')} "
            f"— tokens: {_tokens(spend.usage)}{unpriced}"
        )
    budget = f" of the session's budget {format_usd(settings.budget_usd)}"
    print(
        f"session: {format_usd(ledger.total)} (USD){budget if settings.budget_usd else ''} — "
        "estimates from the model table's list prices, not a bill."
    )
    sending = [
        f"{name}: {plural(len(exchanges(t.chat.conversation.events)), 'exchange')}"
        for name, t in session.threads.by_name.items()
    ]
    if sending:
        print(
            "What each thread's next request sends (an exchange: a request and its answers): "
            + "; ".join(sending)
            + "."
        )


def _tokens(usage: Usage) -> str:
    """``1,000 in · 20 out · 900 cache read``: token counts, each with what it counted."""
    parts = [f"{usage.input_tokens:,} in", f"{usage.output_tokens:,} out"]
    if usage.cache_read_input_tokens:
        parts.append(f"{usage.cache_read_input_tokens:,} cache read")
    if usage.cache_creation_input_tokens:
        hour = usage.cache_creation_1h_input_tokens
        kept = f" ({hour:,} kept 1 h)" if hour else ""
        parts.append(f"{usage.cache_creation_input_tokens:,} cache write{kept}")
    return " · ".join(parts)
