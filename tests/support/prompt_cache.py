"""A simulation of the Messages API's prompt caching, for the local test server and benchmark B7.

``PromptCache.bill(body)`` says how a request's input would be billed — ``input_tokens`` (full
rate), ``cache_creation_input_tokens`` (written: 1.25x, or 2x for the part kept an hour,
``cache_creation_1h_input_tokens``), ``cache_read_input_tokens`` (0.1x) — following the
documented rules:

- the cacheable prefix is, in order, ``tools``, ``system``, ``messages``, cut into content
  blocks (each tool definition, each system text block, each message content block);
- a ``cache_control`` marker on a block is a breakpoint; at most 4 (more: the request is
  refused, as the API does); a top-level ``cache_control`` marks the last block;
- a breakpoint reads the longest cached prefix that ends at it or at one of the 20 block
  boundaries before it (the lookback), and writes its own prefix when that is not cached;
- a prefix shorter than the model's minimum cacheable length is neither written nor read;
- an entry lives 5 minutes from its last write or read (the injectable ``clock``), or an hour
  when the breakpoint that wrote it says ``"ttl": "1h"``; a read refreshes an entry for its own
  lifetime;
- lifetimes may be mixed in one request only if no 1-hour breakpoint follows a 5-minute one
  (the API refuses the request otherwise); the new tokens up to the last 1-hour breakpoint are
  written to the 1-hour cache, those after it to the 5-minute one.

Approximations (documented in docs/architecture.md, "Benchmark definitions", B7): a block's tokens
are its canonical JSON without ``cache_control`` over 4 characters, rounded up, so counts are
consistent, not the real tokenizer's; a cache key is the model plus the canonical JSON of the blocks
of the prefix (the same for either lifetime); the per-message framing tokens are left out;
the minimum lengths are those of the public docs: 4096 tokens for Opus 4.5+ and Haiku 4.5+, 2048 for
older Haiku, 1024 for the other Sonnet and Opus models.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "Bill",
    "CacheRefused",
    "PromptCache",
    "billed_reply",
    "blocks_of",
    "min_cacheable",
    "request_tokens",
    "tokens",
]

LIFETIME = 300.0
LIFETIMES = {"5m": LIFETIME, "1h": 3600.0}
LOOKBACK = 20
MAX_BREAKPOINTS = 4


class CacheRefused(ValueError):
    """The request breaks a caching rule the API enforces (more than 4 breakpoints, a 1-hour
    breakpoint after a 5-minute one, a lifetime that is neither)."""


def tokens(value: Any) -> int:
    """The simulation's token count of one block: canonical JSON chars / 4, rounded up."""
    return -(-len(_canonical(value)) // 4)


def request_tokens(body: dict[str, Any]) -> int:
    """The simulation's count of a request's input (what ``count_tokens`` answers)."""
    return sum(tokens(block) for block in blocks_of(body))


def _canonical(value: Any) -> str:
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != "cache_control"}
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def min_cacheable(model: str) -> int:
    name = model.lower()
    match = re.search(r"(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|$)", name)
    family, version = (
        (match.group(1), (int(match.group(2)), int(match.group(3) or 0))) if match else ("", (0, 0))
    )
    if family in ("opus", "haiku") and version >= (4, 5):
        return 4096
    if family == "haiku":
        return 2048
    return 1024


def blocks_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's cacheable blocks in prefix order: tools, system, messages."""
    out: list[dict[str, Any]] = [dict(tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str):
        out.append({"type": "text", "text": system})
    else:
        out.extend(dict(block) for block in system or [])
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            out.append({**block, "_role": message.get("role")})
    if body.get("cache_control") and out:
        out[-1] = {**out[-1], "cache_control": body["cache_control"]}
    return out


@dataclass(frozen=True)
class Bill:
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cache_creation_1h_input_tokens: int = 0  # of the writes, those kept an hour

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


@dataclass
class PromptCache:
    """The cache of one organization, as the server sees it; ``enabled=False`` bills every
    input token at the full rate (caching off)."""

    clock: Callable[[], float] = time.monotonic
    enabled: bool = True
    # key -> (expires at, lifetime in seconds)
    entries: dict[str, tuple[float, float]] = field(default_factory=dict)

    def bill(self, body: dict[str, Any]) -> Bill:
        blocks = blocks_of(body)
        sizes = [tokens(block) for block in blocks]
        total = sum(sizes)
        breakpoints = [i for i, block in enumerate(blocks) if block.get("cache_control")]
        lives = _lifetimes([blocks[b]["cache_control"] for b in breakpoints])
        if not self.enabled or not breakpoints:
            return Bill(total, 0, 0)
        now, model = self.clock(), str(body.get("model", ""))
        self.entries = {k: t for k, t in self.entries.items() if t[0] > now}
        prefix = [0]
        for size in sizes:
            prefix.append(prefix[-1] + size)
        keys = _keys(model, blocks)
        minimum = min_cacheable(model)
        read_end = 0  # blocks [0, read_end) come from the cache
        for b in breakpoints:
            for j in range(b, max(-1, b - LOOKBACK - 1), -1):
                entry = self.entries.get(keys[j])
                if prefix[j + 1] >= minimum and entry is not None:
                    read_end = max(read_end, j + 1)
                    self.entries[keys[j]] = (now + entry[1], entry[1])  # a read refreshes it
                    break
        written = {"5m": 0, "1h": 0}
        written_end = read_end
        for b, life in zip(breakpoints, lives, strict=True):
            if prefix[b + 1] < minimum:
                continue
            if keys[b] not in self.entries:
                self.entries[keys[b]] = (now + LIFETIMES[life], LIFETIMES[life])
            if b + 1 > written_end:
                written[life] += prefix[b + 1] - prefix[written_end]
                written_end = b + 1
        read = prefix[read_end]
        created = written["5m"] + written["1h"]
        return Bill(total - read - created, created, read, written["1h"])


def _lifetimes(controls: list[dict[str, Any]]) -> list[str]:
    """Each breakpoint's lifetime, checked as the API checks them."""
    if len(controls) > MAX_BREAKPOINTS:
        raise CacheRefused(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(controls)}."
        )
    lives = [str(control.get("ttl", "5m")) for control in controls]
    for life in lives:
        if life not in LIFETIMES:
            raise CacheRefused(f"cache_control.ttl: Input should be '5m' or '1h', not {life!r}")
    for earlier, later in itertools.pairwise(lives):
        if earlier == "5m" and later == "1h":
            raise CacheRefused(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
                "block: longer lifetimes must come first"
            )
    return lives


def _keys(model: str, blocks: list[dict[str, Any]]) -> list[str]:
    """The key of each prefix (blocks 0..i): a running hash, so equal prefixes share a key."""
    running = hashlib.sha256(model.encode())
    keys = []
    for block in blocks:
        running.update(_canonical(block).encode())
        keys.append(running.copy().hexdigest())
    return keys


def billed_reply(reply: Any, bill: Bill) -> Any:
    """``reply`` (a ``Reply`` of an event stream) with the usage of its ``message_start`` and
    ``message_delta`` events replaced by ``bill`` (output tokens as they were)."""
    from .anthropic_replies import split_events

    if reply.status != 200 or not all(isinstance(step, bytes) for step in reply.steps):
        return reply
    events = split_events(b"".join(reply.steps))
    fields = {
        "input_tokens": bill.input_tokens,
        "cache_creation_input_tokens": bill.cache_creation_input_tokens,
        "cache_read_input_tokens": bill.cache_read_input_tokens,
    }
    patched = []
    for event in events:
        lines = event.decode("utf-8").split("\n")
        for i, line in enumerate(lines):
            if not line.startswith("data: "):
                continue
            data = json.loads(line[6:])
            usage = (
                data.get("message", {}).get("usage")
                if data.get("type") == "message_start"
                else data.get("usage")
            )
            if isinstance(usage, dict):
                usage.update(fields)
                if "cache_creation" in usage:
                    hour = bill.cache_creation_1h_input_tokens
                    usage["cache_creation"] = {
                        "ephemeral_5m_input_tokens": bill.cache_creation_input_tokens - hour,
                        "ephemeral_1h_input_tokens": hour,
                    }
                lines[i] = "data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        patched.append("\n".join(lines).encode("utf-8"))
    return replace(reply, steps=tuple(patched))
