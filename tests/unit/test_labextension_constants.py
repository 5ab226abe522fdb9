"""The names the lab extension shares with the kernel are spelled once per language: both agree.

``js/labextension/constants.js`` holds the extension's mime types, comm targets and metadata
key; the kernel has its own constants. A comm target or key spelled differently on one side
fails silently at run time (the kernel's comm is never answered, metadata lands under another
key), so this compares each ``export const`` the kernel shares with its Python twin.
"""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_turns.editing.control import CONTROL_TARGET
from jupyter_turns.kernel.persist import COMM_TARGET
from jupyter_turns.record.format import META_KEY, RECORD_MIME
from jupyter_turns.server_extension import PAGE_SETTING

JS = Path(__file__).resolve().parents[2] / "js" / "labextension" / "constants.js"

SHARED = {
    "RECORD_MIME": RECORD_MIME,
    "METADATA_KEY": META_KEY,
    "COMM_TARGET": COMM_TARGET,
    "CONTROL_TARGET": CONTROL_TARGET,
    "HTML_ON_SAVE": PAGE_SETTING,
}


def _js_constants() -> dict[str, str]:
    """Each ``export const NAME = "value";`` of constants.js."""
    pattern = re.compile(r'^export const (\w+) = "([^"]*)";$', re.MULTILINE)
    return dict(pattern.findall(JS.read_text(encoding="utf-8")))


def test_the_extension_and_the_kernel_spell_shared_names_the_same() -> None:
    js = _js_constants()
    assert {name: js.get(name) for name in SHARED} == SHARED
