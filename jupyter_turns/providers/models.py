"""What differs between Claude models: output limits, context window, thinking, prefill, and
estimated prices.

Prices are list prices in USD per million tokens by model family, as published when this table
was written; cost figures computed from them are estimates (batch, regional and priority
pricing differ). Cache writes are billed at 1.25x input, cache reads at 0.1x input. The context
window is the standard one (200,000 tokens for every Claude family; a larger window some models
offer behind a beta header is not assumed); an unknown model's window is None: the gauge says
it does not know.

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

__all__ = ["CONTEXT_WINDOW", "ModelInfo", "model_info"]

CONTEXT_WINDOW = 200_000


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

    def cost(self, usage: Usage) -> float | None:
        if self.input_price is None or self.output_price is None:
            return None
        per_token_in = self.input_price / 1e6
        return (
            usage.input_tokens * per_token_in
            + usage.cache_creation_input_tokens * per_token_in * 1.25
            + usage.cache_read_input_tokens * per_token_in * 0.1
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
