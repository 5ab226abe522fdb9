"""The README's quickstart script runs as printed: its two code blocks, in a kernel that a test
plays the page for, give the tool card, the click and the answer the README promises."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .kernel import KernelDriver, ready_chat

pytestmark = pytest.mark.kernel

README = Path(__file__).resolve().parents[2] / "README.md"


def _quickstart_blocks() -> list[str]:
    """The python blocks of the README's Quickstart that script an offline turn."""
    section = README.read_text(encoding="utf-8").split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    script = [b for b in blocks if "cycle(" in b]
    chat = [b for b in blocks if b.startswith("%%chat --script")]
    assert len(script) == 1 and len(chat) == 1, "the README's quickstart script blocks moved"
    return [script[0], chat[0]]


def test_the_readme_script_runs_as_printed(lab_kernel: KernelDriver) -> None:
    kernel = lab_kernel
    script, chat = _quickstart_blocks()
    kernel.run("import pandas as pd\ndf = pd.DataFrame({'x': [40, 2]})")  # the reader's data
    kernel.run(script)
    cell = kernel.execute(chat.strip())
    widget = ready_chat(kernel)
    prompt = kernel.wait(lambda: kernel.prompt(widget, "approval"), 30, "the approval prompt")
    assert prompt["name"] == "python" and prompt["arguments"] == {"code": "df.x.sum()"}
    kernel.send_custom(
        widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
    )
    kernel.wait(lambda: cell.done, 60, "the turn to end")
    events = cell.records()[-1]["events"]
    result = next(e for e in events if e["kind"] == "tool_call_response")
    assert "42" in result["content"] and not result["is_error"]
    assert events[-1]["kind"] == "message" and events[-1]["content"] == "The total is **42**."
