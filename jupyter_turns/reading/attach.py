"""``@name`` in a ``%%chat`` request: the variable goes with the request as labeled data.

``@df`` attaches a DataFrame's schema and first rows, ``@arr`` an array's shape and dtype,
``@err`` an exception's traceback, ``@model.weights`` an attribute; ``@fig`` of a matplotlib
Figure or an image (PIL, PNG/JPEG bytes, ``IPython.display.Image``) attaches the image itself.
The request text keeps ``@name`` as written. A name the kernel does not have is left as text
and noted. Code (inline or fenced) is not scanned, nor are e-mail addresses or decorators.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.content import Attachment
from ..model.images import image_of
from ..redaction import tail
from .variables import one_line, summarize

__all__ = ["Attached", "attach", "cut_head"]

MAX_ATTACHMENTS = 10
_MENTION = re.compile(r"(?<![\w@.`])@([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_CODE = re.compile(r"(`{3,}|~{3,})[\s\S]*?(?:\1|$)|`[^`\n]*`")


@dataclass
class Attached:
    attachments: list[Attachment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the reader: names not found...


def mentions(text: str) -> list[str]:
    """The ``@name`` mentions outside code, in order, each once."""
    prose = _CODE.sub(" ", text)
    seen: dict[str, None] = {}
    for match in _MENTION.finditer(prose):
        seen.setdefault(match.group(1), None)
    return list(seen)


def attach(text: str, namespace: Mapping[str, Any], budget: int = 4_000) -> Attached:
    """Attachments for the ``@name`` mentions of ``text`` that name variables."""
    result = Attached()
    names = mentions(text)
    for name in names[:MAX_ATTACHMENTS]:
        found, value = _resolve(name, namespace)
        if not found:
            result.notes.append(f"@{name}: {value}; it was sent as plain text")
            continue
        result.attachments.append(_attachment(name, value, budget))
    if len(names) > MAX_ATTACHMENTS:
        skipped = ", ".join(f"@{n}" for n in names[MAX_ATTACHMENTS:])
        result.notes.append(f"at most {MAX_ATTACHMENTS} variables are attached; not {skipped}")
    return result


def cut_head(text: str, budget: int) -> str:
    """``text`` within ``budget`` characters, keeping its end: a traceback's last lines say
    where and why it failed (cut after its secrets are withheld: none is shown in part)."""
    if len(text) <= budget:
        return text
    return f"… [{len(text) - budget:,} characters cut]\n{tail(text, budget)}"


def _resolve(name: str, namespace: Mapping[str, Any]) -> tuple[bool, Any]:
    head, *attributes = name.split(".")
    if head not in namespace:
        return False, f"no variable named {head!r} in the kernel"
    value = namespace[head]
    for attribute in attributes:
        try:
            value = getattr(value, attribute)
        except Exception as exc:
            return False, f"{type(exc).__name__} reading .{attribute}"
    return True, value


def _attachment(name: str, value: Any, budget: int) -> Attachment:
    label = f"@{name}"
    image = image_of(value, label)
    if image is not None:
        return Attachment(label=label, text=f"{label}: {one_line(value)}", images=[image])
    if isinstance(value, BaseException):
        lines = traceback.format_exception(type(value), value, value.__traceback__)
        text = cut_head("".join(lines), budget)
        return Attachment(label=label, text=f"{label}: exception\n{text}")
    return Attachment(label=label, text=f"{label}:\n{summarize(value, budget)}")
