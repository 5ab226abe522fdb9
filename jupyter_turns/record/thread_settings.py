"""What a saved notebook may say about a thread, checked field by field, split by what it grants.

A notebook stores each thread's settings (cell records and notebook metadata). Read back, they
are untrusted input: :func:`parse_settings` keeps each field that has the right type and notes
the others. Whatever the file holds, signed or not, is a proposal: what the user granted comes
from their own store (:mod:`jupyter_turns.kernel.grants`). A file's copy is split by
:func:`split_settings` into the *harmless* fields (how reasoning shows, a lower cycle limit,
fewer built-ins, the user's own provider and model) and those that *grant* something or change
where requests go, what they cost or what runs: "always allow" decisions, unattended tools,
built-in kernel tools, MCP servers (commands the kernel would start), a system prompt, a higher
cycle limit, another provider or model, more thinking. Those wait for the user (``%chat
trust``). A script (``--script VAR``) is an option of one cell, never a thread's setting: the
``script`` field older versions saved is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ..providers.base import Thinking
from ..providers.endpoints import shown
from ..text import plural
from ..tools.registry import EditsMode, RunMode
from .mcp_spec import ServerName, ServerSpec

__all__ = [
    "DISPLAY_PATTERN",
    "GUARDED_FIELDS",
    "SavedSettings",
    "ThreadSettings",
    "UserDefaults",
    "describe_guarded",
    "known_builtins",
    "parse_settings",
    "split_settings",
]

_Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][\w.-]{0,99}\Z")]
_Short = Annotated[str, StringConstraints(min_length=1, max_length=200)]
DISPLAY_PATTERN = r"^(full|hidden|progress|static|truncate:\d{1,6})\Z"  # how reasoning shows
_Display = Annotated[str, StringConstraints(pattern=DISPLAY_PATTERN)]
_Url = Annotated[str, StringConstraints(pattern=r"^https?://[^\s]{1,500}\Z")]
_Place = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][\w.-]{0,99}\Z")]  # region, project
ProviderName = Literal[
    "anthropic", "openai", "openai-chat", "ollama", "bedrock", "vertex", "scripted"
]


class ThreadSettings(BaseModel):
    """The settings of one thread as saved; every field is optional and strictly typed."""

    # Python's re (so the patterns end in \Z: its $ also matches before a final newline): they
    # compile when first used; the Rust engine compiled the Unicode `\w{0,99}` classes at
    # import, about 90 ms of every kernel's `%load_ext`
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True, regex_engine="python-re")

    conversation_id: _Short | None = None
    provider: ProviderName | None = None
    model: _Short | None = None
    base_url: _Url | None = None
    region: _Place | None = None
    project: _Place | None = None
    reasoning: _Display | None = None
    thinking: Literal["off", "adaptive"] | Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    max_cycles: Annotated[int, Field(ge=1, le=100_000)] | None = None
    run_mode: RunMode | None = None
    edits: EditsMode | None = None
    builtins: list[_Name] | None = Field(default=None, max_length=100)
    system: Annotated[str, StringConstraints(max_length=200_000)] | None = None
    always_allow: list[_Name] | None = Field(default=None, max_length=1_000)
    stream: bool | None = None  # False: plain requests (chosen, or the endpoint does not stream)
    # the cells above each chat cell sent with its request: none, above, above:N
    context: Annotated[str, StringConstraints(pattern=r"^(none|above(:[1-9]\d{0,5})?)$")] | None = (
        None
    )
    mcp_servers: dict[ServerName, ServerSpec] | None = Field(default=None, max_length=50)


# Fields that grant a permission or move requests; some only beyond the user's own defaults.
GUARDED_FIELDS = (
    "always_allow",
    "run_mode",
    "edits",
    "builtins",
    "system",
    "max_cycles",
    "mcp_servers",
    "provider",
    "model",
    "thinking",
    "base_url",
    "region",
    "project",
    "context",
)


@dataclass(frozen=True)
class UserDefaults:
    """What the user's own settings (``ChatMagics``) give a new thread; a file may ask for as
    much or less without the user, never for more. The defaults here are the narrowest."""

    max_cycles: int
    builtins: frozenset[str] = frozenset()
    provider: str = "anthropic"
    model: str | None = None  # None: the provider's default
    thinking: Thinking = "off"
    context: str = "none"  # ChatMagics.context: the cells above sent with each request


@dataclass
class SavedSettings:
    """Settings read from a file: the valid fields of its copies merged (newer on top), and a
    note for each field that was not. ``signature``: a copy carries the signature an earlier
    jupyter_turns added (ignored: nothing in a file grants a permission)."""

    values: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    signature: bool = False

    def merged(self, other: SavedSettings) -> SavedSettings:
        """These settings with ``other``'s on top (``other`` is the newer copy)."""
        return SavedSettings(
            {**self.values, **other.values},
            [*self.problems, *other.problems],
            self.signature or other.signature,
        )


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
    if "mcp_servers" in values:  # kept in their saved form, as the thread holds them
        values["mcp_servers"] = {n: s.saved() for n, s in values["mcp_servers"].items()}
    return SavedSettings(values, problems, "signature" in raw)


def known_builtins(values: dict[str, Any], known: Set[str]) -> tuple[dict[str, Any], str | None]:
    """``values`` with built-in tool names outside ``known`` (the kernel's built-ins, passed
    in by the kernel layer) dropped, and a note naming them (None: none dropped)."""
    unknown = sorted(n for n in values.get("builtins", ()) if n not in known)
    if not unknown:
        return values, None
    kept = {**values, "builtins": [n for n in values["builtins"] if n in known]}
    return kept, f"unknown built-in tools ignored: {', '.join(unknown)}"


def split_settings(
    values: Mapping[str, Any], defaults: UserDefaults
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(harmless, guarded)``: what a file's copy may set, and what waits for the user.

    Harmless: a run mode that only restricts (ask, edit, skip, deny), ``edits`` ask, a cycle
    limit at or below the user's own, built-ins among the user's defaults
    (``ChatMagics.builtins``), the user's own provider and model, thinking off or no more than
    the user's. Everything else of :data:`GUARDED_FIELDS` is guarded: "unattended", ``edits``
    review (whatever the user's own default: a file never relaxes approval), other built-ins,
    "always allow", MCP servers, a system prompt, a higher cycle limit, another provider or
    model (where requests go and what they cost), more thinking, and ``context`` sending the
    cells above unless the user's own default does (it sends notebook data with every request:
    a file must not turn on what the user keeps off, as with the reading built-ins).
    """
    harmless: dict[str, Any] = {}
    guarded: dict[str, Any] = {}
    for name, value in values.items():
        if name not in GUARDED_FIELDS:
            harmless[name] = value
        elif name in ("always_allow", "mcp_servers"):
            if value:
                guarded[name] = value
        else:
            (harmless if _within(name, value, defaults) else guarded)[name] = value
    return harmless, guarded


def _within(name: str, value: Any, defaults: UserDefaults) -> bool:
    """Whether a guarded field's ``value`` asks for no more than the user's own defaults."""
    if name == "run_mode":
        return bool(value != "unattended")
    if name == "edits":  # review skips approvals: only ever from the user or their grant
        return bool(value != "review")
    if name == "max_cycles":
        return bool(value <= defaults.max_cycles)
    if name == "builtins":
        return set(value) <= defaults.builtins
    if name == "provider":
        return bool(value == defaults.provider)
    if name == "model":
        return bool(value == defaults.model)
    if name == "context":  # sends notebook data: never more than the user's own default does
        return bool(value == "none" or defaults.context != "none")
    if name == "thinking":
        default = defaults.thinking
        if value in ("off", default):
            return True
        return isinstance(value, int) and isinstance(default, int) and value <= default
    return False  # system


def describe_guarded(guarded: dict[str, Any]) -> str:
    """A reader's list of what ``guarded`` would grant, e.g. "always allow `python`, ..."."""
    parts = []
    if guarded.get("always_allow"):
        parts.append("always allow " + ", ".join(f"`{n}`" for n in guarded["always_allow"]))
    if guarded.get("run_mode") == "unattended":
        parts.append("unattended tools")
    if guarded.get("edits") == "review":
        parts.append("cell changes made without asking (--edits review)")
    if guarded.get("builtins"):
        parts.append("built-in tools " + ", ".join(f"`{n}`" for n in guarded["builtins"]))
    if guarded.get("system"):
        parts.append(f"a system prompt ({len(guarded['system']):,} characters)")
    if "max_cycles" in guarded:
        parts.append(f"up to {plural(guarded['max_cycles'], 'cycle')} a turn")
    if "provider" in guarded:
        parts.append(f"the `{guarded['provider']}` provider")
    if "model" in guarded:
        parts.append(f"the model `{guarded['model']}`")
    if "base_url" in guarded:
        parts.append(f"requests sent to {shown(guarded['base_url'])}")
    for name in ("region", "project"):
        if name in guarded:
            parts.append(f"the {name} `{guarded[name]}`")
    if "context" in guarded:
        parts.append(
            f"the cells above each chat cell sent with it (--context {guarded['context']})"
        )
    if "thinking" in guarded:
        thinking = guarded["thinking"]
        budget = f"{thinking:,} tokens" if isinstance(thinking, int) else str(thinking)
        parts.append(f"thinking ({budget})")
    if guarded.get("mcp_servers"):
        servers = guarded["mcp_servers"].items()
        described = (f"`{n}` ({ServerSpec.model_validate(s).describe()})" for n, s in servers)
        parts.append("MCP servers " + ", ".join(described))
    return ", ".join(parts)
