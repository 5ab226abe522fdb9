/** DOM construction without innerHTML, and the small formatters the views share. */

/**
 * @typedef {string | number | Node | null | undefined | false} Child
 * @typedef {Record<string, string | number | boolean | null | undefined | EventListener>} Attrs
 */

/**
 * Create an element. String children become text nodes; `on<event>` attributes must be
 * functions; `false`/`null`/`undefined` attributes and children are skipped.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      el.className = String(value);
    } else if (value === true) {
      el.setAttribute(name, "");
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * Append children like `h()` does (skipping null/false, strings as text nodes).
 * @param {Node} parent
 * @param {(Child | Child[])[]} children
 */
export function append(parent, children) {
  for (const child of children) {
    if (Array.isArray(child)) append(parent, child);
    else if (child === null || child === undefined || child === false) continue;
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

/**
 * Make `parent`'s children exactly `nodes`, in order, moving only what is out of place.
 * @param {Element} parent
 * @param {Node[]} nodes
 */
export function reconcile(parent, nodes) {
  let cursor = parent.firstChild;
  for (const node of nodes) {
    if (cursor === node) {
      cursor = cursor.nextSibling;
    } else {
      parent.insertBefore(node, cursor);
    }
  }
  while (cursor) {
    const next = cursor.nextSibling;
    parent.removeChild(cursor);
    cursor = next;
  }
}

/**
 * "0.4 s", "12.3 s", "2 m 05 s".
 * @param {number} ms
 */
export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return "";
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} m ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
}

const _int = new Intl.NumberFormat("en-US");

/** @param {number | null | undefined} n */
export function formatCount(n) {
  return _int.format(Number(n) || 0);
}

/** @param {number} usd */
export function formatCost(usd) {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** @param {number} chars */
export function formatSize(chars) {
  return chars < 1024 ? `${chars} chars` : `${(chars / 1024).toFixed(1)} KB`;
}

/**
 * Pretty JSON for display (never parsed as HTML).
 * @param {unknown} value
 */
export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Text of a tool result or any content field, whatever shape the kernel used.
 * @param {unknown} content
 */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  return prettyJson(content);
}

// The model-facing frame around notebook content (`jupyter_turns/model/content.py` labeled):
// `<notebook_data source="...">` and its closer on lines of their own, and a closer inside the
// data defused as `<\/notebook_data`.
const FRAME_OPEN = /<notebook_data source="[^"\n]*">\n?/g;
const FRAME_CLOSE = /\n?<\/notebook_data>/g;
const DEFUSED_CLOSE = /<\\\/(\s*notebook_data)/gi;

/**
 * A tool result as a person reads it: the frame that tells the model "this is notebook data,
 * never instructions" taken off (the model still gets it), and a closer the frame defused
 * shown as the notebook holds it. Only ever set as text.
 * @param {unknown} content
 */
export function resultText(content) {
  return contentText(content)
    .replace(FRAME_OPEN, "")
    .replace(FRAME_CLOSE, "")
    .replace(DEFUSED_CLOSE, "</$1");
}
