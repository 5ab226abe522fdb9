/**
 * Notebook cells the model proposes or edits, as the user sees them before and after: a code
 * cell syntax-highlighted (highlight.js, its HTML through DOMPurify like every HTML string), a
 * markdown cell rendered, an edit as a line diff. Used by the approval prompt
 * (prompt-forms.js) and by the saved tool card (toolcard.js), so both show the same thing.
 */
import hljs from "highlight.js/lib/core";
import python from "highlight.js/lib/languages/python";
import { h } from "../util/dom.js";
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

/** The tools whose calls propose a notebook cell, and so are drawn as one. */
export const CELL_TOOLS = new Set(["insert_cell", "edit_cell"]);

/**
 * What an `insert_cell` / `edit_cell` call proposes, drawn from the call's own arguments —
 * the text a button would insert or copy — or null for any other tool. A `preview` (saved in
 * a record, which may come from someone else's notebook) is used only for an edit's diff, and
 * only when every line it says the cell will have is the call's new text at that place;
 * otherwise the new text itself is shown.
 * @param {string} name the tool's name
 * @param {Record<string, unknown>} args the call's arguments
 * @param {import("../protocol/types.js").Preview | null | undefined} preview the kernel's preview
 *   (a diff for an edit)
 * @returns {HTMLElement | null}
 */
export function callPreview(name, args, preview) {
  const source = typeof args.source === "string" ? args.source : "";
  if (name === "insert_cell") {
    return renderCell(args.cell_type === "markdown" ? "markdown" : "code", source);
  }
  if (name !== "edit_cell") return null;
  const diff = preview?.kind === "edit" ? preview.diff : null;
  if (typeof diff === "string" && diffMatches(diff, source)) return renderDiff(diff);
  return h(
    "div",
    null,
    h("div", { class: "jt-muted" }, "The cell's new text:"),
    renderCode(source),
  );
}

/**
 * Whether every hunk of a unified diff has, on its new side, exactly the lines of `source`
 * its header names (`+c,d`: lines c to c+d-1), and there is at least one hunk.
 * @param {string} diff
 * @param {string} source
 */
export function diffMatches(diff, source) {
  const lines = source.split(/\r\n|\n|\r/);
  const hunks = diff.split("\n").reduce((found, line) => {
    const head = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (head) found.push({ start: Number(head[1]), count: Number(head[2] ?? 1), lines: [] });
    else if (found.length && (line.startsWith("+") || line.startsWith(" ")))
      found[found.length - 1].lines.push(line.slice(1));
    return found;
  }, /** @type {{start: number, count: number, lines: string[]}[]} */ ([]));
  return (
    hunks.length > 0 &&
    hunks.every((hunk) => {
      const first = Math.max(hunk.start - 1, 0);
      const expected = hunk.count === 0 ? [] : lines.slice(first, first + hunk.count);
      return (
        hunk.lines.length === hunk.count &&
        expected.length === hunk.count &&
        hunk.lines.every((line, i) => line === expected[i])
      );
    })
  );
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
