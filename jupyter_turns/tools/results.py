"""What a tool call answers: its outcome, a return value as text and images, an exception.

A tool returns any value: text, JSON-able data, a pydantic model or dataclass — or images: a
:class:`ToolResult` (text plus images), or one object that is an image (a matplotlib Figure,
a PIL Image, PNG/JPEG bytes, an ``IPython.display.Image``, anything with ``_repr_png_`` or
``_repr_jpeg_``). Images reach the model as image blocks inside the tool result, at most
:data:`~jupyter_turns.model.content.MAX_IMAGES`, downscaled to the API's useful size.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sysconfig
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from ..model.content import MAX_IMAGES, ImageData
from ..model.events import ToolStatus
from ..model.images import image_of
from ..redaction import head, redact_data

_T = TypeVar("_T")

__all__ = [
    "NotRun",
    "Outcome",
    "ResponseFields",
    "ToolFailed",
    "ToolResult",
    "describe_exception",
    "format_result",
    "result_content",
]


@dataclass
class ResponseFields:
    """What a tool call saves on its response beside the text the model reads: the fields of
    :class:`~jupyter_turns.model.events.ToolCallResponse` of the same names (None: not saved).
    A tool returns them in its :class:`ToolResult`; ``ctx.fields`` holds those saved however
    the call ends (a sub-agent's usage: tokens spent are spent even when nothing returns)."""

    subagent: dict[str, Any] | None = None  # a sub-agent call's nested turn (engine/subagent.py)
    cell: dict[str, Any] | None = None  # the cell a call inserted or edited: enough to undo it
    outputs: list[dict[str, Any]] | None = (
        None  # a code run's outputs ("Add to notebook"); an error
    )
    state: dict[str, Any] | None = None  # what a python run did to the namespace

    def under(self, over: ResponseFields) -> ResponseFields:
        """These fields, with those ``over`` sets in their place."""
        return ResponseFields(
            subagent=_either(over.subagent, self.subagent),
            cell=_either(over.cell, self.cell),
            outputs=_either(over.outputs, self.outputs),
            state=_either(over.state, self.state),
        )

    def redacted(self) -> ResponseFields:
        """These fields with every secret in their strings withheld (they hold notebook text)."""
        return ResponseFields(
            subagent=redact_data(self.subagent)[0],
            cell=redact_data(self.cell)[0],
            outputs=redact_data(self.outputs)[0],
            state=redact_data(self.state)[0],
        )


def _either(first: _T | None, second: _T | None) -> _T | None:
    return second if first is None else first


@dataclass
class Outcome:
    """The content of a tool call's response, whether it is an error, the call's status, and
    what the response saves beside its text."""

    content: str
    is_error: bool
    status: ToolStatus
    images: list[ImageData] = field(default_factory=list)
    fields: ResponseFields = field(default_factory=ResponseFields)


@dataclass
class ToolResult:
    """What a tool may return to send images with its text: ``ToolResult("3 plots", [fig])``.

    ``images`` holds :class:`~jupyter_turns.model.content.ImageData` or image-like objects (see the
    module docstring); the first five that are images are sent, the rest are noted.
    """

    text: str = ""
    images: Sequence[Any] = ()
    fields: ResponseFields = field(default_factory=ResponseFields)  # saved, not sent to the model
    # the tool ran and what it ran failed (``python``'s code raised): an error result, its
    # text, images and fields kept (a tool that cannot answer raises ToolFailed instead)
    is_error: bool = False


class NotRun(Exception):
    """Raised by a tool's preview (or the tool) to end the call without running it: the
    message is the model's result, said plainly (``Not inserted: ...``)."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or message  # the decision's detail in the record


class ToolFailed(Exception):
    """Raised by a tool to answer with an error result that says exactly ``message`` (another
    exception's result also names its type and line): a server that could not answer."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def result_content(value: Any, max_chars: int) -> tuple[str, list[ImageData]]:
    """A return value as the text and images the model gets."""
    if isinstance(value, ToolResult):
        images: list[ImageData] = []
        for number, item in enumerate(value.images, 1):
            image = item if isinstance(item, ImageData) else image_of(item, f"image {number}")
            if image is not None:
                images.append(image)
        text = format_result(value.text, max_chars) if value.text else ""
        if len(images) > MAX_IMAGES:
            text += f"\n[{len(images) - MAX_IMAGES} more images not sent: at most {MAX_IMAGES}]"
        return text.strip() or "(images only)", images[:MAX_IMAGES]
    if not isinstance(value, str | int | float | bool | dict | list | tuple | BaseModel):
        image = image_of(value, "result")
        if image is not None:
            return f"[{image.describe()} — attached]", [image]
    return format_result(value, max_chars), []


def format_result(value: Any, max_chars: int) -> str:
    """A tool's return value as text for the model, truncated with a note past ``max_chars``
    (cut after its secrets are withheld: none is shown in part)."""
    if value is None:
        text = "(no output)"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bytes | bytearray):
        text = f"<{len(value)} bytes of binary data>"
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        text = json.dumps(dataclasses.asdict(value), ensure_ascii=False, default=repr)
    elif isinstance(value, dict | list | tuple | int | float | bool):
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)
        except (TypeError, ValueError):
            text = repr(value)
    else:
        text = repr(value)
    if len(text) > max_chars:
        shown = head(text, max_chars)
        text = f"{shown}\n[output truncated: showing {len(shown):,} of {len(text):,} characters]"
    return text or "(empty output)"


def describe_exception(exc: BaseException) -> Outcome:
    """A tool that raised: the model reads the exception and the last line of the user's own
    code it went through (a notebook cell, a module outside the standard library and
    site-packages), never a line deep inside a library; the card also shows the full
    traceback, folded (saved as an nbformat ``error`` output, never sent to the model)."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if _is_users(f.filename)]
    outside = [f for f in frames if not _is_harness(f.filename)]
    frame = mine[-1] if mine else (outside[0] if outside else None)  # else: the tool's own entry
    where = f" (at {_where(frame)})" if frame else ""
    text = f"The tool raised {type(exc).__name__}: {exc}{where}"
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and _is_harness(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next  # from the tool's own code on: the machinery that called it is noise
    error = {
        "output_type": "error",
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, tb)).splitlines(),
    }
    return Outcome(text, True, "error", fields=ResponseFields(outputs=[error]))


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # jupyter_turns/
_STDLIB = tuple({os.path.abspath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")})
_SITE = tuple({os.path.abspath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")})
_CELL = re.compile(r"(ipykernel_\d+[/\\]\d+\.py|<ipython-input-[^>]*>)$")


def _within(filename: str, roots: Sequence[str]) -> bool:
    path = os.path.abspath(filename)
    return any(path == root or path.startswith(root + os.sep) for root in roots)


def _is_harness(filename: str) -> bool:
    """Code that calls the tool rather than the tool's own: jupyter_turns, the standard library."""
    return filename.startswith("<frozen ") or _within(filename, (_PACKAGE, *_STDLIB))


def _is_users(filename: str) -> bool:
    """The user's own code: a notebook cell or a module of theirs, not a library's."""
    return not _is_harness(filename) and not _within(filename, _SITE)


def _where(frame: traceback.FrameSummary) -> str:
    """``notebook cell, line 4, in load: df = pd.read_csv(path)``."""
    place = "notebook cell" if _CELL.search(frame.filename) else frame.filename
    line = f": {frame.line.strip()}" if frame.line and frame.line.strip() else ""
    return f"{place}, line {frame.lineno}, in {frame.name}{line}"
