"""The page <-> kernel messages are declared twice, once per language: both lists must agree.

``jupyter_turns/widget/messages.py`` has TypedDicts; ``js/src/protocol/messages.js`` has JSDoc
typedefs, one ``@typedef {{field: type, ...}} Name`` per message. This reads the JSDoc block and
compares, message by message: the name, the ``type`` (the message's kind), the required and optional
fields, and the allowed values of fields that are a set of strings (e.g. ``action``).
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

from jupyter_turns.widget import messages

JS = Path(__file__).resolve().parents[2] / "js" / "src" / "protocol" / "messages.js"

Shape = tuple[frozenset[str], frozenset[str], dict[str, frozenset[str]]]


def _split_top_level(text: str, separator: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "{[(<":
            depth += 1
        elif char in "}])>":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _js_typedefs() -> tuple[dict[str, Shape], dict[str, list[str]]]:
    """Object typedefs ({{...}} Name) and union typedefs ({A | B} Name) of messages.js."""
    doc = "\n".join(line.strip().lstrip("*").strip() for line in JS.read_text().splitlines())
    objects: dict[str, Shape] = {}
    unions: dict[str, list[str]] = {}
    for match in re.finditer(r"^@typedef \{", doc, re.MULTILINE):
        depth, i = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(doc[i], 0)
            i += 1
        body, name = " ".join(doc[match.end() : i - 1].split()), doc[i:].split()[0]
        if body.startswith("{") and body.endswith("}"):
            required, optional, literals = set(), set(), {}
            for field in _split_top_level(body[1:-1], ","):
                key, kind = (s.strip() for s in field.split(":", 1))
                (optional if key.endswith("?") else required).add(key.rstrip("?"))
                values = _split_top_level(kind, "|")
                if all(re.fullmatch(r'"[^"]*"', v) for v in values):
                    literals[key.rstrip("?")] = frozenset(v.strip('"') for v in values)
            objects[name] = (frozenset(required), frozenset(optional), literals)
        elif re.fullmatch(r"\w+( \| \w+)+", body):
            unions[name] = [part.strip() for part in body.split("|")]
    return objects, unions


def _python_shape(cls: Any) -> Shape:
    hints = typing.get_type_hints(cls)
    literals = {
        key: frozenset(get_args(hint))
        for key, hint in hints.items()
        if get_origin(hint) is typing.Literal
    }
    return frozenset(cls.__required_keys__), frozenset(cls.__optional_keys__), literals


def test_python_and_javascript_declare_the_same_messages() -> None:
    objects, unions = _js_typedefs()
    declared = [*messages.KERNEL_TO_PAGE, *messages.PAGE_TO_KERNEL, messages.ProgressUpdate]
    python = {cls.__name__: _python_shape(cls) for cls in declared}
    javascript = {name: shape for name, shape in objects.items() if name in python or "Msg" in name}
    assert javascript == python
    assert unions["KernelMessage"] == [cls.__name__ for cls in messages.KERNEL_TO_PAGE]
    assert unions["PageMessage"] == [cls.__name__ for cls in messages.PAGE_TO_KERNEL]


def test_every_message_kind_is_declared_once() -> None:
    declared = [*messages.KERNEL_TO_PAGE, *messages.PAGE_TO_KERNEL]
    kinds = [get_args(typing.get_type_hints(cls)["type"])[0] for cls in declared]
    assert len(kinds) == len(set(kinds)) == len(declared)
