"""What differs between models: output limits, context window, thinking, prefill, and
estimated prices. :func:`model_info` is the one entry point, for Claude and OpenAI names alike.

Prices are list prices in USD per million tokens by model family, as published when this table
was written; cost figures computed from them are estimates (batch, regional and priority
pricing differ). Claude: cache writes are billed at 1.25x input (2x for the 1-hour cache), cache
reads at 0.1x input. The
context window is the standard one (200,000 tokens for every Claude family; a larger window some
models offer behind a beta header is not assumed); an unknown model's window is None: the gauge
says it does not know.

OpenAI (:data:`_OPENAI`, the models of OpenAI's pricing and model pages): cached input is billed
at its own, discounted, price; a cache write costs what input costs (no surcharge). A dated
snapshot (``gpt-5-mini-2025-08-07``) or a suffixed name (``gpt-4.1-mini-latest``) is priced as
its model; a name not in the table (a newer GPT-5.x) gets no price and no window, but still the
reasoning behaviour of its family (:func:`_openai_reasoning`).

Claude's names on the cloud platforms are read the same way: Amazon Bedrock's model ids
(``anthropic.claude-sonnet-4-5-20250929-v1:0``) and inference profiles (a geography first:
``us.anthropic...``, ``global.anthropic...``), and Vertex AI's ``claude-sonnet-4-5@20250929``
(the date after an ``@``). Their prices are the list prices above; a regional endpoint's
premium is not added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.events import Usage

__all__ = [
    "CACHE_READ",
    "CACHE_WRITE",
    "CACHE_WRITE_1H",
    "CONTEXT_WINDOW",
    "ModelInfo",
    "model_info",
]

CONTEXT_WINDOW = 200_000
# Claude's cache prices, as multiples of the input price: a write to the 5-minute cache, to the
# 1-hour cache (ttl "1h"), and a read of either
CACHE_WRITE, CACHE_WRITE_1H, CACHE_READ = 1.25, 2.0, 0.1


@dataclass(frozen=True, slots=True)
class ModelInfo:
    family: str  # opus / sonnet / haiku / unknown
    version: tuple[int, int]
    max_tokens: int
    thinking: bool  # extended thinking with a budget
    adaptive_thinking: bool  # thinking {"type": "adaptive"}
    prefill: bool  # accepts a trailing assistant message to continue from
    input_price: float | None  # USD per million input tokens
    output_price: float | None
    context_window: int | None = None  # tokens; None: not known for this model
    # USD per million cached input tokens read / written; None: Claude's CACHE_READ / CACHE_WRITE
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    # OpenAI: the reasoning effort sent for --thinking off ("minimal", "none", "low"); None:
    # the model takes no reasoning parameter (or is not an OpenAI model)
    reasoning_off: str | None = None

    def cost(self, usage: Usage) -> float | None:
        if self.input_price is None or self.output_price is None:
            return None
        per_token_in = self.input_price / 1e6
        read = usage.cache_read_input_tokens
        hour = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
        written = usage.cache_creation_input_tokens - hour
        return (
            usage.input_tokens * per_token_in
            + (
                written * per_token_in * CACHE_WRITE
                if self.cache_write_price is None
                else written * self.cache_write_price / 1e6
            )
            + hour * per_token_in * CACHE_WRITE_1H
            + (
                read * per_token_in * CACHE_READ
                if self.cache_read_price is None
                else read * self.cache_read_price / 1e6
            )
            + usage.output_tokens * self.output_price / 1e6
        )


# the version ends at "-" (a date, a Bedrock "-v1:0"), "@" (Vertex's date) or the name's end
_NEW_STYLE = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|@|$)")
_OLD_STYLE = re.compile(r"claude-(\d+)(?:-(\d{1,2}))?-(opus|sonnet|haiku)")

# (family, from version) -> (input $/MTok, output $/MTok, max output tokens)
_TABLE: list[tuple[str, tuple[int, int], float, float, int]] = [
    ("opus", (4, 5), 5.0, 25.0, 64_000),
    ("opus", (4, 0), 15.0, 75.0, 32_000),
    ("opus", (3, 0), 15.0, 75.0, 4_096),
    ("sonnet", (4, 0), 3.0, 15.0, 64_000),
    ("sonnet", (3, 7), 3.0, 15.0, 64_000),
    ("sonnet", (3, 0), 3.0, 15.0, 8_192),
    ("haiku", (4, 5), 1.0, 5.0, 64_000),
    ("haiku", (3, 5), 0.8, 4.0, 8_192),
    ("haiku", (3, 0), 0.25, 1.25, 4_096),
]


def _parse(model: str) -> tuple[str, tuple[int, int]]:
    name = model.lower()
    match = _NEW_STYLE.search(name)
    if match:
        return match.group(1), (int(match.group(2)), int(match.group(3) or 0))
    match = _OLD_STYLE.search(name)
    if match:
        return match.group(3), (int(match.group(1)), int(match.group(2) or 0))
    return "unknown", (0, 0)


def model_info(model: str) -> ModelInfo:
    """What this package knows about ``model``; unknown names get cautious defaults."""
    openai = _openai_info(model)
    if openai is not None:
        return openai
    family, version = _parse(model)
    price: tuple[float, float] | tuple[None, None] = (None, None)
    max_tokens = 8_192
    for row_family, since, input_price, output_price, limit in _TABLE:
        if row_family == family and version >= since:
            price, max_tokens = (input_price, output_price), limit
            break
    if family == "opus" and version >= (4, 6):
        max_tokens = 128_000
    modern = version >= (4, 6)
    return ModelInfo(
        family=family,
        version=version,
        max_tokens=max_tokens,
        thinking=version >= (3, 7),
        adaptive_thinking=modern,
        prefill=not modern,
        input_price=price[0],
        output_price=price[1],
        context_window=None if family == "unknown" else CONTEXT_WINDOW,
    )


# ---------------------------------------------------------------------------- OpenAI

# name -> (input, cached input, output $/MTok, context window, max output tokens); a name is
# looked up without its date or "-latest" suffix, nothing else: ``gpt-5-pro`` or ``o3-pro`` are
# priced differently from ``gpt-5`` and ``o3`` and get no price here rather than a wrong one
_OPENAI: dict[str, tuple[float, float, float, int, int]] = {
    "gpt-5.2": (1.75, 0.175, 14.0, 400_000, 128_000),
    "gpt-5.2-chat": (1.75, 0.175, 14.0, 128_000, 16_384),
    "gpt-5.1": (1.25, 0.125, 10.0, 400_000, 128_000),
    "gpt-5.1-chat": (1.25, 0.125, 10.0, 128_000, 16_384),
    "gpt-5.1-codex": (1.25, 0.125, 10.0, 400_000, 128_000),
    "gpt-5.1-codex-mini": (0.25, 0.025, 2.0, 400_000, 128_000),
    "gpt-5": (1.25, 0.125, 10.0, 400_000, 128_000),
    "gpt-5-chat": (1.25, 0.125, 10.0, 128_000, 16_384),
    "gpt-5-codex": (1.25, 0.125, 10.0, 400_000, 128_000),
    "gpt-5-mini": (0.25, 0.025, 2.0, 400_000, 128_000),
    "gpt-5-nano": (0.05, 0.005, 0.4, 400_000, 128_000),
    "gpt-4.1": (2.0, 0.5, 8.0, 1_047_576, 32_768),
    "gpt-4.1-mini": (0.4, 0.1, 1.6, 1_047_576, 32_768),
    "gpt-4.1-nano": (0.1, 0.025, 0.4, 1_047_576, 32_768),
    "gpt-4o": (2.5, 1.25, 10.0, 128_000, 16_384),
    "gpt-4o-mini": (0.15, 0.075, 0.6, 128_000, 16_384),
    "o1": (15.0, 7.5, 60.0, 200_000, 100_000),
    "o3": (2.0, 0.5, 8.0, 200_000, 100_000),
    "o3-mini": (1.1, 0.55, 4.4, 200_000, 100_000),
    "o4-mini": (1.1, 0.275, 4.4, 200_000, 100_000),
}
_OPENAI_NAME = re.compile(r"^(?:gpt-\d|chatgpt-|o\d(?:-|$))")
_GPT = re.compile(r"^gpt-(\d+)(?:\.(\d+))?")
_O_SERIES = re.compile(r"^o(\d+)")


_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|latest)$")


def _openai_row(name: str) -> tuple[str, tuple[float, float, float, int, int] | None]:
    """The model's name without a snapshot suffix, and its row of the table (or None)."""
    family = _SNAPSHOT.sub("", name)
    return family, _OPENAI.get(family)


def _openai_reasoning(name: str) -> str | None:
    """The effort for --thinking off, by family: GPT-5 knows "minimal", GPT-5.1 and later
    "none" (no reasoning at all), the o-series thinks at least "low", a ``-pro`` model always
    "high" (the one effort every pro model takes); None: no reasoning parameter (GPT-4.x, the
    non-reasoning ``-chat`` models, unknown names)."""
    if "-chat" in name:
        return None
    if "-pro" in name and (name.startswith("gpt-5") or _O_SERIES.match(name)):
        return "high"
    gpt = _GPT.match(name)
    if gpt is not None:
        major, minor = int(gpt.group(1)), int(gpt.group(2) or 0)
        if major < 5:
            return None
        if "codex" in name:
            return "low"
        return "minimal" if (major, minor) == (5, 0) else "none"
    return "low" if _O_SERIES.match(name) else None


def _openai_info(model: str) -> ModelInfo | None:
    """The OpenAI model ``model`` names (None: not an OpenAI name)."""
    name = model.lower().strip()
    if not _OPENAI_NAME.match(name):
        return None
    family, row = _openai_row(name)
    numbers = re.findall(r"\d+", family)[:2]
    version = (int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0) if numbers else (0, 0)
    off = _openai_reasoning(name)
    prices = (None, None, None) if row is None else row[:3]
    return ModelInfo(
        family=family,
        version=version,
        max_tokens=row[4] if row is not None else 16_384,
        thinking=off is not None,
        adaptive_thinking=False,
        prefill=False,
        input_price=prices[0],
        output_price=prices[2],
        context_window=row[3] if row is not None else None,
        cache_read_price=prices[1],
        cache_write_price=prices[0],
        reasoning_off=off,
    )
