"""The notebook session that the magic, each cell's front and the ``%chat`` commands share.

:class:`Session` is the state that outlives a cell: the threads, what each cell showed before
(so a re-run keeps it), the running cell's id. :class:`CellSettings` is a snapshot of the
``ChatMagics`` settings one cell runs with (their defaults and help live on the traitlets).
Passing these two instead of the magic keeps front.py and commands.py free of IPython's Magics
class and of an import cycle with magic.py. The session also holds this user's own stores
(:class:`~jupyter_turns.kernel.grants.UserStore`): it records what the kernel wrote
(:meth:`Session.author`) and what the user granted each thread in this notebook
(:meth:`Session.saved_settings`, :meth:`Session.remember`), which a restore reads back.
"""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..engine.cache_life import CacheTtl
from ..engine.config import ThreadConfig
from ..kernel_tools.builtin import default_builtins
from ..mcp.servers import McpServers
from ..model.budget import Ledger
from ..reading.instructions import InstructionFinder
from ..record.notebook import find_notebook
from ..record.thread_settings import UserDefaults
from ..tools.registry import EditsMode, RunMode
from .cell_options import parse_thinking
from .grants import UserStore
from .threads import Thread, Threads

if TYPE_CHECKING:
    from ..model.conversation import Conversation
    from ..providers.catalog import ProviderChoice
    from ..reading.sources import NotebookReader
    from .persist import CellPrints
    from .replay import SavedIndex


def _saved_index() -> SavedIndex:
    from .replay import SavedIndex

    return SavedIndex()


__all__ = ["CellRun", "CellSettings", "Session"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CellSettings:
    """``ChatMagics``' configurable settings, as one cell sees them."""

    provider: str
    model: str
    tools: RunMode  # the default run mode (ask, unattended or deny)
    edits: EditsMode  # how the model's cell changes are approved (ask or review)
    reasoning: str
    thinking: str
    max_cycles: int
    system: str
    headless: str
    headless_results: str
    view_timeout: float
    max_rate: float
    inline_widget: bool
    builtins: str
    output_chars: int
    replay: str
    replay_check: str
    replay_pace: float
    mcp_servers: dict[str, Any]  # ChatMagics.mcp_servers, checked when it was set
    budget_usd: float
    compact_at: float
    cache_ttl: CacheTtl  # how long the prompt cache keeps a thread: read at every cell
    base_url: str  # the OpenAI-compatible servers' default base URL
    region: str
    project: str
    allowed_providers: list[str]  # admin limits, checked on every cell
    allowed_models: list[str]
    stream: bool  # streaming, for every thread with no choice of its own
    instructions: bool  # send the instruction files (AGENTS.md, CLAUDE.md)
    context: str  # the cells above for every thread with no choice of its own: none, above[:N]
    changed: frozenset[str] = frozenset()  # the settings not at their default: a %config's

    @classmethod
    def of(cls, configurable: Any) -> CellSettings:
        """The current values of an object with these attributes (the magic's traitlets), and
        which of them differ from their traitlet's default (``%chat settings`` says so)."""
        names = [f.name for f in fields(cls) if f.name != "changed"]
        values = {name: getattr(configurable, name) for name in names}
        traits = configurable.traits() if hasattr(configurable, "traits") else {}
        changed = {n for n in names if n in traits and values[n] != traits[n].default()}
        return cls(**values, changed=frozenset(changed))

    def thread_config(self) -> ThreadConfig:
        """What a new thread's turns start with (the model comes with its provider)."""
        return ThreadConfig(
            system=self.system or None,
            run_mode=self.tools,
            edits=self.edits,
            max_cycles=self.max_cycles,
            thinking=parse_thinking(self.thinking),
            cache_ttl=self.cache_ttl,
        )

    def cell_config(self, config: ThreadConfig, options: argparse.Namespace) -> ThreadConfig:
        """The thread's ``config`` with this cell's options (they stick to the thread; the
        budget for this session only: it is not saved) and the session-wide limits."""
        changes: dict[str, Any] = {
            "sequential_tools": options.sequential,
            "session_budget_usd": self.budget_usd or None,
            "compact_at": self.compact_at,
            "cache_ttl": self.cache_ttl,
        }
        if options.tools:
            changes["run_mode"] = options.tools
        if options.edits:
            changes["edits"] = options.edits
        if options.thinking is not None:
            changes["thinking"] = options.thinking
        if options.max_cycles is not None:
            changes["max_cycles"] = options.max_cycles
        if options.system is not None:
            changes["system"] = options.system or None
        if options.budget is not None:
            changes["budget_usd"] = options.budget or None
        return replace(config, **changes)

    def defaults(self) -> UserDefaults:
        """What a new thread gets from these settings: a restored one may ask for no more
        without the user (see :func:`jupyter_turns.record.thread_settings.split_settings`)."""
        return UserDefaults(
            max_cycles=self.max_cycles,
            builtins=frozenset(default_builtins(self.builtins)),
            provider=self.provider,
            model=self.model or None,
            thinking=parse_thinking(self.thinking),
            context=self.context,
        )

    def headless_allows(self, thread: Thread) -> bool:
        """Whether a prompt with nobody to click is approved by policy (never ``python``:
        the executor refuses a policy's approval of an ``always_ask`` tool)."""
        if self.headless != "auto":
            return self.headless == "allow"
        return thread.chat.config.run_mode == "unattended"


@dataclass(frozen=True)
class CellRun:
    """The running cell's run as the kernel knows it: its prompt number and the kernel client
    of the page that asked for it (the execute request's session). A page that did not run
    the cell (reloaded, a second tab, a page joining a shared notebook) never hears of either
    from Jupyter; the kernel tells it (``MetadataWriter.cell_run`` in
    :mod:`jupyter_turns.kernel.persist`)."""

    execution_count: int | None = None
    client: str | None = None

    @classmethod
    def of(cls, shell: Any) -> CellRun:
        """The cell ``shell`` runs now, read in ``pre_run_cell``: IPython 9 has counted on
        already, and ipykernel's reply will say ``execution_count - 1``, as this does. No
        client where the kernel is not an ipykernel or no request runs the cell."""
        count = getattr(shell, "execution_count", None)
        get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
        parent = get_parent("shell") if callable(get_parent) else None
        header = parent.get("header") if isinstance(parent, dict) else None
        client = header.get("session") if isinstance(header, dict) else None
        return cls(
            count - 1 if isinstance(count, int) else None,
            client if isinstance(client, str) and client else None,
        )


@dataclass
class Session:
    threads: Threads
    namespace: dict[str, Any]  # the user's namespace (IPython's ``user_ns``), not a copy
    # per cell id, the records of the turns it showed before: a re-run carries them on
    cell_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # per cell id, the final record its output shows now (an undo rewrites it there)
    shown_records: dict[str, dict[str, Any]] = field(default_factory=dict)
    cell_id: str | None = None  # the running cell's, when the frontend says (JupyterLab does)
    cell_prints: CellPrints | None = None  # what the running chat cell printed (persist.py)
    cell_run: CellRun = field(default_factory=CellRun)  # the running cell's prompt and page
    restore_tried: bool = False  # the first %%chat restores the notebook's threads once
    # the last %%chat cell's provider choice when it could not be built (no key, or a key given
    # for another endpoint): %chat key then gives a key for that choice's endpoint
    unbuilt: ProviderChoice | None = None
    reader: NotebookReader | None = None  # what the notebook tools read the notebook through
    saved: SavedIndex = field(default_factory=lambda: _saved_index())  # what replay can play
    mcp: McpServers = field(default_factory=McpServers)  # this kernel's, for all its threads
    ledger: Ledger = field(default_factory=Ledger)  # spending per thread (%chat cost)
    started_at: str = field(  # when this kernel loaded the extension, for the model's notes
        default_factory=lambda: datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    )
    _store: UserStore | None = field(default=None, repr=False)
    store_problem: str | None = None  # why this user's store could not be written
    instructions: InstructionFinder = field(default_factory=InstructionFinder)
    # the notebook's path relative to the server's root, as the last page that opened it said
    # (the root is where instruction files stop)
    page_path: str | None = None
    served: list[Conversation] = field(default_factory=list)  # %chat serve's calls, while it runs

    def conversations(self) -> list[Conversation]:
        """Each thread's conversation and the ``%chat serve`` session's calls (undo adds its
        event to the one that made the call)."""
        threads = [thread.chat.conversation for thread in self.threads.by_name.values()]
        return [*threads, *self.served]

    def thread_of(self, conversation: Conversation) -> tuple[str, bool]:
        """The name of the thread holding ``conversation``, and whether a turn runs in it."""
        for name, thread in self.threads.by_name.items():
            if thread.chat.conversation is conversation:
                return name, thread.chat.turn is not None
        return "(gone)", False

    def user_store(self) -> UserStore | None:
        """This user's store of what their kernels wrote and granted (None when the Jupyter
        data directory cannot be found: then nothing is granted, and every restored turn
        counts as someone else's)."""
        if self._store is None and self.store_problem is None:
            try:
                self._store = UserStore.of_user()
            except (OSError, ValueError) as exc:
                self._note_problem(exc)
        return self._store

    def notebook_path(self) -> str | None:
        """The real path of this kernel's notebook, if the frontend said (not under nbclient)."""
        found = find_notebook(self.namespace)
        return os.path.realpath(found) if found is not None else None

    def saved_settings(self, thread: Thread) -> dict[str, Any]:
        """What is saved for ``thread``: the settings it has now. They are also what the user
        grants the thread in this notebook (:meth:`remember`); never what a file asked for and
        did not get (``Thread.withheld``), so a save cannot launder a crafted file's settings."""
        settings = thread.settings()
        self.remember(thread, settings)
        return settings

    def remember(
        self, thread: Thread, settings: dict[str, Any] | None = None, path: str | None = None
    ) -> None:
        """Record the thread's settings as granted in this notebook (or the one at ``path``;
        written only when they changed: a revocation too); nothing when the notebook's path is
        not known, or while the user's grant of the thread at another path waits for their
        answer (it would hide it)."""
        if thread.proposed_by is not None:
            return  # the user has not answered yet: their grant at the other path still waits
        store, path = self.user_store(), path or self.notebook_path()
        if store is None or path is None:
            return
        try:
            store.grant(
                path,
                thread.chat.conversation.conversation_id,
                settings if settings is not None else thread.settings(),
                thread.foreign,
            )
        except (OSError, TypeError, ValueError) as exc:  # a save never fails for it
            self._note_problem(exc)

    def author(self, conversation_id: str, digests: list[str]) -> None:
        """Record the events this kernel saves now (their :func:`.grants.event_digest`) as
        written by this user's kernel (known without the notebook's path: nbclient too)."""
        store = self.user_store()
        if store is None or not digests:
            return
        try:
            store.author(conversation_id, digests)
        except OSError as exc:
            self._note_problem(exc)

    def _note_problem(self, exc: Exception) -> None:
        if self.store_problem is None:
            log.warning("jupyter_turns: your record of grants cannot be written (%s)", exc)
        self.store_problem = str(exc)
