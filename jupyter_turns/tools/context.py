"""ToolContext: what a running tool may use — its cancellation token, progress, and questions.

A tool gets it by declaring a parameter annotated ``ToolContext``. ``await ctx.ask(...)`` puts a
question to the user mid-run (recorded as inquiry events); ``ctx.progress(text)`` adds a line to
the tool's card; long loops should check ``ctx.cancelled`` or ``await ctx.token.wait()``.
``ctx.fields`` holds fields saved on the call's response however the call ends — a result, a
raise, or Stop (a sub-agent's usage: tokens spent are spent even when nothing is returned).
``ctx.origin`` is the turn the call runs in and ``ctx.approver`` who approved it: what a cell
tool stamps on the cell it changes (:mod:`jupyter_turns.model.provenance`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.interrupt import CancelToken
from .results import ResponseFields

if TYPE_CHECKING:
    from ..model.events import ConversationEvent, Decision, Who
    from ..model.prompter import Prompter
    from ..model.provenance import TurnOrigin
    from ..model.sink import Sink
    from .executor import ExecutionSettings

__all__ = ["Nest", "ToolContext"]


@dataclass(frozen=True)
class Nest:
    """What a tool that runs its own turn (a sub-agent) shares with the turn that called it:
    ``record`` adds an event to the calling turn (the sub-agent's events, marked ``parent``),
    its prompter answers the sub-agent's prompts with the same buttons, its sink draws them,
    and its settings give the default run mode, the "always allow" decisions and the
    provider."""

    record: Callable[[ConversationEvent], None]
    prompter: Prompter
    sink: Sink
    settings: ExecutionSettings


class ToolContext:
    def __init__(
        self,
        call_id: str,
        name: str,
        token: CancelToken,
        ask: Callable[[str, Sequence[str] | None], Awaitable[str | None]],
        progress: Callable[[str], None],
        nest: Nest | None = None,
        fields: ResponseFields | None = None,
        *,
        origin: TurnOrigin | None = None,
        decisions: Sequence[Decision] = (),
    ) -> None:
        self.nest = nest  # for sub-agents (see :func:`jupyter_turns.engine.subagent`)
        self.fields = ResponseFields() if fields is None else fields  # the executor's, shared
        self.call_id = call_id
        self.name = name
        self.token = token
        self._ask = ask
        self._progress = progress
        self.origin = origin  # the turn this call runs in (None: a Chat that names none)
        self._decisions = decisions  # the executor's, as they are made

    @property
    def approver(self) -> Who | None:
        """Who approved this call, as their page said (None: a policy, or a page that named
        nobody)."""
        approving = ("approved", "edited", "always_allowed")
        for decision in reversed(self._decisions):
            if decision.by == "user" and decision.action in approving:
                return decision.who
        return None

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled

    async def ask(self, question: str, choices: Sequence[str] | None = None) -> str | None:
        """Ask the user a question and wait for the answer.

        Returns ``None`` when nobody can answer (a headless run: nbclient, nbval, ``jupyter
        execute``, or a script whose prompter has no answer), so a tool can tell "no answer"
        from an empty one and choose its safe path.
        """
        return await self._ask(question, choices)

    def progress(self, text: str) -> None:
        self._progress(str(text))
