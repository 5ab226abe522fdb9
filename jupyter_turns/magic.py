"""``%%chat`` and ``%chat``: options, settings, the await transformer and the kernel interrupt.

The cell magic returns a coroutine and an input transformer rewrites the cell's
``get_ipython().run_cell_magic('chat', ...)`` into ``await ...``, so the turn runs on the
kernel's own loop and the cell stays busy until it ends (ipykernel >= 7.4 then still delivers
widget clicks). During a turn a SIGINT handler turns the first kernel interrupt into the
interrupt menu and a second one (while the menu is open) into a hard abort of the cell.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import shlex
import signal
import sys
from collections.abc import Coroutine, Iterator
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Enum, Float, Int, Unicode

from . import commands
from .chat import Chat
from .errors import ProviderConfigError
from .kernel_status import busy_while_running
from .loops import call_soon_on
from .session import CellSettings, Session
from .sink import PrintSink
from .thread_settings import DISPLAY_PATTERN
from .threads import ProviderKey, Thread, Threads, namespace_tools
from .tools.builtin import BUILTINS
from .turn import TurnState

__all__ = ["ChatMagics", "await_chat_cells", "chat_help_as_output", "load_ipython_extension"]

_REASONING = re.compile(DISPLAY_PATTERN)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%%chat", add_help=False, exit_on_error=False)
    parser.add_argument("--new", action="store_true")
    parser.add_argument("--thread")
    parser.add_argument("--model")
    parser.add_argument("--provider", choices=("anthropic", "scripted"))
    parser.add_argument("--script")
    parser.add_argument("--tools", choices=("ask", "unattended", "deny"))
    parser.add_argument("--reasoning")
    parser.add_argument("--thinking")
    parser.add_argument("--max-cycles", type=int)
    parser.add_argument("--system")
    parser.add_argument("--use")
    parser.add_argument("--builtins")
    parser.add_argument("--sequential", action="store_true")
    return parser


@magics_class
class ChatMagics(Magics):
    """Settings are traitlets: ``%config ChatMagics.model = "claude-sonnet-5-5"``."""

    provider = Enum(
        ("anthropic", "scripted"), "anthropic", help="Default provider of new threads."
    ).tag(config=True)
    model = Unicode("", help="Default model (empty: the provider's default).").tag(config=True)
    tools = Enum(("ask", "unattended", "deny"), "ask", help="Default tool run mode.").tag(
        config=True
    )
    reasoning = Unicode(
        "full", help="How reasoning shows: full, hidden, truncate:N, progress, static."
    ).tag(config=True)
    thinking = Unicode("adaptive", help="Ask for thinking: off, adaptive, or a token budget.").tag(
        config=True
    )
    max_cycles = Int(25, help="Cycles a turn may take before it stops.").tag(config=True)
    system = Unicode("", help="System prompt of new threads.").tag(config=True)
    headless = Enum(
        ("auto", "deny", "allow"),
        "auto",
        help="Prompts with nobody to click: auto (deny unless --tools unattended), deny, allow.",
    ).tag(config=True)
    headless_results = Enum(
        ("withhold", "deliver"),
        "withhold",
        help='Results of result="ask" tools with nobody to review them: withhold (the model is '
        "told why) or deliver. Set by you only: a notebook's saved settings never change it.",
    ).tag(config=True)
    view_timeout = Float(
        5.0, help="Seconds to wait for the widget to render before treating the run as headless."
    ).tag(config=True)
    max_rate = Float(10.0, help="Most draft messages per second sent to the widget.").tag(
        config=True
    )
    inline_widget = Bool(
        False,
        help="Ship the widget's code inside each widget instead of loading it from the lab "
        "extension (automatic in VS Code).",
    ).tag(config=True)

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.session = Session(Threads(self._new_chat), shell.user_ns)
        shell.events.register("pre_run_cell", self._pre_run_cell)

    def settings(self) -> CellSettings:
        """The settings as they are now (``%config`` may change them between cells)."""
        return CellSettings.of(self)

    def _new_chat(self) -> Chat:
        return Chat(
            system=self.system or None,
            run_mode=self.tools,  # type: ignore[arg-type]
            max_cycles=self.max_cycles,
            thinking=_thinking(self.thinking),
        )

    def _pre_run_cell(self, info: Any) -> None:
        self.session.cell_id = getattr(info, "cell_id", None)

    @line_cell_magic
    def chat(self, line: str, cell: str | None = None) -> Any:
        """Chat with Claude in this notebook.

        %%chat [options]      the cell body is your request; the answer streams below
          --new               start a new thread       --thread NAME   use (or create) a thread
          --provider anthropic|scripted   --model NAME --script VAR (a ScriptedProvider)
          --tools ask|unattended|deny     default run mode of tools without their own
          --reasoning full|hidden|truncate:N|progress|static   --thinking off|adaptive|N
          --max-cycles N      --system TEXT     --sequential (run tools one at a time)
          --use a,b           only these @tool functions (default: every @tool in the notebook)
          --builtins python,inspect          enable kernel tools for this thread

        %chat threads | new [NAME] | use NAME | history [NAME] | settings | key
        %chat allow TOOL | revoke TOOL | restore [PATH] | trust [--apply] | export [NAME] [PATH]

        Options stick to the thread. Defaults: %config ChatMagics.<setting> = value
        (provider, model, tools, reasoning, thinking, max_cycles, system, headless).
        """
        if cell is None:
            help_text = type(self).chat.__doc__
            return commands.run(self.session, self.settings(), line, help_text=help_text)
        return self._turn(line, cell)

    # ------------------------------------------------------------------ one turn

    def _turn(self, line: str, body: str) -> Coroutine[Any, Any, None]:
        """Check every option first, then change the session: a failed cell changes nothing."""
        options = self._options(line)
        if not body.strip():
            raise UsageError("%%chat: the cell is empty; write your request below the %%chat line")
        session = self.session
        if not session.restore_tried:
            session.restore_tried = True
            if not session.threads.by_name:  # a restarted kernel picks up the saved threads
                commands.restore(session, self.settings(), None, verbose=False)
        threads, namespace = session.threads, session.namespace
        name = options.thread or (threads.fresh_name() if options.new else threads.current)
        existing = None if options.new else threads.by_name.get(name)
        key = self._provider_key(existing, options)
        try:
            provider = threads.provider_for(name, key, namespace)
        except ProviderConfigError as exc:
            raise UsageError(str(exc)) from None
        builtins = (existing.builtins if existing else set()) | options.builtins
        only = [n.strip() for n in options.use.split(",")] if options.use else None
        tools = namespace_tools(namespace, only, builtins)
        if only is not None:
            missing = sorted(set(only) - {t.name for t in tools})
            if missing:
                raise UsageError(f"--use: no @tool named {', '.join(missing)} in the notebook")
        thread = threads.get(name, new=options.new)
        self._apply(thread, options, key)
        threads.use_provider(thread, provider)
        thread.chat.tools = {t.name: t for t in tools}
        return self._run(thread, body.strip())

    async def _run(self, thread: Thread, body: str) -> None:
        from .front import CellFront

        chat = thread.chat
        loop = asyncio.get_running_loop()
        if getattr(self.shell, "kernel", None) is None:  # plain IPython: print instead
            chat.sink = PrintSink()
            await chat.send(body)
            return
        with busy_while_running(getattr(self.shell, "kernel", None)):  # before the widget opens
            front = CellFront(self.session, self.settings(), thread, loop)
            front.show()
            with _sigint(chat, loop):
                try:
                    await chat.send(body)
                finally:
                    front.close()

    def _options(self, line: str) -> argparse.Namespace:
        """Parse and check the cell's options; values come back normalized."""
        try:
            options = _parser().parse_args(shlex.split(line))
        except (argparse.ArgumentError, ValueError) as exc:
            raise UsageError(f"%%chat: {exc}. See %chat? for the options.") from None
        except SystemExit:
            raise UsageError("%%chat: bad options. See %chat? for the options.") from None
        if options.reasoning and not _REASONING.match(options.reasoning):
            raise UsageError("--reasoning must be full, hidden, truncate:N, progress or static")
        if options.thinking is not None:
            options.thinking = _thinking(options.thinking)
        if options.max_cycles is not None and options.max_cycles < 1:
            raise UsageError(f"--max-cycles must be 1 or more, not {options.max_cycles}")
        names = {n.strip() for n in (options.builtins or "").split(",") if n.strip()}
        unknown = names - set(BUILTINS)
        if unknown:
            raise UsageError(
                f"--builtins: unknown {', '.join(sorted(unknown))} "
                f"(built-in tools: {', '.join(sorted(BUILTINS))})"
            )
        options.builtins = names
        return options

    def _provider_key(self, thread: Thread | None, options: argparse.Namespace) -> ProviderKey:
        """Which provider the cell asks for: the thread's, or the defaults, with the options."""
        if thread is not None and thread.configured:
            kind, model, script = thread.provider_key
        else:
            kind, model, script = self.provider, self.model or None, None
        if options.script:
            kind, script = options.provider or "scripted", options.script
        elif options.provider:
            kind = options.provider
        return (kind, options.model or model, script)

    def _apply(self, thread: Thread, options: argparse.Namespace, key: ProviderKey) -> None:
        """Cell options stick to the thread; a new thread starts from the configured defaults."""
        if not thread.configured:
            thread.reasoning = self.reasoning
            thread.configured = True
        thread.provider, thread.model, thread.script = key
        chat = thread.chat
        if options.tools:
            chat.execution.default_run = options.tools
        if options.reasoning:
            thread.reasoning = options.reasoning
        if options.thinking is not None:
            chat.thinking = options.thinking
        if options.max_cycles is not None:
            chat.max_cycles = options.max_cycles
        if options.system is not None:
            chat.system = options.system or None
        thread.builtins |= options.builtins
        chat.sequential_tools = options.sequential


def _thinking(value: str) -> Any:
    value = value.strip().lower()
    if value in ("off", "adaptive"):
        return value
    if value.isdigit():
        return int(value)
    raise UsageError("--thinking must be off, adaptive or a token budget")


@contextlib.contextmanager
def _sigint(chat: Chat, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """First interrupt opens the menu; a second one while it is open aborts the cell."""
    try:
        previous = signal.getsignal(signal.SIGINT)
        installed = True

        def handler(signum: int, frame: Any) -> None:
            turn = chat.turn
            menu_open = turn is not None and turn.state in (
                TurnState.INTERRUPTED_STREAMING,
                TurnState.INTERRUPTED_TOOL,
            )
            if not menu_open:
                call_soon_on(loop, chat.interrupt)
                return
            try:
                if callable(previous):
                    previous(signum, frame)
            finally:
                call_soon_on(loop, lambda: None)  # wake a sleeping loop

        signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: no signal handling for this turn
        installed = False
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGINT, previous)


_CHAT_CALL = re.compile(r"^(\s*)(get_ipython\(\)\.run_cell_magic\((['\"])chat\3)")


def await_chat_cells(lines: list[str]) -> list[str]:
    """Input transformer: ``get_ipython().run_cell_magic('chat', ...)`` becomes awaited."""
    if lines and _CHAT_CALL.match(lines[0]):
        return [_CHAT_CALL.sub(r"\1await \2", lines[0], count=1), *lines[1:]]
    return lines


_CHAT_HELP = re.compile(
    r"""^\s*get_ipython\(\)\.run_line_magic\((['"])pinfo2?\1, (['"])%%?chat\2\)\s*$"""
)


def chat_help_as_output(lines: list[str]) -> list[str]:
    """Input transformer: ``%chat?`` and ``%%chat?`` print the help as a cell output.

    IPython sends ``?`` help to the pager, which nbclient and ``jupyter execute`` drop.
    """
    if len(lines) == 1 and _CHAT_HELP.match(lines[0]):
        return ["get_ipython().run_line_magic('chat', 'help')\n"]
    return lines


def _check_ipykernel() -> None:
    kernel_module = sys.modules.get("ipykernel")
    if kernel_module is None:
        return
    version = getattr(kernel_module, "__version__", "0")
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    if parts < (7, 4):
        raise ImportError(
            f"jupyter_turns needs ipykernel >= 7.4 (this kernel has {version}): older kernels "
            "cannot deliver button clicks while a cell runs. Run `pip install -U ipykernel` "
            "and restart the kernel."
        )


def load_ipython_extension(ipython: Any) -> None:
    _check_ipykernel()
    for transformer in (await_chat_cells, chat_help_as_output):
        if transformer not in ipython.input_transformers_post:
            ipython.input_transformers_post.append(transformer)
    ipython.register_magics(ChatMagics)
