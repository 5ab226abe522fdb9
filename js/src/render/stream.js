/**
 * Block-stable markdown rendering: the hot path of a streaming answer.
 *
 * The text is split into top-level markdown blocks. Every block except the last one is
 * *finished* — text that arrives later cannot change it — so it is parsed, sanitized and
 * appended once, and its DOM node is kept. Only the unfinished last block (the *tail*) is
 * lexed and re-rendered, at most once per frame (`render()` is called by the view's frame
 * flush, never per delta). A saved message goes through the same class in one go
 * (`append(all); finish()`), so a live answer and a saved one produce the same DOM:
 * one `div.jt-block` per top-level block inside `div.jt-md`.
 *
 * A block is finished when the lexer sees another block after it; the trailing blank lines
 * alone do not finish it (a list or a code fence can still go on).
 */
import { h } from "../util/dom.js";
import { lex, renderTokens } from "./markdown.js";

/** @typedef {import("./markdown.js").Token} Token */
/** @typedef {import("../util/stats.js").Stats} Stats */

export class MarkdownStream {
  /** @param {Stats} stats */
  constructor(stats) {
    this.stats = stats;
    // Lab's own markdown styles where available; ours fill in elsewhere.
    this.el = h("div", { class: "jt-md jp-RenderedHTMLCommon" });
    /** @type {string[]} text of the finished blocks, in order */
    this.head = [];
    /** text not yet split into finished blocks */
    this.tail = "";
    this.length = 0;
    /** @type {HTMLElement | null} */
    this.tailEl = null;
    /** @type {Record<string, any>} reference-link definitions seen so far */
    this.links = Object.create(null);
    this.dirty = false;
    this.finished = false;
    this.heldCR = false;
  }

  /**
   * Add text. Line endings are normalized here (as the lexer would) so that token offsets
   * match the stored text; a trailing "\r" waits for the next chunk in case "\n" follows.
   * @param {string} chunk
   */
  append(chunk) {
    if (!chunk) return;
    let text = (this.heldCR ? "\r" : "") + chunk;
    this.heldCR = text.endsWith("\r");
    if (this.heldCR) text = text.slice(0, -1);
    text = text.replace(/\r\n?/g, "\n");
    this.tail += text;
    this.length += text.length;
    this.dirty = true;
  }

  /** The whole normalized text (joins; call rarely). */
  text() {
    return this.head.join("") + this.tail + (this.heldCR ? "\n" : "");
  }

  /** Re-render the tail if text arrived since the last call; finished blocks are appended. */
  render() {
    if (!this.dirty) return;
    this.dirty = false;
    const pending = this.tail;
    const tokens = lex(pending);
    this.stats.add("charsLexed", pending.length);
    Object.assign(this.links, tokens.links);

    let last = tokens.length - 1;
    while (last >= 0 && tokens[last].type === "space") last--;

    let cursor = 0;
    let i = 0;
    for (; i < last; i++) {
      const at = locate(pending, tokens[i].raw, cursor);
      if (at < 0) {
        this.stats.add("fallbacks");
        break;
      }
      cursor = at + tokens[i].raw.length;
      if (tokens[i].type !== "space") this.appendBlock(tokens[i]);
    }
    if (cursor > 0) {
      this.head.push(pending.slice(0, cursor));
      this.tail = pending.slice(cursor);
    }
    this.renderTail(tokens.slice(i).filter((t) => t.type !== "space"));
  }

  /**
   * Render everything and turn the tail into a finished block. Idempotent.
   */
  finish() {
    if (this.heldCR) {
      this.heldCR = false;
      this.append("\n");
    }
    this.render();
    if (this.tailEl) {
      this.tailEl.classList.remove("jt-tail");
      if (this.tailEl.childNodes.length === 0) this.tailEl.remove();
      else this.stats.add("blocksParsed");
      this.tailEl = null;
    }
    this.finished = true;
  }

  /** @param {Token} token */
  appendBlock(token) {
    const block = h("div", { class: "jt-block" });
    block.appendChild(renderTokens([token], this.links));
    this.stats.add("blocksParsed");
    this.el.insertBefore(block, this.tailEl);
  }

  /** @param {Token[]} tokens */
  renderTail(tokens) {
    if (!this.tailEl) {
      this.tailEl = h("div", { class: "jt-block jt-tail" });
      this.el.appendChild(this.tailEl);
    }
    if (tokens.length === 0) {
      this.tailEl.replaceChildren();
      return;
    }
    this.tailEl.replaceChildren(renderTokens(tokens, this.links));
    this.stats.add("tailRenders");
  }
}

/**
 * Where `raw` starts in `text` at `from`, skipping blank characters the lexer may have left
 * out of a token's raw text (e.g. after a link definition); -1 if it does not.
 * @param {string} text
 * @param {string} raw
 * @param {number} from
 */
function locate(text, raw, from) {
  for (let at = from; at < text.length; at++) {
    if (text.startsWith(raw, at)) return at;
    const c = text.charCodeAt(at);
    if (c !== 10 && c !== 32 && c !== 9) return -1;
  }
  return raw === "" ? from : -1;
}
