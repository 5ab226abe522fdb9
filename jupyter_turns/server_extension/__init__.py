"""The Jupyter server extension: the pre-save hook that adds a chat record's HTML transcript
(:mod:`.save_hook`), and the page setting that tells the lab extension it runs.

Enabled by the package's ``jupyter_server_config.d/jupyter_turns.json`` (installed with the
package, next to the lab extension). A page whose server has it says so to the kernel
(``html_on_save`` in its answers on the metadata comm: ``js/labextension/index.js``), and the
kernel then leaves the transcript out of a turn's final record that this page saves.
"""

from __future__ import annotations

from typing import Any

from .save_hook import add_transcripts

__all__ = ["PAGE_SETTING", "add_transcripts"]

# the page configuration key the lab extension reads (js/labextension/constants.js)
PAGE_SETTING = "jupyterTurnsHtmlOnSave"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyter_turns.server_extension"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the hook on the server's contents manager; tell the pages it is there."""
    serverapp.contents_manager.register_pre_save_hook(add_transcripts)
    page_config = serverapp.web_app.settings.setdefault("page_config_data", {})
    page_config[PAGE_SETTING] = True
    serverapp.log.info("jupyter_turns: chat records get their HTML transcript when saved")
