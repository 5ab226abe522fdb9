"""The prompt cache's lifetime in a real kernel (issue 28, point 2): ``%config
ChatMagics.cache_ttl``, what ``%chat settings`` says of it, the request it shapes and what
``%chat cost`` then shows of the cache writes kept an hour.

The Anthropic test server bills the requests with the prompt-caching simulator, so the usage the
kernel reads back is what the API would report for them.
"""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_turns.providers.anthropic import DEFAULT_MODEL
from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response
from tests.support.prompt_cache import PromptCache

from .kernel import KernelDriver

SYSTEM = "Answer briefly; show the code you ran. " * 150  # over the model's minimum: cached


def _row(plain: str, setting: str) -> list[str]:
    [line] = [line for line in plain.splitlines() if line.startswith(f"  {setting}  ")]
    return re.split(r"\s{2,}", line.strip())[1:]


def _settings(kernel: KernelDriver) -> str:
    cell = kernel.run("%chat settings")
    [shown] = [o["data"] for o in cell.outputs if o["output_type"] == "display_data"]
    return str(shown["text/plain"])


def test_cache_ttl_1h_asks_for_the_hour_and_cost_shows_the_writes_kept_an_hour(
    tmp_path: Path,
) -> None:
    with AnthropicTestServer() as server:
        server.cache = PromptCache(lambda: 0.0)
        server.enqueue(Reply.sse(sse_text_response(["Hi."], model=DEFAULT_MODEL)))
        env = {"ANTHROPIC_API_KEY": "sk-ant-api03-test-000", "ANTHROPIC_BASE_URL": server.url}
        kernel = KernelDriver(env=env, cwd=str(tmp_path))
        try:
            kernel.run("%load_ext jupyter_turns")
            default = _settings(kernel)
            wrong = kernel.run('%config ChatMagics.cache_ttl = "2h"')
            kernel.run('%config ChatMagics.cache_ttl = "1h"')
            kernel.run(f"%config ChatMagics.system = {SYSTEM!r}")
            kernel.run("%%chat --builtins none\nHello")
            cost = kernel.run("%chat cost").stdout()
            chosen = _settings(kernel)
        finally:
            kernel.close()
        [body] = [r.body for r in server.requests if r.path.split("?")[0] == "/v1/messages"]
    assert _row(default, "prompt cache lifetime") == ["auto", "default"]
    # a lifetime the API does not have is refused where %config says so
    assert "cache_ttl' trait of a ChatMagics instance expected any of ['auto', '5m', '1h']" in (
        "".join(o.get("text", "") for o in wrong.outputs)
    )
    assert _row(chosen, "prompt cache lifetime") == ["1h", "%config"]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    written = re.search(r"([\d,]+) cache write \(([\d,]+) kept 1 h\)", cost)
    assert written is not None, cost
    assert written.group(1) == written.group(2) and int(written.group(1).replace(",", "")) > 1024
