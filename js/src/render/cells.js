/**
 * Notebook cells the model proposes or edits, as the user sees them before and after: a code
 * cell syntax-highlighted (highlight.js, its HTML through DOMPurify like every HTML string), a
 * markdown cell rendered, an edit as a line diff. Used by the approval prompt
 * (prompt-forms.js) and by the saved tool card (toolcard.js), so both show the same thing.
 */
import hljs from "highlight.js/lib/core";
import python from "highlight.js/lib/languages/python";
import { h } from "../dom.js";
import { lex, renderTokens, sanitizeHtml } from "./markdown.js";

hljs.registerLanguage("python", python);

/**
 * Code as highlighted, sanitized DOM.
 * @param {string} code
 * @returns {HTMLElement}
 */
export function renderCode(code) {
  const el = h("code", { class: "jt-code hljs language-python" });
  try {
    el.appendChild(sanitizeHtml(hljs.highlight(code, { language: "python" }).value));
  } catch {
    el.textContent = code; // a grammar failure must not lose the text
  }
  return h("pre", { class: "jt-cell-code" }, el);
}

/**
 * A proposed cell as it will look: code highlighted, markdown rendered.
 * @param {string} cellType
 * @param {string} source
 * @returns {HTMLElement}
 */
export function renderCell(cellType, source) {
  if (cellType === "markdown") {
    const tokens = lex(source);
    const body = h("div", { class: "jt-markdown" });
    body.appendChild(renderTokens([...tokens], tokens.links));
    return h("div", { class: "jt-cell jt-cell-markdown" }, body);
  }
  return h("div", { class: "jt-cell jt-cell-code-wrap" }, renderCode(source));
}

/**
 * A unified line diff, one line per row, added and removed lines marked.
 * @param {string} diff
 * @returns {HTMLElement}
 */
export function renderDiff(diff) {
  const rows = String(diff)
    .split("\n")
    .filter((line) => !line.startsWith("---") && !line.startsWith("+++"))
    .map((line) => {
      const kind = line.startsWith("+")
        ? "add"
        : line.startsWith("-")
          ? "del"
          : line.startsWith("@@")
            ? "hunk"
            : "same";
      return h("div", { class: `jt-diff-line jt-diff-${kind}` }, line || " ");
    });
  return h("pre", { class: "jt-diff" }, ...rows);
}

/**
 * What an `insert_cell` / `edit_cell` call proposes (its saved or prompted `preview`), or null.
 * @param {unknown} preview
 * @returns {HTMLElement | null}
 */
export function renderPreview(preview) {
  if (!preview || typeof preview !== "object") return null;
  const p = /** @type {Record<string, unknown>} */ (preview);
  if (p.kind === "insert") {
    const type = p.cell_type === "markdown" ? "markdown" : "code";
    return renderCell(type, typeof p.source === "string" ? p.source : "");
  }
  if (p.kind === "edit") return renderDiff(typeof p.diff === "string" ? p.diff : "");
  return null;
}

/**
 * Copy `text` to the clipboard; the button says whether it worked.
 * @param {string} text
 * @param {HTMLButtonElement} button
 */
export function copyText(text, button) {
  const label = button.textContent;
  const done = (/** @type {string} */ said) => {
    button.textContent = said;
    setTimeout(() => (button.textContent = label), 1500);
  };
  navigator.clipboard?.writeText(text).then(
    () => done("Copied"),
    () => done("Copy failed"),
  ) ?? done("Copy failed");
}
