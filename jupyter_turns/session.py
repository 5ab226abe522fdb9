"""The notebook session that the magic, each cell's front and the ``%chat`` commands share.

:class:`Session` is the state that outlives a cell: the threads, what each cell showed before
(so a re-run keeps it), the running cell's id. :class:`CellSettings` is a snapshot of the
``ChatMagics`` settings one cell runs with (their defaults and help live on the traitlets).
Passing these two instead of the magic keeps front.py and commands.py free of IPython's Magics
class and of an import cycle with magic.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .budget import Ledger
from .mcp.servers import McpServers
from .threads import Thread, Threads

if TYPE_CHECKING:
    from .reading.sources import NotebookReader
    from .replay import SavedIndex


def _saved_index() -> SavedIndex:
    from .replay import SavedIndex

    return SavedIndex()


__all__ = ["CellSettings", "Session"]


@dataclass(frozen=True)
class CellSettings:
    """``ChatMagics``' configurable settings, as one cell sees them."""

    provider: str
    model: str
    tools: str
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

    @classmethod
    def of(cls, configurable: Any) -> CellSettings:
        """The current values of an object with these attributes (the magic's traitlets)."""
        return cls(**{f.name: getattr(configurable, f.name) for f in fields(cls)})

    def headless_allows(self, thread: Thread) -> bool:
        """Whether a prompt with nobody to click is approved by policy (never ``python``:
        the executor refuses a policy's approval of an ``always_ask`` tool)."""
        if self.headless != "auto":
            return self.headless == "allow"
        return thread.chat.execution.default_run == "unattended"


@dataclass
class Session:
    threads: Threads
    namespace: dict[str, Any]  # the user's namespace (IPython's ``user_ns``), not a copy
    # per cell id, the records of the turns it showed before: a re-run carries them on
    cell_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # per cell id, the final record its output shows now (an undo rewrites it there)
    shown_records: dict[str, dict[str, Any]] = field(default_factory=dict)
    cell_id: str | None = None  # the running cell's, when the frontend says (JupyterLab does)
    restore_tried: bool = False  # the first %%chat restores the notebook's threads once
    reader: NotebookReader | None = None  # what the notebook tools read the notebook through
    saved: SavedIndex = field(default_factory=lambda: _saved_index())  # what replay can play
    mcp: McpServers = field(default_factory=McpServers)  # this kernel's, for all its threads
    ledger: Ledger = field(default_factory=Ledger)  # spending per thread (%chat cost)
    started_at: str = field(  # when this kernel loaded the extension, for the model's notes
        default_factory=lambda: datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    )
