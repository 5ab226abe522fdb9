"""What a saved notebook may say about a thread, checked field by field, split by what it grants.

A notebook stores each thread's settings (cell records and notebook metadata). Read back, they
are untrusted input: :func:`parse_settings` keeps each field that has the right type and notes
the others. :func:`split_settings` then separates the *harmless* ones (which provider and model
answer, how reasoning shows) from the ones that *grant* something: "always allow" decisions,
unattended tools, built-in kernel tools, MCP servers (commands the kernel would start), a system
prompt, a higher cycle limit. Those are applied only when the user's own Jupyter trusts the file
(see :mod:`jupyter_turns.trust`).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from .mcp.config import ServerName, ServerSpec
from .text import plural

__all__ = [
    "DISPLAY_PATTERN",
    "GUARDED_FIELDS",
    "SavedSettings",
    "ThreadSettings",
    "describe_guarded",
    "parse_settings",
    "split_settings",
]

_Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][\w.-]{0,99}$")]
_Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_]\w{0,99}$")]
_Short = Annotated[str, StringConstraints(min_length=1, max_length=200)]
DISPLAY_PATTERN = r"^(full|hidden|progress|static|truncate:\d{1,6})$"  # how reasoning shows
_Display = Annotated[str, StringConstraints(pattern=DISPLAY_PATTERN)]


class ThreadSettings(BaseModel):
    """The settings of one thread as saved; every field is optional and strictly typed."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    conversation_id: _Short | None = None
    provider: Literal["anthropic", "scripted"] | None = None
    model: _Short | None = None
    script: _Identifier | None = None
    reasoning: _Display | None = None
    thinking: Literal["off", "adaptive"] | Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    max_cycles: Annotated[int, Field(ge=1, le=100_000)] | None = None
    run_mode: Literal["ask", "unattended", "edit", "skip", "deny"] | None = None
    builtins: list[_Name] | None = Field(default=None, max_length=100)
    system: Annotated[str, StringConstraints(max_length=200_000)] | None = None
    always_allow: list[_Name] | None = Field(default=None, max_length=1_000)
    stream: bool | None = None  # False: plain requests (chosen, or the endpoint does not stream)
    mcp_servers: dict[ServerName, ServerSpec] | None = Field(default=None, max_length=50)


# Fields that grant a permission; ``max_cycles`` only when above the user's own limit.
GUARDED_FIELDS = ("always_allow", "run_mode", "builtins", "system", "max_cycles", "mcp_servers")


@dataclass
class SavedSettings:
    """Settings read from a file: the valid fields, and a note for each field that was not."""

    values: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def merged(self, other: SavedSettings) -> SavedSettings:
        """These settings with ``other``'s fields on top (``other`` is the newer copy)."""
        return SavedSettings({**self.values, **other.values}, [*self.problems, *other.problems])


def parse_settings(raw: Any, where: str = "settings") -> SavedSettings:
    """Keep each field of ``raw`` that validates; note the rest (never raises)."""
    if raw is None:
        return SavedSettings()
    if not isinstance(raw, dict):
        return SavedSettings(problems=[f"{where} are a {type(raw).__name__}, not an object"])
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name in ThreadSettings.model_fields:
        if name not in raw or raw[name] is None:
            continue
        try:
            checked = ThreadSettings.model_validate({name: raw[name]})
        except ValidationError as exc:
            message = exc.errors()[0]["msg"] if exc.errors() else "invalid"
            problems.append(f"{where}: {name} ignored ({message})")
            continue
        values[name] = getattr(checked, name)
    if "builtins" in values:
        from .tools.builtin import BUILTINS

        unknown = sorted(set(values["builtins"]) - set(BUILTINS))
        if unknown:
            problems.append(f"{where}: unknown built-in tools ignored: {', '.join(unknown)}")
            values["builtins"] = [n for n in values["builtins"] if n in BUILTINS]
    if "mcp_servers" in values:  # kept in their saved form, as the thread holds them
        values["mcp_servers"] = {n: s.saved() for n, s in values["mcp_servers"].items()}
    return SavedSettings(values, problems)


def split_settings(
    settings: SavedSettings, *, max_cycles_default: int, builtins_default: Set[str] = frozenset()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(harmless, guarded)``: what may be applied from any file, and what needs trust.

    A run mode that only restricts (ask, edit, skip, deny), a cycle limit at or below the
    user's own and built-ins among the user's defaults (``ChatMagics.builtins``) are harmless;
    "unattended", other built-ins, "always allow", MCP servers, a system prompt and a higher
    cycle limit are guarded.
    """
    harmless: dict[str, Any] = {}
    guarded: dict[str, Any] = {}
    for name, value in settings.values.items():
        if name == "run_mode":
            (guarded if value == "unattended" else harmless)[name] = value
        elif name == "max_cycles":
            (guarded if value > max_cycles_default else harmless)[name] = value
        elif name == "builtins":
            (harmless if set(value) <= builtins_default else guarded)[name] = value
        elif name in ("always_allow", "mcp_servers"):
            if value:
                guarded[name] = value
        elif name in GUARDED_FIELDS:
            guarded[name] = value
        else:
            harmless[name] = value
    return harmless, guarded


def describe_guarded(guarded: dict[str, Any]) -> str:
    """A reader's list of what ``guarded`` would grant, e.g. "always allow `python`, ..."."""
    parts = []
    if guarded.get("always_allow"):
        parts.append("always allow " + ", ".join(f"`{n}`" for n in guarded["always_allow"]))
    if guarded.get("run_mode") == "unattended":
        parts.append("unattended tools")
    if guarded.get("builtins"):
        parts.append("built-in tools " + ", ".join(f"`{n}`" for n in guarded["builtins"]))
    if guarded.get("system"):
        parts.append(f"a system prompt ({len(guarded['system']):,} characters)")
    if "max_cycles" in guarded:
        parts.append(f"up to {plural(guarded['max_cycles'], 'cycle')} a turn")
    if guarded.get("mcp_servers"):
        servers = guarded["mcp_servers"].items()
        described = (f"`{n}` ({ServerSpec.model_validate(s).describe()})" for n, s in servers)
        parts.append("MCP servers " + ", ".join(described))
    return ", ".join(parts)
