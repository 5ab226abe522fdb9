"""``%%chat`` and ``%chat``: options, settings, the await transformer and the kernel interrupt.

The cell magic returns a coroutine and an input transformer rewrites the cell's
``get_ipython().run_cell_magic('chat', ...)`` into ``await ...``, so the turn runs on the
kernel's own loop and the cell stays busy until it ends (ipykernel >= 7.4 then still delivers
widget clicks). During a turn a SIGINT handler turns the first kernel interrupt into the
interrupt menu and a second one (while the menu is open) into a hard abort of the cell.

``%load_ext`` costs little (docs/architecture.md, "Loading the extension"): the class needs only
its traitlets and a few light constants, and the session with its threads, the engine, the
saved record and the widget is made when a ``%%chat`` or ``%chat`` first needs it
(:attr:`ChatMagics.session`); each method imports what its step uses.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Enum, Float, Int, List, Unicode

from ..engine.cache_life import CACHE_TTLS
from ..engine.compaction import DEFAULT_COMPACT_AT
from ..errors import ProviderConfigError
from ..kernel_tools.builtin_names import DEFAULT, NAMES, parse_builtins
from ..mcp.settings import McpSettings
from ..providers import endpoints
from ..providers.catalog import KINDS, ProviderChoice
from ..reading.history import KernelHistory
from .cell_hooks import (
    await_chat_cells,
    chat_help_as_output,
    check_ipykernel,
    comms_outlive_subshells,
    keep_cell_parents,
    quiet_subshell_teardown,
    sigint_menu,
)

if TYPE_CHECKING:
    from ..engine.chat import Chat
    from ..model.content import Attachment
    from ..model.events import Notice, Rewind
    from ..providers.base import Provider
    from .persist import MetadataWriter
    from .replay import ReplayPlan
    from .rerun import Rerun
    from .session import CellSettings, Session
    from .threads import Thread

__all__ = [
    "CHAT_HELP",
    "ChatMagics",
    "await_chat_cells",
    "chat_help_as_output",
    "load_ipython_extension",
]

_CHAT = "%chat"  # in a cell's text: a chat cell (``%%chat`` too)

# What `%chat?` and `%chat help` show (the chat magic's docstring is set to it).
CHAT_HELP = """Chat with Claude, OpenAI's models or any OpenAI-compatible server in this notebook.

%%chat [options]      the cell body is your request; the answer streams below
  --new               start a new thread       --thread NAME   use (or create) a thread
  --provider anthropic|openai|openai-chat|ollama|bedrock|vertex|scripted
  --model NAME        --script VAR  this cell plays VAR (a ScriptedProvider or a
                      list of cycles); later cells use the thread's provider
  --base-url URL      the server of openai, openai-chat (e.g. http://localhost:8000/v1),
                      a proxy or private endpoint of bedrock, vertex
  --region NAME       Bedrock's or Vertex's region   --project ID   Vertex's project
  --tools ask|unattended|deny     default run mode of tools without their own
  --edits ask|review  review: the model's cell changes (insert, edit, delete, move)
                      are made without asking, then kept or undone at the turn's end;
                      running code always asks
  --reasoning full|hidden|truncate:N|progress|static   --thinking off|adaptive|N
  --max-cycles N      --system TEXT     --sequential (run tools one at a time)
  --stream on|off     off: plain requests (endpoints that do not stream); without
                      it the thread follows ChatMagics.stream
  --replay-tools run|saved        a replayed cell reruns its tools (asking as usual)
                      or answers with the saved results (recorded, not run)
  --use a,b           only these @tool functions (default: every @tool in the notebook)
  --builtins none|LIST  built-in tools: LIST is added (python, ...); none clears
  --budget USD|off    pause a turn before a request that would spend past USD
  --fix [N|above]     ask about the error of the cell shown as [N] (or above;
                      default: the last that failed): its source, traceback and
                      the failing line's variables go with the request
  --context none|above[:N]  send the cells above (the N nearest; default all) with
                      the request; later turns send only the cells that changed

%chat fix [N|above] a turn asking why the cell shown as [N] (default: the last that
                    failed) raises: %%chat --fix N, which the page's Ask chat writes

%chat threads | new [NAME] | use NAME | history [NAME] | settings
%chat instructions [--allow PATH]   the instruction files sent (AGENTS.md, CLAUDE.md)
                    and their text; --allow: send another user's PATH this session
%chat key [openai|--from-dotenv PATH]   ask for the key (hidden), or read that .env's;
                    it goes only to the endpoint in use now (openai: the thread's)
%chat endpoint [URL|default|--from-dotenv]   show or choose where requests go; a
                    .env file's endpoint is applied only by --from-dotenv
%chat allow TOOL | revoke TOOL | restore [PATH] | trust [--apply] | undo [N]
%chat rewind [N]    undo turn N (default: the last) and every later turn of the
                    thread; they stay in the notebook, marked rewound, never re-sent
%chat fork NAME [--at N]   a new thread NAME with this thread's history before turn
                    N (default: all of it); the original thread is untouched
%chat replay [--from FILE] (default: this notebook's own) | export [NAME] [PATH]
%chat compact | forget N | cost
%chat mcp list | add | remove NAME | start NAME | restart NAME
%chat serve [--tools read|edit|all] [--builtins python]   an MCP server for terminal
                    agents (Claude Code, Codex, Cursor); approvals here. %chat serve stop

Options stick to the thread (--script, --fix and --use are the cell's).
Defaults: %config ChatMagics.<setting> = value (provider, model, tools, edits,
reasoning, thinking, max_cycles, system, headless, builtins, output_chars, stream,
replay, replay_check, replay_pace, budget_usd, compact_at, cache_ttl, instructions,
context, mcp_servers, base_url, region, project; admin limits: allowed_providers,
allowed_models).
"""


@magics_class
class ChatMagics(Magics, McpSettings):
    """Settings are traitlets: ``%config ChatMagics.model = "claude-sonnet-5-5"``."""

    provider = Enum(tuple(KINDS), "anthropic", help="Default provider of new threads.").tag(
        config=True
    )
    model = Unicode("", help="Default model (empty: the provider's default).").tag(config=True)
    base_url = Unicode(
        "",
        help="Default base URL of the OpenAI-compatible providers (openai, openai-chat, ollama); "
        "empty: OPENAI_BASE_URL, else the provider's default. A key goes there only once given "
        "for it (%chat key openai), unless it is OPENAI_BASE_URL's.",
    ).tag(config=True)
    region = Unicode("", help="Default region of Bedrock and Vertex (empty: their SDK's).").tag(
        config=True
    )
    project = Unicode("", help="Default Google Cloud project of Vertex (empty: ADC's).").tag(
        config=True
    )
    allowed_providers = List(
        Unicode(),
        help="Admin limit: the only providers a thread may use (empty: any). Set it in "
        "ipython_config.py or a system-wide config; a notebook's saved settings never widen it.",
    ).tag(config=True)
    allowed_models = List(
        Unicode(),
        help="Admin limit: the only models a thread may use, by name or fnmatch pattern "
        "(empty: any; offline scripted threads are not limited by it).",
    ).tag(config=True)
    tools = Enum(("ask", "unattended", "deny"), "ask", help="Default tool run mode.").tag(
        config=True
    )
    edits = Enum(
        ("ask", "review"),
        "ask",
        help="How the model's cell changes are approved: ask (each before it is made) or "
        "review (insert, edit, delete and move are made as they come; the turn ends with a "
        "review panel to keep or undo each). Running code always asks. A notebook's saved "
        "'review' applies only when you granted it to that thread in that notebook.",
    ).tag(config=True)
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
    builtins = Unicode(
        ",".join(DEFAULT),
        help="Built-in tools of new threads: a comma list of "
        f"{', '.join(NAMES)}, or 'none'; 'default' stands for the notebook tools (the "
        "read-only ones and the cell tools insert_cell, edit_cell, run_cell, delete_cell, "
        "move_cell, which always ask).",
    ).tag(config=True)
    output_chars = Int(
        2_000,
        help="Most characters of one cell's outputs the model gets per cell_output call "
        "(it pages on with an offset).",
    ).tag(config=True)
    replay = Enum(
        ("auto", "on", "off"),
        "auto",
        help="Replay a chat cell's saved turn: auto (Anthropic cells, when no API key is set "
        "and a turn saved in this notebook itself, or in the file named by %chat replay "
        "--from, matches), on (every chat cell; fail without one), off. The "
        "environment variable JUPYTER_TURNS_REPLAY wins.",
    ).tag(config=True)
    replay_check = Enum(
        ("warn", "strict"),
        "warn",
        help="A replayed tool whose result differs from the recording: warn, or fail the cell.",
    ).tag(config=True)
    replay_pace = Float(0.0, help="Seconds between words of a replayed answer (0: at once).").tag(
        config=True
    )
    stream = Bool(
        True,
        help="Stream answers (False: plain requests, for endpoints and proxies that do not "
        "stream). Read at each cell by every thread that has no choice of its own: --stream "
        "on|off, or the plain requests a thread keeps once its endpoint answered without "
        "streaming.",
    ).tag(config=True)
    instructions = Bool(
        True,
        help="Send the instruction files (AGENTS.md, CLAUDE.md) found next to the notebook and "
        "in its parent folders up to the server's root, and your own "
        "(<jupyter config dir>/jupyter_turns/AGENTS.md), in the system prompt. Text only: "
        "they never approve a tool or change a setting. %chat instructions shows them.",
    ).tag(config=True)
    context = Unicode(
        "none",
        help="What every thread with no --context of its own sends with each request: none, "
        "or above[:N] (the N cells above the chat cell, default all, within a budget; later "
        "turns send only what changed).",
    ).tag(config=True)
    inline_widget = Bool(
        False,
        help="Ship the widget's code inside each widget instead of loading it from the lab "
        "extension (automatic in VS Code).",
    ).tag(config=True)

    budget_usd = Float(
        0.0, help="Session spending limit in USD over every thread (0: none): pause a turn."
    ).tag(config=True)
    compact_at = Float(
        DEFAULT_COMPACT_AT,
        help="Compact a thread server-side at this share of the window (<= 1) or tokens; 0: off.",
    ).tag(config=True)
    cache_ttl = Enum(
        CACHE_TTLS,
        "auto",
        help="How long the prompt cache keeps a thread (Claude): 5m, 1h (writes cost 2x input "
        "instead of 1.25x), or auto: 1h once the thread's turns came more than 4 minutes apart. "
        "OpenAI's providers have no such control.",
    ).tag(config=True)

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._session: Session | None = None  # made on first use (:attr:`session`)
        self._cell: Any = None  # the running cell, as pre_run_cell said
        self._page: dict[str, Any] | None = None  # the last page's "page" request
        KernelHistory.of(shell)  # logs each cell from now on: what --fix reads without a page
        shell.events.register("pre_run_cell", self._pre_run_cell)

    @property
    def session(self) -> Session:
        """The notebook's session, made when first asked for: by a chat cell, a ``%chat``
        command, or a page's Undo (not at ``%load_ext``: it brings the engine)."""
        return self._session if self._session is not None else self._new_session()

    def _new_session(self) -> Session:
        from ..reading.sources import NotebookReader
        from ..serve.calls import calling_cell
        from .cell_context import page_said
        from .session import Session
        from .threads import Threads

        shell: Any = self.shell  # set: a Magics made with the kernel's shell
        reader = NotebookReader(
            shell.user_ns,
            metadata=_metadata_writer,
            history=KernelHistory.of(shell),
            cell_id=lambda: calling_cell() or self.session.cell_id,
            hidden=lambda: set(getattr(shell, "user_ns_hidden", ())),
            output_chars=lambda: self.output_chars,
        )
        session = Session(Threads(self._new_chat), shell.user_ns, reader=reader)
        self._session = session
        if self._page is not None:  # a page opened the notebook before
            page_said(session, self._page)
        if self._cell is not None:
            self._enter_cell(session)
        return session

    def settings(self) -> CellSettings:
        """The settings as they are now (``%config`` may change them between cells)."""
        from .session import CellSettings

        return CellSettings.of(self)

    def _new_chat(self) -> Chat:
        from ..engine.chat import Chat

        return Chat(config=self.settings().thread_config())

    def _pre_run_cell(self, info: Any) -> None:
        self._cell = info
        if self._session is not None:
            self._enter_cell(self._session)
        elif _CHAT in (getattr(info, "raw_cell", None) or ""):
            self._new_session()  # it enters this cell from its start

    def _enter_cell(self, session: Session) -> None:
        """The cell that runs now, in ``session``: its id and run, and what it prints."""
        from .persist import CellPrints
        from .session import CellRun

        info = self._cell
        session.cell_id = getattr(info, "cell_id", None)
        # what a chat cell prints before its turn's first output (a .env notice while the
        # provider is built) is printed again after the turn's final clear takes it away
        if session.cell_prints is not None:
            session.cell_prints.stop()
        chat = _CHAT in (getattr(info, "raw_cell", None) or "")
        session.cell_prints = CellPrints() if chat else None
        session.cell_run = CellRun.of(self.shell)

    def _page_opened(self, message: dict[str, Any]) -> list[str]:
        """A page opened the notebook: note where it says the notebook is, and send it the
        running and finished turns it misses; the ids of the cells whose turn runs now. Before
        the session is made there are none, and the path waits for the session."""
        self._page = message
        if self._session is None:
            return []
        from .cell_context import page_said
        from .front import page_opened  # the widget's imports wait until a page needs them

        page_said(self._session, message)
        return page_opened(self._session)

    @line_cell_magic
    def chat(self, line: str, cell: str | None = None) -> Any:
        if cell is None and line.split(maxsplit=1)[:1] == ["fix"]:
            return self._fix_line(line.split()[1:])
        if cell is None:
            from . import commands

            return commands.run(self.session, self.settings(), line, help_text=CHAT_HELP)
        return self._turn(line, cell)

    chat.__doc__ = CHAT_HELP

    # ------------------------------------------------------------------ one turn

    def _turn(self, line: str, body: str) -> Coroutine[Any, Any, None]:
        """Check every option first, then change the session: a failed cell changes nothing."""
        options = self._options(line)
        if options.fix is not None:
            return self._fix(options, body)
        if not body.strip():
            raise UsageError("%%chat: the cell is empty; write your request below the %%chat line")
        return self._start(options, body.strip())

    async def _fix(self, options: argparse.Namespace, body: str) -> None:
        """``--fix [INDEX]`` (``%chat fix``, the page's Ask chat): find the failing cell in the
        notebook as it can be read now, then run the turn with its source, traceback and
        variables attached; a cell without an error changes nothing and says so."""
        from ..reading.failing import FixRefused, failure_of
        from .cell_options import parse_fix

        reader = self.session.reader
        if reader is None:
            raise UsageError("%chat fix: this session cannot read the notebook")
        view = await reader.view()
        try:
            failure = failure_of(
                view,
                parse_fix(options.fix),
                self.session.namespace,
                self.output_chars * 2,
                reader.hidden(),
            )
        except FixRefused as exc:
            raise UsageError(f"%chat fix: {exc}") from None
        request = body.strip() or failure.request
        await self._start(options, request, failure.attachments)

    def _start(
        self, options: argparse.Namespace, body: str, attached: list[Attachment] | None = None
    ) -> Coroutine[Any, Any, None]:
        """The turn of a cell whose options and request are checked; ``attached`` goes with
        the request besides its ``@name`` variables. A cell run again takes its earlier
        turn's place in its thread (:mod:`.rerun`)."""
        from . import commands
        from .provider_limits import check_allowed, switch_notes
        from .rerun import plan_rerun
        from .threads import namespace_tools, stepped_aside, stepped_aside_notes

        session = self.session
        commands.restore_once(session, self.settings())  # a restarted kernel's saved threads
        threads, namespace = session.threads, session.namespace
        rerun = plan_rerun(session, thread=options.thread, new=options.new)
        name, existing = self._thread_for(options, rerun)
        key = self._provider_key(existing, options)  # the thread's, from this cell on
        # what this cell runs: ``--script VAR`` plays VAR for this cell alone
        played = ProviderChoice("scripted", script=options.script) if options.script else key
        check_allowed(played, self.allowed_providers, self.allowed_models)
        replay, provider = self._replay_or_live(name, played, body)
        if replay is not None:  # where the thread holds an earlier replay of the recording
            recorded = replay.turn.events
            rerun = plan_rerun(session, thread=name, new=options.new, recorded=recorded) or rerun
        if provider is not None:  # the provider's own default model is checked too
            check_allowed(
                played._replace(model=getattr(provider, "model", played.model)),
                self.allowed_providers,
                self.allowed_models,
            )
        notes: list[str | Notice] = [*switch_notes(existing, played)]
        builtins = self._builtins(existing, options)
        only = [n.strip() for n in options.use.split(",")] if options.use else None
        tools = namespace_tools(namespace, only, builtins, session.reader)
        if only is not None:
            missing = sorted(set(only) - {t.name for t in tools})
            if missing:
                raise UsageError(f"--use: no @tool named {', '.join(missing)} in the notebook")
        thread = threads.get(name, new=options.new) if rerun is None else rerun.apply(threads)
        commands.say_restored(session, self.settings(), thread)  # what it keeps, if restored
        self._apply(thread, options, key, builtins)
        script = provider if options.script else None  # this turn's alone
        if provider is not None and script is None:
            threads.use_provider(thread, provider, self.stream)
        thread.chat.tools = {t.name: t for t in tools}
        notes += stepped_aside_notes(thread, stepped_aside(tools, builtins))
        if replay is not None:
            replay.calls.saved_only = options.replay_tools == "saved"
        rewound = rerun.replacement.rewind if rerun is not None else None
        return self._run(thread, body, _Played(replay, script, rewound), notes, attached or [])

    def _thread_for(
        self, options: argparse.Namespace, rerun: Rerun | None
    ) -> tuple[str, Thread | None]:
        """The name of the thread the cell runs in, and that thread as it stands, unless the
        cell starts it (``--new``, or a re-run that leaves it nothing to send)."""
        threads = self.session.threads
        if rerun is not None:
            return rerun.thread, None if rerun.fresh else threads.by_name.get(rerun.thread)
        name = options.thread or (threads.fresh_name() if options.new else threads.current)
        return name, None if options.new else threads.by_name.get(name)

    def _replay_or_live(
        self, name: str, key: ProviderChoice, request: str
    ) -> tuple[ReplayPlan | None, Provider | None]:
        """The cell's replay, else the provider it runs live with (raises UsageError: its
        missing key, with why the notebook cannot replay it when it has a say; a script that
        has no cycle left, with how to play it again)."""
        from .replay import ReplayPlan, choose

        session = self.session
        strict = self.replay_check == "strict"
        chosen = choose(
            session, self.replay, key.kind, request, pace=self.replay_pace, strict=strict
        )
        if isinstance(chosen, ReplayPlan):
            return chosen, None
        try:
            provider = session.threads.provider_for(name, key, session.namespace)
        except ProviderConfigError as exc:
            session.unbuilt = key  # what the key the error asks for is for
            said = chosen.after(str(exc)) if chosen is not None else str(exc)
            raise UsageError(said) from None
        session.unbuilt = None
        if key.script and getattr(provider, "exhausted", False):
            raise UsageError(
                f"%%chat --script {key.script}: the script has no cycle left (each cycle plays "
                f"once). Run the cell that sets `{key.script}` again to play it from the start, "
                "or leave out --script: the thread's own provider answers."
            )
        return None, provider

    async def _run(
        self,
        thread: Thread,
        body: str,
        played: _Played,
        cell_notes: list[str | Notice] | None = None,
        extra: list[Attachment] | None = None,
    ) -> None:
        from ..model.sink import PrintSink
        from .front import CellFront
        from .kernel_status import busy_while_running
        from .replay import replaying
        from .rerun import mark_rewound

        chat = thread.chat
        loop = asyncio.get_running_loop()
        if played.rewound is not None:  # the turns a re-run took back: marked in their cells
            await mark_rewound(self.session, played.rewound)
        attachments, told, instructions = await self._sent_with(thread, body, cell_notes, extra)
        held = len(chat.conversation.events)  # the cells above count as seen once sent after
        # the thread's own; a replay plays its recording instead, a --script cell its script
        provider = chat.provider
        streamed = getattr(provider, "streaming", False)
        replay = played.replay
        player = replay.provider if replay is not None else played.script
        saved = replay.calls if replay is not None else None
        kernel = getattr(self.shell, "kernel", None)

        def send(notes: list[str | Notice], **where: Any) -> Coroutine[Any, Any, Any]:
            return chat.send(
                body,
                attachments,
                [*told, *notes],
                provider=player,
                saved=saved,
                instructions=instructions,
                **where,
            )

        if kernel is None:  # plain IPython: print instead
            with replaying(chat, replay, None) as notes:
                try:
                    await send(notes, sink=PrintSink())
                finally:
                    thread.above.commit(chat.conversation.events, held)
                    _remember_fallback(thread, provider, streamed)
            return
        with busy_while_running(kernel):  # before the widget opens
            front = CellFront(self.session, self.settings(), thread, loop)
            front.show()
            with sigint_menu(chat, loop), replaying(chat, replay, front) as notes:
                try:
                    await send(
                        notes, sink=front.sink, prompter=front.prompter, on_boundary=front.boundary
                    )
                finally:
                    thread.above.commit(chat.conversation.events, held)
                    _remember_fallback(thread, provider, streamed)  # before the record is saved
                    front.close()

    def _fix_line(self, words: list[str]) -> Coroutine[Any, Any, None]:
        """``%chat fix [N|above]``: what ``%%chat --fix [N|above]`` with no request does."""
        if len(words) > 1:
            raise UsageError("%chat fix takes one cell at most: %chat fix [N|above]")
        options = self._options(f"--fix {words[0] if words else 'last'}")
        return self._fix(options, "")

    async def _sent_with(
        self,
        thread: Thread,
        body: str,
        notes: list[str | Notice] | None,
        extra: list[Attachment] | None = None,
    ) -> tuple[list[Attachment], list[str | Notice], str | None]:
        """What goes with the request: its attachments (``extra``, e.g. a failing cell's
        source and traceback; the cells above, ``@name`` data, the kernel's note), the notes
        shown after it (``notes``: the cell's own, e.g. a provider switched), and the
        instruction files' text."""
        from ..reading.attach import attach
        from ..reading.kernel_note import kernel_note
        from .cell_context import cells_above_for, instructions_for

        session, settings = self.session, self.settings()
        attached = attach(body, session.namespace, self.output_chars * 2)
        note = kernel_note(
            thread.chat.conversation.events,
            session.namespace,
            restarted_at=session.started_at if thread.restored else None,
            reported=thread.gone_reported,
        )
        thread.restored = False
        above = await cells_above_for(session, settings, thread)
        instructions, told = instructions_for(session, settings, thread)
        mcp_notes = await session.mcp.prepare(thread, self.mcp_servers)  # MCP tools
        attachments = [
            *(extra or []),
            *([above] if above else []),
            *attached.attachments,
            *([note] if note else []),
        ]
        return attachments, [*told, *attached.notes, *(notes or ()), *mcp_notes], instructions

    def _options(self, line: str) -> argparse.Namespace:
        from .cell_options import parse_options

        return parse_options(line)

    def _builtins(self, thread: Thread | None, options: argparse.Namespace) -> set[str]:
        """The thread's built-ins (a new thread starts from ``ChatMagics.builtins``), with
        ``--builtins``: its names are added; ``none`` clears first."""
        if thread is not None and thread.configured:
            names = set(thread.builtins)
        else:
            try:
                names = parse_builtins(self.builtins)[1]
            except ValueError as exc:
                raise UsageError(f"ChatMagics.builtins: {exc}") from None
        if options.builtins is not None:
            clear, added = options.builtins
            names = (set() if clear else names) | added
        return names

    def _provider_key(self, thread: Thread | None, options: argparse.Namespace) -> ProviderChoice:
        """Which provider the thread uses from this cell on: its own, or the defaults, with
        the options (``--script`` is the cell's alone: see :meth:`_start`). Another provider
        starts from its own default model and endpoint unless the cell names them."""
        if thread is not None and thread.configured:
            key = thread.provider_key
        else:
            key = self._default_choice(self.provider)._replace(model=self.model or None)
        if options.provider and options.provider != key.kind:
            key = self._default_choice(options.provider)
        if options.base_url is not None:  # chosen in this kernel: a cloud's credentials may go
            endpoints.choose(options.base_url, "--base-url on a cell")
        named = {
            "model": options.model,
            "base_url": options.base_url,
            "region": options.region,
            "project": options.project,
        }
        return key._replace(**{k: v for k, v in named.items() if v is not None})

    def _default_choice(self, kind: str) -> ProviderChoice:
        """A new thread's (or a new provider's) choice from the ``ChatMagics`` defaults:
        ``base_url`` is the OpenAI-compatible servers' (Ollama has its own address)."""
        return ProviderChoice(
            kind,
            base_url=(self.base_url or None) if kind in ("openai", "openai-chat") else None,
            region=self.region or None,
            project=self.project or None,
        )

    def _apply(
        self, thread: Thread, options: argparse.Namespace, key: ProviderChoice, builtins: set[str]
    ) -> None:
        """Cell options stick to the thread; a new thread starts from the configured defaults."""
        from .settings_view import mark_cell, mark_new

        if not thread.configured:
            thread.reasoning, thread.provider = self.reasoning, self.provider
            thread.configured = True
            mark_new(thread, self.settings().changed)
        mark_cell(thread, options, provider_changed=key.kind != thread.provider)
        thread.provider, thread.model = key.kind, key.model
        thread.base_url, thread.region, thread.project = key.base_url, key.region, key.project
        if options.reasoning:
            thread.reasoning = options.reasoning
        thread.builtins = builtins
        if options.stream:
            thread.stream = options.stream == "on"
        if options.context:
            thread.context = options.context
        chat = thread.chat
        chat.config = self.settings().cell_config(chat.config, options)
        chat.ledger, chat.name = self.session.ledger, thread.name


@dataclass(frozen=True)
class _Played:
    """What one turn plays besides the thread's provider, and what it took back first."""

    replay: ReplayPlan | None = None  # the cell's recording
    script: Provider | None = None  # ``--script VAR``: this turn's alone
    rewound: Rewind | None = None  # the turns a re-run rewound (:mod:`.rerun`)


def _remember_fallback(thread: Thread, provider: Any, streamed: bool) -> None:
    """A thread whose streaming request was answered without streaming (the provider switched
    itself) keeps plain requests: a %config cannot make that endpoint stream."""
    if streamed and getattr(provider, "streaming", True) is False:
        thread.stream = False
        thread.sources["stream"] = "kept off: the endpoint answered without streaming"


def _metadata_writer() -> MetadataWriter:
    """The kernel's one page comm, handed to the reader (and through it the editor)."""
    from .front import metadata_writer  # the widget's imports wait until a cell needs them

    return metadata_writer()


def load_ipython_extension(ipython: Any) -> None:
    check_ipykernel()
    for transformer in (await_chat_cells, chat_help_as_output):
        if transformer not in ipython.input_transformers_post:
            ipython.input_transformers_post.append(transformer)
    ipython.register_magics(ChatMagics)
    if getattr(ipython, "kernel", None) is not None:
        keep_cell_parents(ipython.kernel)
        comms_outlive_subshells(ipython.kernel)
        quiet_subshell_teardown()
        from ..editing.control import register_control  # the page's Undo buttons reach the kernel

        magics = ipython.magics_manager.registry["ChatMagics"]
        register_control(lambda: magics.session, on_page=magics._page_opened)
