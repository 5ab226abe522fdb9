"""The kernel's own history of cells: the last resort when no notebook can be read.

Under nbclient, ``jupyter execute`` or a console there is no page to ask and no file to read,
but the kernel saw every cell it ran. IPython's own history cannot serve: nbval runs cells with
``store_history=False`` (no ``In``, no execution counts, no output history), and ipykernel
files displayed outputs under the wrong count. So :class:`KernelHistory` keeps its own log from
the moment the extension loads: per cell run, its source, what it printed, displayed and
returned, and its error with a traceback that names cells ``In[n]`` — ``n`` counting the
cells this kernel ran (the execution count, when every cell runs once from the top). Bounded:
the last :data:`KEEP_CELLS` cells, each output cut to :data:`KEEP_CHARS` (a cut output is cut
after its secrets are withheld: none is kept in part). No hook can break a cell: each swallows
its own failures.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..record.mime import RECORD_MIME
from ..redaction import head

if TYPE_CHECKING:
    from .cells import NotebookView

__all__ = ["KernelHistory"]

KEEP_CELLS = 200
KEEP_OUTPUTS = 20  # per cell
KEEP_CHARS = 200_000  # per printed stream or text repr; images are kept whole
_CHAT_MIMES = (RECORD_MIME, "application/vnd.jupyter.widget-view+json")
LABEL = (
    "the kernel's own history (no notebook could be read: these are the cells this kernel ran, "
    "In[n] being the n-th, with what they printed, showed, returned and raised; the notebook "
    "may have been edited since)"
)


@dataclass
class _Run:
    number: int
    source: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    ran: bool = True  # False: the entry standing for the cell that loaded the extension
    full: set[str] = field(default_factory=set)  # streams cut at KEEP_CHARS: no more is kept

    def add(self, output: dict[str, Any]) -> None:
        if len(self.outputs) < KEEP_OUTPUTS:
            self.outputs.append(output)

    def write(self, name: str, text: str) -> None:
        last = self.outputs[-1] if self.outputs else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            if name not in self.full:
                last["text"] = self._kept(name, last["text"] + text)
        else:
            self.full.discard(name)
            self.add({"output_type": "stream", "name": name, "text": self._kept(name, text)})

    def _kept(self, name: str, text: str) -> str:
        if len(text) <= KEEP_CHARS:
            return text
        self.full.add(name)
        return head(text, KEEP_CHARS)


class KernelHistory:
    """A bounded log of the cells this kernel ran, with their outputs."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.runs: deque[_Run] = deque(maxlen=KEEP_CELLS)
        self.count = 0
        self._cell_names: dict[str, int] = {}  # compiled cell file -> the run that made it
        self._streams: list[tuple[Any, Any]] = []  # (stream, its own write) while a cell runs

    # ------------------------------------------------------------------ hooks

    @classmethod
    def of(cls, shell: Any) -> KernelHistory:
        """The shell's log, started on first use (one per shell, however often asked)."""
        existing = getattr(shell, "_jupyter_turns_history", None)
        if isinstance(existing, cls):
            return existing
        history = cls(shell)
        history.install()
        return history

    def install(self) -> None:
        """Start logging; the cell running now (it loaded the extension) is the first entry,
        numbered after the cells the kernel ran before, when it counted them."""
        self.shell._jupyter_turns_history = self
        count = getattr(self.shell, "execution_count", 0)
        self.count = max(1, count - 1 if isinstance(count, int) else 1)
        source = "(the cell that loaded jupyter_turns: cells before it are not in this history)"
        self.runs.append(_Run(self.count, source, ran=False))
        self.shell.events.register("pre_run_cell", self._pre_run_cell)
        self.shell.events.register("post_run_cell", self._post_run_cell)
        for owner, method in ((self.shell.display_pub, "publish"),
                              (self.shell.displayhook, "write_format_data")):  # fmt: skip
            original = getattr(owner, method, None)
            if original is not None:
                setattr(owner, method, self._tapping(original, method == "publish"))

    def _tapping(self, original: Any, display: bool) -> Any:
        def tapped(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("update"):
                with contextlib.suppress(Exception):
                    self._shown(data, "display_data" if display else "execute_result")
            return original(data, metadata, *args, **kwargs)

        return tapped

    def _pre_run_cell(self, info: Any) -> None:
        with contextlib.suppress(Exception):
            self.count += 1
            self.runs.append(_Run(self.count, str(getattr(info, "raw_cell", "") or "")))
            for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
                self._tee(name, stream)

    def _tee(self, name: str, stream: Any) -> None:
        own = stream.write
        run = self.runs[-1]

        def write(text: Any, *args: Any, **kwargs: Any) -> Any:
            with contextlib.suppress(Exception):
                if isinstance(text, str) and text:
                    run.write(name, text)
            return own(text, *args, **kwargs)

        stream.write = write
        self._streams.append((stream, own))

    def _post_run_cell(self, result: Any) -> None:
        with contextlib.suppress(Exception):
            for stream, own in reversed(self._streams):
                stream.write = own
            self._streams.clear()
            names = getattr(getattr(self.shell, "compile", None), "_filename_map", {})
            for name in names:
                self._cell_names.setdefault(name, self.count)
            error = getattr(result, "error_in_exec", None) or getattr(
                result, "error_before_exec", None
            )
            if error is not None and self.runs:
                self.runs[-1].add(self._error(error))

    def _shown(self, data: Any, kind: str) -> None:
        if not self.runs or not isinstance(data, dict):
            return
        if any(mime in data for mime in _CHAT_MIMES):
            return  # a chat cell's own conversation: read in its thread, not here
        kept = {k: (head(v, KEEP_CHARS) if isinstance(v, str) and len(v) > KEEP_CHARS
                    and not k.startswith("image/") else v)
                for k, v in data.items()}  # fmt: skip
        self.runs[-1].add({"output_type": kind, "data": kept, "metadata": {}})

    def _error(self, error: BaseException) -> dict[str, Any]:
        """An nbformat error output; the traceback from the first cell frame on, cells named
        ``In[n]`` (machinery frames before it left out)."""
        frames = traceback.extract_tb(error.__traceback__)
        first = next((i for i, f in enumerate(frames) if f.filename in self._cell_names), 0)
        lines = ["Traceback (most recent call last):"]
        for frame in frames[first:]:
            where = self._cell_names.get(frame.filename)
            place = f"In[{where}]" if where else frame.filename
            lines.append(f"  {place}, line {frame.lineno}, in {frame.name}")
            if frame.line:
                lines.append(f"    {frame.line}")
        lines += [line.rstrip("\n") for line in traceback.format_exception_only(error)]
        return {
            "output_type": "error",
            "ename": type(error).__name__,
            "evalue": str(error),
            "traceback": lines,
        }

    # ------------------------------------------------------------------ reading

    def sources(self) -> list[str]:
        """The source of each cell this kernel ran since the extension loaded (the last
        :data:`KEEP_CELLS`), in order, the running one last: what replay identifies the
        kernel's notebook by when no frontend names it (nbval leaves ``In`` empty)."""
        return [run.source for run in self.runs if run.ran]

    def view(self, notes: tuple[str, ...] = ()) -> NotebookView:
        from .cells import CellView, NotebookView  # installed at %load_ext: light until read

        cells = [
            CellView(run.number, "code", run.source, None, tuple(run.outputs)) for run in self.runs
        ]
        if cells:  # the running cell (the chat cell asking) is the newest
            cells[-1] = dataclasses.replace(cells[-1], chat=True)
        return NotebookView("history", LABEL, tuple(cells), notes)
