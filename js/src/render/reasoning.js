/**
 * One reasoning block, live or saved, in the display mode chosen by `settings.reasoning`:
 *
 *   full        the text as markdown, in an open <details> (collapsible)
 *   hidden      a one-line "reasoning hidden" marker
 *   truncate:N  the first N characters, then "…"
 *   progress    "thinking… N words" while it streams; afterwards a collapsed <details>
 *   static      "Reasoning…" while it streams; afterwards a collapsed "Reasoned" <details>
 *
 * Collapsed bodies are rendered on first open, so reasoning nobody reads costs no parsing.
 */
import { h } from "../util/dom.js";
import { MarkdownStream } from "./stream.js";

/** @typedef {import("../util/stats.js").Stats} Stats */
/** @typedef {{name: "full"|"hidden"|"truncate"|"progress"|"static", limit: number}} Mode */

/**
 * @param {unknown} setting e.g. "full", "truncate:200"
 * @returns {Mode}
 */
export function parseMode(setting) {
  const text = typeof setting === "string" ? setting.trim() : "";
  const truncate = /^truncate:(\d+)$/.exec(text);
  if (truncate) return { name: "truncate", limit: Number(truncate[1]) };
  if (text === "hidden" || text === "progress" || text === "static") {
    return { name: text, limit: 0 };
  }
  return { name: "full", limit: 0 };
}

/**
 * @param {Mode} a
 * @param {Mode} b
 */
export function sameMode(a, b) {
  return a.name === b.name && a.limit === b.limit;
}

export class ReasoningView {
  /**
   * @param {Mode} mode
   * @param {Stats} stats
   */
  constructor(mode, stats) {
    this.mode = mode;
    this.stats = stats;
    this.el = h("div", { class: `jt-reasoning jt-reasoning-${mode.name}` });
    /** @type {string[]} */
    this.parts = [];
    this.length = 0;
    this.words = 0;
    this.inWord = false;
    this.prefix = "";
    this.dirty = true;
    this.finished = false;
    /** @type {MarkdownStream | null} */
    this.md = null;
    /** @type {HTMLElement | null} */
    this.line = null;
    if (mode.name === "full") {
      this.md = new MarkdownStream(stats);
      this.el.appendChild(
        h("details", { open: true }, h("summary", null, "Reasoning"), this.md.el),
      );
    } else if (mode.name === "hidden") {
      this.el.appendChild(h("span", { class: "jt-muted" }, "reasoning hidden"));
    } else {
      this.line = h("span", { class: "jt-muted" });
      this.el.appendChild(this.line);
    }
  }

  /** @param {string} chunk */
  append(chunk) {
    if (!chunk) return;
    this.parts.push(chunk);
    this.length += chunk.length;
    this.countWords(chunk);
    if (this.prefix.length <= this.mode.limit) {
      this.prefix += chunk.slice(0, this.mode.limit + 1 - this.prefix.length);
    }
    this.md?.append(chunk);
    this.dirty = true;
  }

  text() {
    if (this.parts.length > 1) this.parts = [this.parts.join("")];
    return this.parts[0] ?? "";
  }

  /** Update the DOM for text that arrived since the last frame. */
  render() {
    if (!this.dirty) return;
    this.dirty = false;
    const { name } = this.mode;
    if (name === "full") this.md?.render();
    else if (name === "truncate") this.renderTruncated();
    else if (name === "progress" && this.line && !this.finished) {
      this.line.textContent = `thinking… ${this.words} ${this.words === 1 ? "word" : "words"}`;
    } else if (name === "static" && this.line && !this.finished) {
      this.line.textContent = "Reasoning…";
    }
  }

  /**
   * The block is complete (a saved event, or a draft block that became one).
   * @param {{partial?: boolean} | null | undefined} metadata
   */
  finish(metadata) {
    this.render();
    this.finished = true;
    const partial = metadata?.partial === true;
    const { name } = this.mode;
    if (name === "full") {
      this.md?.finish();
    } else if (name === "progress" || name === "static") {
      const label =
        name === "progress"
          ? `Thought · ${this.words} ${this.words === 1 ? "word" : "words"}`
          : "Reasoned";
      this.el.replaceChildren(this.lazyDetails(label));
    }
    if (partial) this.el.appendChild(h("div", { class: "jt-partial" }, "reasoning interrupted"));
  }

  renderTruncated() {
    if (!this.line) return;
    const { limit } = this.mode;
    const cut = this.prefix.length > limit;
    this.line.textContent = cut ? `${this.prefix.slice(0, limit)}…` : this.prefix;
  }

  /** @param {string} label */
  lazyDetails(label) {
    const details = h("details", null, h("summary", null, label));
    const onToggle = () => {
      if (!details.open) return;
      details.removeEventListener("toggle", onToggle);
      const md = new MarkdownStream(this.stats);
      md.append(this.text());
      md.finish();
      details.appendChild(md.el);
    };
    details.addEventListener("toggle", onToggle);
    return details;
  }

  /** @param {string} chunk */
  countWords(chunk) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      const space = c === 32 || c === 10 || c === 9 || c === 13;
      if (!space && !this.inWord) this.words++;
      this.inWord = !space;
    }
  }
}
