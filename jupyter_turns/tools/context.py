"""ToolContext: what a running tool may use — its cancellation token, progress, and questions.

A tool gets it by declaring a parameter annotated ``ToolContext``. ``await ctx.ask(...)`` puts a
question to the user mid-run (recorded as inquiry events); ``ctx.progress(text)`` adds a line to
the tool's card; long loops should check ``ctx.cancelled`` or ``await ctx.token.wait()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from ..interrupt import CancelToken

__all__ = ["ToolContext"]


class ToolContext:
    def __init__(
        self,
        call_id: str,
        name: str,
        token: CancelToken,
        ask: Callable[[str, Sequence[str] | None], Awaitable[str | None]],
        progress: Callable[[str], None],
    ) -> None:
        self.call_id = call_id
        self.name = name
        self.token = token
        self._ask = ask
        self._progress = progress

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
