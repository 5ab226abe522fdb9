/**
 * The mime renderer for a saved conversation record (`application/vnd.jupyter-turns+json`).
 *
 * It draws the record through the live widget's own views: it imports the widget bundle this
 * extension serves as a static file and calls its `renderRecord`, so a reopened notebook looks
 * like the live conversation minus the prompts (its cards keep Undo and "Add to notebook"). The views sanitize every text (DOMPurify) and
 * run nothing from the record, so the renderer is registered as safe: an untrusted notebook
 * renders too.
 */
import { Widget } from "@lumino/widgets";

import { RECORD_MIME } from "./constants.js";

const FILE = "jupyter_turns/static/jupyter-turns-widget.js";

/** @type {Promise<any> | null} */
let loading = null;
/** @type {any} the bundle once loaded: later records are drawn synchronously */
let loaded = null;
/** @type {((node: HTMLElement) => object) | null} the cards' buttons (actions.js) */
let actionsFor = null;

/**
 * Give the cards of every record drawn from now on their Undo / "Add to notebook" buttons.
 * @param {(node: HTMLElement) => object} factory
 */
export function setCardActions(factory) {
  actionsFor = factory;
}

/** The widget bundle's URL, from the page's configuration (JupyterLab and Notebook 7). */
function bundleUrl() {
  const node = document.getElementById("jupyter-config-data");
  const config = node ? JSON.parse(node.textContent || "{}") : {};
  const root = config.fullLabextensionsUrl
    ? String(config.fullLabextensionsUrl)
    : `${String(config.baseUrl ?? "/")}lab/extensions`;
  return new URL(`${root.replace(/\/$/, "")}/${FILE}`, document.baseURI).href;
}

/** Load the widget bundle (the plugin starts this at once, so records rarely wait). */
export function loadBundle() {
  loading ??= import(/* webpackIgnore: true */ bundleUrl()).then((module) => (loaded = module));
  return loading;
}

export class RecordRenderer extends Widget {
  /** @param {{mimeType: string}} options */
  constructor(options) {
    super();
    this.mimeType = options.mimeType;
    this.addClass("jp-RenderedJupyterTurns");
    this.node.dataset.mimeType = options.mimeType; // as JupyterLab's own renderers mark theirs
    /** @type {(() => void) | null} */
    this.cleanup = null;
  }

  /** @param {{data: Record<string, unknown>}} model */
  async renderModel(model) {
    const record = model.data[this.mimeType];
    this.cleanup?.();
    this.cleanup = null;
    this.node.replaceChildren();
    // Synchronously when the bundle is there: the widget this output replaces is gone in the
    // same task, so the conversation never blinks out.
    if (loaded) {
      this.cleanup = loaded.renderRecord(record, this.node, actionsFor?.(this.node) ?? null);
      return;
    }
    try {
      const bundle = await loadBundle();
      this.cleanup = bundle.renderRecord(record, this.node, actionsFor?.(this.node) ?? null);
    } catch (err) {
      loading = null;
      this.node.textContent = `jupyter_turns: the conversation view did not load (${String(err)}).`;
    }
  }

  dispose() {
    this.cleanup?.();
    this.cleanup = null;
    super.dispose();
  }
}

/** An IRenderMime.IRendererFactory. */
export const recordRendererFactory = {
  safe: true,
  mimeTypes: [RECORD_MIME],
  createRenderer: (/** @type {any} */ options) => new RecordRenderer(options),
};
