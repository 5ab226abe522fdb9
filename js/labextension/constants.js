/**
 * The names the extension shares with the kernel and between its own modules: mime types, comm
 * targets, the metadata key, and the refusals every request handler gives. Each has its twin on
 * the Python side (named where it is); tests/unit/test_labextension_constants.py keeps them
 * equal. No imports: every module of the extension may use it.
 */

/** A saved conversation record (`jupyter_turns/record/format.py`'s RECORD_MIME). */
export const RECORD_MIME = "application/vnd.jupyter-turns+json";

/** The live chat widget's output (an ipywidgets view). */
export const WIDGET_MIME = "application/vnd.jupyter.widget-view+json";

/** The cell and notebook metadata key the kernel writes (`record/format.py`'s META_KEY). */
export const METADATA_KEY = "jupyter_turns";

/** The comm target this page registers for the kernel (`kernel/persist.py`'s COMM_TARGET). */
export const COMM_TARGET = "jupyter_turns.metadata";

/** The kernel's comm target for card actions (`editing/control.py`'s CONTROL_TARGET). */
export const CONTROL_TARGET = "jupyter_turns.control";

/** The refusal of a request that arrives while its notebook is not open. */
export const NOTEBOOK_CLOSED = "the notebook is closed";

/** The refusal of a request without a string `request_id` to answer under. */
export const MISSING_REQUEST_ID = "missing request_id (a string)";

/**
 * The page configuration key the server extension sets where it adds a finished record's HTML
 * transcript as it saves a notebook (`jupyter_turns/server_extension/__init__.py`'s PAGE_SETTING).
 */
export const HTML_ON_SAVE = "jupyterTurnsHtmlOnSave";
