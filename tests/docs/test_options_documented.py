"""Every public knob is documented: each ``ChatMagics`` setting, each ``%%chat`` option and each
``%chat`` command has a row in docs/options.md, the reference page the README and the guides
link to. A setting or command added without its row fails here, not in a reader's notebook.
"""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_turns.kernel.cell_options import _parser
from jupyter_turns.kernel.commands import COMMANDS
from jupyter_turns.kernel.magic import ChatMagics

OPTIONS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "options.md"


def _first_cells(heading: str) -> str:
    """The first column of the table under `## heading` (or of the page's first table when
    `heading` is empty): the names a row documents."""
    text = OPTIONS_PAGE.read_text(encoding="utf-8")
    if heading:
        assert f"\n## {heading}\n" in text, f"docs/options.md has no '## {heading}' section"
        text = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    else:
        text = text.split("\n## ", 1)[0]
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    return "\n".join(re.split(r"(?<!\\)\|", row)[1] for row in rows)


def test_every_setting_has_a_row() -> None:
    named = set(re.findall(r"`(\w+)`", _first_cells("Settings")))
    traits = set(ChatMagics.class_trait_names(config=True))
    assert sorted(traits - named) == [], "ChatMagics settings missing from docs/options.md"
    assert sorted(named - traits) == [], "docs/options.md names settings that do not exist"


def test_every_cell_option_has_a_row() -> None:
    named = set(re.findall(r"(--[a-z-]+)", _first_cells("")))
    options = {o for o in _parser()._option_string_actions if o.startswith("--")}
    assert sorted(options - named) == [], "%%chat options missing from docs/options.md"
    assert sorted(named - options) == [], "docs/options.md names options that do not exist"


def test_every_chat_command_has_a_row() -> None:
    named = set(re.findall(r"%chat ([a-z]+)", _first_cells("Commands")))
    commands = set(COMMANDS) - {"help", "?"} | {"fix"}  # fix is read by the magic itself
    assert sorted(commands - named) == [], "%chat commands missing from docs/options.md"
    assert sorted(named - commands) == [], "docs/options.md names commands that do not exist"
