/**
 * A tool call's arguments as a person reads them before and after it runs: each code argument
 * as a multi-line, highlighted block — exactly the text that will run — and the others as JSON.
 * The approval prompt (prompt-forms.js), the live card and a saved card (toolcard.js) all
 * draw them here, so the three show the same thing.
 *
 * The rule, in this one place: an argument is code when its value is a string and its name
 * is `code` or `source` (highlighted as Python, the kernel's language; an `insert_cell`
 * markdown cell's `source` is shown plain) or `sql` (highlighted as SQL). It reads only the
 * call's name and arguments, because that is all a saved card has (no schema), and a call
 * must look the same in the prompt, the live card and the reopened notebook.
 *
 * Tool text is only ever set as text (renderCode builds highlighted DOM, never HTML).
 */
import { h, prettyJson } from "../util/dom.js";
import { renderCode } from "./cells.js";

/** Argument names that hold code, and the language each is highlighted as. */
export const CODE_ARGUMENTS = /** @type {Readonly<Record<string, string>>} */ ({
  code: "python",
  source: "python",
  sql: "sql",
});

/** The header summary's longest first line, in characters. */
const SUMMARY_CHARS = 72;

/**
 * The call's code arguments, in argument order: `[name, text, language or null for plain]`.
 * @param {string} name the tool's name
 * @param {Record<string, unknown>} args the call's arguments
 * @returns {[string, string, string | null][]}
 */
export function codeArguments(name, args) {
  /** @type {[string, string, string | null][]} */
  const found = [];
  for (const [key, value] of Object.entries(args ?? {})) {
    if (typeof value !== "string" || !Object.hasOwn(CODE_ARGUMENTS, key)) continue;
    const markdown = name === "insert_cell" && key === "source" && args.cell_type === "markdown";
    found.push([key, value, markdown ? null : CODE_ARGUMENTS[key]]);
  }
  return found;
}

/**
 * The card header's one-line summary: the first non-blank line of the first code argument
 * (cut at SUMMARY_CHARS, "+N lines" when there are more), or the compact JSON cut at 80.
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @returns {string}
 */
export function callSummary(name, args) {
  const [first] = codeArguments(name, args);
  if (!first) {
    const compact = compactJson(args);
    return compact.length > 80 ? `(${compact.slice(0, 79)}…)` : `(${compact})`;
  }
  const lines = first[1].split(/\r\n|\n|\r/);
  const line = (lines.find((l) => l.trim()) ?? "").trim();
  const cut = line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line;
  const more = lines.length > 1 ? ` … +${lines.length - 1} line${lines.length > 2 ? "s" : ""}` : "";
  return `(${cut}${more})`;
}

/**
 * The Arguments block: each code argument under its name as a highlighted block, then the
 * other arguments as pretty JSON (left out when there are none besides the code).
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @returns {HTMLElement}
 */
export function renderArguments(name, args) {
  const code = codeArguments(name, args);
  if (!code.length) return h("pre", { class: "jt-args-json" }, prettyJson(args ?? {}));
  const names = new Set(code.map(([key]) => key));
  const rest = Object.fromEntries(Object.entries(args).filter(([key]) => !names.has(key)));
  return h(
    "div",
    { class: "jt-args" },
    ...code.map(([key, text, language]) =>
      h(
        "div",
        { class: "jt-code-arg", "data-arg": key },
        h("div", { class: "jt-arg-name" }, key),
        renderCode(text, language),
      ),
    ),
    Object.keys(rest).length ? h("pre", { class: "jt-args-json" }, prettyJson(rest)) : null,
  );
}

/** @param {unknown} value */
function compactJson(value) {
  try {
    return JSON.stringify(value ?? {}) ?? "";
  } catch {
    return String(value);
  }
}
