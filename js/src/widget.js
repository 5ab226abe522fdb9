/**
 * jupyter_turns chat widget — the anywidget ESM entry point.
 *
 * Protocol, stats counters and module map: see js/README.md.
 */
import css from "./styles.css";
import { renderRecord as drawRecord } from "./record.js";
import { ChatView } from "./live/view.js";

/** @typedef {import("./protocol/types.js").Model} Model */

const STYLE_ID = "jupyter-turns-style";

/** One <style> per document, refreshed if a newer bundle brings different CSS. */
function injectStyles() {
  let style = document.getElementById(STYLE_ID);
  if (!style) {
    style = document.createElement("style");
    style.id = STYLE_ID;
    document.head.appendChild(style);
  }
  if (style.textContent !== css) style.textContent = css;
}

/** @param {{model: Model}} _context */
function initialize(_context) {
  injectStyles();
}

/**
 * @param {{model: Model, el: HTMLElement}} context
 * @returns {() => void} cleanup
 */
function render({ model, el }) {
  injectStyles();
  const view = new ChatView(model, el);
  return () => view.dispose();
}

/**
 * Draw a saved record (the lab extension's mime renderer imports this bundle for it), with the
 * cards' Undo and "Add to notebook" when the extension gives `actions`.
 * @param {unknown} record
 * @param {HTMLElement} host
 * @param {import("./render/cardactions.js").CardActions | null} [actions]
 * @returns {() => void} cleanup
 */
export function renderRecord(record, host, actions = null) {
  injectStyles();
  return drawRecord(record, host, actions);
}

export default { initialize, render };
