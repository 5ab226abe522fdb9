"""Deterministic markdown answers and hostile payloads for the harness checks."""

from __future__ import annotations

import random

WORDS = (
    "kernel notebook widget stream token answer model tool cell output render block parser "
    "delta frame event prompt approve result thread reasoning cache latency budget schema "
    "argument cancel retry server browser chromium layout paint script table list code"
).split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
    if rng.random() < 0.3:
        i = rng.randrange(len(words))
        words[i] = f"**{words[i]}**"
    if rng.random() < 0.3:
        i = rng.randrange(len(words))
        words[i] = f"`{words[i]}()`"
    if rng.random() < 0.1:
        i = rng.randrange(len(words))
        words[i] = f"[{words[i]}](https://example.org/{words[i]})"
    return " ".join(words).capitalize() + "."


def markdown_answer(size: int, seed: int = 7) -> str:
    """About `size` characters of prose, lists, code blocks, tables, quotes and headings."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    n = 0
    while total < size:
        n += 1
        kind = rng.choice(["p", "p", "p", "list", "olist", "code", "table", "quote", "h"])
        if kind == "p":
            block = " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))
        elif kind == "list":
            block = "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 6)))
        elif kind == "olist":
            block = "\n".join(f"{i}. {_sentence(rng)}" for i in range(1, rng.randint(3, 7)))
        elif kind == "code":
            lines = [f"def f_{n}_{i}(x):\n    return x * {i}  # {rng.choice(WORDS)}" for i in range(rng.randint(2, 5))]
            block = "```python\n" + "\n\n".join(lines) + "\n```"
        elif kind == "table":
            rows = [f"| {rng.choice(WORDS)} | {rng.randint(0, 999)} | {rng.choice(WORDS)} |" for _ in range(rng.randint(2, 6))]
            block = "| name | value | note |\n|---|---:|:---:|\n" + "\n".join(rows)
        elif kind == "quote":
            block = "> " + _sentence(rng) + "\n> " + _sentence(rng)
        else:
            block = f"{'#' * rng.randint(2, 4)} Section {n}: {rng.choice(WORDS)}"
        parts.append(block)
        total += len(block) + 2
    return "\n\n".join(parts) + "\n"


def split_deltas(text: str, count: int, seed: int = 11) -> list[str]:
    """Cut `text` at `count - 1` random places (mid-word, mid-fence, mid-newline pair)."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), count - 1))
    edges = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]


# Every payload tries to set window.pwned; none may succeed.
HOSTILE = [
    '<img src=x onerror="window.pwned=1">',
    "<script>window.pwned=2</script>",
    "[click me](javascript:window.pwned=3)",
    '<a href="javascript:window.pwned=4">raw link</a>',
    '<svg onload="window.pwned=5"><circle r=10></circle></svg>',
    '<iframe srcdoc="<script>parent.pwned=6</script>"></iframe>',
    '<details open ontoggle="window.pwned=7"><summary>x</summary>y</details>',
    '<math><mtext><table><mglyph><style><img src=x onerror="window.pwned=8">',
    '<form><button formaction="javascript:window.pwned=9">go</button></form>',
    '<object data="javascript:window.pwned=10"></object>',
    "![img](javascript:window.pwned=11)",
    '<a href="  JaVaScRiPt:window.pwned=12">spaced</a>',
    '<div style="position:fixed;inset:0;background:red" onclick="window.pwned=13">overlay</div>',
    '<input autofocus onfocus="window.pwned=14">',
    '<video><source onerror="window.pwned=15"></video>',
    '<body onload="window.pwned=16">',
    "<a href=\"data:text/html,<script>alert(1)</script>\">data link</a>",
    '<p id="jt-root" name="harness">clobber</p>',
]
