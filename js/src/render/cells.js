/**
 * Notebook cells the model proposes or edits, as the user sees them before and after: a code
 * cell syntax-highlighted (highlight.js's tokens built into DOM as text, never an HTML string),
 * a markdown cell rendered, an edit as a line diff. `renderCode` is also how a tool call's code
 * arguments are shown (codeargs.js). Used by the approval prompt
 * (prompt-forms.js) and by the saved tool card (toolcard.js), so both show the same thing.
 */
import hljs from "highlight.js/lib/core";
import python from "highlight.js/lib/languages/python";
import sql from "highlight.js/lib/languages/sql";
import { h } from "../util/dom.js";
import { lex, renderTokens } from "./markdown.js";

hljs.registerLanguage("python", python);
hljs.registerLanguage("sql", sql);

/** The languages `renderCode` highlights; any other text is shown plain. */
export const CODE_LANGUAGES = new Set(["python", "sql"]);

/**
 * Code as a highlighted block: the exact text, whitespace kept, one text node per token.
 * The DOM is built from highlight.js's token tree (its scopes become `hljs-*` classes), so
 * the code is never an HTML string and never parsed: `<img onerror>` in code stays text.
 * @param {string} code
 * @param {string | null} [language] one of CODE_LANGUAGES; anything else: plain text
 * @returns {HTMLElement}
 */
export function renderCode(code, language = "python") {
  const known = language !== null && CODE_LANGUAGES.has(language);
  const el = h("code", { class: `jt-code hljs${known ? ` language-${language}` : ""}` });
  try {
    if (!known) throw new Error("plain text");
    appendTokens(el, hljs.highlight(code, { language, ignoreIllegals: true }), code);
  } catch {
    el.replaceChildren(document.createTextNode(code)); // a grammar failure must not lose text
  }
  return h("pre", { class: "jt-cell-code" }, el);
}

/**
 * @typedef {{addText(text: string): void, openNode(node: {scope?: string}): void,
 *            closeNode(node: {scope?: string}): void}} TokenBuilder
 */

/**
 * Walk highlight.js's token tree into `root`: text as text nodes, each scope as a span.
 * @param {HTMLElement} root
 * @param {import("highlight.js").HighlightResult} result
 * @param {string} code the highlighted text, which the spans must hold exactly
 */
function appendTokens(root, result, code) {
  const tree = /** @type {{walk(builder: TokenBuilder): void}} */ (
    /** @type {unknown} */ (result._emitter)
  );
  /** @type {Element[]} */
  const stack = [root];
  const top = () => stack[stack.length - 1];
  /** @type {TokenBuilder} */
  const builder = {
    addText: (text) => top().appendChild(document.createTextNode(text)),
    openNode: (node) => {
      if (!node.scope) return;
      stack.push(top().appendChild(h("span", { class: scopeClass(node.scope) })));
    },
    closeNode: (node) => {
      if (node.scope) stack.pop();
    },
  };
  tree.walk(builder);
  if (root.textContent !== code) throw new Error("the tokens lost text");
}

/**
 * highlight.js's class names for a scope: `title.function` → `hljs-title function_`.
 * @param {string} scope
 */
function scopeClass(scope) {
  if (scope.startsWith("language:")) return scope.replace("language:", "language-");
  const [first, ...rest] = scope.split(".");
  return [`hljs-${first}`, ...rest.map((part, i) => `${part}${"_".repeat(i + 1)}`)].join(" ");
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

/** The tools whose calls propose a notebook cell's text, and so are drawn as one. */
export const CELL_TOOLS = new Set(["insert_cell", "edit_cell"]);

/** The tools that run, delete or move an existing cell: drawn from the kernel's preview. */
export const STEP_TOOLS = new Set(["run_cell", "delete_cell", "move_cell"]);

/**
 * Whether a saved call went to the kernel's built-in tool of its name, as its response says
 * (`builtin`), and so is drawn as that built-in: a notebook's own tool of the same name
 * (`builtin: false`) is drawn as any tool. A response saved before the kernel said so (no
 * `builtin`) is drawn by its tool's name, as it was then. A label, never a permission.
 * @param {{builtin?: unknown} | null | undefined} response
 */
export function savedBuiltin(response) {
  return typeof response?.builtin === "boolean" ? response.builtin : true;
}

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
  if (STEP_TOOLS.has(name)) return stepPreview(preview);
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
 * What a `run_cell` / `delete_cell` / `move_cell` acts on, from the kernel's preview (these
 * calls carry only indexes; no button next to it inserts or copies text): the cell, and for a
 * deletion a line per output that goes with it.
 * @param {import("../protocol/types.js").Preview | null | undefined} preview
 * @returns {HTMLElement | null}
 */
function stepPreview(preview) {
  if (!preview || typeof preview.source !== "string") return null;
  const cell = renderCell(preview.cell_type === "markdown" ? "markdown" : "code", preview.source);
  const outputs = Array.isArray(preview.outputs) ? preview.outputs.map(String) : [];
  if (preview.kind !== "delete") return cell;
  return h(
    "div",
    null,
    cell,
    h(
      "ul",
      { class: "jt-cell-outputs" },
      ...(outputs.length ? outputs : ["(no outputs)"]).map((o) => h("li", null, `→ ${o}`)),
    ),
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
