"""``%chat settings``: the current thread's settings as a table, each with where it came from.

A thread's setting comes from the ``ChatMagics`` default, a ``%config`` of it, a cell option
(``%%chat --model ...``: it sticks to the thread), or the notebook it was restored from
(``Thread.sources``, marked where each is applied: :func:`mark_new` and :func:`mark_cell` by the
magic, :func:`~jupyter_turns.kernel.threads.apply_settings` on a restore). The model is always
named: without a choice, the provider's own default, said to be that.
"""

from __future__ import annotations

import argparse
import html
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..kernel_tools.builtin import default_builtins
from ..model.budget import format_usd
from ..providers.catalog import KINDS, default_model
from ..providers.endpoints import shown
from .threads import CELL, CONFIG, DEFAULT, Thread, stepped_aside

if TYPE_CHECKING:
    from ..tools.registry import Tool
    from .session import CellSettings

__all__ = ["mark_cell", "mark_new", "settings_bundle"]

Row = tuple[str, str, str]  # setting, value, where it came from
_CODE_SPAN = re.compile(r"`([^`]+)`")

# a thread's setting (its saved name) -> the ChatMagics setting a new thread takes it from
_FROM_CONFIG = {
    "provider": "provider",
    "model": "model",
    "base_url": "base_url",
    "region": "region",
    "project": "project",
    "run_mode": "tools",
    "edits": "edits",
    "thinking": "thinking",
    "reasoning": "reasoning",
    "max_cycles": "max_cycles",
    "builtins": "builtins",
    "system": "system",
    "context": "context",
}
# a cell option (its argparse name) -> the thread's settings it sets
_FROM_OPTION = {
    "provider": ("provider",),
    "model": ("model",),
    "base_url": ("base_url",),
    "region": ("region",),
    "project": ("project",),
    "tools": ("run_mode",),
    "edits": ("edits",),
    "thinking": ("thinking",),
    "reasoning": ("reasoning",),
    "max_cycles": ("max_cycles",),
    "builtins": ("builtins",),
    "system": ("system",),
    "stream": ("stream",),
    "budget": ("budget_usd",),
    "context": ("context",),
}


def mark_new(thread: Thread, changed: frozenset[str]) -> None:
    """A new thread took its settings from ``ChatMagics``: ``%config`` where one changed it."""
    for name, trait in _FROM_CONFIG.items():
        thread.sources[name] = CONFIG if trait in changed else DEFAULT


def mark_cell(thread: Thread, options: argparse.Namespace, provider_changed: bool) -> None:
    """The settings this cell's options set (they stick to the thread); another provider
    starts from its own default model, which is said to be the default, not the cell's."""
    for option, names in _FROM_OPTION.items():
        if getattr(options, option, None) is not None:
            thread.sources.update(dict.fromkeys(names, CELL))
    if provider_changed and options.model is None:
        thread.sources["model"] = DEFAULT


def settings_bundle(
    thread: Thread | None, settings: CellSettings, notebook_tools: Iterable[Tool] = ()
) -> dict[str, str]:
    """``%chat settings``' output: an HTML table and its plain-text twin. ``notebook_tools``:
    the notebook's own tools, which a built-in of the same name steps aside for."""
    if thread is None:
        title = "No thread yet: a new thread starts with these settings."
        rows = _default_rows(settings, notebook_tools)
    else:
        title = f"Settings of thread {thread.name!r}:"
        rows = _thread_rows(thread, settings, notebook_tools)
    note = (
        "A cell option changes the thread from that cell on (`%%chat --model NAME`); "
        '`%config ChatMagics.model = "NAME"` changes what new threads start with; '
        "`%config ChatMagics` lists every default."
    )
    return {"text/html": _html(title, rows, note), "text/plain": _plain(title, rows, note)}


def _builtins(names: Iterable[str], notebook_tools: Iterable[Tool]) -> str:
    """The built-in tools, and those that step aside for a notebook tool of the same name."""
    shown = ", ".join(sorted(names)) or "none"
    aside = stepped_aside(notebook_tools, names)
    if not aside:
        return shown
    yours = ", ".join(aside)
    return f"{shown} ({yours}: your @tool of that name, the built-in steps aside)"


def _thread_rows(
    thread: Thread, settings: CellSettings, notebook_tools: Iterable[Tool]
) -> list[Row]:
    config = thread.chat.config

    def source(name: str) -> str:
        trait = _FROM_CONFIG.get(name, name)
        return thread.sources.get(name) or (CONFIG if trait in settings.changed else DEFAULT)

    named = getattr(thread.chat.provider, "model", None) or default_model(thread.provider)
    model = thread.model or _default_model(named, thread.provider)
    provider = _provider(thread.provider)
    rows: list[Row] = [
        ("provider", provider, source("provider")),
        ("model", model, source("model")),
    ]
    rows += [
        (name.replace("_", " "), shown(value) if name == "base_url" else value, source(name))
        for name, value in (
            ("base_url", thread.base_url),
            ("region", thread.region),
            ("project", thread.project),
        )
        if value
    ]
    if thread.stream is None:  # it follows ChatMagics.stream, cell by cell
        stream: Row = ("stream", _on(settings.stream), source("stream"))
    else:
        stream = ("stream", _on(thread.stream), thread.sources.get("stream", CELL))
    allowed = sorted(thread.chat.allowed_tools)
    return [
        *rows,
        ("tools run mode", config.run_mode, source("run_mode")),
        ("cell changes", config.edits, source("edits")),
        ("thinking", str(config.thinking), source("thinking")),
        ("reasoning shown", thread.reasoning, source("reasoning")),
        ("max cycles (answers per turn)", str(config.max_cycles), source("max_cycles")),
        ("built-in tools", _builtins(thread.builtins, notebook_tools), source("builtins")),
        ("always allowed", ", ".join(allowed) or "nothing", source("always_allow")),
        stream,
        ("system prompt", _short(config.system), source("system")),
        (
            "budget of this thread",
            _usd(config.budget_usd),
            thread.sources.get("budget_usd", DEFAULT),
        ),
        ("budget of the session", _usd(settings.budget_usd), source("budget_usd")),
        ("prompt cache lifetime", settings.cache_ttl, source("cache_ttl")),
        ("cells above sent", thread.context or settings.context, source("context")),
        ("instruction files", _on_off(settings.instructions), source("instructions")),
    ]


def _default_rows(settings: CellSettings, notebook_tools: Iterable[Tool]) -> list[Row]:
    def source(trait: str) -> str:
        return CONFIG if trait in settings.changed else DEFAULT

    model = settings.model or _default_model(default_model(settings.provider), settings.provider)
    builtins = _builtins(default_builtins(settings.builtins), notebook_tools)
    return [
        ("provider", _provider(settings.provider), source("provider")),
        ("model", model, source("model")),
        ("tools run mode", settings.tools, source("tools")),
        ("cell changes", settings.edits, source("edits")),
        ("thinking", settings.thinking, source("thinking")),
        ("reasoning shown", settings.reasoning, source("reasoning")),
        ("max cycles (answers per turn)", str(settings.max_cycles), source("max_cycles")),
        ("built-in tools", builtins, source("builtins")),
        ("stream", _on(settings.stream), source("stream")),
        ("system prompt", _short(settings.system), source("system")),
        ("budget of the session", _usd(settings.budget_usd), source("budget_usd")),
        ("prompt cache lifetime", settings.cache_ttl, source("cache_ttl")),
        ("cells above sent", settings.context, source("context")),
        ("instruction files", _on_off(settings.instructions), source("instructions")),
    ]


def _default_model(model: object, kind: str) -> str:
    """The model a thread uses without a choice of its own, said to be the provider's."""
    if kind == "scripted":
        return "none: the scripted provider calls no model"
    if isinstance(model, str) and model:
        return f"{model} (the provider's default)"
    return "the provider's own (none named here: scripted, Bedrock's by region, or --model)"


def _provider(kind: str) -> str:
    label = KINDS[kind].label if kind in KINDS else kind
    return f"{kind} — {label}"


def _on(value: bool) -> str:
    return "on" if value else "off (plain requests)"


def _on_off(value: bool) -> str:
    return "sent (%chat instructions)" if value else "off"


def _usd(amount: float | None) -> str:
    return f"{format_usd(amount)} (USD)" if amount else "none"


def _short(text: str | None, limit: int = 60) -> str:
    if not text:
        return "none"
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _plain(title: str, rows: list[Row], note: str) -> str:
    table = [("setting", "value", "from"), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(2)]
    lines = [f"  {a:<{widths[0]}}  {b:<{widths[1]}}  {c}".rstrip() for a, b, c in table]
    return "\n".join([title, *lines, note])


def _html(title: str, rows: list[Row], note: str) -> str:
    def cells(row: Row, tag: str) -> str:
        return "".join(f"<{tag}>{html.escape(text)}</{tag}>" for text in row)

    def code(text: str) -> str:  # `...` spans of our own words, as the page shows code
        return _CODE_SPAN.sub(r"<code>\1</code>", html.escape(text))

    body = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in rows)
    head = f"<tr>{cells(('setting', 'value', 'from'), 'th')}</tr>"
    return (
        f"<p>{html.escape(title)}</p><table class='jt-settings'><thead>{head}</thead>"
        f"<tbody>{body}</tbody></table><p>{code(note)}</p>"
    )
