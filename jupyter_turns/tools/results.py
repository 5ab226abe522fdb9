"""What a tool call answers: its outcome, a return value as text, an exception as text."""

from __future__ import annotations

import dataclasses
import json
import traceback
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..events import ToolStatus

__all__ = ["Outcome", "describe_exception", "format_result"]


@dataclass
class Outcome:
    """The content of a tool call's response, whether it is an error, and the call's status."""

    content: str
    is_error: bool
    status: ToolStatus


def format_result(value: Any, max_chars: int) -> str:
    """A tool's return value as text for the model, truncated with a note past ``max_chars``."""
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
        head = text[:max_chars]
        text = f"{head}\n[output truncated: showing {max_chars:,} of {len(text):,} characters]"
    return text or "(empty output)"


def describe_exception(exc: BaseException) -> str:
    """What the model reads when a tool raised: the exception and where."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].name}, line {frames[-1].lineno})" if frames else ""
    return f"The tool raised {type(exc).__name__}: {exc}{where}"
