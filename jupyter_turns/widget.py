"""ChatWidget (anywidget): the synced state a view draws, and the button prompter.

Kernel -> page: durable state lives in synced traits (``events``, ``tools``, ``prompts``,
``status``, ``usage``, ``settings``), which a fresh view draws at once; the live tail (the
unflushed draft, new tool output lines) streams as small custom messages, coalesced by the
:class:`~jupyter_turns.widget_sink.WidgetSink`. Page -> kernel: every click is a custom message
(never a trait write, see DESIGN §4); comm handlers may run on a subshell thread, so each message
is handed to the turn's loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .interrupt import InterruptAction, InterruptChoice, InterruptContext
from .loops import call_soon_on
from .prompter import (
    Approval,
    ApprovalRequest,
    InquiryAnswer,
    InquiryPrompt,
    PolicyPrompter,
    Prompter,
    ResultDecision,
    ResultReview,
)
from .widget_sink import WidgetSink

__all__ = ["ChatWidget", "WidgetPrompter", "WidgetSink"]

_STATIC = Path(__file__).parent / "static"
_ids = itertools.count(1)


_MISSING = (
    "export default { render({ el }) { el.textContent = "
    "'jupyter_turns: the widget bundle is missing; reinstall the package (pip install .)'; } }"
)

# A small module that imports the full bundle from the lab extension's static files, so a
# widget does not carry the ~120 KB bundle in its comm message and in saved widget state.
_LOADER = """
const FILE = "jupyter_turns/static/jupyter-turns-widget.js?v=__VERSION__";
let loading;
function base() {
  const node = document.getElementById("jupyter-config-data");
  if (!node) return null;
  const config = JSON.parse(node.textContent || "{}");
  if (config.fullLabextensionsUrl) return config.fullLabextensionsUrl.replace(/\\/$/, "");
  return config.baseUrl ? config.baseUrl.replace(/\\/$/, "") + "/lab/extensions" : null;
}
function load() {
  const root = base();
  if (!root) return Promise.reject(new Error("not in JupyterLab or Notebook 7"));
  // the ESM runs from a blob: URL, so the path must be made absolute against the page
  const url = new URL(`${root}/${FILE}`, document.baseURI).href;
  return import(/* @vite-ignore */ url).then((m) => m.default);
}
export default {
  async initialize(context) {
    loading ??= load();
    const widget = await loading.catch(() => null);
    return widget?.initialize?.(context);
  },
  async render(context) {
    loading ??= load();
    try {
      return (await loading).render(context);
    } catch (error) {
      context.el.textContent =
        "jupyter_turns: the chat view needs the jupyter_turns JupyterLab extension " +
        "(pip install jupyter_turns, then reload the page). The saved transcript is below.";
    }
  },
};
"""


def widget_source(inline: bool) -> str:
    """The ESM a ChatWidget sends: the full bundle, or the loader of the extension's copy."""
    bundle = _STATIC / "widget.js"
    if not bundle.exists():
        return _MISSING
    data = bundle.read_bytes()
    if inline:
        return data.decode()
    version = hashlib.sha256(data).hexdigest()[:12]
    return _LOADER.replace("__VERSION__", version)


class ChatWidget(anywidget.AnyWidget):
    """One cell's turn: its events, live tool status, open prompts, status, usage, settings."""

    events: traitlets.List[Any] = traitlets.List().tag(sync=True)
    tools = traitlets.Dict().tag(sync=True)
    prompts: traitlets.List[Any] = traitlets.List().tag(sync=True)
    status: traitlets.Dict[str, Any] = traitlets.Dict({"state": "idle", "retry": None}).tag(
        sync=True
    )
    usage = traitlets.Dict().tag(sync=True)
    settings = traitlets.Dict().tag(sync=True)

    def __init__(self, *, thread: str = "main", inline: bool = False, **kwargs: Any) -> None:
        """``inline`` ships the whole front end in the widget (frontends without the lab
        extension, e.g. VS Code); otherwise a loader fetches it from the extension."""
        self._esm = widget_source(inline)
        super().__init__(**kwargs)
        self.thread = thread
        self.ready = False  # a view has rendered and said so
        self._ready_waiters: list[asyncio.Future[None]] = []
        self._handlers: dict[str, list[Callable[[dict[str, Any]], None]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.on_msg(self._on_custom)
        self.handle("ready", self._on_ready)

    def __repr__(self) -> str:  # stable text/plain (no memory address) for nbval
        return f"ChatWidget(thread={self.thread!r})"

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def handle(self, kind: str, handler: Callable[[dict[str, Any]], None]) -> None:
        """Run ``handler(message)`` on the bound loop for each page message of ``kind``."""
        self._handlers.setdefault(kind, []).append(handler)

    async def wait_ready(self, seconds: float) -> bool:
        """Whether a view renders (and says ready) within ``seconds``."""
        if self.ready:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ready_waiters.append(future)
        try:
            await asyncio.wait_for(future, seconds)
        except TimeoutError:
            return False
        finally:
            if future in self._ready_waiters:
                self._ready_waiters.remove(future)
        return True

    def _on_ready(self, _message: dict[str, Any]) -> None:
        self.ready = True
        for future in self._ready_waiters:
            if not future.done():
                future.set_result(None)

    def _on_custom(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and not call_soon_on(self._loop, self._dispatch, content):
            self._dispatch(content)  # not bound to a turn's loop (tests, a closed loop)

    def _dispatch(self, content: dict[str, Any]) -> None:
        for handler in self._handlers.get(str(content.get("type")), ()):
            handler(content)


class WidgetPrompter:
    """Asks through the widget's buttons; ``fallback`` answers when nobody can click.

    A prompt is a dict in the ``prompts`` trait with a unique id; the answer must name that id,
    so a stale or repeated click (another widget, an earlier turn, a double click) is ignored.
    ``interactive()`` decides per prompt whether to wait for a click or use the fallback policy.
    """

    def __init__(
        self,
        widget: ChatWidget,
        fallback: Prompter | None = None,
        *,
        interactive: Callable[[], Awaitable[bool]] | None = None,
        before_prompt: Callable[[], None] | None = None,
    ) -> None:
        self.widget = widget
        self.fallback = fallback or PolicyPrompter()
        self.interactive = interactive or _always
        self.before_prompt = before_prompt  # e.g. the sink's flush: show the call before asking
        self._open: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self.ignored: list[dict[str, Any]] = []  # answers that matched no open prompt
        for kind in ("approval", "result", "inquiry", "menu"):
            widget.handle(kind, self._on_answer)

    async def _ask(self, prompt: dict[str, Any]) -> dict[str, Any]:
        prompt_id = f"p{next(_ids)}-{id(self):x}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self.before_prompt is not None:
            self.before_prompt()
        answer_type = "menu" if prompt["type"] == "interrupt" else prompt["type"]
        self._open[prompt_id] = (answer_type, future)
        self.widget.prompts = [*self.widget.prompts, {**prompt, "id": prompt_id}]
        try:
            return await future
        finally:
            self._open.pop(prompt_id, None)
            self.widget.prompts = [p for p in self.widget.prompts if p.get("id") != prompt_id]

    def _on_answer(self, message: dict[str, Any]) -> None:
        """Resolve the open prompt this answer names, if the answer is of the prompt's kind."""
        prompt_id = str(message.get("prompt_id"))
        entry = self._open.get(prompt_id)
        if entry is None or entry[0] != message.get("type") or entry[1].done():
            self.ignored.append(message)
            return
        del self._open[prompt_id]
        entry[1].set_result(message)

    async def approve(self, request: ApprovalRequest) -> Approval:
        if not await self.interactive():
            return await self.fallback.approve(request)
        while True:
            answer = await self._ask(
                {
                    "type": "approval",
                    "call_id": request.call_id,
                    "name": request.name,
                    "arguments": request.arguments,
                    "schema": request.schema,
                    "description": request.description,
                    "edit_first": request.edit_first,
                    "error": request.error,
                }
            )
            action = answer.get("action")
            if action in ("approve", "skip", "always_allow"):
                return Approval(action)
            if action == "edit" and isinstance(answer.get("arguments"), dict):
                return Approval("edit", arguments=answer["arguments"])
            request = _with_error(request, "the edit did not send a JSON object")

    async def review_result(self, review: ResultReview) -> ResultDecision:
        if not await self.interactive():
            return await self.fallback.review_result(review)
        answer = await self._ask(
            {
                "type": "result",
                "call_id": review.call_id,
                "name": review.name,
                "content": review.content,
                "is_error": review.is_error,
                "edit_first": review.edit_first,
            }
        )
        action = answer.get("action")
        if action == "edit" and isinstance(answer.get("content"), str):
            return ResultDecision("edit", content=answer["content"])
        return ResultDecision("deliver" if action == "deliver" else "skip")

    async def inquire(self, inquiry: InquiryPrompt) -> InquiryAnswer:
        if not await self.interactive():
            return await self.fallback.inquire(inquiry)
        answer = await self._ask(
            {
                "type": "inquiry",
                "call_id": inquiry.call_id,
                "question": inquiry.question,
                "choices": list(inquiry.choices) if inquiry.choices else None,
            }
        )
        return InquiryAnswer(str(answer.get("answer", "")))

    async def interrupt_menu(self, context: InterruptContext) -> InterruptChoice:
        if not await self.interactive():
            return await self.fallback.interrupt_menu(context)
        while True:
            answer = await self._ask(
                {
                    "type": "interrupt",
                    "context": context.where,
                    "stream_alive": context.stream_alive,
                    "reason": context.reason,
                }
            )
            try:
                choice = InterruptChoice(
                    InterruptAction(answer.get("action")), str(answer.get("text") or "")
                )
            except ValueError:
                continue  # an unknown action or a Reply without text: ask again
            if choice.valid_in(context):
                return choice


async def _always() -> bool:
    return True


def _with_error(request: ApprovalRequest, error: str) -> ApprovalRequest:
    return ApprovalRequest(
        request.call_id,
        request.name,
        request.arguments,
        request.schema,
        request.description,
        request.edit_first,
        error,
    )
