"""The ESM a ChatWidget ships: the whole front-end bundle, or a loader of the extension's copy.

In JupyterLab and Notebook 7 the lab extension serves the bundle as a static file, so a widget's
comm message and saved state carry only a few hundred bytes of loader; elsewhere (VS Code, or
``inline_widget``) the widget carries the bundle itself.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["widget_source"]

_STATIC = Path(__file__).parent.parent / "static"

_MISSING = (
    "export default { render({ el }) { el.textContent = "
    "'jupyter_turns: the widget bundle is missing; reinstall the package (pip install .)'; } }"
)

# A small module that imports the full bundle from the lab extension's static files, so a
# widget does not carry the ~120 KB bundle in its comm message and in saved widget state.
_LOADER = """
const FILE = "jupyter_turns/static/jupyter-turns-widget.js?v=__VERSION__";
let loading;
function base() {
  const node = document.getElementById("jupyter-config-data");
  if (!node) return null;
  const config = JSON.parse(node.textContent || "{}");
  if (config.fullLabextensionsUrl) return config.fullLabextensionsUrl.replace(/\\/$/, "");
  return config.baseUrl ? config.baseUrl.replace(/\\/$/, "") + "/lab/extensions" : null;
}
function load() {
  const root = base();
  if (!root) return Promise.reject(new Error("not in JupyterLab or Notebook 7"));
  // the ESM runs from a blob: URL, so the path must be made absolute against the page
  const url = new URL(`${root}/${FILE}`, document.baseURI).href;
  return import(/* @vite-ignore */ url).then((m) => m.default);
}
export default {
  async initialize(context) {
    loading ??= load();
    const widget = await loading.catch(() => null);
    return widget?.initialize?.(context);
  },
  async render(context) {
    loading ??= load();
    try {
      return (await loading).render(context);
    } catch (error) {
      context.el.textContent =
        "jupyter_turns: the chat view needs the jupyter_turns JupyterLab extension " +
        "(pip install jupyter_turns, then reload the page). The saved transcript is below.";
    }
  },
};
"""


def widget_source(inline: bool) -> str:
    """The ESM a ChatWidget sends: the full bundle, or the loader of the extension's copy."""
    bundle = _STATIC / "widget.js"
    if not bundle.exists():
        return _MISSING
    data = bundle.read_bytes()
    if inline:
        return data.decode()
    version = hashlib.sha256(data).hexdigest()[:12]
    return _LOADER.replace("__VERSION__", version)
