"""ThreadConfig: a thread's settings, in the one shape every layer passes around.

A thread's settings used to be copied field by field between the magic's traitlets, the
kernel's per-cell snapshot, ``Chat``'s attributes and the turn's config. Now there is one frozen
value: :class:`~jupyter_turns.engine.chat.Chat` holds it (``chat.config``), a cell's options and
``%chat`` commands derive a new one with :func:`dataclasses.replace`, and each turn reads it
from :class:`~jupyter_turns.engine.turn_state.TurnConfig` (``config.thread``). What is saved in
the notebook is a different thing on purpose: the validated, signed
:class:`~jupyter_turns.record.thread_settings.ThreadSettings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from ..providers.base import Thinking
from ..tools.registry import EditsMode, RunMode
from .cache_life import CacheTtl
from .compaction import DEFAULT_COMPACT_AT
from .retry import RetryPolicy

__all__ = ["DEFAULT_MAX_CYCLES", "Thinking", "ThreadConfig", "ThreadOptions"]

DEFAULT_MAX_CYCLES = 25  # requests per turn before a runaway tool loop is stopped


@dataclass(frozen=True)
class ThreadConfig:
    """What one thread's turns run with; the defaults are ``Chat()``'s.

    ``run_mode`` is the default for tools that declare none (see ``RunMode``); ``edits`` how
    the model's cell changes are approved (see ``EditsMode``); ``budget_usd``
    pauses a turn before a request that would spend past it, ``session_budget_usd`` the same over
    the session's ledger; ``compact_at`` is a share of the model's window, or tokens (0: off);
    ``cancel_grace`` is how long a cancelled tool gets to finish before it is abandoned;
    ``cache_ttl`` how long the prompt cache keeps the thread (:mod:`.cache_life`).
    """

    model: str | None = None
    system: str | None = None
    max_tokens: int | None = None
    thinking: Thinking = "adaptive"
    run_mode: RunMode = "ask"
    edits: EditsMode = "ask"
    max_cycles: int = DEFAULT_MAX_CYCLES
    sequential_tools: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    cancel_grace: float = 2.0
    budget_usd: float | None = None
    session_budget_usd: float | None = None
    compact_at: float | None = DEFAULT_COMPACT_AT
    cache_ttl: CacheTtl = "auto"

    def __post_init__(self) -> None:
        if self.max_cycles < 1:
            raise ValueError("max_cycles must be at least 1")


class ThreadOptions(TypedDict, total=False):
    """:class:`ThreadConfig`'s fields as keywords (``Chat(model=..., max_cycles=...)``): the
    same names, checked by mypy and, against the dataclass, by tests/unit/test_thread_config.py.
    """

    model: str | None
    system: str | None
    max_tokens: int | None
    thinking: Thinking
    run_mode: RunMode
    edits: EditsMode
    max_cycles: int
    sequential_tools: bool
    retry: RetryPolicy
    cancel_grace: float
    budget_usd: float | None
    session_budget_usd: float | None
    compact_at: float | None
    cache_ttl: CacheTtl
